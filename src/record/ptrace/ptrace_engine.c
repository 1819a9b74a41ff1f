/*
 * ptrace_engine.c - the ptrace engine (engine.h, docs/recording.md): the
 * profiler stops every thread that ran at each tick (with more such
 * threads than CPUs, those that ran half a period: find_idle()).
 *
 * One thread does everything: a poll() over the tick clock (tick_clock.h:
 * absolute, jittered deadlines, never back to back) and a signalfd
 * (SIGCHLD for ptrace events, and the signals sent to the profiler itself,
 * handled as profiler_signals.h says).  What both engines share is in
 * recording.h.  Between samples every ptrace stop
 * is answered at once, so new threads, exits and the target's own signals
 * never wait for the next tick.  A sample stops those threads, copies what
 * must be copied while they stand still (registers, the top of the stack),
 * resumes them, and only then does the slow work: CPU times, unwinding,
 * map refreshes, writing.  A stop taken at a system call's exit stands
 * for what syscall_exits.h says.
 */
#include "record/engine.h"
#include "record/interp/interp.h"
#include "record/ptrace/idle_cpu.h"
#include "record/jit_maps.h"
#include "record/output.h"
#include "record/own_session.h"
#include "record/profiler_signals.h"
#include "record/recorder.h"
#include "record/recording.h"
#include "unwind/regs.h"
#include "record/ptrace/quiet_threads.h"
#include "record/ptrace/sample_queue.h"
#include "record/ptrace/syscall_exits.h"
#include "record/stack_capture.h"
#include "unwind/stack.h"
#include "record/ptrace/tracer.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the target may take to show it received a signal the profiler
 * got too (terminal, killpg) before the profiler forwards it itself. */
#define SIGNAL_ECHO_NS (100 * 1000 * 1000ULL)
/* After Ctrl-C or SIGTERM, the profile waits this long for the program to
 * die of it (its exit is then recorded) before it is written anyway. */
#define EXIT_GRACE_NS (1000 * 1000 * 1000ULL)
/* Maps are re-read at least this often (and at once for an unknown PC). */
#define MAPS_REFRESH_NS (500 * 1000 * 1000ULL)
/* A thread that does not stop within this time is left out of a sample. */
#define STOP_PATIENCE_NS (100 * 1000 * 1000ULL)
/* A sample waits at least this long (or a quarter period) for its threads
 * to stop before going on without those still waiting for a CPU. */
#define STOP_WINDOW_MIN_NS (100 * 1000ULL)

/* Where a thread's interval was cut (spells.h). */
enum cut_kind {
    CUT_INTO_WAIT, /* where the thread began a wait */
    CUT_FROM_WAIT, /* where it came out of one */
    CUT_MOVED_ON,  /* in the middle, where it ran on in another call */
    CUT_EXIT_TAIL, /* its run from its last entry to its exit */
    CUT_KINDS
};

/* An entry for the earlier part of a thread's interval. */
struct spell_cut_entry {
    uint64_t at_ns;
    struct prof_thread_sample entry;
    enum cut_kind kind;
};

/* Where a sample's time goes, summed over the run (the -d summary). */
struct sample_costs {
    uint64_t check_ns;        /* reading schedstat to find the idle threads */
    uint64_t window_ns;       /* first interrupt to the last resume */
    uint64_t copy_ns;         /* copying registers, schedstat and stacks */
    uint64_t unwind_ns;       /* after the resume: unwinding */
    uint64_t after_ns;        /* after the resume: everything (unwinding, writing, maps) */
    uint64_t taken;           /* samples taken (written ones are r->samples) */
    uint64_t polled;          /* ...of them with polling for the stops on */
    uint64_t stopped;         /* threads copied in time, summed over samples */
    uint64_t late;            /* threads copied after their sample was built */
    uint64_t reused;          /* threads whose last copy was reused */
    uint64_t left_out;        /* threads that ran less than a period since their copy */
    uint64_t crowded_rounds;  /* rounds that could leave threads out (round_leaves_out) */
    uint64_t cuts[CUT_KINDS]; /* parts of intervals written, by kind */
    uint64_t truncated;       /* stacks cut at the end of their copy */
};

/* A stack to copy, and the process whose memory holds it. */
struct pending_copy {
    pid_t pid;
    pid_t tid;
    struct stack_copy copy;
};

struct recorder {
    struct recording rec; /* the output, the measurement source, signals, the ticks */
    const struct record_options *opts;
    struct tracer tracer;

    bool sampling;       /* the ticks run and samples are taken */
    bool stop_requested; /* Ctrl-C, SIGTERM or --duration */
    uint64_t finish_by;  /* sampling stopped: write the profile by then (monotonic) */
    struct profsig_job job;
    int finish_rc; /* output_finish()'s, once the profile is finished */
    /* Deliveries to the target target_got_by() accounted for, per signal. */
    uint64_t signals_explained[NSIG];

    /* samples waiting for threads that stop late */
    struct sample_queue queue;
    /* --format pperf, sampler: every thread that ran is stopped at every
     * tick and its sample waits for it, as the original did.  Otherwise a
     * round stops only the threads that ran a period of CPU time since
     * their last copy, and a copy taken late goes to the next sample. */
    bool together;
    /* Which rounds leave out the threads that ran little (find_idle):
     * crowded ones (the default), all (PTPROF_ROUNDS=periods) or none
     * (PTPROF_ROUNDS=every); this round's answer in round_by_periods. */
    enum { ROUNDS_WHEN_CROWDED, ROUNDS_BY_PERIODS, ROUNDS_EVERY_THREAD } rounds;
    bool round_by_periods;
    /* What the threads looked at this round ran and waited for a CPU since
     * their last look (own_session_round()), and when the last round began. */
    uint64_t round_wanted_ns;
    uint64_t last_round_ns;
    struct quiet_threads quiet; /* a crowded round's quiet threads, by the process clock */
    bool in_stop_window;        /* tracer_stop_all() is running */
    /* Intervals cut where a thread's state changed (spells.h): the last
     * rounds' instants, to know a thread's mark is from the round before. */
    bool cut_spells;                     /* off with PTPROF_SPELLS=0, and for --format pperf */
    uint64_t round_ns[SAMPLE_QUEUE_MAX]; /* the last rounds' instants, a ring */
    size_t nrounds;
    struct spell_cut_entry *cuts; /* this round's, until its sample is built */
    size_t ncuts, cuts_cap;

    /* per-sample scratch */
    struct pending_copy *copies; /* stack copies of a batch of stopped threads */
    size_t copies_cap;
    struct stack_copy *batch_copies;
    size_t batch_copies_cap;
    bool *maps_refreshed; /* per process, this sample */
    size_t maps_refreshed_cap;
    uint64_t next_maps_refresh;

