/* perf_threads.c - see perf_threads.h */
#include "record/perf_threads.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t slot_of(size_t size, pid_t tid)
{
    return (size_t)(((uint32_t)tid * 2654435769u) & (uint32_t)(size - 1));
}

static void rebuild(struct perf_threads *t, size_t size)
{
    free(t->index);
    t->index = xcalloc(size, sizeof(*t->index));
    t->index_size = size;
    for (size_t i = 0; i < t->count; i++) {
        size_t s = slot_of(size, t->all[i]->tid);
        while (t->index[s])
            s = (s + 1) & (size - 1);
        t->index[s] = t->all[i];
    }
}

void perf_threads_init(struct perf_threads *t)
{
    memset(t, 0, sizeof(*t));
    rebuild(t, 64);
}

static void release(struct perf_thread *th)
{
    if (th->syscall_fd >= 0)
        close(th->syscall_fd);
    free(th->last_read);
    free(th);
}

void perf_threads_free(struct perf_threads *t)
{
    for (size_t i = 0; i < t->count; i++)
        release(t->all[i]);
    free(t->all);
    free(t->index);
    memset(t, 0, sizeof(*t));
}

struct perf_thread *perf_threads_find(const struct perf_threads *t, pid_t tid)
{
    for (size_t s = slot_of(t->index_size, tid); t->index[s]; s = (s + 1) & (t->index_size - 1))
        if (t->index[s]->tid == tid)
            return t->index[s];
    return NULL;
}

struct perf_thread *perf_threads_add(struct perf_threads *t, pid_t pid, pid_t tid, size_t proc)
{
    struct perf_thread *th = perf_threads_find(t, tid);
    if (th)
        return th;
    th = xcalloc(1, sizeof(*th));
    th->tid = tid;
    th->pid = pid;
    th->proc = proc;
    th->syscall_fd = -1;
    th->syscall = th->syscall_raw = -1;
    syscall_origin_init(&th->origin);
    t->all = xgrow(t->all, &t->cap, t->count + 1, sizeof(*t->all));
    t->all[t->count++] = th;
    if (t->count * 2 > t->index_size) {
        rebuild(t, t->index_size * 2);
    } else {
        size_t s = slot_of(t->index_size, tid);
        while (t->index[s])
            s = (s + 1) & (t->index_size - 1);
        t->index[s] = th;
    }
    return th;
}

void perf_threads_remove(struct perf_threads *t, pid_t tid)
{
    for (size_t i = 0; i < t->count; i++) {
        if (t->all[i]->tid != tid)
            continue;
        release(t->all[i]);
        t->all[i] = t->all[--t->count];
        /* Removals are rare next to lookups: rebuilding keeps probing
         * simple (no tombstones). */
        rebuild(t, t->index_size);
        return;
    }
}
