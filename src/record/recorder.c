/*
 * recorder.c - the sampling loop (see recorder.h and docs/recording.md).
 *
 * One thread does everything: a poll() over a timerfd (absolute, periodic
 * deadlines: no drift) and a signalfd (SIGCHLD for ptrace events, and the
 * signals sent to the profiler itself).  Between samples every ptrace stop
 * is answered at once, so new threads, exits and the target's own signals
 * never wait for the next tick.  A sample stops every thread, copies what
 * must be copied while they stand still (registers, the top of the stack),
 * resumes them, and only then does the slow work: CPU times, unwinding,
 * map refreshes, writing.
 */
#include "record/recorder.h"
#include "pmu/pmu.h"
#include "record/jit_maps.h"
#include "record/output.h"
#include "record/priority.h"
#include "record/profiler_signals.h"
#include "record/record_meta.h"
#include "record/regs.h"
#include "record/sample_queue.h"
#include "record/stack.h"
#include "record/tracer.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the target may take to show it received a signal the profiler
 * got too (terminal, killpg) before the profiler forwards it itself. */
#define SIGNAL_ECHO_NS (100 * 1000 * 1000ULL)
/* After Ctrl-C or SIGTERM, the profile waits this long for the program to
 * die of it (its exit is then recorded) before it is written anyway. */
#define EXIT_GRACE_NS (1000 * 1000 * 1000ULL)
/* A job-control stop the target never performs is forgotten after this. */
#define JOB_STOP_PATIENCE_NS (1000 * 1000 * 1000ULL)
/* Maps are re-read at least this often (and at once for an unknown PC). */
#define MAPS_REFRESH_NS (500 * 1000 * 1000ULL)
/* A thread that does not stop within this time is left out of a sample. */
#define STOP_PATIENCE_NS (100 * 1000 * 1000ULL)
/* A sample waits at least this long (or a quarter period) for its threads
 * to stop before going on without those still waiting for a CPU. */
#define STOP_WINDOW_MIN_NS (100 * 1000ULL)
/* After a sample, the program runs at least this share of a period before
 * the next one (docs/recording.md: how it was chosen). */
#define MIN_GAP_PERCENT 25

/* Where a sample's time goes, summed over the run (the -d summary). */
struct sample_costs {
    uint64_t check_ns;  /* reading schedstat to find the idle threads */
    uint64_t window_ns; /* first interrupt to the last resume */
    uint64_t copy_ns;   /* copying registers, schedstat and stacks */
    uint64_t unwind_ns; /* after the resume: unwinding */
    uint64_t after_ns;  /* after the resume: everything (unwinding, writing, maps) */
    uint64_t taken;     /* samples taken (written ones are r->samples) */
    uint64_t stopped;   /* threads copied in time, summed over samples */
    uint64_t late;      /* threads copied after their sample was built */
    uint64_t reused;    /* threads whose last copy was reused */
    uint64_t dropped;   /* deadlines skipped because a sample ran late */
    uint64_t truncated; /* stacks cut at the end of their copy */
};

/* A stack to copy, and the process whose memory holds it. */
struct pending_copy {
    pid_t pid;
    struct stack_copy copy;
};

struct recorder {
    const struct record_options *opts;
    const struct engine_choice *engine;
    struct tracer tracer;
    struct pmu_source *pmu;
    double *pmu_values;
    bool pmu_failed;
    struct output *out;
    int timer_fd, signal_fd;
    sigset_t original_mask;

    bool sampling;       /* the timer runs and samples are taken */
    bool stop_requested; /* Ctrl-C, SIGTERM or --duration */
    uint64_t deadline;   /* --duration, monotonic; 0 = none */
    uint64_t finish_by;  /* sampling stopped: write the profile by then (monotonic) */

    /* job control */
    bool job_stop_pending;
    uint64_t job_stop_since;

    /* samples waiting for threads that stop late */
    struct sample_queue queue;
    bool in_stop_window; /* tracer_stop_all() is running */

    /* per-sample scratch */
    struct pending_copy *copies; /* stack copies of a batch of stopped threads */
    size_t copies_cap;
    struct stack_copy *batch_copies;
    size_t batch_copies_cap;
    bool *maps_refreshed; /* per process, this sample */
    size_t maps_refreshed_cap;
    uint64_t next_maps_refresh;

    /* sampling schedule */
    uint64_t period; /* ns */
    uint64_t tick;   /* index of the tick armed on the grid */
    uint64_t rng;

    uint64_t min_gap; /* ns a sample leaves the program before the next */

    /* benchmark knobs (read_benchmark_knobs) */
    bool fixed_copy; /* PTPROF_STACK_GROW=0: the configured copy size, always */
    int pin_cpu;     /* PTPROF_CPU=N: the tracer runs on CPU N only; -1 = anywhere */

    /* statistics */
    uint64_t start_mono, end_mono;
    uint64_t samples, latency_ns;
    struct sample_costs costs;
};

/* --- per-sample buffers --------------------------------------------------- */

static void free_scratch(struct recorder *r)
{
    free(r->copies);
    free(r->batch_copies);
    free(r->maps_refreshed);
    sample_queue_free(&r->queue);
}

/* --- sampling ------------------------------------------------------------- */

static void read_pmu(struct recorder *r)
{
    if (!r->pmu)
        return;
    if (!r->pmu_failed && pmu_read(r->pmu, r->pmu_values) != 0) {
        pt_warn("PMU '%s' stopped answering; its values are recorded as NaN", r->pmu->ops->name);
        r->pmu_failed = true;
    }
    if (r->pmu_failed)
        for (unsigned i = 0; i < r->pmu->nchannels; i++)
            r->pmu_values[i] = NAN;
}