    /* Polling for stops while a CPU is free (idle_cpu.h). */
    struct idle_cpu idle;
    bool spin_fixed; /* PTPROF_SPIN_NS set: always that, free CPU or not */

    /* benchmark knobs (read_benchmark_knobs) */
    bool fixed_copy; /* PTPROF_STACK_GROW=0: the configured copy size, always */
    int pin_cpu;     /* PTPROF_CPU=N: the tracer runs on CPU N only; -1 = anywhere */

    /* What the samples stopped at a system call's exit stand for. */
    struct syscall_exits syscall_exits;

    /* statistics */
    uint64_t samples, latency_ns;
    uint64_t parts; /* of the samples written, one-thread parts of intervals (spells.h) */
    struct sample_costs costs;
};

/* --- per-sample buffers --------------------------------------------------- */

static void free_scratch(struct recorder *r)
{
    free(r->cuts);
    quiet_threads_free(&r->quiet);
    free(r->copies);
    free(r->batch_copies);
    free(r->maps_refreshed);
    sample_queue_free(&r->queue);
    syscall_exits_free(&r->syscall_exits);
}

/* --- sampling ------------------------------------------------------------- */

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
 * holding SP (looked up again only when SP leaves the one found last), or
 * of the main thread's stack when it grew below the maps last read. */
static uint64_t stack_top(struct recorder *r, struct thread *th, uint64_t sp)
{
    if (sp >= th->stack_lo && sp < th->stack_hi)
        return th->stack_hi;
    const struct map_entry *m = process_stack_at(&r->tracer.procs.procs[th->proc], sp);
    th->stack_lo = m ? (sp < m->start ? sp : m->start) : 0;
    th->stack_hi = m ? m->end : 0;
    return th->stack_hi;
}

static int by_pid(const void *a, const void *b)
{
    const struct pending_copy *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The interpreter frames of the threads whose stacks were just copied,
 * exact while they stand still; frames on the C stack come from the copy.
 * The names of code the reader already knows wait for the resume
 * (interp_finish() in unwind_captured()). */
static void read_interp_frames(struct recorder *r, struct tracer *t, size_t n)
{
    for (size_t i = 0; r->rec.interp && i < n; i++) {
        struct thread *th = thread_find(&t->threads, r->copies[i].tid);
        if (!th)
            continue;
        if (!th->interp)
            th->interp = xcalloc(1, sizeof(*th->interp));
        struct interp_when when = {.stopped = true, .copy = th->snap, .defer = true};
        interp_read(r->rec.interp, &t->procs.procs[th->proc], th->tid, &when, th->interp);
    }
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
        th->at_syscall_exit = !th->before_signal && regs_syscall_exit(&th->snap->regs) >= 0;
        uint64_t cpu_before = th->cpu_ns;
        struct thread_sched sched;
        /* After PTRACE_GETREGSET, which waited until the thread was off its
         * CPU: its counters are final for this stop. */
        th->idle_known = thread_read_sched(th, &sched);
        th->sched_seen_ns = 0;
        /* Resumed, it goes on where it got its CPU: the next round reads it. */
        th->quiet = false;
        th->left_out_at_look = false;
        th->still = false;
        if (th->idle_known) {
            th->idle_since = sched;
            th->looked = sched;
            th->sched = sched;
            th->sched_seen_ns = realtime_ns();
            th->cpu_ns = sched.cpu_ns;
        } else if (!thread_read_cpu(th, &th->cpu_ns)) {
            th->cpu_ns = 0;
        }
        th->cpu_delta = th->cpu_ns > cpu_before ? th->cpu_ns - cpu_before : 0;
        th->copied_at = start;
        th->ran_seen_at = start;
        th->next_check = 0;
        /* Without call stacks, a stop at a call's exit still needs the
         * stack's top to find the code that made the call. */
        if (!stacks && !th->at_syscall_exit)
            continue;
        bool to_top = false;
        uint64_t sp = th->snap->sp;
        size_t want = r->fixed_copy
                          ? th->copy_limit
                          : stack_copy_plan(sp, stack_top(r, th, sp), th->copy_limit, &to_top);
        stack_snapshot_reserve(th->snap, want);
        r->copies = xgrow(r->copies, &r->copies_cap, ncopies + 1, sizeof(*r->copies));
        r->copies[ncopies++] =
            (struct pending_copy){.pid = th->pid,
                                  .tid = th->tid,
                                  .copy = {.snap = th->snap, .want = want, .to_top = to_top}};
    }
    if (ncopies > 0) {
        copy_stacks(r, ncopies);
        read_interp_frames(r, t, ncopies);
    }
    r->costs.copy_ns += monotonic_ns() - start;
}

/* --- after the resume ------------------------------------------------------ */

