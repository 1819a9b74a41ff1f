/*
 * recorder.c - the sampling loop (see recorder.h and docs/recording.md).
 *
 * One thread does everything: a poll() over a timerfd (absolute, periodic
 * deadlines: no drift) and a signalfd (SIGCHLD for ptrace events, and the
 * signals sent to the profiler itself).  Between samples every ptrace stop
 * is answered at once, so new threads, exits and the target's own signals
 * never wait for the next tick.  A sample interrupts every running thread,
 * waits until all of them are stopped, reads their registers, resumes them,
 * and only then reads CPU times and writes the sample, so the target is
 * stopped for as short a time as ptrace allows.
 */
#include "record/recorder.h"
#include "pmu/pmu.h"
#include "record/launch.h"
#include "record/maps.h"
#include "record/output.h"
#include "record/profiler_signals.h"
#include "record/regs.h"
#include "record/threads.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)

/* How long the target may take to show it received a signal the profiler
 * got too (terminal, killpg) before the profiler forwards it itself. */
#define SIGNAL_ECHO_NS (100 * 1000 * 1000ULL)
/* A job-control stop the target never performs is forgotten after this. */
#define JOB_STOP_PATIENCE_NS (1000 * 1000 * 1000ULL)
/* Maps are re-read this often to catch dlopen'ed libraries. */
#define MAPS_REFRESH_NS (500 * 1000 * 1000ULL)
/* A thread that does not stop within this time is left out of a sample. */
#define STOP_PATIENCE_NS (100 * 1000 * 1000ULL)

struct recorder {
    const struct record_options *opts;
    pid_t pid; /* the target process (its leader's tid) */
    struct thread_table threads;
    struct pmu_source *pmu;
    double *pmu_values;
    bool pmu_failed;
    struct output *out;
    int timer_fd, signal_fd;
    sigset_t original_mask;
    sigset_t sigchld_only;

    bool sampling;    /* the timer runs and samples are taken */
    bool target_gone; /* the leader has been reaped */
    int exit_code;    /* the target's status as a shell reports it */

    struct map_list maps; /* every mapping seen since the last exec */
    uint64_t next_maps_refresh;

    /* job control */
    bool job_stop_pending;
    uint64_t job_stop_since;
    uint64_t last_signal_seen[NSIG]; /* when the target last got each signal */

    /* statistics */
    uint64_t start_mono, start_real, end_mono;
    uint64_t samples, ticks, latency_ns, signals_passed;
    struct sample_thread *batch;
    size_t batch_cap;
};

/* --- ptrace helpers ------------------------------------------------------ */

static void resume(struct recorder *r, struct thread *th)
{
    if (!th->stopped)
        return;
    long rc;
    if (th->group_stop) {
        /* Stay stopped as job control wants, but report SIGCONT to us. */
        rc = ptrace(PTRACE_LISTEN, th->tid, 0, 0);
    } else {
        rc = ptrace(PTRACE_CONT, th->tid, 0, th->pending_signal);
        if (rc == 0 && th->pending_signal)
            r->signals_passed++;
    }
    if (rc != 0 && errno != ESRCH)
        pt_debug("resume %d: %s", th->tid, strerror(errno));
    th->stopped = false;
    th->pending_signal = 0;
}

static void read_pc(struct thread *th)
{
    uint64_t pc;
    if (regs_read_pc(th->tid, &pc) == 0)
        th->pc = pc;
}

/* --- memory maps --------------------------------------------------------- */

static void snapshot_maps(struct recorder *r)
{
    struct map_list now = {0};
    if (maps_read(r->pid, &now) == 0) {
        for (size_t i = 0; i < now.count; i++)
            maps_add_unique(&r->maps, &now.entries[i]);
    }
    maps_clear(&now);
}

/* --- ptrace events ------------------------------------------------------- */

static void on_exec(struct recorder *r)
{
    /* Every other thread is gone and the leader runs a new program: its
     * old mappings would only mislead symbolization. */
    for (size_t i = r->threads.count; i-- > 0;)
        if (r->threads.threads[i].tid != r->pid)
            thread_remove(&r->threads, r->threads.threads[i].tid);
    struct thread *leader = thread_find(&r->threads, r->pid);
    if (leader)
        thread_reopen_schedstat(leader, r->pid);
    maps_clear(&r->maps);
    snapshot_maps(r);
}

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * Account for one waitpid() result.  The thread is left stopped; the
 * caller resumes it (at once between samples, after reading during one).
 * Returns the thread, or NULL when it is gone.
 */
