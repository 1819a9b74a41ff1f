/*
 * tracer.h - the ptrace side of recording: which threads and processes we
 * trace, what their stops mean, and how to stop, resume and let them go.
 *
 * Contract:
 *  - tracer_launch() starts a command traced (launch.h); tracer_attach()
 *    seizes every thread of a running process.  Both report the first
 *    process, its threads and maps to the output.
 *  - With `inherit`, fork/vfork/clone children are followed: each process
 *    gets its own maps, its exec and exit are reported.
 *  - tracer_on_status() accounts for one waitpid() result and leaves the
 *    thread stopped (or returns NULL when it is gone); tracer_resume() lets
 *    it go, delivering the signal it was stopped with, or keeping it in its
 *    job-control stop with PTRACE_LISTEN.  No signal is ever injected.
 *  - tracer_drain() answers every pending stop at once (between samples);
 *    the stop of a thread still `awaited` by a sample goes to on_stopped
 *    first.
 *  - tracer_stop_all() interrupts every running thread (but those marked
 *    `reused`: the caller knows their last capture still holds; those
 *    `left_out` of this round by the caller; and those still `awaited`
 *    from an earlier call) and waits for their stops for up
 *    to PATIENCE_NS.  With on_stopped set, it hands each batch of threads
 *    found stopped (those already stopped first, then the stops as they
 *    come) to it, and resumes them at once: a thread runs none of its own
 *    instructions between the interrupt and its stop, so what the caller
 *    copies is its state at the interrupt, and holding it until the others
 *    stopped would only cost it time.  A thread that has not stopped by
 *    then (one waiting for a CPU) stays `awaited`: its stop comes through
 *    tracer_drain().  held_ns / held_threads say how long the threads
 *    that stopped in time stood still, from the interrupt to the resume.
 *    Without on_stopped every thread stays stopped and one that did not
 *    stop is marked `late` (for detaching).  It polls for the stops for up
 *    to spin_ns (only while fewer threads are to stop than there are CPUs)
 *    before sleeping.  tracer_resume_all() resumes every stopped thread.
 *  - tracer_detach_all() lets every traced thread go, leaving the processes
 *    running (or job-stopped) exactly as they would be without us.
 */
#ifndef PTPROF_RECORD_PTRACE_TRACER_H
#define PTPROF_RECORD_PTRACE_TRACER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/output.h"
#include "record/process.h"
#include "record/ptrace/threads.h"

struct tracer {
    pid_t first_pid;
    pid_t *stopped_batch; /* scratch of tracer_stop_all() */
    size_t stopped_batch_cap;
    bool inherit;
    bool first_exited;
    int first_status; /* the first process's raw wait status */
    struct thread_table threads;
    struct process_table procs;
    struct output *out;
    uint64_t signals_passed;
    uint64_t last_signal_ns[NSIG]; /* monotonic time each signal was last delivered */
    uint64_t signal_count[NSIG];   /* deliveries of each signal */
    sigset_t sigchld_only;
    uint64_t spin_ns;      /* how long tracer_stop_all() polls before sleeping */
    uint64_t held_ns;      /* last tracer_stop_all(): time threads stood still, summed */
    uint64_t held_threads; /* ...over this many threads */
    void (*on_stopped)(void *ctx, struct tracer *t, const pid_t *tids, size_t n);
    void *on_stopped_ctx;
    /* At a thread's exit stop (PTRACE_EVENT_EXIT), while its schedstat
     * can still be read; NULL: nothing. */
    void (*on_exiting)(void *ctx, struct thread *th);
    void *on_exiting_ctx;
    size_t ncpus;
};

/* Polling for stops is off unless the caller sets spin_ns: on a virtual
 * machine a CPU that goes idle takes tens of microseconds to come back,
 * so polling can halve the stop window, but when a thread to stop shares
 * the tracer's CPU the polling is in its way and doubles it.  The ptrace
 * engine polls while a CPU is free (idle_cpu.h). */
#define TRACER_SPIN_NS 0ULL

void tracer_init(struct tracer *t, struct output *out, bool inherit);
void tracer_destroy(struct tracer *t);
/* Returns 0, or the shell's exit code when the command cannot run. */
int tracer_launch(struct tracer *t, char *const argv[], const sigset_t *child_mask);
int tracer_attach(struct tracer *t, pid_t pid);

struct thread *tracer_on_status(struct tracer *t, pid_t tid, int status);
void tracer_resume(struct tracer *t, struct thread *th);
void tracer_drain(struct tracer *t);
/* on_stopped is called with threads (by tid) that are in a ptrace-stop
 * other than a group-stop; the table may have changed since the previous
 * call. */
typedef void (*tracer_stopped_fn)(void *ctx, struct tracer *t, const pid_t *tids, size_t n);
void tracer_stop_all(struct tracer *t, uint64_t patience_ns);
void tracer_resume_all(struct tracer *t);
void tracer_detach_all(struct tracer *t);

/* The first process's index in t->procs (it is always 0). */
#define TRACER_FIRST_PROCESS 0

#endif
