/* quiet_threads.c - a crowded round's quiet threads from the process's
 * CPU clock (quiet_threads.h). */
#include "record/ptrace/quiet_threads.h"

#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kernel's CPU clock of process PID (include/linux/posix-timers.h):
 * the pid inverted, shifted by 3, and CPUCLOCK_SCHED (2), not per thread. */
#define PROCESS_SCHED_CLOCK(pid) ((clockid_t)((~(unsigned)(pid) << 3) | 2))

/* The process's CPU clock: every thread's time, those gone included. */
static bool process_cpu_ns(pid_t pid, uint64_t *ns)
{
    struct timespec ts;
    if (pid <= 0 || clock_gettime(PROCESS_SCHED_CLOCK(pid), &ts) != 0)
        return false;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return true;
}

void quiet_threads_free(struct quiet_threads *q)
{
    free(q->procs);
    free(q->postponed);
    q->procs = NULL;
    q->postponed = NULL;
    q->nprocs = q->procs_cap = q->npostponed = q->postponed_cap = 0;
}

void quiet_threads_begin(struct quiet_threads *q, size_t nprocs)
{
    if (nprocs > q->nprocs) {
        q->procs = xgrow(q->procs, &q->procs_cap, nprocs, sizeof(*q->procs));
        memset(q->procs + q->nprocs, 0, (nprocs - q->nprocs) * sizeof(*q->procs));
        q->nprocs = nprocs;
    }
    for (size_t i = 0; i < q->nprocs; i++) {
        q->procs[i].seen = false;
        q->procs[i].sum = 0;
        q->procs[i].broken = false;
        q->procs[i].postponed = 0;
    }
    q->npostponed = 0;
}

static struct quiet_process *process_of(struct quiet_threads *q, const struct thread *th)
{
    if (th->proc >= q->nprocs)
        return NULL;
    struct quiet_process *p = &q->procs[th->proc];
    if (p->pid != th->pid) { /* a new process at that index: nothing known */
        p->pid = th->pid;
        p->offset_known = false;
    }
    p->seen = true;
    return p;
}

void quiet_threads_read(struct quiet_threads *q, const struct thread *th, uint64_t cpu_ns)
{
    struct quiet_process *p = process_of(q, th);
    if (p)
        p->sum += cpu_ns;
}

/* A thread in a ptrace stop, or interrupted and waiting for a CPU to
 * enter it: until its stop is seen it runs no more than that. */
static bool stops(const struct thread *th)
{
    return th->stopped || th->awaited || th->late;
}

/* Puts thread I of TT, of process P, off until the clock is read. */
static void postpone(struct quiet_threads *q, struct quiet_process *p, size_t i, uint64_t cpu_ns)
{
    q->postponed = xgrow(q->postponed, &q->postponed_cap, q->npostponed + 1, sizeof(*q->postponed));
    q->postponed[q->npostponed++] = i;
    p->sum += cpu_ns;
    p->postponed++;
}

void quiet_threads_unlooked(struct quiet_threads *q, const struct thread_table *tt, size_t i)
{
    const struct thread *th = &tt->threads[i];
    struct quiet_process *p = process_of(q, th);
    uint64_t cpu;
    if (!p)
        return;
    /* Its last read is its copy's or a later look's (idle_known). */
    if (p->offset_known && stops(th) && th->idle_known && th->captured_once && !th->group_stop &&
        !th->in_vfork && !th->announced && !th->exiting) {
        postpone(q, p, i, th->looked.cpu_ns);
    } else if (thread_read_cpu(th, &cpu)) {
        p->sum += cpu;
    } else {
        p->broken = true;
    }
}

bool quiet_threads_postpone(struct quiet_threads *q, const struct thread_table *tt, size_t i)
{
    const struct thread *th = &tt->threads[i];
    struct quiet_process *p = process_of(q, th);
    if (q->off || !p || !p->offset_known || !(th->quiet || (th->left_out_at_look && th->still)))
        return false;
    postpone(q, p, i, th->looked.cpu_ns); /* as its last look read it */
    q->postponed_seen++;
    return true;
}

/* Postponed threads by process, then copied longest ago first. */
static int by_process_then_copy(const void *a, const void *b, void *table)
{
    const struct thread_table *tt = table;
    const struct thread *x = &tt->threads[*(const size_t *)a];
    const struct thread *y = &tt->threads[*(const size_t *)b];
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    if (stops(x) != stops(y))
        return stops(x) ? 1 : -1;
    return x->ran_seen_at < y->ran_seen_at ? -1 : x->ran_seen_at > y->ran_seen_at;
}

/* Every thread of P read: its offset, from its clock read after them. */
static void set_offset(struct quiet_process *p)
{
    uint64_t clock = 0;
    p->offset_known = !p->broken && process_cpu_ns(p->pid, &clock) && clock >= p->sum;
    if (p->offset_known)
        p->offset = clock - p->sum;
}

/* Settles process P's postponed threads, FIRST..END of q->postponed. */
static void settle(struct quiet_threads *q, struct quiet_process *p, struct thread_table *tt,
                   size_t first, size_t end,
                   bool (*look)(void *ctx, struct thread *th, uint64_t *cpu_ns),
                   void (*reuse)(void *ctx, struct thread *th), void *ctx)
{
    uint64_t clock = 0;
    /* The time the quiet threads must have run for the clock to add up. */
    bool settled = !p->broken && process_cpu_ns(p->pid, &clock) && clock >= p->offset &&
                   clock - p->offset >= p->sum;
    uint64_t missing = settled ? clock - p->offset - p->sum : 0;
    size_t k = first;
    for (; k < end && (!settled || missing > 0); k++) {
        struct thread *th = &tt->threads[q->postponed[k]];
        uint64_t before = th->looked.cpu_ns, cpu;
        if (stops(th)) {
            /* Not the round's to look at: read for the sum only. */
            if (thread_read_cpu(th, &cpu))
                th->looked.cpu_ns = cpu;
            else {
                p->broken = true;
                settled = false;
                continue;
            }
        } else if (!look(ctx, th, &cpu)) {
            p->broken = true;
            settled = false;
            continue;
        }
        uint64_t ran = cpu > before ? cpu - before : 0;
        p->sum += ran;
        if (settled && ran > missing)
            settled = false; /* it ran after the clock was read: no telling the rest */
        else if (settled)
            missing -= ran;
    }
    if (settled && missing == 0) {
        for (; k < end; k++) {
            struct thread *th = &tt->threads[q->postponed[k]];
            if (stops(th)) {
                q->stops_unread++;
                continue;
            }
            q->reads_saved++;
            reuse(ctx, th);
        }
        return;
    }
    set_offset(p); /* every thread read: the offset anew */
}

void quiet_threads_end(struct quiet_threads *q, struct thread_table *tt,
                       bool (*look)(void *ctx, struct thread *th, uint64_t *cpu_ns),
                       void (*reuse)(void *ctx, struct thread *th), void *ctx)
{
    if (q->npostponed > 1)
        qsort_r(q->postponed, q->npostponed, sizeof(*q->postponed), by_process_then_copy, tt);
    size_t k = 0;
    for (size_t i = 0; i < q->nprocs; i++) {
        struct quiet_process *p = &q->procs[i];
        if (!p->seen)
            continue; /* no thread of it this round */
        size_t end = k + p->postponed;
        if (p->postponed)
            settle(q, p, tt, k, end, look, reuse, ctx);
        else
            set_offset(p);
        k = end;
    }
}