static struct thread *on_wait_status(struct recorder *r, pid_t tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        thread_remove(&r->threads, tid);
        if (tid == r->pid) {
            r->target_gone = true;
            r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        return NULL;
    }
    if (!WIFSTOPPED(status))
        return thread_find(&r->threads, tid);

    /* A thread may report its first stop before its parent's clone event. */
    struct thread *th = thread_add(&r->threads, r->pid, tid);
    th->stopped = true;
    th->announced = false;
    int sig = WSTOPSIG(status);
    int event = status >> 16;
    unsigned long msg = 0;

    switch (event) {
    case PTRACE_EVENT_STOP:
        /* Group-stop, or our interrupt / a new thread's first stop / the
         * end of a group-stop (SIGTRAP). */
        th->group_stop = is_stop_signal(sig);
        if (th->group_stop)
            read_pc(th); /* listening threads cannot be read later */
        break;
    case PTRACE_EVENT_CLONE:
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0) {
            struct thread *child = thread_add(&r->threads, r->pid, (pid_t)msg);
            /* thread_add may have moved the table */
            th = thread_find(&r->threads, tid);
            if (!child->stopped)
                child->announced = true;
        }
        break;
    case PTRACE_EVENT_EXEC:
        on_exec(r);
        th = thread_find(&r->threads, r->pid);
        break;
    case PTRACE_EVENT_EXIT:
        /* A leader that exits before its threads lingers as a zombie that
         * never stops again: interrupting it would wait forever. */
        th->exiting = true;
        /* The last moment the address space is still there to read. */
        if (tid == r->pid || r->threads.count == 1)
            snapshot_maps(r);
        break;
    case 0:
        /* Signal-delivery-stop: the signal is the target's, deliver it. */
        th->pending_signal = sig;
        r->last_signal_seen[sig] = monotonic_ns();
        break;
    default:
        break;
    }
    return th;
}

/* Between samples: answer every pending stop right away. */
static void drain_events(struct recorder *r)
{
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid <= 0)
            break;
        struct thread *th = on_wait_status(r, tid, status);
        if (th)
            resume(r, th);
    }
}

/* --- sampling ------------------------------------------------------------ */

static void take_sample(struct recorder *r)
{
    uint64_t t0 = monotonic_ns();
    uint64_t wall = realtime_ns();
    if (r->pmu && !r->pmu_failed && pmu_read(r->pmu, r->pmu_values) != 0) {
        pt_warn("PMU '%s' stopped answering; its values are recorded as NaN", r->pmu->ops->name);
        r->pmu_failed = true;
    }
    if (r->pmu_failed)
        for (unsigned i = 0; i < r->pmu->nchannels; i++)
            r->pmu_values[i] = NAN;

    /* Stop every running thread. */
    size_t awaited = 0;
    for (size_t i = 0; i < r->threads.count; i++) {
        struct thread *th = &r->threads.threads[i];
        if (th->stopped || th->group_stop || th->announced || th->exiting)
            continue;
        if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
            th->awaited = true;
            awaited++;
        }
    }
    /* Wait until all of them are stopped (or gone).  A thread that cannot
     * stop promptly (uninterruptible sleep, a vfork parent) is left out of
     * this sample; its late stop is answered between samples. */
    uint64_t give_up = t0 + STOP_PATIENCE_NS;
    while (awaited > 0) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid == 0) {
            uint64_t now = monotonic_ns();
            if (now >= give_up)
                break;
            struct timespec left = ns_timespec(give_up - now);
            sigtimedwait(&r->sigchld_only, NULL, &left);
            continue;
        }
        if (tid < 0) {
            if (errno == EINTR)
                continue;
            break; /* ECHILD: nothing left to wait for */
        }
        struct thread *before = thread_find(&r->threads, tid);
        bool was_awaited = before && before->awaited;
        struct thread *th = on_wait_status(r, tid, status);
        if (th)
            th->awaited = false;
        if (was_awaited)
            awaited--;
        if (r->target_gone)
            break;
    }

    /* Read the stopped threads, then let them go. */
    for (size_t i = 0; i < r->threads.count; i++) {
        struct thread *th = &r->threads.threads[i];
        th->awaited = false;
        if (th->stopped && !th->group_stop)
            read_pc(th);
    }
    for (size_t i = 0; i < r->threads.count; i++)
        resume(r, &r->threads.threads[i]);
    uint64_t t1 = monotonic_ns();
    r->latency_ns += t1 - t0;
    if (r->target_gone)
        return;

    /* CPU time does not advance while stopped; reading it after the resume
     * keeps these reads out of the target's stop window. */
    r->batch = xgrow(r->batch, &r->batch_cap, r->threads.count, sizeof(*r->batch));
    uint32_t n = 0;
    for (size_t i = 0; i < r->threads.count; i++) {
        struct thread *th = &r->threads.threads[i];
        if (th->announced || th->exiting)
            continue;
        thread_read_cpu(th, &th->cpu_ns);
        r->batch[n++] = (struct sample_thread){(uint32_t)th->tid, th->pc, th->cpu_ns};
    }
    if (output_sample(r->out, wall, r->pmu_values, n, r->batch) != 0) {
        pt_err("cannot write the profile; sampling stops");
        r->sampling = false;
    }
    r->samples++;
}