static void ensure_maps_know(struct recorder *r, struct process *p, const uint64_t *pcs, size_t n,
                             bool code, uint64_t wall, bool *refreshed)
{
    if (*refreshed)
        return;
    for (size_t k = 0; k < n; k++) {
        if (code ? !process_knows_code(p, pcs[k]) : !process_knows_pc(p, pcs[k])) {
            /* A library mapped since the last look (dlopen): report it
             * before the sample that needs it. */
            if (process_refresh_maps(p, r->rec.out, wall) && p->unwinder)
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
    if (mode == STACK_NONE && !th->at_syscall_exit) {
        pcs[0] = th->pc;
        return 1;
    }
    uint64_t start = monotonic_ns();
    if (!p->unwinder)
        p->unwinder = dwarf_unwinder_new(p->pid);
    bool cut = false;
    int depth;
    if (mode == STACK_NONE) {
        /* Only as far as the code that made the call (syscall_exits.h). */
        depth = p->unwinder ? dwarf_unwind(p->unwinder, th->tid, th->snap, pcs, 8, NULL) : 0;
        if (depth == 0)
            pcs[depth++] = th->pc;
        r->costs.unwind_ns += monotonic_ns() - start;
        return depth;
    } else if (mode == STACK_FP) {
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
    /* Deeper than the frames kept: its outer frames are lost too. */
    th->truncated = cut || depth >= STACK_MAX_DEPTH;
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

/* CPU time a thread on its way back into its call may have used: more,
 * and it runs code of its own (its call returned). */
#define REBLOCK_MAX_NS (100 * 1000ULL)

/*
 * A thread interrupted in a blocking call goes back into it when resumed:
 * it runs for that, so its schedstat moves, though its registers and stack
 * are those of the capture.  Once /proc/PID/task/TID/syscall shows it
 * blocked again in the same call (or in restart_syscall) at the same PC and
 * SP, having been put on a CPU exactly once since the capture, its new
 * counters become the mark: a sleeping thread is then stopped once, not at
 * every sample.  The counters are read first: if it moves after that, the
 * next sample sees it.  A thread not back yet (not put on a CPU since, or
 * on one now, having run less than a way back costs) is looked at again at
 * the next round, its copy standing for it meanwhile: on a busy machine it
 * waits for a CPU past the round's end, and taken for one that ran, it
 * was stopped again at every round, each stop sending it back into its
 * call (0.21 stops a round for blockers' four sleeping threads beside two
 * CPU-bound jobs).
 */
static void note_reblocked(struct thread *th)
{
    th->check_reblocked = false;
    struct thread_sched now;
    int nr;
    uint64_t sp, pc;
    if (!thread_read_sched(th, &now) || now.runs > th->idle_since.runs + 1)
        return;
    bool in_call = thread_read_syscall(th, &nr, &sp, &pc);
    bool going_back =
        now.cpu_ns < th->idle_since.cpu_ns + REBLOCK_MAX_NS && !in_call && thread_is_runnable(th);
    if (now.runs == th->idle_since.runs || going_back) {
        th->check_reblocked = true; /* not back yet */
        return;
    }
    if (!in_call || sp != th->sp || pc != th->pc)
        return;
    if (nr != th->syscall_raw && !syscall_is_restart(nr))
        return;
    th->idle_since = now;
    th->looked = now;
    /* Blocked again: where it sleeps now names a call the copy could not. */
    if (syscall_is_restart(th->syscall))
        th->syscall = syscall_origin_name(&th->origin, nr, pc, sp, th->pid, th->tid);
}

/* note_reblocked() for a thread not back in its call at the last round:
 * false while it is still on its way back. */
static bool back_in_call(struct thread *th)
{
    note_reblocked(th);
    return !th->check_reblocked;
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
        .syscall = prof_syscall(th->syscall),
        .flags = (uint16_t)flags,
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
    /* The PC runs: it must be in code (a stale map may hold data there);
     * a caller's return address is only looked up (garbage from a broken
     * chain would refresh the maps at every sample). */
    ensure_maps_know(r, p, &th->pc, 1, true, wall, refreshed);
    int depth = unwind_captured(r, th, p, pcs);
    if (th->before_signal) {
        if (depth > 0)
            depth = from_interrupted_pc(pcs, depth, th->sig_pc);
        th->pc = th->sig_pc;
        th->syscall = -1;
    }
    if (depth > 1)
        ensure_maps_know(r, p, pcs + 1, (size_t)depth - 1, false, wall, refreshed);
    if (th->cpu_delta > 0)
        r->syscall_exits.ran_samples++;
    if (th->at_syscall_exit && th->cpu_delta > 0 &&
        !syscall_exits_keep(&r->syscall_exits, th->proc, th->pid, th->cpu_delta, monotonic_ns())) {
        /* It stands for the code that led to the call. */
        depth = syscall_exits_to_caller(&r->syscall_exits, th->proc, p, pcs, depth);
        th->pc = pcs[0];
    }
    interp_finish(r->rec.interp, p, th->interp);
    depth = interp_merge(r->rec.interp, p, th->interp, pcs, depth, STACK_MAX_DEPTH);
    th->callers = r->opts->stack_mode != STACK_NONE ? spell_callers(pcs, depth) : 0;
    th->stack = depth > 0 && r->opts->stack_mode != STACK_NONE
                    ? output_stack(r->rec.out, pcs, (uint32_t)depth)
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
    long n = sample_queue_flush(&r->queue, r->rec.out, force);
    if (n < 0) {
        /* The writer said which file and why, once: sampling stops, the
         * program runs on, the exit status says the profile is incomplete. */
        if (r->sampling)
            pt_debug("the profile cannot be written: sampling stops");
        r->sampling = false;
        return;
    }
    r->samples += (uint64_t)n;
}

/* Rounds that leave out the threads that ran little (find_idle(), never
 * for --format pperf): a copy taken late goes to the next round's sample
 * instead of a place kept in its own. */
static bool by_periods(const struct recorder *r)
{
    return r->round_by_periods;
}

/* More threads than this per CPU make a round crowded: each gets at most
 * an eighth of a CPU, and stopping every one that ran costs more rounds
 * than a tracer gets CPU time for (docs/recording.md, "Many threads"). */
#define CROWDED_THREADS_PER_CPU 8

static bool round_leaves_out(const struct recorder *r)
{
    if (r->together)
        return false;
    switch (r->rounds) {
    case ROUNDS_BY_PERIODS:
        return true;
    case ROUNDS_EVERY_THREAD:
        return false;
    case ROUNDS_WHEN_CROWDED:
        break;
    }
    return r->tracer.threads.count > (size_t)CROWDED_THREADS_PER_CPU * r->tracer.ncpus;
}

static int by_cut_time(const void *a, const void *b)
{
    const struct spell_cut_entry *x = a, *y = b;
    return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

/* The instant of the latest round before T, 0 if none is known. */
static uint64_t round_before(const struct recorder *r, uint64_t t)
{
    size_t n = r->nrounds < SAMPLE_QUEUE_MAX ? r->nrounds : SAMPLE_QUEUE_MAX;
    for (size_t k = 1; k <= n; k++) {
        uint64_t x = r->round_ns[(r->nrounds - k) % SAMPLE_QUEUE_MAX];
        if (x < t)
            return x;
    }
    return 0;
}

/* A cut's entry is the earlier part of its thread's interval: time, not a
 * sample (PROF_THREAD_PART). */
static void add_cut(struct recorder *r, const struct spell_cut_entry *cut)
{
    r->cuts = xgrow(r->cuts, &r->cuts_cap, r->ncuts + 1, sizeof(*r->cuts));
    r->cuts[r->ncuts] = *cut;
    r->cuts[r->ncuts++].entry.flags |= PROF_THREAD_PART;
}

/* Whether TH's interval up to its entry E at T_NS (its first sample since
 * its mark) is cut (spells.h); if so, the cut is added to r->cuts. */
static void find_cut(struct recorder *r, struct thread *th, const struct prof_thread_sample *e,
                     uint64_t t_ns)
{
    if (!r->cut_spells || !th->sched_seen_ns || !th->mark.valid ||
        th->mark.time_ns != round_before(r, t_ns))
        return;
    struct spell_mark now = {
        .valid = true,
        .time_ns = t_ns,
        .seen_ns = th->sched_seen_ns,
        .from_ns = th->sched_seen_ns,
        .cpu_ns = th->sched.cpu_ns,
        .wait_ns = th->sched.wait_ns,
        .runs = th->sched.runs,
        .callers = th->callers,
        .entry = *e,
    };
    struct spell_cut_entry cut;
    if (!spell_cut(&th->mark, &now, &cut.at_ns, &cut.entry))
        return;
    cut.kind = spell_entry_blocked(&cut.entry)   ? CUT_FROM_WAIT
               : spell_entry_blocked(&now.entry) ? CUT_INTO_WAIT
                                                 : CUT_MOVED_ON;
    add_cut(r, &cut);
}

/*
 * A thread at its exit: what it ran since its last entry (half a tick on
 * average, which no later entry would hold) goes to that entry's place,
 * where the run was last seen, in an entry at the exit (spells.h).  The
 * exit stop comes before the kernel tears the thread (or the process's
 * address space) down, so that work is not in it.  A thread last seen
 * blocked ran, if at all, only to leave its wait: nothing is added.
 */
static void thread_exiting(void *ctx, struct thread *th)
{
    struct recorder *r = ctx;
    struct thread_sched now;
    if (!r->cut_spells || !r->sampling || !th->mark.valid || spell_entry_blocked(&th->mark.entry) ||
        !thread_read_sched(th, &now) || now.cpu_ns <= th->mark.cpu_ns)
        return;
    struct spell_cut_entry tail = {
        .at_ns = realtime_ns(), .entry = th->mark.entry, .kind = CUT_EXIT_TAIL};
    tail.entry.cpu_ns = now.cpu_ns;
    if (tail.at_ns > th->mark.time_ns)
        add_cut(r, &tail);
}

/* The cuts found, each as a sample of its own in its place before the
 * samples that hold the later entries (spells.h). */
static void write_cuts(struct recorder *r)
{
    if (r->ncuts == 0)
        return;
    qsort(r->cuts, r->ncuts, sizeof(*r->cuts), by_cut_time);
    uint64_t newest = sample_queue_newest_ns(&r->queue);
    size_t kept = 0;
    for (size_t k = 0; k < r->ncuts; k++) {
        /* A run cut in the middle or at an exit is the earlier place's, as
         * is the reading taken where it was seen; a wait's edge keeps the
         * later reading, which stands for the interval up to it. */
        bool earlier = r->cuts[k].kind == CUT_MOVED_ON || r->cuts[k].kind == CUT_EXIT_TAIL;
        if (!sample_queue_insert(&r->queue, r->cuts[k].at_ns, &r->cuts[k].entry, earlier)) {
            /* An exit after the newest sample waits for the next one. */
            if (r->cuts[k].kind == CUT_EXIT_TAIL && r->cuts[k].at_ns > newest)
                r->cuts[kept++] = r->cuts[k];
            continue;
        }
        r->parts++;
        r->costs.cuts[r->cuts[k].kind]++;
    }
    r->ncuts = kept;
}

/* What THEN's entry (in the sample at WALL) was: the mark the next
 * interval of the thread is cut against. */
static void set_mark(struct thread *th, const struct prof_thread_sample *e, uint64_t wall)
{
    th->mark.valid = (th->finished || th->reused) && th->sched_seen_ns != 0;
    th->mark.time_ns = wall;
    th->mark.seen_ns = th->sched_seen_ns;
    /* Held stopped after its copy until resumed: that is not a wait. */
    th->mark.from_ns =
        !th->reused && th->resumed_ns > th->sched_seen_ns ? th->resumed_ns : th->sched_seen_ns;
    th->mark.cpu_ns = th->sched.cpu_ns;
    th->mark.wait_ns = th->sched.wait_ns;
    th->mark.runs = th->sched.runs;
    th->mark.callers = th->callers;
    th->mark.entry = *e;
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
        r->costs.late++;
        /* A sample that waits for it gets it, whatever rounds are now (one
         * built before the rounds became crowded waits for its copy and
         * holds back every later one); else, in rounds by periods, the
         * copy goes to the next round's sample. */
        struct prof_thread_sample e = entry_of(th);
        uint64_t first = 0, last = 0;
        if (sample_queue_fill(&r->queue, &e, &first, &last) > 0) {
            find_cut(r, th, &e, first);
            th->finished = true;
            set_mark(th, &e, last);
        } else if (by_periods(r)) {
            th->pending_entry = true;
        }
        if (th->check_reblocked)
            note_reblocked(th);
    }
    write_cuts(r);
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
        sample_queue_fill(&r->queue, &e, NULL, NULL);
    }
}

/* After the resume: everything that takes time, for the sample at WALL. */
static void build_sample(struct recorder *r, uint64_t wall)
{
    struct thread_table *tt = &r->tracer.threads;
    reset_maps_refreshed(r);
    /* CPU times of the threads neither copied nor known idle first, right
     * after the resume: unwinding takes time, and CPU time read after it
     * would include running done since. */
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (!th->captured && !th->reused && !th->awaited && !th->left_out)
            thread_read_cpu(th, &th->cpu_ns);
    }
    /* The copies first (unwound, their calls named), then the cuts they
     * call for, then this round's sample. */
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        th->finished = false;
        if (th->captured && !th->announced && !th->exiting && !th->pending_entry) {
            th->deferred = false;
            finish_capture(r, th, wall);
            th->finished = true;
            struct prof_thread_sample e = entry_of(th);
            find_cut(r, th, &e, wall);
        }
    }
    struct open_sample *s = sample_queue_open(&r->queue, wall, r->rec.pmu_values);
    r->round_ns[r->nrounds++ % SAMPLE_QUEUE_MAX] = wall;
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
        if (th->pending_entry) {
            /* Copied after the previous round's sample was built. */
            th->pending_entry = false;
            struct prof_thread_sample e = entry_of(th);
            sample_add(s, &e);
            th->mark.valid = false;
            continue;
        }
        if (th->left_out || (th->awaited && !th->captured && by_periods(r)))
            continue; /* its time goes to its next entry */
        if (th->awaited && !th->captured) {
            /* On its way to a CPU: its copy comes later (finish_late_stops). */
            sample_wait(s, (uint32_t)th->pid, (uint32_t)th->tid);
            continue;
        }
        /* A copy of this round was finished above (announced, exiting
         * and pending threads went on before here). */
        struct prof_thread_sample e = entry_of(th);
        sample_add(s, &e);
        set_mark(th, &e, wall);
        /* Earlier samples may be waiting for this thread too. */
        if (th->captured && r->queue.count > 1)
            sample_queue_fill(&r->queue, &e, NULL, NULL);
    }
    /* Last, to give the threads interrupted in a call time to go back in. */
    for (size_t i = 0; i < tt->count; i++)
        if (tt->threads[i].captured && tt->threads[i].check_reblocked)
            note_reblocked(&tt->threads[i]);
    write_cuts(r);
    write_ready(r, false);
}

