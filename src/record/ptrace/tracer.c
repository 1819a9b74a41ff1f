/* tracer.c - see tracer.h */
#include "record/ptrace/tracer.h"
#include "record/jit_maps.h"
#include "record/launch.h"
#include "util/log.h"
#include "unwind/regs.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks are traced even without `inherit` (the child is let go at its
 * first stop): the vfork events tell which thread waits for its child. */
static unsigned long trace_options(void)
{
    return PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK |
           PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE;
}

void tracer_init(struct tracer *t, struct output *out, bool inherit)
{
    memset(t, 0, sizeof(*t));
    t->out = out;
    t->inherit = inherit;
    threads_init(&t->threads);
    sigemptyset(&t->sigchld_only);
    sigaddset(&t->sigchld_only, SIGCHLD);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    t->ncpus = n > 0 ? (size_t)n : 1;
    t->spin_ns = TRACER_SPIN_NS;
}

void tracer_destroy(struct tracer *t)
{
    free(t->stopped_batch);
    threads_destroy(&t->threads);
    process_table_free(&t->procs);
}

/* --- bookkeeping of threads and processes -------------------------------- */

static struct thread *add_thread(struct tracer *t, size_t proc, pid_t tid)
{
    pid_t pid = t->procs.procs[proc].pid;
    struct thread *th = thread_find(&t->threads, tid);
    if (th)
        return th;
    th = thread_add(&t->threads, pid, tid);
    th->proc = proc;
    char name[64];
    proc_thread_name(pid, tid, name, sizeof(name));
    output_thread(t->out, (uint32_t)pid, (uint32_t)tid, realtime_ns(), name);
    return th;
}

static size_t add_process(struct tracer *t, pid_t pid, pid_t ppid)
{
    size_t before = t->procs.count;
    size_t idx = process_add(&t->procs, pid, ppid);
    if (t->procs.count != before) {
        uint64_t now = realtime_ns();
        output_process(t->out, (uint32_t)pid, (uint32_t)ppid, now);
        char exe[4096];
        proc_exe(pid, exe, sizeof(exe));
        if (exe[0])
            output_exec(t->out, (uint32_t)pid, now, exe);
        process_refresh_maps(&t->procs.procs[idx], t->out, now);
    }
    return idx;
}

/*
 * A tid we have not seen: a thread of a known process, or the first thread
 * of a new one (fork, vfork, clone without CLONE_THREAD).  Returns NULL when
 * the newcomer is not to be traced (a child under --no-inherit, detached).
 */
static struct thread *adopt(struct tracer *t, pid_t tid)
{
    pid_t tgid = tid, ppid = 0;
    if (proc_status_ids(tid, &tgid, &ppid) != 0)
        tgid = tid;
    struct process *p = process_find(&t->procs, tgid);
    size_t idx;
    if (p) {
        idx = (size_t)(p - t->procs.procs);
    } else {
        if (!t->inherit && t->procs.count > 0) {
            /* clone() without CLONE_THREAD still auto-attaches: let it go. */
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return NULL;
        }
        idx = add_process(t, tgid, ppid);
    }
    return add_thread(t, idx, tid);
}

static size_t live_threads_of(const struct tracer *t, pid_t pid)
{
    size_t n = 0;
    for (size_t i = 0; i < t->threads.count; i++)
        if (t->threads.threads[i].pid == pid && !t->threads.threads[i].exiting)
            n++;
    return n;
}

static void forget_thread(struct tracer *t, pid_t tid)
{
    output_thread_exit(t->out, (uint32_t)tid, realtime_ns());
    thread_remove(&t->threads, tid);
}

static void on_exec(struct tracer *t, struct thread *th)
{
    pid_t pid = th->pid;
    struct process *p = &t->procs.procs[th->proc];
    /* The other threads died in the exec; the execing one now has the
     * leader's tid. */
    for (size_t i = t->threads.count; i-- > 0;) {
        struct thread *other = &t->threads.threads[i];
        if (other->pid == pid && other->tid != pid)
            forget_thread(t, other->tid);
    }
    uint64_t now = realtime_ns();
    char exe[4096];
    proc_exe(pid, exe, sizeof(exe));
    process_exec(p);
    output_exec(t->out, (uint32_t)pid, now, exe);
    process_refresh_maps(p, t->out, now);
    struct thread *leader = thread_find(&t->threads, pid);
    if (leader)
        thread_reopen_schedstat(leader, pid);
}

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_gone(struct tracer *t, pid_t tid, int status)
{
    struct thread *th = thread_find(&t->threads, tid);
    if (th)
        forget_thread(t, tid);
    struct process *p = process_find(&t->procs, tid);
    if (!p)
        return; /* a thread, not a process */
    jit_maps_capture(t->out, (uint32_t)tid, &p->since_exec, &p->owner);
    output_exit(t->out, (uint32_t)tid, realtime_ns(), status);
    p->exited = true;
    if (tid == t->first_pid) {
        t->first_exited = true;
        t->first_status = status;
    }
}

