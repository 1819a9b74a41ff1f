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
#include "record/regs.h"
#include "record/stack.h"
#include "record/tracer.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
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
/* A job-control stop the target never performs is forgotten after this. */
#define JOB_STOP_PATIENCE_NS (1000 * 1000 * 1000ULL)
/* Maps are re-read at least this often (and at once for an unknown PC). */
#define MAPS_REFRESH_NS (500 * 1000 * 1000ULL)
/* A thread that does not stop within this time is left out of a sample. */
#define STOP_PATIENCE_NS (100 * 1000 * 1000ULL)

struct recorder {
    const struct record_options *opts;
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

    /* job control */
    bool job_stop_pending;
    uint64_t job_stop_since;

    /* per-sample scratch, indexed like the thread table */
    struct stack_snapshot *snaps;
    bool *captured;
    bool *before_signal; /* captured before its signal handler ran */
    size_t snaps_cap;
    uint64_t *frames; /* STACK_MAX_DEPTH per thread (fp mode) */
    uint32_t *frame_depth;
    struct prof_thread_sample *batch;
    size_t batch_cap;
    bool *maps_refreshed; /* per process, this sample */
    size_t maps_refreshed_cap;
    uint64_t next_maps_refresh;

    /* sampling schedule */
    uint64_t period; /* ns */
    uint64_t tick;   /* index of the tick armed on the grid */
    uint64_t rng;

    /* statistics */
    uint64_t start_mono, end_mono;
    uint64_t samples, latency_ns;
};

/* --- per-sample buffers --------------------------------------------------- */

static void ensure_scratch(struct recorder *r, size_t n)
{
    if (n <= r->snaps_cap)
        return;
    size_t cap = r->snaps_cap ? r->snaps_cap : 16;
    while (cap < n)
        cap *= 2;
    r->snaps = xrealloc(r->snaps, cap * sizeof(*r->snaps));
    for (size_t i = r->snaps_cap; i < cap; i++) {
        memset(&r->snaps[i], 0, sizeof(r->snaps[i]));
        if (r->opts->stack_mode != STACK_NONE)
            stack_snapshot_init(&r->snaps[i], r->opts->stack_size);
    }
    r->captured = xrealloc(r->captured, cap * sizeof(*r->captured));
    r->before_signal = xrealloc(r->before_signal, cap * sizeof(*r->before_signal));
    if (r->opts->stack_mode == STACK_FP) {
        r->frames = xrealloc(r->frames, cap * STACK_MAX_DEPTH * sizeof(*r->frames));
        r->frame_depth = xrealloc(r->frame_depth, cap * sizeof(*r->frame_depth));
    }
    r->snaps_cap = cap;
}

static void free_scratch(struct recorder *r)
{
    for (size_t i = 0; i < r->snaps_cap; i++)
        if (r->snaps[i].data)
            stack_snapshot_free(&r->snaps[i]);
    free(r->snaps);
    free(r->captured);
    free(r->before_signal);
    free(r->frames);
    free(r->frame_depth);
    free(r->batch);
    free(r->maps_refreshed);
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
 * A DWARF unwind passes the signal frame, which records that PC exactly.
 * A frame-pointer walk does not see the signal frame at all: at the
 * handler's first instruction the frame pointer is still the interrupted
 * function's, so the walk's callers are already that function's callers
 * and only the leaf is to be replaced.  Returns the new depth. */
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

/* Inside the stop window: copy what the thread will overwrite once it runs. */
static void capture_stopped(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    ensure_scratch(r, tt->count);
    size_t copy = r->opts->stack_mode == STACK_NONE ? 0 : r->opts->stack_size;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        r->captured[i] = false;
        if ((th->late || th->in_vfork) && !th->stopped) {
            /* It could not stop (vfork parent, uninterruptible sleep): the
             * kernel still tells where it waits. */
            uint64_t old_pc = th->pc;
            if (thread_read_blocked(th) && th->pc != old_pc)
                th->stack = 0;
            continue;
        }
        if (!th->stopped || th->group_stop)
            continue;
        if (stack_capture(th->tid, copy, &r->snaps[i]) != 0)
            continue;
        r->captured[i] = true;
        r->before_signal[i] = caught_before_handler(th, &r->snaps[i].regs);
        th->captured_once = true;
        th->pc = REGS_PC(r->snaps[i].regs);
        th->sp = REGS_SP(r->snaps[i].regs);
        th->syscall = regs_blocked_syscall(&r->snaps[i].regs);
        if (r->opts->stack_mode == STACK_FP) {
            /* Walking frame pointers is cheap, and deep stacks may need the
             * live memory: do it while the thread stands still. */
            int d = unwind_fp(th->pid, &r->snaps[i], true, &r->frames[i * STACK_MAX_DEPTH],
                              STACK_MAX_DEPTH);
            r->frame_depth[i] = d > 0 ? (uint32_t)d : 0;
        }
    }
}

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