/*
 * A thread resumed with a signal stands at its handler's first instruction
 * until it gets a CPU.  Sampled there before it ran, it is charged where
 * the signal found it: that is where the time since the previous sample
 * went.  On x86-64 the kernel's fresh handler frame is recognisable: the
 * signal number in rdi, and rdx pointing at the ucontext right above the
 * return address at rsp; the handler's first instruction changes rsp.
 * Elsewhere: the thread's CPU time has not moved beyond the kernel's own
 * work since the signal-delivery stop.
 */
#define SIGNAL_SETUP_CPU_NS 50000
static bool caught_before_handler(struct thread *th, const struct user_regs_struct *regs)
{
    if (!th->sig_fresh)
        return false;
#if defined(__x86_64__)
    bool at_entry = regs->rdi == (unsigned long long)th->sig_number && regs->rdx == regs->rsp + 8;
#else
    (void)regs;
    uint64_t cpu;
    bool at_entry = thread_read_cpu(th, &cpu) && cpu - th->sig_cpu < SIGNAL_SETUP_CPU_NS;
#endif
    /* Keep watching while it stays there: the next sample may find it
     * still waiting for a CPU. */
    th->sig_fresh = at_entry;
    return at_entry;
}

/* Drop the handler's frames: keep the stack from the interrupted PC on.
 * A DWARF unwind, and a frame-pointer walk mended by CFI, pass the signal
 * frame, which records that PC exactly.  A plain frame-pointer walk does
 * not see the signal frame at all: at the handler's first instruction the
 * frame pointer is still the interrupted function's, so the walk's callers
 * are already that function's callers and only the leaf is to be
 * replaced.  Returns the new depth. */
static int from_interrupted_pc(uint64_t *frames, int depth, uint64_t pc)
{
    for (int k = 1; k < depth; k++) {
        if (frames[k] == pc) {
            memmove(frames, frames + k, (size_t)(depth - k) * sizeof(*frames));
            return depth - k;
        }
    }
    frames[0] = pc;
    return depth;
}

/* --- inside the stop window ------------------------------------------------ */

/* How far up the thread's stack may be copied: the end of the mapping
 * holding SP (looked up again only when SP leaves the one found last). */
static uint64_t stack_top(struct recorder *r, struct thread *th, uint64_t sp)
{
    if (sp >= th->stack_lo && sp < th->stack_hi)
        return th->stack_hi;
    const struct map_entry *m = process_map_at(&r->tracer.procs.procs[th->proc], sp);
    th->stack_lo = m ? m->start : 0;
    th->stack_hi = m ? m->end : 0;
    return th->stack_hi;
}

static int by_pid(const void *a, const void *b)
{
    const struct pending_copy *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The stacks of a batch: one process_vm_readv per process. */
static void copy_stacks(struct recorder *r, size_t n)
{
    if (n > 1)
        qsort(r->copies, n, sizeof(*r->copies), by_pid);
    r->batch_copies = xgrow(r->batch_copies, &r->batch_copies_cap, n, sizeof(*r->batch_copies));
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        pid_t pid = r->copies[i].pid;
        for (; i + k < n && r->copies[i + k].pid == pid; k++)
            r->batch_copies[k] = r->copies[i + k].copy;
        stack_copy_batch(pid, r->batch_copies, k);
        i += k;
    }
}

/*
 * Inside the stop window, for threads that just stopped: copy what the
 * thread will overwrite once it runs (registers, the top of its stack) and
 * its schedstat, exact while it stands still and the mark against which the
 * next sample tells whether it ran.  Nothing else: naming, unwinding and
 * writing wait for the resume.
 */
static void capture_stopped(void *ctx, struct tracer *t, const pid_t *tids, size_t n)
{
    struct recorder *r = ctx;
    uint64_t start = monotonic_ns();
    bool stacks = r->opts->stack_mode != STACK_NONE;
    size_t ncopies = 0;
    for (size_t i = 0; i < n; i++) {
        struct thread *th = thread_find(&t->threads, tids[i]);
        if (!th || !th->stopped || th->group_stop || th->captured)
            continue;
        if (th->copy_limit == 0)
            th->copy_limit = r->opts->stack_size ? r->opts->stack_size : STACK_COPY_DEFAULT;
        if (!th->snap) {
            th->snap = xcalloc(1, sizeof(*th->snap));
            if (stacks)
                stack_snapshot_init(th->snap, th->copy_limit);
        }
        if (stack_capture_regs(th->tid, th->snap) != 0)
            continue; /* gone */
        th->captured = true;
        th->deferred = !r->in_stop_window;
        th->before_signal = caught_before_handler(th, &th->snap->regs);
        struct thread_sched sched;
        /* After PTRACE_GETREGSET, which waited until the thread was off its
         * CPU: its counters are final for this stop. */
        th->idle_known = thread_read_sched(th, &sched);
        if (th->idle_known) {
            th->idle_since = sched;
            th->cpu_ns = sched.cpu_ns;
        } else if (!thread_read_cpu(th, &th->cpu_ns)) {
            th->cpu_ns = 0;
        }
        if (!stacks)
            continue;
        bool to_top = false;
        uint64_t sp = th->snap->sp;
        size_t want = r->fixed_copy
                          ? th->copy_limit
                          : stack_copy_plan(sp, stack_top(r, th, sp), th->copy_limit, &to_top);
        stack_snapshot_reserve(th->snap, want);
        r->copies = xgrow(r->copies, &r->copies_cap, ncopies + 1, sizeof(*r->copies));
        r->copies[ncopies++] = (struct pending_copy){
            .pid = th->pid, .copy = {.snap = th->snap, .want = want, .to_top = to_top}};
    }
    if (ncopies > 0)
        copy_stacks(r, ncopies);
    r->costs.copy_ns += monotonic_ns() - start;
}