struct thread *tracer_on_status(struct tracer *t, pid_t tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        on_gone(t, tid, status);
        return NULL;
    }
    if (!WIFSTOPPED(status))
        return thread_find(&t->threads, tid);

    struct thread *th = thread_find(&t->threads, tid);
    if (!th) {
        th = adopt(t, tid);
        if (!th)
            return NULL;
    }
    th->stopped = true;
    th->announced = false;
    th->late = false;
    int sig = WSTOPSIG(status);
    unsigned long msg = 0;

    switch (status >> 16) {
    case PTRACE_EVENT_STOP:
        /* Group-stop; or our interrupt, a new thread's first stop, or the
         * end of a group-stop (all SIGTRAP). */
        th->group_stop = is_stop_signal(sig);
        if (th->group_stop) {
            uint64_t pc;
            if (regs_read_pc(tid, &pc) == 0) {
                th->pc = pc; /* listening threads cannot be read later */
                th->syscall = -1;
                th->captured_once = true;
            }
        }
        break;
    case PTRACE_EVENT_CLONE:
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
            !thread_find(&t->threads, (pid_t)msg)) {
            struct thread *child = adopt(t, (pid_t)msg);
            if (child)
                child->announced = true; /* its first stop is still to come */
        }
        th = thread_find(&t->threads, tid); /* the table may have moved */
        /* A vfork parent sleeps until its child execs or exits, where no
         * interrupt reaches it: leave it alone until VFORK_DONE. */
        if (th && (status >> 16) == PTRACE_EVENT_VFORK)
            th->in_vfork = true;
        break;
    case PTRACE_EVENT_VFORK_DONE:
        th->in_vfork = false;
        break;
    case PTRACE_EVENT_EXEC:
        on_exec(t, th);
        th = thread_find(&t->threads, tid);
        break;
    case PTRACE_EVENT_EXIT: {
        /* A leader that exits before its threads lingers as a zombie that
         * never stops again: interrupting it would wait forever. */
        th->exiting = true;
        if (t->on_exiting)
            t->on_exiting(t->on_exiting_ctx, th);
        struct process *p = &t->procs.procs[th->proc];
        /* The last moment this address space can be read. */
        if (tid == th->pid || live_threads_of(t, th->pid) == 0)
            process_refresh_maps(p, t->out, realtime_ns());
        break;
    }
    case 0: {
        /* Signal-delivery-stop: the signal is the target's; deliver it.
         * Remember where it found the thread: until the thread runs again,
         * that is where it is, not at its handler's first instruction. */
        uint64_t pc;
        th->pending_signal = sig;
        t->last_signal_ns[sig] = monotonic_ns();
        t->signal_count[sig]++;
        if (regs_read_pc(tid, &pc) == 0 && thread_read_cpu(th, &th->sig_cpu)) {
            th->sig_pc = pc;
            th->sig_number = sig;
            th->sig_fresh = true;
        }
        break;
    }
    default:
        break;
    }
    return th;
}

void tracer_resume(struct tracer *t, struct thread *th)
{
    if (!th || !th->stopped)
        return;
    long rc;
    if (th->group_stop) {
        /* Stay stopped as job control wants, but tell us about SIGCONT. */
        rc = ptrace(PTRACE_LISTEN, th->tid, 0, 0);
    } else {
        rc = ptrace(PTRACE_CONT, th->tid, 0, th->pending_signal);
        if (rc == 0 && th->pending_signal)
            t->signals_passed++;
    }
    if (rc != 0 && errno != ESRCH)
        pt_debug("resume %d: %s", th->tid, strerror(errno));
    th->stopped = false;
    th->pending_signal = 0;
    th->resumed_ns = realtime_ns();
}

void tracer_drain(struct tracer *t)
{
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid <= 0)
            break;
        struct thread *th = tracer_on_status(t, tid, status);
        if (th && th->awaited && th->stopped && !th->group_stop) {
            /* The stop a sample still waits for: copied like the others. */
            th->awaited = false;
            if (t->on_stopped)
                t->on_stopped(t->on_stopped_ctx, t, &tid, 1);
            th = thread_find(&t->threads, tid);
        }
        tracer_resume(t, th);
    }
}