/* After the resume: everything that takes time. */
static void build_sample(struct recorder *r, uint64_t wall)
{
    struct thread_table *tt = &r->tracer.threads;
    struct process_table *pt = &r->tracer.procs;
    uint64_t pcs[STACK_MAX_DEPTH];
    r->batch = xgrow(r->batch, &r->batch_cap, tt->count, sizeof(*r->batch));
    /* Kept between samples: a sample is not worth a calloc. */
    bool *refreshed = r->maps_refreshed =
        xgrow(r->maps_refreshed, &r->maps_refreshed_cap, pt->count ? pt->count : 1, sizeof(bool));
    memset(refreshed, 0, pt->count * sizeof(bool));
    uint32_t n = 0;
    /* CPU times first, right after the resume: unwinding takes time, and
     * CPU time read after it would include running done since the PC. */
    for (size_t i = 0; i < tt->count; i++)
        thread_read_cpu(&tt->threads[i], &tt->threads[i].cpu_ns);
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (th->announced || th->exiting || !th->captured_once)
            continue; /* nothing true to say about it yet */
        struct process *p = &pt->procs[th->proc];
        if (r->captured[i]) {
            ensure_maps_know(r, p, &th->pc, 1, wall, &refreshed[th->proc]);
            int depth = 0;
            const uint64_t *frames = pcs;
            if (r->opts->stack_mode == STACK_FP) {
                depth = (int)r->frame_depth[i];
                frames = &r->frames[i * STACK_MAX_DEPTH];
            } else if (r->opts->stack_mode == STACK_DWARF) {
                if (!p->unwinder)
                    p->unwinder = dwarf_unwinder_new(p->pid);
                if (p->unwinder)
                    depth = dwarf_unwind(p->unwinder, th->tid, &r->snaps[i], pcs, STACK_MAX_DEPTH);
            }
            if (r->before_signal[i]) {
                uint64_t *writable =
                    r->opts->stack_mode == STACK_FP ? &r->frames[i * STACK_MAX_DEPTH] : pcs;
                uint64_t interrupted = th->sig_pc;
                if (depth > 0) {
                    depth = from_interrupted_pc(writable, depth, interrupted);
                    frames = writable;
                }
                th->pc = interrupted;
                th->syscall = -1;
            }
            if (depth > 1)
                ensure_maps_know(r, p, frames + 1, (size_t)depth - 1, wall, &refreshed[th->proc]);
            th->stack = depth > 0 ? output_stack(r->out, frames, (uint32_t)depth) : 0;
        }
        uint32_t flags = 0;
        if (th->group_stop)
            flags |= PROF_THREAD_STOPPED;
        if (th->syscall >= 0)
            flags |= PROF_THREAD_IN_SYSCALL;
        r->batch[n++] = (struct prof_thread_sample){
            .pid = (uint32_t)th->pid,
            .tid = (uint32_t)th->tid,
            .pc = th->pc,
            .cpu_ns = th->cpu_ns,
            .stack = th->stack,
            .syscall = th->syscall,
            .flags = flags,
        };
    }
    if (n == 0)
        return; /* every thread is on its way out */
    if (output_sample(r->out, wall, r->pmu_values, r->batch, n) != 0) {
        pt_err("cannot write the profile; sampling stops");
        r->sampling = false;
    }
    r->samples++;
}

/*
 * A thread blocked in a system call since its last capture has not run:
 * its registers and stack are what they were.  Waking it only to find that
 * out would cost it CPU time and us a stop (idle thread pools would pay
 * the most), so its last capture is reused.
 */
static void mark_still_blocked(struct recorder *r)
{
    struct thread_table *tt = &r->tracer.threads;
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        th->reused = !th->stopped && !th->group_stop && !th->late && !th->in_vfork &&
                     thread_still_blocked(th);
    }
}

