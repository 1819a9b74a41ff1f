/* sample_queue.c - see sample_queue.h */
#include "record/ptrace/sample_queue.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* A placeholder: the thread owes its copy (flags never hold this bit). */
#define WAITING_FLAG 0x80000000u

void sample_queue_init(struct sample_queue *q, unsigned nchannels)
{
    memset(q, 0, sizeof(*q));
    q->nchannels = nchannels;
}

static struct open_sample *at(struct sample_queue *q, size_t i)
{
    return &q->samples[(q->head + i) % SAMPLE_QUEUE_MAX];
}

void sample_queue_free(struct sample_queue *q)
{
    for (size_t i = 0; i < SAMPLE_QUEUE_MAX; i++) {
        free(q->samples[i].values);
        free(q->samples[i].threads);
    }
    memset(q, 0, sizeof(*q));
}

bool sample_queue_full(const struct sample_queue *q)
{
    return q->count == SAMPLE_QUEUE_MAX;
}

struct open_sample *sample_queue_open(struct sample_queue *q, uint64_t time_ns,
                                      const double *values)
{
    if (sample_queue_full(q))
        return NULL;
    struct open_sample *s = at(q, q->count++);
    s->time_ns = time_ns;
    s->nthreads = 0;
    s->waiting = 0;
    if (q->nchannels) {
        /* Buffers are reused: a slot keeps its allocations. */
        if (!s->values)
            s->values = xcalloc(q->nchannels, sizeof(*s->values));
        memcpy(s->values, values, q->nchannels * sizeof(*values));
    }
    return s;
}

static struct prof_thread_sample *append(struct open_sample *s)
{
    if (s->nthreads == s->cap) {
        size_t cap = s->cap;
        s->threads = xgrow(s->threads, &cap, (size_t)s->nthreads + 1, sizeof(*s->threads));
        s->cap = (uint32_t)cap;
    }
    return &s->threads[s->nthreads++];
}

void sample_add(struct open_sample *s, const struct prof_thread_sample *ts)
{
    *append(s) = *ts;
}

void sample_wait(struct open_sample *s, uint32_t pid, uint32_t tid)
{
    *append(s) =
        (struct prof_thread_sample){.pid = pid, .tid = tid, .syscall = -1, .flags = WAITING_FLAG};
    s->waiting++;
}

size_t sample_queue_fill(struct sample_queue *q, const struct prof_thread_sample *ts)
{
    size_t filled = 0;
    for (size_t i = 0; i < q->count; i++) {
        struct open_sample *s = at(q, i);
        for (uint32_t k = 0; k < s->nthreads && s->waiting; k++) {
            struct prof_thread_sample *t = &s->threads[k];
            if (t->tid == ts->tid && (t->flags & WAITING_FLAG)) {
                *t = *ts;
                s->waiting--;
                filled++;
            }
        }
    }
    return filled;
}

/* Removes the placeholders of TID (every one when TID is 0) from S. */
static void drop_waiting(struct open_sample *s, uint32_t tid)
{
    uint32_t kept = 0;
    for (uint32_t k = 0; k < s->nthreads; k++) {
        struct prof_thread_sample *t = &s->threads[k];
        if ((t->flags & WAITING_FLAG) && (tid == 0 || t->tid == tid)) {
            s->waiting--;
            continue;
        }
        s->threads[kept++] = *t;
    }
    s->nthreads = kept;
}

void sample_queue_forget(struct sample_queue *q, uint32_t tid)
{
    for (size_t i = 0; i < q->count; i++)
        if (at(q, i)->waiting)
            drop_waiting(at(q, i), tid);
}

long sample_queue_flush(struct sample_queue *q, struct output *out, bool force)
{
    long written = 0;
    while (q->count > 0) {
        struct open_sample *s = at(q, 0);
        if (s->waiting && !force)
            break;
        if (s->waiting)
            drop_waiting(s, 0);
        if (s->nthreads > 0) {
            if (output_sample(out, s->time_ns, s->values, s->threads, s->nthreads) != 0)
                return -1;
            written++;
        }
        q->head = (q->head + 1) % SAMPLE_QUEUE_MAX;
        q->count--;
    }
    return written;
}