static void add_to_batch(struct tracer *t, size_t *n, pid_t tid)
{
    t->stopped_batch = xgrow(t->stopped_batch, &t->stopped_batch_cap, *n + 1, sizeof(pid_t));
    t->stopped_batch[(*n)++] = tid;
}

/*
 * The caller copies what it needs from a batch of stopped threads, and
 * they go on at once.  A thread runs no instruction of its own between
 * our interrupt and its stop, so what is copied is its state at the
 * interrupt whether the others are still held or not: holding them until
 * the last one stops (one waiting for a CPU can take milliseconds) would
 * only cost them time.
 */
static void hand_over(struct tracer *t, size_t n, tracer_stopped_fn on_stopped, void *ctx)
{
    if (n == 0 || !on_stopped)
        return;
    on_stopped(ctx, t, t->stopped_batch, n);
    for (size_t i = 0; i < n; i++) {
        struct thread *th = thread_find(&t->threads, t->stopped_batch[i]);
        if (!th || !th->stopped || th->group_stop)
            continue;
        tracer_resume(t, th);
        t->held_ns += monotonic_ns() - th->held_since;
        t->held_threads++;
    }
}

void tracer_stop_all(struct tracer *t, uint64_t patience_ns)
{
    tracer_stopped_fn on_stopped = t->on_stopped;
    void *ctx = t->on_stopped_ctx;
    /* Collect the stops that already happened first.  Interrupting a thread
     * that sits in an unreaped stop (a signal being delivered) would leave
     * the interrupt pending: the thread would stop again at its signal
     * handler's first instruction, and be sampled there. */
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid <= 0)
            break;
        tracer_on_status(t, tid, status);
    }
    size_t awaited = 0, batch = 0;
    t->held_ns = 0;
    t->held_threads = 0;
    uint64_t began = monotonic_ns();
    for (size_t i = 0; i < t->threads.count; i++) {
        struct thread *th = &t->threads.threads[i];
        if (th->stopped && !th->group_stop) {
            th->held_since = began;
            th->awaited = false; /* a stop an earlier sample waited for */
            add_to_batch(t, &batch, th->tid);
            continue;
        }
        /* Awaited already: a stop owed to an earlier sample, still coming;
         * to detach, it is waited for like the others. */
        if (th->awaited && !th->stopped && !on_stopped) {
            th->held_since = began;
            awaited++;
            continue;
        }
        if (th->stopped || th->group_stop || th->announced || th->exiting || th->reused ||
            th->left_out || th->late || th->in_vfork || th->awaited)
            continue;
        if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
            th->awaited = true;
            th->held_since = monotonic_ns();
            awaited++;
        }
    }
    /* Those already stopped are copied while the others get there. */
    hand_over(t, batch, on_stopped, ctx);
    /* A thread that cannot stop promptly (uninterruptible sleep, a vfork
     * parent) is left out; its late stop is answered by tracer_drain(). */
    uint64_t start = monotonic_ns();
    uint64_t give_up = start + patience_ns;
    /* Polling keeps a CPU: only while the threads to stop have the others. */
    uint64_t spin_until = awaited < t->ncpus ? start + t->spin_ns : 0;
    while (awaited > 0) {
        uint64_t now = monotonic_ns();
        if (now >= give_up)
            break;
        /* A stop takes microseconds to come: wait for its SIGCHLD before
         * asking, rather than asking first (or poll, see spin_ns). */
        if (now >= spin_until) {
            struct timespec left = ns_timespec(give_up - now);
            sigtimedwait(&t->sigchld_only, NULL, &left);
        }
        batch = 0;
        while (awaited > 0) {
            int status;
            pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
            if (tid < 0 && errno == EINTR)
                continue;
            if (tid < 0) {
                awaited = 0; /* ECHILD: nothing left to wait for */
                break;
            }
            if (tid == 0)
                break;
            struct thread *before = thread_find(&t->threads, tid);
            bool was_awaited = before && before->awaited;
            bool interrupted_now = was_awaited && before->held_since >= began;
            struct thread *th = tracer_on_status(t, tid, status);
            if (th) {
                th->awaited = false;
                if (!interrupted_now)
                    th->held_since = monotonic_ns();
                if (th->stopped && !th->group_stop)
                    add_to_batch(t, &batch, tid);
            }
            if (interrupted_now)
                awaited--;
        }
        hand_over(t, batch, on_stopped, ctx);
    }
    for (size_t i = 0; i < t->threads.count; i++) {
        struct thread *th = &t->threads.threads[i];
        if (!on_stopped) {
            if (th->awaited && !th->stopped)
                th->late = true; /* its interrupt stays pending; do not repeat it */
            th->awaited = false;
        }
        /* Group-stops met on the way go back to their stop (PTRACE_LISTEN);
         * threads still awaited stay so: tracer_drain() copies them. */
        if (on_stopped && th->stopped)
            tracer_resume(t, th);
    }
}