/* --- the profiler's own signals ------------------------------------------ */

static bool target_got(struct recorder *r, int sig, uint64_t since)
{
    return r->last_signal_seen[sig] >= since || profsig_pending_in(r->pid, sig);
}

/*
 * A signal sent to the whole process group (the terminal, killpg) reached
 * the target as well; one sent to the profiler alone must be passed on, as
 * the shell's child would have received it.
 */
static void forward_if_needed(struct recorder *r, int sig, uint64_t received)
{
    drain_events(r);
    if (target_got(r, sig, received - SIGNAL_ECHO_NS))
        return;
    pt_debug("forwarding signal %d to %d", sig, r->pid);
    kill(r->pid, sig);
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
    if (r->threads.count == 0)
        return false;
    for (size_t i = 0; i < r->threads.count; i++)
        if (!r->threads.threads[i].group_stop)
            return false;
    return true;
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
        drain_events(r);
    }
    if (target_job_stopped(r) && !target_got(r, SIGCONT, before))
        kill(r->pid, SIGCONT);
}

static void on_profiler_signal(struct recorder *r, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    uint64_t now = monotonic_ns();
    switch (sig) {
    case SIGCHLD:
    case SIGPIPE:
        break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        forward_if_needed(r, sig, now);
        if (r->sampling)
            pt_debug("signal %d: sampling stops", sig);
        stop_sampling(r);
        break;
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        forward_if_needed(r, sig, now);
        r->job_stop_pending = true;
        r->job_stop_since = now;
        break;
    case SIGCONT:
        /* We were continued without having stopped ourselves (or after);
         * nothing to do: the target's own SIGCONT arrives as an event. */
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

/* --- setup and the loop -------------------------------------------------- */

static int arm_timer(struct recorder *r)
{
    r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (r->timer_fd < 0) {
        pt_err("timerfd_create: %s", strerror(errno));
        return -1;
    }
    uint64_t period = (uint64_t)llround(1e9 / r->opts->frequency);
    if (period == 0)
        period = 1;
    struct itimerspec spec = {
        .it_interval = ns_timespec(period),
        .it_value = ns_timespec(r->start_mono + period),
    };
    if (timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) != 0) {
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
    r->ticks += expirations;
    if (!r->sampling)
        return;
    take_sample(r);
    uint64_t now = monotonic_ns();
    if (now >= r->next_maps_refresh && !r->target_gone) {
        snapshot_maps(r);
        r->next_maps_refresh = now + MAPS_REFRESH_NS;
    }
}

static void print_summary(const struct recorder *r)
{
    double wall = (double)(r->end_mono - r->start_mono) / 1e9;
    double ideal = wall * r->opts->frequency;
    fprintf(stderr, "[debug] wall time:   %.6f s\n", wall);
    fprintf(stderr, "[debug] latency:     %.6f s total, %.2f us per sample\n",
            (double)r->latency_ns / 1e9,
            r->samples ? (double)r->latency_ns / 1e3 / (double)r->samples : 0.0);
    fprintf(stderr, "[debug] samples:     %.0f ideal, %llu actual\n", floor(ideal),
            (unsigned long long)r->samples);
    fprintf(stderr, "[debug] frequency:   %.2f Hz requested, %.2f Hz achieved\n",
            r->opts->frequency, wall > 0 ? (double)r->samples / wall : 0.0);
    fprintf(stderr, "[debug] threads:     %llu seen\n", (unsigned long long)r->threads.seen);
    fprintf(stderr, "[debug] signals:     %llu passed to the target\n",
            (unsigned long long)r->signals_passed);
}

static int finish_profile(struct recorder *r)
{
    if (!r->out)
        return 0;
    if (!r->target_gone)
        snapshot_maps(r);
    struct record_totals totals = {
        .wall_ns = r->end_mono - r->start_mono,
        .latency_ns = r->latency_ns,
        .samples = r->samples,
    };
    int rc = output_finish(r->out, &totals, &r->maps);
    r->out = NULL;
    if (r->opts->debug)
        print_summary(r);
    return rc;
}

static void run_loop(struct recorder *r)
{
    struct pollfd fds[2] = {
        {.fd = r->signal_fd, .events = POLLIN},
        {.fd = r->timer_fd, .events = POLLIN},
    };
    while (!r->target_gone) {
        int timeout = r->job_stop_pending ? 50 : -1;
        if (poll(fds, 2, timeout) < 0 && errno != EINTR)
            break;
        /* Events first: a new thread or a signal must not wait for a tick. */
        read_signals(r);
        drain_events(r);
        if (!r->target_gone && (fds[1].revents & POLLIN))
            on_timer(r);
        if (!r->sampling && r->out)
            finish_profile(r); /* interrupted: the profile is complete now */
        follow_job_stop(r);
    }
}

int record_run(const struct record_options *opts)
{
    struct recorder r = {.opts = opts, .timer_fd = -1, .signal_fd = -1};
    threads_init(&r.threads);
    sigemptyset(&r.sigchld_only);
    sigaddset(&r.sigchld_only, SIGCHLD);
    int rc = PT_EXIT_USAGE;

    /* Everything that can fail for the user's reasons fails before the
     * target exists. */
    if (opts->pmu_spec) {
        r.pmu = pmu_open(opts->pmu_spec);
        if (!r.pmu)
            goto out;
        r.pmu_values = xcalloc(r.pmu->nchannels ? r.pmu->nchannels : 1, sizeof(double));
    }
    r.out = output_open(opts->output, r.pmu);
    if (!r.out)
        goto out;
    r.signal_fd = profsig_open(&r.original_mask);
    if (r.signal_fd < 0)
        goto out;

    rc = launch_traced(opts->argv, &r.original_mask, TRACE_OPTIONS, &r.pid);
    if (rc != 0)
        goto out;
    thread_add(&r.threads, r.pid, r.pid)->stopped = true;
    snapshot_maps(&r);
    r.start_mono = monotonic_ns();
    r.start_real = realtime_ns();
    r.next_maps_refresh = r.start_mono + MAPS_REFRESH_NS;
    if (r.pmu && pmu_read(r.pmu, r.pmu_values) != 0) /* prime counters */
        r.pmu_failed = true;
    if (arm_timer(&r) != 0) {
        kill(r.pid, SIGKILL);
        resume(&r, thread_find(&r.threads, r.pid));
        while (!r.target_gone)
            drain_events(&r);
        goto out;
    }
    resume(&r, thread_find(&r.threads, r.pid));

    run_loop(&r);
    stop_sampling(&r);
    rc = finish_profile(&r) == 0 ? r.exit_code : (r.exit_code ? r.exit_code : PT_EXIT_USAGE);

out:
    output_abort(r.out);
    if (r.timer_fd >= 0)
        close(r.timer_fd);
    if (r.signal_fd >= 0)
        profsig_close(r.signal_fd, &r.original_mask);
    if (r.pmu)
        pmu_close(r.pmu);
    free(r.pmu_values);
    free(r.batch);
    maps_clear(&r.maps);
    threads_destroy(&r.threads);
    return rc;
}