/* --- after the resume ------------------------------------------------------ */

static void ensure_maps_know(struct recorder *r, struct process *p, const uint64_t *pcs, size_t n,
                             uint64_t wall, bool *refreshed)
{
    if (*refreshed)
        return;
    for (size_t k = 0; k < n; k++) {
        if (!process_knows_pc(p, pcs[k])) {
            /* A library mapped since the last look (dlopen): report it
             * before the sample that needs it. */
            if (process_refresh_maps(p, r->out, wall) && p->unwinder)
                dwarf_unwinder_maps_changed(p->unwinder);
            *refreshed = true;
            return;
        }
    }
}

/* The stack of a captured thread into PCS; returns its depth. */
static int unwind_captured(struct recorder *r, struct thread *th, struct process *p, uint64_t *pcs)
{
    enum stack_mode mode = r->opts->stack_mode;
    if (mode == STACK_NONE) {
        pcs[0] = th->pc;
        return 1;
    }
    uint64_t start = monotonic_ns();
    if (!p->unwinder)
        p->unwinder = dwarf_unwinder_new(p->pid);
    bool cut = false;
    int depth;
    if (mode == STACK_FP) {
        uint64_t chain[STACK_MAX_DEPTH];
        depth = unwind_fp(th->snap, chain, STACK_MAX_DEPTH, &cut);
        /* Frameless leaves (the vDSO, libc) hide their caller from the
         * frame pointers: mend the innermost frames by their CFI. */
        depth = stack_repair_fp(p->unwinder, th->snap, chain, depth, pcs, STACK_MAX_DEPTH, &cut);
    } else {
        depth = p->unwinder
                    ? dwarf_unwind(p->unwinder, th->tid, th->snap, pcs, STACK_MAX_DEPTH, &cut)
                    : 0;
        if (depth == 0)
            pcs[depth++] = th->pc;
    }
    th->truncated = cut;
    if (cut) {
        /* Copy more of this thread's stack from now on. */
        r->costs.truncated++;
        if (!r->fixed_copy)
            th->copy_limit = stack_copy_grow(th->copy_limit, r->opts->stack_size);
    }
    r->costs.unwind_ns += monotonic_ns() - start;
    return depth;
}

/* What a captured thread's registers say: PC, SP, the call it sits in. */
static void read_capture(struct thread *th)
{
    const struct user_regs_struct *regs = &th->snap->regs;
    th->captured_once = true;
    th->pc = REGS_PC(*regs);
    th->sp = REGS_SP(*regs);
    th->syscall_raw = regs_blocked_syscall(regs);
    th->check_reblocked = th->syscall_raw >= 0 && th->idle_known;
}

/*
 * A thread interrupted in a blocking call goes back into it when resumed:
 * it runs for that, so its schedstat moves, though its registers and stack
 * are those of the capture.  Once /proc/PID/task/TID/syscall shows it
 * blocked again in the same call (or in restart_syscall) at the same PC and
 * SP, having been put on a CPU exactly once since the capture, its new
 * counters become the mark: a sleeping thread is then stopped once, not at
 * every sample.  The counters are read first: if it moves after that, the
 * next sample sees it.
 */
static void note_reblocked(struct thread *th)
{
    th->check_reblocked = false;
    struct thread_sched now;
    int nr;
    uint64_t sp, pc;
    if (!thread_read_sched(th, &now) || now.runs != th->idle_since.runs + 1)
        return;
    if (!thread_read_syscall(th, &nr, &sp, &pc) || sp != th->sp || pc != th->pc)
        return;
    if (nr != th->syscall_raw && !syscall_is_restart(nr))
        return;
    th->idle_since = now;
    /* Blocked again: where it sleeps now names a call the copy could not. */
    if (syscall_is_restart(th->syscall))
        th->syscall = syscall_origin_name(&th->origin, nr, pc, sp, th->pid, th->tid);
}

/* Attached to a running process: its threads may sit in calls the kernel
 * already restarted.  Learn their names now, while they are blocked in
 * them (syscall_origin.h). */
static void learn_blocked_calls(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        int nr;
        uint64_t sp, pc;
        if (thread_read_syscall(th, &nr, &sp, &pc))
            syscall_origin_name(&th->origin, nr, pc, sp, th->pid, th->tid);
    }
}

/* A thread's entry in a sample, from what is known of it now. */
static struct prof_thread_sample entry_of(const struct thread *th)
{
    uint32_t flags = 0;
    if (th->group_stop)
        flags |= PROF_THREAD_STOPPED;
    if (th->syscall >= 0)
        flags |= PROF_THREAD_IN_SYSCALL;
    if (th->truncated && th->stack)
        flags |= PROF_THREAD_STACK_TRUNCATED;
    return (struct prof_thread_sample){
        .pid = (uint32_t)th->pid,
        .tid = (uint32_t)th->tid,
        .pc = th->pc,
        .cpu_ns = th->cpu_ns,
        .stack = th->stack,
        .syscall = th->syscall,
        .flags = flags,
    };
}