void tracer_resume_all(struct tracer *t)
{
    for (size_t i = 0; i < t->threads.count; i++)
        tracer_resume(t, &t->threads.threads[i]);
}

void tracer_detach_all(struct tracer *t)
{
    /* Every thread must stop to be let go, the idle ones too, and stay
     * stopped: no copies now. */
    t->on_stopped = NULL;
    for (size_t i = 0; i < t->threads.count; i++) {
        t->threads.threads[i].reused = false;
        t->threads.threads[i].left_out = false;
    }
    tracer_stop_all(t, 200 * 1000 * 1000ULL);
    /* New threads may still report their first stop: detach them too. */
    for (int round = 0; round < 50 && t->threads.count > 0; round++) {
        for (size_t i = t->threads.count; i-- > 0;) {
            struct thread *th = &t->threads.threads[i];
            if (!th->stopped && !th->group_stop)
                continue;
            int sig = th->group_stop ? 0 : th->pending_signal;
            ptrace(PTRACE_DETACH, th->tid, 0, sig);
            thread_remove(&t->threads, th->tid);
        }
        if (t->threads.count == 0)
            break;
        struct timespec tick = ns_timespec(2 * 1000 * 1000ULL);
        sigtimedwait(&t->sigchld_only, NULL, &tick);
        for (;;) {
            int status;
            pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
            if (tid <= 0)
                break;
            tracer_on_status(t, tid, status);
        }
        /* Zombies and exiting threads need no detach. */
        for (size_t i = t->threads.count; i-- > 0;)
            if (t->threads.threads[i].exiting && !t->threads.threads[i].stopped)
                thread_remove(&t->threads, t->threads.threads[i].tid);
    }
}

/* --- starting ------------------------------------------------------------ */

int tracer_launch(struct tracer *t, char *const argv[], const sigset_t *child_mask)
{
    pid_t pid;
    int rc = launch_traced(argv, child_mask, trace_options(), &pid);
    if (rc != 0)
        return rc;
    t->first_pid = pid;
    /* The first process has no parent in the profile (docs/format.md). */
    size_t idx = add_process(t, pid, 0);
    add_thread(t, idx, pid)->stopped = true;
    return 0;
}

static int seize_new_threads(struct tracer *t, size_t proc, unsigned long options)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)t->procs.procs[proc].pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int added = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid <= 0 || thread_find(&t->threads, tid))
            continue;
        if (ptrace(PTRACE_SEIZE, tid, 0, options) != 0) {
            if (errno == EPERM) {
                closedir(dir);
                return -2;
            }
            continue; /* it exited meanwhile */
        }
        add_thread(t, proc, tid);
        added++;
    }
    closedir(dir);
    return added;
}

int tracer_attach(struct tracer *t, pid_t pid)
{
    if (process_check_attachable(pid) != 0)
        return PT_EXIT_USAGE;
    unsigned long options = trace_options();
    if (ptrace(PTRACE_SEIZE, pid, 0, options) != 0) {
        bool yama = access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0;
        pt_err("cannot attach to %d: %s%s", (int)pid, strerror(errno),
               errno != EPERM ? ""
               : yama         ? " (another tracer, or not allowed: see kernel.yama.ptrace_scope)"
                              : " (another tracer, or a security module forbids it)");
        return PT_EXIT_USAGE;
    }
    t->first_pid = pid;
    size_t idx = add_process(t, pid, 0); /* no parent in the profile */
    add_thread(t, idx, pid);
    /* Threads created while we attach are either auto-attached (their
     * creator was already seized) or found by the next pass. */
    int n;
    while ((n = seize_new_threads(t, idx, options)) > 0)
        ;
    if (n == -2) {
        pt_err("cannot attach to every thread of %d: %s", (int)pid, strerror(EPERM));
        tracer_detach_all(t);
        return PT_EXIT_USAGE;
    }
    return 0;
}