static void take_sample(struct recorder *r)
{
    uint64_t wall = realtime_ns();
    read_pmu(r); /* the machine's, not the threads': outside the stop */
    mark_still_blocked(r);
    uint64_t t0 = monotonic_ns();
    tracer_stop_all(&r->tracer, STOP_PATIENCE_NS);
    capture_stopped(r);
    tracer_resume_all(&r->tracer);
    r->latency_ns += monotonic_ns() - t0;
    if (r->tracer.first_exited)
        return;
    build_sample(r, wall);
    /* The stops this sample reaped left SIGCHLD pending: consume it, then
     * answer whatever arrived meanwhile (a later stop raises a new one), so
     * the loop does not wake up once more for nothing. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&r->tracer.sigchld_only, NULL, &zero) > 0)
        ;
    tracer_drain(&r->tracer);
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
        tracer_drain(&r->tracer);
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
        tracer_drain(&r->tracer);
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

static int schedule_tick(struct recorder *r, uint64_t k)
{
    uint64_t quarter = r->period / 4;
    uint64_t jitter = quarter ? next_random(r) % (2 * quarter + 1) : 0;
    uint64_t due = r->start_mono + k * r->period + jitter - quarter;
    struct itimerspec spec = {.it_value = ns_timespec(due)};
    r->tick = k;
    return timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
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
    r->rng = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
    if (schedule_tick(r, 1) != 0) {
        pt_err("timerfd_settime: %s", strerror(errno));
        return -1;
    }
    r->sampling = true;
    return 0;
}

static void on_timer(struct recorder *r)
{
    uint64_t expirations = 0;
    if (read(r->timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
        return;
    if (!r->sampling)
        return;
    take_sample(r);
    /* The next tick on the grid that is still ahead.  Ticks that passed
     * while this sample was taken are dropped, not made up for: a sample
     * right after a late one would find the threads where it left them
     * (they had no time to run), a bias, not data. */
    uint64_t now = monotonic_ns();
    uint64_t k = (now - r->start_mono) / r->period + 1;
    if (k <= r->tick)
        k = r->tick + 1;
    schedule_tick(r, k);
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
        if (poll(fds, 2, timeout) < 0 && errno != EINTR)
            break;
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
        tracer_drain(&r->tracer);
        if (!r->sampling && r->out && !r->opts->attach_pid)
            finish_profile(r); /* interrupted: the profile is complete now */
        follow_job_stop(r);
    }
}

static void write_meta(struct recorder *r)
{
    const struct record_options *o = r->opts;
    char buf[4096];
    size_t len = 0;
    for (char **a = o->argv; a && *a && len < sizeof(buf) - 1; a++) {
        bool quote = (*a)[0] == '\0' || strpbrk(*a, " \t\n'\"\\$`;&|<>()*?[]#~") != NULL;
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, quote ? "%s'%s'" : "%s%s",
                                len ? " " : "", *a);
    }
    if (o->attach_pid)
        proc_cmdline(o->attach_pid, buf, sizeof(buf));
    output_meta(r->out, "command", buf);
    struct utsname u;
    if (uname(&u) == 0) {
        output_meta(r->out, "host", u.nodename);
        snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
        output_meta(r->out, "kernel", buf);
    }
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)realtime_ns());
    output_meta(r->out, "start_time", buf);
    snprintf(buf, sizeof(buf), "%g", o->frequency);
    output_meta(r->out, "frequency", buf);
    static const char *const modes[] = {"none", "fp", "dwarf"};
    output_meta(r->out, "stacks", modes[o->stack_mode]);
    snprintf(buf, sizeof(buf), "%zu", o->stack_size);
    output_meta(r->out, "stack_size", buf);
    snprintf(buf, sizeof(buf), "%d", (int)r->tracer.first_pid);
    output_meta(r->out, "pid", buf);
    output_meta(r->out, "ptprof_version", PTPROF_VERSION);
    if (o->attach_pid)
        output_meta(r->out, "attached", "1");
}

static int start_target(struct recorder *r)
{
    if (r->opts->attach_pid)
        return tracer_attach(&r->tracer, r->opts->attach_pid);
    return tracer_launch(&r->tracer, r->opts->argv, &r->original_mask);
}

int record_run(const struct record_options *opts)
{
    struct recorder r = {.opts = opts, .timer_fd = -1, .signal_fd = -1};
    int rc = PT_EXIT_USAGE;

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
    /* A tuning knob for benchmarks: how long to poll for stops (ns). */
    const char *spin = getenv("PTPROF_SPIN_NS");
    if (spin && *spin)
        r.tracer.spin_ns = strtoull(spin, NULL, 10);
    if (!r.out)
        goto out;
    r.signal_fd = profsig_open(&r.original_mask);
    if (r.signal_fd < 0)
        goto out;

    rc = start_target(&r);
    if (rc != 0)
        goto out;
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