/* A copied thread: its call, its stack (unwound now), into th. */
static void finish_capture(struct recorder *r, struct thread *th, uint64_t wall)
{
    struct process *p = &r->tracer.procs.procs[th->proc];
    bool *refreshed = &r->maps_refreshed[th->proc];
    uint64_t pcs[STACK_MAX_DEPTH];
    read_capture(th);
    th->syscall =
        syscall_origin_name(&th->origin, th->syscall_raw, th->pc, th->sp, th->pid, th->tid);
    ensure_maps_know(r, p, &th->pc, 1, wall, refreshed);
    int depth = unwind_captured(r, th, p, pcs);
    if (th->before_signal) {
        if (depth > 0)
            depth = from_interrupted_pc(pcs, depth, th->sig_pc);
        th->pc = th->sig_pc;
        th->syscall = -1;
    }
    if (depth > 1)
        ensure_maps_know(r, p, pcs + 1, (size_t)depth - 1, wall, refreshed);
    th->stack = depth > 0 && r->opts->stack_mode != STACK_NONE
                    ? output_stack(r->out, pcs, (uint32_t)depth)
                    : 0;
}

/* Per-process "maps re-read for this sample" flags, cleared. */
static void reset_maps_refreshed(struct recorder *r)
{
    size_t n = r->tracer.procs.count;
    /* Kept between samples: a sample is not worth a calloc. */
    r->maps_refreshed = xgrow(r->maps_refreshed, &r->maps_refreshed_cap, n ? n : 1, sizeof(bool));
    memset(r->maps_refreshed, 0, n * sizeof(bool));
}

/* Writes the samples no thread is owed for any more. */
static void write_ready(struct recorder *r, bool force)
{
    long n = sample_queue_flush(&r->queue, r->out, force);
    if (n < 0) {
        pt_err("cannot write the profile; sampling stops");
        r->sampling = false;
        return;
    }
    r->samples += (uint64_t)n;
}

/*
 * Threads that stopped after their sample was built (they waited for a
 * CPU): their copies fill the places kept for them in every open sample.
 * Places of threads that are gone are dropped.
 */
static void finish_late_stops(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    bool any = false;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (!th->captured || !th->deferred)
            continue;
        if (!any)
            reset_maps_refreshed(r);
        any = true;
        th->deferred = false;
        finish_capture(r, th, realtime_ns());
        struct prof_thread_sample e = entry_of(th);
        sample_queue_fill(&r->queue, &e);
        r->costs.late++;
        if (th->check_reblocked)
            note_reblocked(th);
    }
    for (size_t i = 0; i < r->queue.count; i++) {
        const struct open_sample *s = &r->queue.samples[(r->queue.head + i) % SAMPLE_QUEUE_MAX];
        for (uint32_t k = 0; k < s->nthreads && s->waiting; k++) {
            struct thread *th = thread_find(tt, (pid_t)s->threads[k].tid);
            if (!th || th->exiting)
                sample_queue_forget(&r->queue, s->threads[k].tid);
        }
    }
    write_ready(r, false);
}

/* tracer_drain(), then what late stops bring. */
static void drain(struct recorder *r)
{
    tracer_drain(&r->tracer);
    finish_late_stops(r);
}

/*
 * A thread owed by an earlier sample for longer than STOP_PATIENCE_NS
 * cannot stop (uninterruptible sleep): it becomes `late`, its interrupt
 * stays pending (its eventual stop is just answered), and the samples
 * waiting for it take what the kernel tells of it without stopping it.
 */
static void give_up_on_slow_stops(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    uint64_t now = monotonic_ns();
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (!th->awaited || now - th->held_since < STOP_PATIENCE_NS)
            continue;
        th->awaited = false;
        th->late = true;
        if (thread_read_blocked(th)) {
            th->syscall =
                syscall_origin_name(&th->origin, th->syscall_raw, th->pc, th->sp, th->pid, th->tid);
            th->stack = 0;
        }
        thread_read_cpu(th, &th->cpu_ns);
        struct prof_thread_sample e = entry_of(th);
        sample_queue_fill(&r->queue, &e);
    }
}

/* After the resume: everything that takes time, for the sample at WALL. */
static void build_sample(struct recorder *r, struct open_sample *s, uint64_t wall)
{
    struct thread_table *tt = &r->tracer.threads;
    reset_maps_refreshed(r);
    /* CPU times of the threads neither copied nor known idle first, right
     * after the resume: unwinding takes time, and CPU time read after it
     * would include running done since. */
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (!th->captured && !th->reused && !th->awaited)
            thread_read_cpu(th, &th->cpu_ns);
    }
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (!th->captured && (th->late || th->in_vfork) && !th->stopped) {
            /* It could not stop (vfork parent, uninterruptible sleep): the
             * kernel still tells where it waits. */
            uint64_t old_pc = th->pc;
            if (thread_read_blocked(th)) {
                th->syscall = syscall_origin_name(&th->origin, th->syscall_raw, th->pc, th->sp,
                                                  th->pid, th->tid);
                if (th->pc != old_pc)
                    th->stack = 0;
            }
        }
        if (th->announced || th->exiting || (!th->captured_once && !th->captured))
            continue; /* nothing true to say about it yet */
        if (th->awaited && !th->captured) {
            /* On its way to a CPU: its copy comes later (finish_late_stops). */
            sample_wait(s, (uint32_t)th->pid, (uint32_t)th->tid);
            continue;
        }
        if (th->captured) {
            th->deferred = false;
            finish_capture(r, th, wall);
        }
        struct prof_thread_sample e = entry_of(th);
        sample_add(s, &e);
        /* Earlier samples may be waiting for this thread too. */
        if (th->captured && r->queue.count > 1)
            sample_queue_fill(&r->queue, &e);
    }
    /* Last, to give the threads interrupted in a call time to go back in. */
    for (size_t i = 0; i < tt->count; i++)
        if (tt->threads[i].captured && tt->threads[i].check_reblocked)
            note_reblocked(&tt->threads[i]);
    write_ready(r, false);
}