/* A thread that ran RAN of CPU time in the ELAPSED since its copy: when
 * it may have run DUE, if it goes on at that rate (no sooner than at one
 * CPU's, no later than CHECK_MAX_PERIODS periods).  Checked later, its
 * next sample would carry more time (fewer samples, not a bias: when a
 * thread is stopped depends on its CPU time, never on where it is), but a
 * thread that blocked meanwhile would be seen in its wait that much late,
 * its wall time since its last entry charged to the wait: with 8 periods,
 * record_waits' threads of 2-5 ms phases gave their reads 36% of the wall
 * time against 27%. */
#define CHECK_MAX_PERIODS 1
static uint64_t until_due(uint64_t period, uint64_t due, uint64_t ran, uint64_t elapsed)
{
    uint64_t left = due - ran, longest = CHECK_MAX_PERIODS * period;
    if (ran == 0 || elapsed / ran >= longest / left)
        return longest;
    uint64_t wait = left * (elapsed / ran);
    return wait < left ? left : wait > longest ? longest : wait;
}

/* Reads TH's schedstat and sorts it (find_idle()): reused when it has not
 * run since its copy, else what it ran (ran_ns, counted in *NRAN).  False
 * when it cannot be read. */
static bool look_at(struct recorder *r, struct thread *th, size_t *nran, uint64_t *cpu_ns)
{
    struct thread_sched now;
    if (!thread_read_sched(th, &now))
        return false;
    *cpu_ns = now.cpu_ns;
    th->still = now.cpu_ns == th->looked.cpu_ns && now.runs == th->looked.runs;
    if (!th->still)
        th->ran_seen_at = monotonic_ns();
    th->looked = now;
    th->left_out_at_look = false;
    uint64_t wanted = now.cpu_ns + now.wait_ns;
    if (wanted > th->wanted_ns)
        r->round_wanted_ns += wanted - th->wanted_ns;
    th->wanted_ns = wanted;
    th->quiet = now.cpu_ns == th->idle_since.cpu_ns && now.runs == th->idle_since.runs;
    if (th->quiet) {
        th->reused = true;
        th->cpu_ns = now.cpu_ns;
        th->sched = now;
        th->sched_seen_ns = realtime_ns();
        r->costs.reused++;
        return true;
    }
    th->ran_ns = now.cpu_ns > th->idle_since.cpu_ns ? now.cpu_ns - th->idle_since.cpu_ns : 0;
    (*nran)++;
    return true;
}

