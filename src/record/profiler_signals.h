/*
 * profiler_signals.h - the signals the profiler itself receives, and what
 * both engines do about them.
 *
 * Contract: profsig_open() blocks SIGCHLD, the terminating signals (INT,
 * TERM, HUP, QUIT), the job-control signals (TSTP, TTIN, TTOU, CONT) and
 * SIGPIPE, and returns a signalfd that delivers them to the recorder's
 * poll loop; *ORIGINAL receives the mask to restore in the target before
 * exec, so the target starts with exactly the mask the profiler had.
 * profsig_read() hands every signal waiting on the signalfd to a handler.
 *
 * profsig_pending_in() tells whether SIG is pending for the process PID as
 * a whole (its ShdPnd in /proc/PID/status): the ptrace engine uses it to
 * tell a signal that the terminal or killpg() already sent to the whole
 * process group (the target has it too) from one sent to the profiler
 * alone (which the recorder must forward, as a shell would).
 *
 * profsig_handle() is what a recording does with a signal of its own, the
 * same for both engines; how they know what the program received differs,
 * so each describes its program (struct profsig_program):
 *  - INT, TERM, HUP, QUIT: forwarded to the program unless it got the
 *    signal too (from its process group) or the profiler is attached (the
 *    signal is then meant for the profiler alone); the recording is to
 *    stop (PROFSIG_STOP);
 *  - TSTP, TTIN, TTOU: attached, the profiler stops itself; otherwise the
 *    signal is forwarded as above and profsig_follow_job_stop(), called
 *    from the loop, stops the profiler once the program has stopped (so
 *    the shell sees a stopped job), and continues the program after `fg`
 *    if the shell's SIGCONT did not (a stop that never comes is forgotten
 *    after a second);
 *  - the others (CHLD, CONT, PIPE): nothing here (PROFSIG_OTHER).
 */
#ifndef PTPROF_RECORD_PROFILER_SIGNALS_H
#define PTPROF_RECORD_PROFILER_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/types.h>

int profsig_open(sigset_t *original);
void profsig_close(int fd, const sigset_t *original);
bool profsig_pending_in(pid_t pid, int sig);
/* Every signal waiting on FD, to HANDLE in order. */
void profsig_read(int fd, void (*handle)(void *ctx, const struct signalfd_siginfo *si), void *ctx);

/* What an engine knows of the program it records. */
struct profsig_program {
    pid_t pid;
    bool attached;
    void *ctx;
    /* Did the program receive SIG (from its process group) at or after
     * SINCE (monotonic)?  It may wait a little for the answer, answering
     * the program's events meanwhile. */
    bool (*got)(void *ctx, int sig, uint64_t since);
    bool (*job_stopped)(void *ctx); /* all its threads are in a job-control stop */
    bool (*gone)(void *ctx);        /* it exited */
    void (*pump)(void *ctx);        /* answer what happened while we wait */
};

struct profsig_job {
    bool stop_pending; /* the terminal stopped the job: follow the program */
    uint64_t since;
};

enum profsig_action { PROFSIG_OTHER, PROFSIG_STOP, PROFSIG_JOB_CONTROL };

enum profsig_action profsig_handle(struct profsig_job *job, const struct profsig_program *p,
                                   int sig, uint64_t received);
void profsig_follow_job_stop(struct profsig_job *job, const struct profsig_program *p,
                             int signal_fd);

#endif