/*
 * A thread whose schedstat (CPU time and the number of times it was put on
 * a CPU) has not moved since its last capture has not run since: sleeping
 * or waiting for a CPU, its registers and stack are what was copied, so
 * the copy is reused instead of stopping it again.  Both numbers, because
 * the kernel updates a running thread's CPU time only at its scheduler
 * ticks; the run count moves the moment it gets a CPU.
 */
static void find_idle(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        th->captured = false;
        th->before_signal = false;
        th->check_reblocked = false;
        th->reused = false;
        if (th->stopped || th->group_stop || th->late || th->in_vfork || th->announced ||
            th->exiting || th->awaited || !th->idle_known || !th->captured_once)
            continue;
        struct thread_sched now;
        if (thread_read_sched(th, &now) && now.cpu_ns == th->idle_since.cpu_ns &&
            now.runs == th->idle_since.runs) {
            th->reused = true;
            th->cpu_ns = now.cpu_ns;
            r->costs.reused++;
        }
    }
}

/* How long a sample waits for its threads to stop before it goes on
 * without the slow ones (docs/recording.md). */
static uint64_t stop_window(const struct recorder *r)
{
    uint64_t w = r->period / 4;
    return w < STOP_WINDOW_MIN_NS ? STOP_WINDOW_MIN_NS
           : w > STOP_PATIENCE_NS ? STOP_PATIENCE_NS
                                  : w;
}

static void take_sample(struct recorder *r)
{
    if (sample_queue_full(&r->queue)) {
        r->costs.dropped++; /* stops stopped coming: no room for one more */
        return;
    }
    uint64_t wall = realtime_ns();
    read_pmu(r); /* the machine's, not the threads': outside the stop */
    uint64_t t_check = monotonic_ns();
    give_up_on_slow_stops(r);
    find_idle(r);
    uint64_t t0 = monotonic_ns();
    r->in_stop_window = true;
    tracer_stop_all(&r->tracer, stop_window(r));
    r->in_stop_window = false;
    uint64_t t2 = monotonic_ns();
    /* The time a stopped thread stood still, on average. */
    if (r->tracer.held_threads)
        r->latency_ns += r->tracer.held_ns / r->tracer.held_threads;
    r->costs.check_ns += t0 - t_check;
    r->costs.window_ns += t2 - t0;
    r->costs.taken++;
    struct thread_table *tt = &r->tracer.threads;
    for (size_t i = 0; i < tt->count; i++)
        r->costs.stopped += tt->threads[i].captured;
    if (r->tracer.first_exited)
        return;
    build_sample(r, sample_queue_open(&r->queue, wall, r->pmu_values), wall);
    /* The stops this sample reaped left SIGCHLD pending (one, however many
     * stops): consume it, then answer whatever arrived meanwhile (a later
     * stop raises a new one), so the loop does not wake up once more for
     * nothing. */
    struct timespec zero = {0, 0};
    sigtimedwait(&r->tracer.sigchld_only, NULL, &zero);
    drain(r);
    r->costs.after_ns += monotonic_ns() - t2;
}

/* --- the profiler's own signals ------------------------------------------- */

static bool target_got(struct recorder *r, int sig, uint64_t since)
{
    return r->tracer.last_signal_ns[sig] >= since || profsig_pending_in(r->tracer.first_pid, sig);
}

/*
 * A signal sent to the whole process group (the terminal, killpg) reached
 * the target as well; one sent to the profiler alone must be passed on, as
 * the shell's child would have received it.
 */
static void forward_if_needed(struct recorder *r, int sig, uint64_t received)
{
    /* The target's delivery stop may trail ours by a little: give it the
     * time before deciding it never got the signal. */
    uint64_t give_up = received + SIGNAL_ECHO_NS;
    for (;;) {
        drain(r);
        if (target_got(r, sig, received - SIGNAL_ECHO_NS))
            return;
        uint64_t now = monotonic_ns();
        if (now >= give_up || r->tracer.first_exited)
            break;
        uint64_t wait = give_up - now;
        struct timespec slice = ns_timespec(wait < 5000000 ? wait : 5000000);
        sigtimedwait(&r->tracer.sigchld_only, NULL, &slice);
    }
    if (r->tracer.first_exited)
        return;
    pt_debug("forwarding signal %d to %d", sig, (int)r->tracer.first_pid);
    kill(r->tracer.first_pid, sig);
}

static void stop_sampling(struct recorder *r)
{
    if (!r->sampling)
        return;
    r->sampling = false;
    struct itimerspec off = {0};
    timerfd_settime(r->timer_fd, 0, &off, NULL);
    r->end_mono = monotonic_ns();
}

static bool target_job_stopped(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    bool any = false;
    for (size_t i = 0; i < tt->count; i++) {
        if (tt->threads[i].pid != r->tracer.first_pid)
            continue;
        if (!tt->threads[i].group_stop)
            return false;
        any = true;
    }
    return any;
}

