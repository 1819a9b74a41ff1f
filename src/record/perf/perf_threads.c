/* perf_threads.c - see perf_threads.h */
#include "record/perf/perf_threads.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void perf_threads_init(struct perf_threads *t)
{
    memset(t, 0, sizeof(*t));
    tid_index_init(&t->index);
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
    tid_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}

struct perf_thread *perf_threads_find(const struct perf_threads *t, pid_t tid)
{
    int32_t pos = tid_index_find(&t->index, tid);
    return pos >= 0 ? t->all[pos] : NULL;
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
    tid_index_put(&t->index, tid, t->count);
    t->all[t->count++] = th;
    return th;
}

void perf_threads_remove(struct perf_threads *t, pid_t tid)
{
    int32_t pos = tid_index_find(&t->index, tid);
    if (pos < 0)
        return;
    release(t->all[pos]);
    tid_index_remove(&t->index, tid);
    /* Keep the array dense: the last thread takes the hole. */
    t->all[pos] = t->all[--t->count];
    if ((size_t)pos != t->count)
        tid_index_put(&t->index, t->all[pos]->tid, (size_t)pos);
}