/* quiet_threads_end()'s: a postponed thread read after all, or reused. */
struct settling {
    struct recorder *r;
    size_t nran;
    uint64_t mono; /* the round's instant */
};
static bool look_postponed(void *ctx, struct thread *th, uint64_t *cpu_ns)
{
    struct settling *s = ctx;
    return look_at(s->r, th, &s->nran, cpu_ns);
}
static void reuse_postponed(void *ctx, struct thread *th)
{
    struct settling *s = ctx;
    /* Its CPU time has not moved: what its last look read still holds. */
    if (th->quiet) {
        th->reused = true;
        th->cpu_ns = th->idle_since.cpu_ns;
        s->r->costs.reused++;
        return;
    }
    /* Left out at its last look, and it has not run since: it still waits
     * for a CPU, having run what it had then since its copy. */
    if (s->mono < th->next_check) {
        th->left_out = true;
        s->r->costs.left_out++;
        return;
    }
    th->ran_ns =
        th->looked.cpu_ns > th->idle_since.cpu_ns ? th->looked.cpu_ns - th->idle_since.cpu_ns : 0;
    th->still_runnable = true;
    s->nran++;
}

/*
 * A round's plan.  A thread whose schedstat (CPU time and the number of
 * times it was put on a CPU) has not moved since its last capture has not
 * run since: sleeping or waiting for a CPU, its registers and stack are
 * what was copied, so the copy is reused instead of stopping it again.
 * Both numbers, because the kernel updates a running thread's CPU time
 * only at its scheduler ticks; the run count moves the moment it gets a
 * CPU.
 *
 * With PTPROF_ROUNDS=periods (docs/recording.md: not the default, it
 * shows waits late), more threads that ran than CPUs, and not --format
 * pperf, a thread
 * that ran less than half a period of CPU time since its copy and is
 * still running or ready to run is left out of the round: its copy can
 * wait, its time goes to its next entry (whose weight it is), and it is
 * not looked at again before it can have run that much.  So a round stops
 * about as many threads as there are CPUs, not every thread that got a
 * CPU since the last one; a thread that went back to sleep is stopped, so
 * the wall-clock view sees where it waits.  Without contention every
 * thread that ran is stopped: a running thread's CPU time, read from
 * schedstat, lags by up to a scheduler tick.
 */
static void find_idle(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    uint64_t mono = monotonic_ns(), period = r->rec.clock.period, due = period / 2;
    r->round_by_periods = round_leaves_out(r);
    r->costs.crowded_rounds += r->round_by_periods;
    /* Crowded rounds read the quiet threads only when the process's clock
     * says they ran (quiet_threads.h). */
    struct quiet_threads *q = by_periods(r) && !r->quiet.off ? &r->quiet : NULL;
    if (q)
        quiet_threads_begin(q, r->tracer.procs.count);
    struct settling settling = {r, 0, mono};
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        th->still_runnable = false;
        th->captured = false;
        th->before_signal = false;
        bool reblocking = th->check_reblocked; /* not back in its call at the last round */
        th->check_reblocked = false;
        th->reused = false;
        th->left_out = false;
        th->ran_ns = UINT64_MAX;
        bool looked = false;
        uint64_t cpu = 0;
        if (th->stopped || th->group_stop || th->late || th->in_vfork || th->announced ||
            th->exiting || th->awaited || !th->idle_known || !th->captured_once) {
            th->quiet = false;
            th->left_out_at_look = false;
        } else if (th->pending_entry) {
            th->reused = true; /* copied since the last round: not again */
            th->quiet = false;
        } else if (reblocking && !back_in_call(th)) {
            /* Copied at the last round (neither quiet nor left out since). */
            th->reused = true; /* still on its way back into its call */
            r->costs.reused++;
        } else if (q && quiet_threads_postpone(q, tt, i)) {
            continue;
        } else if (by_periods(r) && mono < th->next_check) {
            th->left_out = true; /* cannot have run enough yet */
            th->quiet = false;
            r->costs.left_out++;
        } else {
            looked = look_at(r, th, &settling.nran, &cpu);
        }
        if (q && looked)
            quiet_threads_read(q, th, cpu);
        else if (q)
            quiet_threads_unlooked(q, tt, i);
    }
    if (q)
        quiet_threads_end(q, tt, look_postponed, reuse_postponed, &settling);
    if (!by_periods(r) || settling.nran <= r->tracer.ncpus)
        return;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (th->ran_ns >= due || (!th->still_runnable && !thread_is_runnable(th)))
            continue;
        th->left_out = true;
        th->left_out_at_look = true;
        th->next_check = mono + until_due(period, due, th->ran_ns, mono - th->copied_at);
        r->costs.left_out++;
    }
}

/* How long a sample waits for its threads to stop before it goes on
 * without the slow ones (docs/recording.md). */
static uint64_t stop_window(const struct recorder *r)
{
    uint64_t w = r->rec.clock.period / 4;
    return w < STOP_WINDOW_MIN_NS ? STOP_WINDOW_MIN_NS
           : w > STOP_PATIENCE_NS ? STOP_PATIENCE_NS
                                  : w;
}