/* The terminal stopped the job: stop with the target so the shell sees it. */
static void follow_job_stop(struct recorder *r)
{
    if (!r->job_stop_pending)
        return;
    if (monotonic_ns() - r->job_stop_since > JOB_STOP_PATIENCE_NS) {
        r->job_stop_pending = false;
        return;
    }
    if (!target_job_stopped(r))
        return;
    r->job_stop_pending = false;
    uint64_t before = monotonic_ns();
    raise(SIGSTOP);
    /* Continued (fg).  The shell's SIGCONT normally reached the target too;
     * if it has not left its stop shortly, continue it ourselves. */
    struct pollfd p = {.fd = r->signal_fd, .events = POLLIN};
    for (int tries = 0; tries < 10 && target_job_stopped(r); tries++) {
        poll(&p, 1, 10);
        drain(r);
    }
    if (target_job_stopped(r) && !target_got(r, SIGCONT, before))
        kill(r->tracer.first_pid, SIGCONT);
}

static void on_profiler_signal(struct recorder *r, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    uint64_t now = monotonic_ns();
    switch (sig) {
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        /* Attached to someone else's process: the signal is for us only. */
        if (!r->opts->attach_pid)
            forward_if_needed(r, sig, now);
        if (r->sampling)
            pt_debug("signal %d: sampling stops", sig);
        /* The program most likely dies of it: give it the time to, so its
         * exit is in the profile.  A second signal means now. */
        r->finish_by = r->stop_requested ? now : now + EXIT_GRACE_NS;
        r->stop_requested = true;
        stop_sampling(r);
        break;
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        if (r->opts->attach_pid) {
            raise(SIGSTOP);
            break;
        }
        forward_if_needed(r, sig, now);
        r->job_stop_pending = true;
        r->job_stop_since = now;
        break;
    default: /* SIGCHLD (events are drained by the loop), SIGPIPE, SIGCONT */
        break;
    }
}

static void read_signals(struct recorder *r)
{
    struct signalfd_siginfo si[16];
    for (;;) {
        ssize_t n = read(r->signal_fd, si, sizeof(si));
        if (n <= 0)
            break;
        for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++)
            on_profiler_signal(r, &si[i]);
    }
}

/* --- setup, the loop, the end --------------------------------------------- */

/*
 * Knobs for the benchmarks (bench/README.md), to measure the choices
 * docs/recording.md explains: PTPROF_SPIN_NS (poll for stops this long
 * before sleeping), PTPROF_MIN_GAP_PCT (read by arm_timer()),
 * PTPROF_STACK_GROW=0 (copy the configured size, never more), PTPROF_CPU=N
 * (keep the tracer on CPU N).
 */
static void read_benchmark_knobs(struct recorder *r)
{
    const char *spin = getenv("PTPROF_SPIN_NS");
    if (spin && *spin)
        r->tracer.spin_ns = strtoull(spin, NULL, 10);
    const char *grow = getenv("PTPROF_STACK_GROW");
    r->fixed_copy = grow && strcmp(grow, "0") == 0;
    const char *cpu = getenv("PTPROF_CPU");
    r->pin_cpu = cpu && *cpu ? atoi(cpu) : -1;
}

