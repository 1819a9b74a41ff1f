/* sample_queue.c - see sample_queue.h */
#include "record/ptrace/sample_queue.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A placeholder: the thread owes its copy (flags never hold this bit). */
#define WAITING_FLAG 0x8000u

void sample_queue_init(struct sample_queue *q, unsigned nchannels, const bool *counter)
{
    memset(q, 0, sizeof(*q));
    q->nchannels = nchannels;
    q->written_values = xcalloc((size_t)nchannels + 1, sizeof(*q->written_values));
    q->scratch = xcalloc((size_t)nchannels + 1, sizeof(*q->scratch));
    q->counter = xcalloc((size_t)nchannels + 1, sizeof(*q->counter));
    for (unsigned c = 0; counter && c < nchannels; c++)
        q->counter[c] = counter[c];
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
    free(q->written_values);
    free(q->scratch);
    free(q->counter);
    memset(q, 0, sizeof(*q));
}

bool sample_queue_full(const struct sample_queue *q)
{
    return q->count == SAMPLE_QUEUE_MAX;
}

uint64_t sample_queue_newest_ns(const struct sample_queue *q)
{
    return q->count ? q->samples[(q->head + q->count - 1) % SAMPLE_QUEUE_MAX].time_ns
                    : q->written_ns;
}

/* Slot S becomes an empty sample at TIME_NS with VALUES. */
static void start(const struct sample_queue *q, struct open_sample *s, uint64_t time_ns,
                  const double *values)
{
    s->time_ns = time_ns;
    s->nthreads = 0;
    s->waiting = 0;
    if (q->nchannels) {
        /* Buffers are reused: a slot keeps its allocations. */
        if (!s->values)
            s->values = xcalloc(q->nchannels, sizeof(*s->values));
        memcpy(s->values, values, q->nchannels * sizeof(*values));
    }
}

struct open_sample *sample_queue_open(struct sample_queue *q, uint64_t time_ns,
                                      const double *values)
{
    if (sample_queue_full(q))
        return NULL;
    struct open_sample *s = at(q, q->count++);
    start(q, s, time_ns, values);
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

bool sample_queue_insert(struct sample_queue *q, uint64_t time_ns,
                         const struct prof_thread_sample *ts, bool earlier)
{
    if (sample_queue_full(q) || time_ns <= q->written_ns)
        return false;
    size_t pos = 0;
    while (pos < q->count && at(q, pos)->time_ns <= time_ns)
        pos++;
    if (pos == q->count)
        return false; /* nothing after it to read the channels between */
    const struct open_sample *next = at(q, pos);
    uint64_t t0 = pos > 0 ? at(q, pos - 1)->time_ns : q->written_ns;
    const double *v0 = pos > 0 ? at(q, pos - 1)->values : q->written_values;
    double f = t0 && next->time_ns > t0 ? (double)(time_ns - t0) / (double)(next->time_ns - t0) : 1;
    double *v = q->scratch;
    for (unsigned c = 0; c < q->nchannels; c++) {
        double a = v0[c], b = next->values[c];
        if (q->counter[c] && t0 && isfinite(a) && isfinite(b))
            v[c] = a + (b - a) * f;
        else
            v[c] = earlier && t0 ? a : b;
    }
    /* The free slot after the last moves to POS, the samples from POS on
     * one place later (each slot keeps its buffers). */
    for (size_t i = q->count; i > pos; i--) {
        struct open_sample tmp = *at(q, i);
        *at(q, i) = *at(q, i - 1);
        *at(q, i - 1) = tmp;
    }
    q->count++;
    struct open_sample *s = at(q, pos);
    start(q, s, time_ns, v);
    sample_add(s, ts);
    return true;
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

size_t sample_queue_fill(struct sample_queue *q, const struct prof_thread_sample *ts,
                         uint64_t *first_ns, uint64_t *last_ns)
{
    size_t filled = 0;
    for (size_t i = 0; i < q->count; i++) {
        struct open_sample *s = at(q, i);
        for (uint32_t k = 0; k < s->nthreads && s->waiting; k++) {
            struct prof_thread_sample *t = &s->threads[k];
            if (t->tid == ts->tid && (t->flags & WAITING_FLAG)) {
                *t = *ts;
                s->waiting--;
                if (filled++ == 0 && first_ns)
                    *first_ns = s->time_ns;
                if (last_ns)
                    *last_ns = s->time_ns;
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
        q->written_ns = s->time_ns;
        if (q->nchannels)
            memcpy(q->written_values, s->values, q->nchannels * sizeof(*s->values));
        q->head = (q->head + 1) % SAMPLE_QUEUE_MAX;
        q->count--;
    }
    return written;
}