static void take_sample(struct recorder *r)
{
    if (sample_queue_full(&r->queue)) {
        r->rec.clock.dropped++; /* stops stopped coming: no room for one more */
        return;
    }
    recording_read_pmu(&r->rec);   /* the machine's, not the threads': outside the stop */
    uint64_t wall = realtime_ns(); /* the threads' instant: right after the reading */
    uint64_t t_check = monotonic_ns();
    give_up_on_slow_stops(r);
    r->round_wanted_ns = 0;
    find_idle(r);
    /* What the program's threads ran and waited for a CPU since they were
     * last looked at, against the time since the last round: how many
     * wanted a CPU, which decides whether the recorder needs a session of
     * its own (own_session.h). */
    own_session_round(r->round_wanted_ns, r->last_round_ns ? t_check - r->last_round_ns : 0,
                      r->tracer.ncpus, (double)(t_check - r->rec.start_mono) / 1e9);
    r->last_round_ns = t_check;
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
    r->costs.polled += r->tracer.spin_ns > 0;
    struct thread_table *tt = &r->tracer.threads;
    for (size_t i = 0; i < tt->count; i++)
        r->costs.stopped += tt->threads[i].captured;
    if (r->tracer.first_exited)
        return;
    build_sample(r, wall);
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

/* Deliveries of SIG to the target are explained one by one, by the
 * profiler's signals they answer or by its own forwarding: the delivery of
 * a signal it forwarded is not the program getting the next one too (a
 * second SIGTERM would be swallowed). */
static bool target_got_by(struct recorder *r, int sig, uint64_t since)
{
    uint64_t delivered = r->tracer.signal_count[sig], *explained = &r->signals_explained[sig];
    if (delivered > *explained && r->tracer.last_signal_ns[sig] >= since) {
        *explained = delivered;
        return true;
    }
    /* Pending, and not one we forwarded that is still to be delivered. */
    if (*explained <= delivered && profsig_pending_in(r->tracer.first_pid, sig)) {
        *explained = delivered + 1;
        return true;
    }
    return false;
}

/* Did the target receive SIG since SINCE?  Its delivery stop may trail
 * ours by a little: it is given the time, its stops answered meanwhile. */
static bool target_got(void *ctx, int sig, uint64_t since)
{
    struct recorder *r = ctx;
    uint64_t give_up = since + SIGNAL_ECHO_NS;
    for (;;) {
        drain(r);
        if (target_got_by(r, sig, since - SIGNAL_ECHO_NS))
            return true;
        uint64_t now = monotonic_ns();
        if (now >= give_up || r->tracer.first_exited) {
            /* profiler_signals.c forwards it now: that delivery is ours. */
            uint64_t delivered = r->tracer.signal_count[sig];
            if (r->signals_explained[sig] < delivered)
                r->signals_explained[sig] = delivered;
            r->signals_explained[sig]++;
            return false;
        }
        uint64_t wait = give_up - now;
        struct timespec slice = ns_timespec(wait < 5000000 ? wait : 5000000);
        sigtimedwait(&r->tracer.sigchld_only, NULL, &slice);
    }
}

static bool target_job_stopped(void *ctx)
{
    struct recorder *r = ctx;
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

static bool target_gone(void *ctx)
{
    return ((struct recorder *)ctx)->tracer.first_exited;
}

static void pump(void *ctx)
{
    drain(ctx);
}

/* The target, as profiler_signals.h handles signals for it. */
static struct profsig_program target_of(struct recorder *r)
{
    return (struct profsig_program){.pid = r->tracer.first_pid,
                                    .attached = r->opts->attach_pid != 0,
                                    .ctx = r,
                                    .got = target_got,
                                    .job_stopped = target_job_stopped,
                                    .gone = target_gone,
                                    .pump = pump};
}

static void stop_sampling(struct recorder *r)
{
    if (!r->sampling)
        return;
    r->sampling = false;
    tick_clock_stop(&r->rec.clock);
    r->rec.end_mono = monotonic_ns();
}

/* The terminal stopped the job: stop with the target so the shell sees it. */
static void follow_job_stop(struct recorder *r)
{
    struct profsig_program target = target_of(r);
    profsig_follow_job_stop(&r->job, &target, r->rec.signal_fd);
}

static void on_profiler_signal(void *ctx, const struct signalfd_siginfo *si)
{
    struct recorder *r = ctx;
    int sig = (int)si->ssi_signo;
    if (own_session_echo(si, monotonic_ns()))
        return; /* the front's copy of a signal the process group got */
    if (recording_on_signal(&r->rec, sig))
        return;
    uint64_t now = monotonic_ns();
    struct profsig_program target = target_of(r);
    /* SIGCHLD: the stops are drained by the loop. */
    if (profsig_handle(&r->job, &target, sig, now) != PROFSIG_STOP)
        return;
    if (r->sampling)
        pt_debug("signal %d: sampling stops", sig);
    /* The program most likely dies of it: give it the time to, so its
     * exit is in the profile.  A second signal means now. */
    r->finish_by = r->stop_requested ? now : now + EXIT_GRACE_NS;
    r->stop_requested = true;
    stop_sampling(r);
}

static void read_signals(struct recorder *r)
{
    profsig_read(r->rec.signal_fd, on_profiler_signal, r);
}

/* --- setup, the loop, the end --------------------------------------------- */

/*
 * Knobs for the benchmarks (bench/README.md), to measure the choices
 * docs/recording.md explains: PTPROF_SPIN_NS (poll for stops this long
 * before sleeping, whether a CPU is free or not; 0 never polls),
 * PTPROF_MIN_GAP_PCT (read by recording_begin()), PTPROF_STACK_GROW=0
 * (copy the configured size, never more), PTPROF_CPU=N (keep the tracer
 * on CPU N), PTPROF_CALL_EXITS=raw (every sample that stopped at a system
 * call's exit stays there: syscall_exits.h), PTPROF_ROUNDS=periods (a
 * round leaves out the threads that ran little: find_idle()), PTPROF_QUIET=0
 * (a crowded round reads every thread's schedstat: quiet_threads.h).
 */
static void read_benchmark_knobs(struct recorder *r)
{
    const char *spin = getenv("PTPROF_SPIN_NS");
    r->spin_fixed = spin && *spin;
    if (r->spin_fixed)
        r->tracer.spin_ns = strtoull(spin, NULL, 10);
    const char *grow = getenv("PTPROF_STACK_GROW");
    r->fixed_copy = grow && strcmp(grow, "0") == 0;
    const char *cpu = getenv("PTPROF_CPU");
    r->pin_cpu = cpu && *cpu ? atoi(cpu) : -1;
    const char *rounds = getenv("PTPROF_ROUNDS");
    r->rounds = !rounds || !*rounds              ? ROUNDS_WHEN_CROWDED
                : strcmp(rounds, "periods") == 0 ? ROUNDS_BY_PERIODS
                : strcmp(rounds, "every") == 0   ? ROUNDS_EVERY_THREAD
                                                 : ROUNDS_WHEN_CROWDED;
    const char *exits = getenv("PTPROF_CALL_EXITS");
    r->syscall_exits.raw = exits && strcmp(exits, "raw") == 0;
    const char *quiet = getenv("PTPROF_QUIET");
    r->quiet.off = quiet && strcmp(quiet, "0") == 0;
    const char *spells = getenv("PTPROF_SPELLS");
    r->cut_spells = !(spells && strcmp(spells, "0") == 0);
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

/* How long to poll for the stops of a sample while a CPU is free: they
 * come within 50 us when the threads run (docs/recording.md). */
#define SPIN_WHEN_FREE_NS (50 * 1000ULL)

static void on_timer(struct recorder *r)
{
    if (!tick_clock_due(&r->rec.clock) || !r->sampling)
        return;
    if (!r->spin_fixed)
        r->tracer.spin_ns =
            idle_cpu_free(&r->idle, monotonic_ns(), r->tracer.ncpus) ? SPIN_WHEN_FREE_NS : 0;
    take_sample(r);
    uint64_t now = monotonic_ns();
    tick_clock_next(&r->rec.clock, now);
    if (now >= r->next_maps_refresh && !r->tracer.first_exited) {
        struct process_table *pt = &r->tracer.procs;
        for (size_t i = 0; i < pt->count; i++) {
            struct process *p = &pt->procs[i];
            if (!p->exited && process_refresh_maps(p, r->rec.out, realtime_ns()) && p->unwinder)
                dwarf_unwinder_maps_changed(p->unwinder);
        }
        r->next_maps_refresh = now + MAPS_REFRESH_NS;
    }
    if (r->rec.deadline && now >= r->rec.deadline) {
        r->stop_requested = true;
        stop_sampling(r);
    }
    recording_tick(&r->rec, now);
}

static uint64_t ideal_samples(const struct recorder *r)
{
    double wall = (double)(r->rec.end_mono - r->rec.start_mono) / 1e9;
    return (uint64_t)floor(wall * r->opts->frequency);
}

/* The program's user and kernel time: its rusage once reaped (a command
 * we started), else what /proc/PID/stat said last. */
static bool program_times(const struct recorder *r, double *user_s, double *kernel_s)
{
    uint64_t user_ns, kernel_ns;
    if (r->opts->attach_pid) {
        if (!syscall_exits_process_times(r->tracer.first_pid, &user_ns, &kernel_ns))
            return false;
        *user_s = (double)user_ns / 1e9;
        *kernel_s = (double)kernel_ns / 1e9;
        return true;
    }
    struct rusage ru;
    if (!r->tracer.first_exited || getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return false;
    *user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *kernel_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return true;
}

/* How many samples stopped at a system call's exit, what was made of them,
 * and the kernel time that could justify them (docs/recording.md). */
static void print_syscall_exits(const struct recorder *r)
{
    const struct syscall_exits *x = &r->syscall_exits;
    fprintf(stderr,
            "[debug] call exits:  %llu of %llu samples of threads that ran stopped at a system "
            "call's exit (%.1f%%); %llu kept there (%.3f s of CPU), %llu charged to the code "
            "that made the call (%.3f s)\n",
            (unsigned long long)x->stops, (unsigned long long)x->ran_samples,
            x->ran_samples ? 100.0 * (double)x->stops / (double)x->ran_samples : 0.0,
            (unsigned long long)x->kept, (double)x->kept_ns / 1e9,
            (unsigned long long)(x->stops - x->kept), (double)x->moved_ns / 1e9);
    double user, kernel;
    if (program_times(r, &user, &kernel))
        fprintf(stderr,
                "[debug] program:     %.3f s user, %.3f s kernel (%.1f%% of its CPU time in the "
                "kernel)\n",
                user, kernel, user + kernel > 0 ? 100.0 * kernel / (user + kernel) : 0.0);
}

/* The tracer's own schedstat: a rate short of the one asked for is either
 * its work or its waits for a CPU (docs/recording.md). */
static void print_tracer_time(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long on_cpu = 0, waiting = 0, slices = 0;
    if (f && fscanf(f, "%llu %llu %llu", &on_cpu, &waiting, &slices) == 3)
        fprintf(stderr,
                "[debug] tracer:      %.3f s on a CPU, %.3f s ready but waiting for one, %llu "
                "times scheduled\n",
                (double)on_cpu / 1e9, (double)waiting / 1e9, slices);
    if (f)
        fclose(f);
}

/* The samples written that are rounds, not parts of intervals. */
static uint64_t rounds_written(const struct recorder *r)
{
    return r->samples > r->parts ? r->samples - r->parts : 0;
}

static void print_summary(const struct recorder *r)
{
    struct recording_summary common = {
        .latency_ns = r->latency_ns,
        .samples = rounds_written(r),
        .ideal = ideal_samples(r),
        .samples_note = "",
        .threads = r->tracer.threads.seen,
    };
    recording_print_summary(&r->rec, &common);
    fprintf(stderr, "[debug] signals:     %llu passed to the target\n",
            (unsigned long long)r->tracer.signals_passed);
    fprintf(stderr, "[debug] polling:     for the stops of %.1f%% of the samples (%s)\n",
            r->costs.taken ? 100.0 * (double)r->costs.polled / (double)r->costs.taken : 0.0,
            r->spin_fixed ? "PTPROF_SPIN_NS" : "while a CPU was free");
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
            "copy), %.2f left out (ran less than a period), %.2f deferred (stopped after the "
            "round, waiting for a CPU) per round\n",
            (double)c->stopped / taken, (double)c->reused / taken, (double)c->left_out / taken,
            (double)c->late / taken);
    char crowded[64];
    snprintf(crowded, sizeof(crowded), "those with more than %d threads per CPU",
             CROWDED_THREADS_PER_CPU);
    fprintf(stderr,
            "[debug] rounds:      %llu of %llu leaving out the threads that ran less than half a "
            "period (%s)\n",
            (unsigned long long)c->crowded_rounds, (unsigned long long)c->taken,
            r->together                        ? "never: every sample holds every thread"
            : r->rounds == ROUNDS_BY_PERIODS   ? "PTPROF_ROUNDS=periods: all"
            : r->rounds == ROUNDS_EVERY_THREAD ? "PTPROF_ROUNDS=every: none"
                                               : crowded);
    const struct quiet_threads *q = &r->quiet;
    fprintf(stderr,
            "[debug] quiet:       %.2f threads per round reused without reading their "
            "schedstat, of %.2f put off until the process's CPU clock was read; %.2f stopped "
            "or waiting to stop not read (%s)\n",
            (double)q->reads_saved / taken, (double)q->postponed_seen / taken,
            (double)q->stops_unread / taken, q->off ? "PTPROF_QUIET=0: never" : "crowded rounds");
    fprintf(stderr, "[debug] stacks:      %llu cut at the end of their copy\n",
            (unsigned long long)c->truncated);
    fprintf(stderr,
            "[debug] spells:      %llu intervals cut where a thread began a wait, %llu where "
            "it came out of one, %llu in the middle where it ran on in another call; %llu runs "
            "from a thread's last entry to its exit%s\n",
            (unsigned long long)c->cuts[CUT_INTO_WAIT], (unsigned long long)c->cuts[CUT_FROM_WAIT],
            (unsigned long long)c->cuts[CUT_MOVED_ON], (unsigned long long)c->cuts[CUT_EXIT_TAIL],
            r->cut_spells ? "" : " (off)");
    print_syscall_exits(r);
    print_tracer_time();
}

static int sort_by_start(const void *a, const void *b)
{
    const struct map_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int finish_profile(struct recorder *r)
{
    if (!r->rec.out)
        return r->finish_rc; /* finished already (interrupted, or a write failed) */
    /* Samples still waiting for a thread are written without it. */
    write_ready(r, true);
    struct process *first = &r->tracer.procs.procs[TRACER_FIRST_PROCESS];
    if (!first->exited)
        process_refresh_maps(first, r->rec.out, realtime_ns());
    for (size_t i = 0; i < r->tracer.procs.count; i++) {
        const struct process *p = &r->tracer.procs.procs[i];
        if (!p->exited)
            jit_maps_capture(r->rec.out, (uint32_t)p->pid, &p->since_exec, &p->owner);
    }
    struct prof_totals totals = {
        .wall_ns = r->rec.end_mono - r->rec.start_mono,
        .latency_ns = r->latency_ns,
        .samples = rounds_written(r),
        .ideal_samples = ideal_samples(r),
    };
    /* The raw format keeps one address space: the first process's. */
    struct map_list *seen = &first->since_exec;
    if (seen->count > 1) /* no maps, no array */
        qsort(seen->entries, seen->count, sizeof(*seen->entries), sort_by_start);
    recording_note_pmu(&r->rec);
    recording_interp_meta(&r->rec);
    int rc = output_finish(r->rec.out, &totals, seen);
    r->finish_rc = rc;
    r->rec.out = NULL;
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
        {.fd = r->rec.signal_fd, .events = POLLIN},
        {.fd = r->rec.clock.fd, .events = POLLIN},
    };
    while (!recording_over(r)) {
        int timeout = r->job.stop_pending ? 50 : -1;
        if (!r->sampling && r->rec.out) {
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
        if (!r->sampling && r->rec.out && !r->opts->attach_pid && monotonic_ns() >= r->finish_by)
            finish_profile(r); /* interrupted: the profile is complete now */
        follow_job_stop(r);
    }
}

static int start_target(struct recorder *r)
{
    if (r->opts->attach_pid)
        return tracer_attach(&r->tracer, r->opts->attach_pid);
    return tracer_launch(&r->tracer, r->opts->argv, &r->rec.original_mask);
}

/* Sampling could not start: leave the target as it would be without us
 * (attached), or end the command we started. */
static void abandon_target(struct recorder *r)
{
    if (r->opts->attach_pid) {
        tracer_detach_all(&r->tracer);
        return;
    }
    kill(r->tracer.first_pid, SIGKILL);
    tracer_resume_all(&r->tracer);
    while (!r->tracer.first_exited && waitpid(r->tracer.first_pid, NULL, __WALL) < 0 &&
           errno == EINTR)
        ;
}

static int ptrace_engine_run(const struct record_options *opts, const struct engine_choice *choice)
{
    struct recorder r = {.opts = opts};
    /* Before any thread or file: the recorder may become a child process. */
    if (!opts->attach_pid)
        own_session_split();
    /* Everything that can fail for the user's reasons fails before the
     * target exists. */
    int rc = recording_open(&r.rec, opts, choice);
    tracer_init(&r.tracer, r.rec.out, opts->inherit);
    r.tracer.on_stopped = capture_stopped;
    r.tracer.on_stopped_ctx = &r;
    r.tracer.on_exiting = thread_exiting;
    r.tracer.on_exiting_ctx = &r;
    unsigned nchannels = r.rec.pmu ? r.rec.pmu->nchannels : 0;
    bool *counter = xcalloc((size_t)nchannels + 1, sizeof(*counter));
    for (unsigned c = 0; c < nchannels; c++)
        counter[c] = r.rec.pmu->channels[c].kind == PMU_KIND_ENERGY;
    sample_queue_init(&r.queue, nchannels, counter);
    free(counter);
    r.together = opts->format == OUTPUT_PPERF;
    read_benchmark_knobs(&r);
    /* The original's format holds every thread in every sample: no cuts. */
    r.cut_spells = r.cut_spells && !r.together;
    /* Ticks spread over whole periods: a cut placed in the middle of two
     * ticks is then where the change is on average (spells.h). */
    r.rec.tick_spread_pct = 50;
    idle_cpu_open(&r.idle);
    if (rc != 0)
        goto out;
    rc = PT_EXIT_USAGE;
    if (recording_catch_signals(&r.rec) != 0)
        goto out;

    rc = start_target(&r);
    if (rc != 0)
        goto out;
    own_session_program_started();
    if (opts->attach_pid)
        learn_blocked_calls(&r);
    pin_tracer(&r);
    recording_start_output(&r.rec, r.tracer.first_pid,
                           opts->stack_size ? opts->stack_size : STACK_COPY_DEFAULT);
    if (recording_begin(&r.rec) != 0) {
        abandon_target(&r);
        rc = PT_EXIT_USAGE;
        goto out;
    }
    r.sampling = true;
    r.next_maps_refresh = r.rec.start_mono + MAPS_REFRESH_NS;
    tracer_resume_all(&r.tracer);

    run_loop(&r);
    stop_sampling(&r);
    /* Children that outlive the first process run on without us. */
    tracer_detach_all(&r.tracer);
    int written = finish_profile(&r);
    rc = recording_exit_code(&r.rec, r.tracer.first_status, written);

out:
    idle_cpu_close(&r.idle);
    recording_close(&r.rec);
    free_scratch(&r);
    tracer_destroy(&r.tracer);
    return rc;
}

/* The ptrace engine needs nothing but ptrace, which the kernel checks
 * when the program is started or attached. */
static bool ptrace_permitted(const struct record_options *opts, char *why, size_t size)
{
    (void)opts;
    snprintf(why, size, "ptrace");
    return true;
}

const struct record_engine_ops ptrace_engine_ops = {
    .name = "ptrace",
    .permitted = ptrace_permitted,
    .run = ptrace_engine_run,
};