/* After the target started (it keeps the CPUs it was given). */
static void pin_tracer(struct recorder *r)
{
    if (r->pin_cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(r->pin_cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        pt_warn("PTPROF_CPU=%d: %s", r->pin_cpu, strerror(errno));
}

/*
 * Sample times: an absolute grid start + k * period (no drift: the k-th
 * sample is due at the same time however late the others were), each
 * moved by a random offset of up to a quarter period either way.  A
 * program with its own period (a timer signal, a frame loop) would
 * otherwise stay in one phase with the samples for the whole run and be
 * seen always, or never, in the same part of its cycle.  The offsets
 * average out: the achieved frequency is the requested one.
 */
static uint64_t next_random(struct recorder *r)
{
    /* xorshift64*: statistically plenty for jitter, and no syscall. */
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return r->rng * 2685821657736338717ULL;
}

static uint64_t due_time(struct recorder *r, uint64_t k)
{
    uint64_t quarter = r->period / 4;
    uint64_t jitter = quarter ? next_random(r) % (2 * quarter + 1) : 0;
    return r->start_mono + k * r->period + jitter - quarter;
}

static int schedule_tick(struct recorder *r, uint64_t k, uint64_t due)
{
    struct itimerspec spec = {.it_value = ns_timespec(due)};
    r->tick = k;
    return timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

/*
 * After a sample that ended at NOW: the next deadline on the grid, no
 * earlier than min_gap after NOW.  A deadline that would come sooner is
 * moved to NOW + min_gap while that stays within its own jitter window (a
 * quarter period after its grid point), else dropped: deadlines that
 * passed while the sample was taken are not made up for — a sample right
 * after a late one would find the threads where it left them, a bias and a
 * cost, not data — and late samples never cascade into back-to-back ones.
 * Re-arming the timer also clears its expiration count, so it is never
 * read.
 */
static void schedule_next(struct recorder *r, uint64_t now)
{
    uint64_t k = (now - r->start_mono) / r->period + 1;
    if (k <= r->tick)
        k = r->tick + 1;
    uint64_t due = due_time(r, k), earliest = now + r->min_gap;
    while (due < earliest) {
        /* Still within this deadline's own window: late, not dropped. */
        if (earliest <= r->start_mono + k * r->period + r->period / 4) {
            due = earliest;
            break;
        }
        k++;
        due = due_time(r, k);
    }
    r->costs.dropped += k - r->tick - 1;
    schedule_tick(r, k, due);
}

static int arm_timer(struct recorder *r)
{
    r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (r->timer_fd < 0) {
        pt_err("timerfd_create: %s", strerror(errno));
        return -1;
    }
    r->period = (uint64_t)llround(1e9 / r->opts->frequency);
    if (r->period == 0)
        r->period = 1;
    /* A tuning knob for benchmarks: the gap in percent of the period. */
    const char *gap = getenv("PTPROF_MIN_GAP_PCT");
    unsigned long pct = gap && *gap ? strtoul(gap, NULL, 10) : MIN_GAP_PERCENT;
    r->min_gap = r->period * (pct > 100 ? 100 : pct) / 100;
    r->rng = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
    if (schedule_tick(r, 1, due_time(r, 1)) != 0) {
        pt_err("timerfd_settime: %s", strerror(errno));
        return -1;
    }
    r->sampling = true;
    return 0;
}

static void on_timer(struct recorder *r)
{
    if (!r->sampling) {
        uint64_t expirations;
        if (read(r->timer_fd, &expirations, sizeof(expirations)) < 0)
            return;
        return;
    }
    take_sample(r);
    uint64_t now = monotonic_ns();
    schedule_next(r, now);
    if (now >= r->next_maps_refresh && !r->tracer.first_exited) {
        struct process_table *pt = &r->tracer.procs;
        for (size_t i = 0; i < pt->count; i++) {
            struct process *p = &pt->procs[i];
            if (!p->exited && process_refresh_maps(p, r->out, realtime_ns()) && p->unwinder)
                dwarf_unwinder_maps_changed(p->unwinder);
        }
        r->next_maps_refresh = now + MAPS_REFRESH_NS;
    }
    if (r->deadline && now >= r->deadline) {
        r->stop_requested = true;
        stop_sampling(r);
    }
}

static uint64_t ideal_samples(const struct recorder *r)
{
    double wall = (double)(r->end_mono - r->start_mono) / 1e9;
    return (uint64_t)floor(wall * r->opts->frequency);
}

static void print_summary(const struct recorder *r)
{
    double wall = (double)(r->end_mono - r->start_mono) / 1e9;
    fprintf(stderr, "[debug] engine:      ptrace (%s)\n", r->engine->reason);
    fprintf(stderr, "[debug] wall time:   %.6f s\n", wall);
    fprintf(stderr, "[debug] latency:     %.6f s total, %.2f us per sample\n",
            (double)r->latency_ns / 1e9,
            r->samples ? (double)r->latency_ns / 1e3 / (double)r->samples : 0.0);
    fprintf(stderr, "[debug] samples:     %llu ideal, %llu actual\n",
            (unsigned long long)ideal_samples(r), (unsigned long long)r->samples);
    fprintf(stderr, "[debug] frequency:   %.2f Hz requested, %.2f Hz achieved\n",
            r->opts->frequency, wall > 0 ? (double)r->samples / wall : 0.0);
    fprintf(stderr, "[debug] threads:     %llu seen\n", (unsigned long long)r->tracer.threads.seen);
    fprintf(stderr, "[debug] signals:     %llu passed to the target\n",
            (unsigned long long)r->tracer.signals_passed);
    /* Where a sample's time goes (docs/recording.md reads these). */
    const struct sample_costs *c = &r->costs;
    double per = c->taken ? 1e3 * (double)c->taken : 1.0, taken = c->taken ? (double)c->taken : 1;
    fprintf(stderr,
            "[debug] window:      %.2f us from the first interrupt to the last resume (copying "
            "%.2f us) per sample\n",
            (double)c->window_ns / per, (double)c->copy_ns / per);
    fprintf(stderr,
            "[debug] outside:     check %.2f us, unwind %.2f us, after %.2f us per sample\n",
            (double)c->check_ns / per, (double)c->unwind_ns / per, (double)c->after_ns / per);
    fprintf(stderr,
            "[debug] stops:       %.2f threads stopped, %.2f reused (idle since their last "
            "copy), %.2f stopped late (waiting for a CPU) per sample\n",
            (double)c->stopped / taken, (double)c->reused / taken, (double)c->late / taken);
    fprintf(stderr,
            "[debug] deadlines:   %llu dropped (a sample ran into them, or left the "
            "program less than %.0f us)\n",
            (unsigned long long)c->dropped, (double)r->min_gap / 1e3);
    fprintf(stderr, "[debug] stacks:      %llu cut at the end of their copy\n",
            (unsigned long long)c->truncated);
}

static int sort_by_start(const void *a, const void *b)
{
    const struct map_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int finish_profile(struct recorder *r)
{
    if (!r->out)
        return 0;
    /* Samples still waiting for a thread are written without it. */
    write_ready(r, true);
    struct process *first = &r->tracer.procs.procs[TRACER_FIRST_PROCESS];
    if (!first->exited)
        process_refresh_maps(first, r->out, realtime_ns());
    for (size_t i = 0; i < r->tracer.procs.count; i++) {
        const struct process *p = &r->tracer.procs.procs[i];
        if (!p->exited)
            jit_maps_capture(r->out, (uint32_t)p->pid, &p->since_exec);
    }
    struct prof_totals totals = {
        .wall_ns = r->end_mono - r->start_mono,
        .latency_ns = r->latency_ns,
        .samples = r->samples,
        .ideal_samples = ideal_samples(r),
    };
    /* The raw format keeps one address space: the first process's. */
    struct map_list *seen = &first->since_exec;
    if (seen->count > 1) /* no maps, no array */
        qsort(seen->entries, seen->count, sizeof(*seen->entries), sort_by_start);
    int rc = output_finish(r->out, &totals, seen);
    r->out = NULL;
    r->tracer.out = NULL; /* later events (a child's exit) go nowhere */
    if (r->opts->debug)
        print_summary(r);
    return rc;
}

static bool recording_over(const struct recorder *r)
{
    if (r->tracer.first_exited)
        return true;
    /* Attached: stop when asked; the process keeps running without us. */
    return r->opts->attach_pid && r->stop_requested;
}

static void run_loop(struct recorder *r)
{
    struct pollfd fds[2] = {
        {.fd = r->signal_fd, .events = POLLIN},
        {.fd = r->timer_fd, .events = POLLIN},
    };
    while (!recording_over(r)) {
        int timeout = r->job_stop_pending ? 50 : -1;
        if (!r->sampling && r->out) {
            uint64_t now = monotonic_ns();
            int left = r->finish_by > now ? (int)((r->finish_by - now) / 1000000 + 1) : 0;
            timeout = timeout < 0 || left < timeout ? left : timeout;
        }
        int ready = poll(fds, 2, timeout);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0 && (fds[0].revents & POLLIN))
            read_signals(r);
        /* A due sample goes first: it collects pending stops itself and
         * captures a thread in a signal-delivery stop where the signal
         * interrupted it.  Resuming that thread first would put it on its
         * handler's first instruction, where the sample would then find it
         * before it ran. */
        if (!recording_over(r) && (fds[1].revents & POLLIN))
            on_timer(r);
        /* Every other stop is answered at once: a new thread or a signal
         * must not wait for a tick. */
        drain(r);
        if (!r->sampling && r->out && !r->opts->attach_pid && monotonic_ns() >= r->finish_by)
            finish_profile(r); /* interrupted: the profile is complete now */
        follow_job_stop(r);
    }
}

static void write_meta(struct recorder *r)
{
    record_meta_write(r->out, r->opts, r->tracer.first_pid, r->engine,
                      r->opts->stack_size ? r->opts->stack_size : STACK_COPY_DEFAULT);
}

static int start_target(struct recorder *r)
{
    if (r->opts->attach_pid)
        return tracer_attach(&r->tracer, r->opts->attach_pid);
    return tracer_launch(&r->tracer, r->opts->argv, &r->original_mask);
}

int record_run(const struct record_options *opts)
{
    struct engine_choice engine;
    int rc = engine_choose(opts, &engine);
    if (rc != 0)
        return rc;
    if (engine.engine == ENGINE_PERF)
        return perf_engine_ops.run(opts, &engine);

    struct recorder r = {.opts = opts, .engine = &engine, .timer_fd = -1, .signal_fd = -1};
    rc = PT_EXIT_USAGE;

    /* Everything that can fail for the user's reasons fails before the
     * target exists. */
    if (opts->pmu_spec) {
        r.pmu = pmu_open(opts->pmu_spec);
        if (!r.pmu)
            return PT_EXIT_USAGE;
        r.pmu_values = xcalloc(r.pmu->nchannels ? r.pmu->nchannels : 1, sizeof(double));
    }
    r.out = output_open(opts->output, opts->format, r.pmu);
    tracer_init(&r.tracer, r.out, opts->inherit);
    r.tracer.on_stopped = capture_stopped;
    r.tracer.on_stopped_ctx = &r;
    sample_queue_init(&r.queue, r.pmu ? r.pmu->nchannels : 0);
    read_benchmark_knobs(&r);
    if (!r.out)
        goto out;
    r.signal_fd = profsig_open(&r.original_mask);
    if (r.signal_fd < 0)
        goto out;

    rc = start_target(&r);
    if (rc != 0)
        goto out;
    if (opts->attach_pid)
        learn_blocked_calls(&r);
    pin_tracer(&r);
    /* The target has its environment; the unwinder must not fetch debug
     * info over the network in the middle of a recording. */
    unsetenv("DEBUGINFOD_URLS");
    recorder_prefer_latency();
    output_started(r.out);
    write_meta(&r);
    r.start_mono = monotonic_ns();
    r.next_maps_refresh = r.start_mono + MAPS_REFRESH_NS;
    if (opts->duration > 0)
        r.deadline = r.start_mono + (uint64_t)(opts->duration * 1e9);
    if (r.pmu && pmu_read(r.pmu, r.pmu_values) != 0) /* prime counters */
        r.pmu_failed = true;
    if (arm_timer(&r) != 0) {
        if (opts->attach_pid) {
            tracer_detach_all(&r.tracer);
        } else {
            kill(r.tracer.first_pid, SIGKILL);
            tracer_resume_all(&r.tracer);
            while (!r.tracer.first_exited && waitpid(r.tracer.first_pid, NULL, __WALL) < 0 &&
                   errno == EINTR)
                ;
        }
        goto out;
    }
    tracer_resume_all(&r.tracer);

    run_loop(&r);
    stop_sampling(&r);
    /* Children that outlive the first process run on without us. */
    tracer_detach_all(&r.tracer);
    int written = finish_profile(&r);
    if (opts->attach_pid)
        rc = written == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    else if (WIFSIGNALED(r.tracer.first_status))
        rc = 128 + WTERMSIG(r.tracer.first_status);
    else
        rc = WEXITSTATUS(r.tracer.first_status);
    if (written != 0 && rc == 0)
        rc = PT_EXIT_USAGE; /* the run went fine, but its profile is lost */

out:
    output_abort(r.out);
    if (r.timer_fd >= 0)
        close(r.timer_fd);
    if (r.signal_fd >= 0)
        profsig_close(r.signal_fd, &r.original_mask);
    if (r.pmu)
        pmu_close(r.pmu);
    free(r.pmu_values);
    free_scratch(&r);
    tracer_destroy(&r.tracer);
    return rc;
}
