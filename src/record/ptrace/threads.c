/* threads.c - see threads.h */
#include "record/ptrace/threads.h"
#include "record/offcpu.h"
#include "unwind/stack.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void threads_init(struct thread_table *t)
{
    memset(t, 0, sizeof(*t));
    tid_index_init(&t->index);
}

static void release(struct thread *th)
{
    if (th->schedstat_fd >= 0)
        close(th->schedstat_fd);
    if (th->syscall_fd >= 0)
        close(th->syscall_fd);
    if (th->snap) {
        stack_snapshot_free(th->snap);
        free(th->snap);
    }
    free(th->interp);
}

void threads_destroy(struct thread_table *t)
{
    for (size_t i = 0; i < t->count; i++)
        release(&t->threads[i]);
    free(t->threads);
    tid_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}

struct thread *thread_find(struct thread_table *t, pid_t tid)
{
    int32_t pos = tid_index_find(&t->index, tid);
    return pos >= 0 ? &t->threads[pos] : NULL;
}

static int open_schedstat(pid_t pid, pid_t tid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    return open(path, O_RDONLY | O_CLOEXEC);
}

struct thread *thread_add(struct thread_table *t, pid_t pid, pid_t tid)
{
    struct thread *existing = thread_find(t, tid);
    if (existing)
        return existing;
    t->threads = xgrow(t->threads, &t->capacity, t->count + 1, sizeof(*t->threads));
    struct thread *th = &t->threads[t->count];
    memset(th, 0, sizeof(*th));
    th->tid = tid;
    th->pid = pid;
    th->syscall = -1;
    th->syscall_raw = -1;
    th->syscall_fd = -1;
    th->schedstat_fd = open_schedstat(pid, tid);
    syscall_origin_init(&th->origin);
    tid_index_put(&t->index, tid, t->count);
    t->count++;
    t->seen++;
    return th;
}

void thread_remove(struct thread_table *t, pid_t tid)
{
    int32_t pos = tid_index_find(&t->index, tid);
    if (pos < 0)
        return;
    release(&t->threads[pos]);
    tid_index_remove(&t->index, tid);
    /* Keep the array dense: the last thread takes the hole. */
    t->count--;
    if ((size_t)pos != t->count) {
        t->threads[pos] = t->threads[t->count];
        tid_index_put(&t->index, t->threads[pos].tid, (size_t)pos);
    }
}

void thread_reopen_schedstat(struct thread *th, pid_t pid)
{
    if (th->schedstat_fd >= 0)
        close(th->schedstat_fd);
    th->schedstat_fd = open_schedstat(pid, th->tid);
    if (th->syscall_fd >= 0)
        close(th->syscall_fd);
    th->syscall_fd = -1;
    th->syscall = -1;
    th->syscall_raw = -1;
    syscall_origin_init(&th->origin);
    th->idle_known = false;
    th->stack_lo = th->stack_hi = 0;
}

/* A decimal number after optional spaces; NULL when there is none. */
static const char *parse_decimal(const char *p, const char *end, uint64_t *v)
{
    while (p < end && *p == ' ')
        p++;
    const char *start = p;
    uint64_t x = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        x = x * 10 + (uint64_t)(*p - '0');
    *v = x;
    return p > start ? p : NULL;
}

/* schedstat: "<ns on cpu> <ns waiting> <times put on a cpu>".  Returns
 * how many of the three fields were read into FIELDS. */
static int read_schedstat(const struct thread *th, uint64_t fields[3])
{
    char buf[96];
    if (th->schedstat_fd < 0)
        return 0;
    ssize_t n = pread(th->schedstat_fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    const char *p = buf, *end = buf + n;
    int got = 0;
    while (got < 3 && (p = parse_decimal(p, end, &fields[got])) != NULL)
        got++;
    return got;
}

bool thread_read_syscall(struct thread *th, int *nr, uint64_t *sp, uint64_t *pc)
{
    struct offcpu_look look = offcpu_look(&th->syscall_fd, th->pid, th->tid);
    if (look.state != OFFCPU_IN_SYSCALL)
        return false;
    *nr = look.syscall;
    *sp = look.sp;
    *pc = look.pc;
    return true;
}

bool thread_is_runnable(struct thread *th)
{
    return offcpu_look(&th->syscall_fd, th->pid, th->tid).state == OFFCPU_RUNNING;
}

bool thread_read_blocked(struct thread *th)
{
    int nr;
    uint64_t sp, pc;
    if (!thread_read_syscall(th, &nr, &sp, &pc))
        return false;
    th->syscall_raw = nr;
    th->sp = sp;
    th->pc = pc;
    th->captured_once = true;
    return true;
}

bool thread_read_cpu(const struct thread *th, uint64_t *cpu_ns)
{
    uint64_t fields[3];
    if (read_schedstat(th, fields) < 1)
        return false;
    *cpu_ns = fields[0];
    return true;
}

bool thread_read_sched(const struct thread *th, struct thread_sched *out)
{
    uint64_t fields[3];
    if (read_schedstat(th, fields) < 3)
        return false;
    out->cpu_ns = fields[0];
    out->wait_ns = fields[1];
    out->runs = fields[2];
    /* A kernel without scheduler statistics prints "0 0 0". */
    return out->runs != 0;
}
