/*
 * profiler_signals.h - the signals the profiler itself receives.
 *
 * Contract: profsig_open() blocks SIGCHLD, the terminating signals (INT,
 * TERM, HUP, QUIT), the job-control signals (TSTP, TTIN, TTOU, CONT) and
 * SIGPIPE, and returns a signalfd that delivers them to the recorder's
 * poll loop; *ORIGINAL receives the mask to restore in the target before
 * exec, so the target starts with exactly the mask the profiler had.
 *
 * profsig_pending_in() tells whether SIG is pending for the process PID as
 * a whole (its ShdPnd in /proc/PID/status): the recorder uses it to tell a
 * signal that the terminal or killpg() already sent to the whole process
 * group (the target has it too) from one sent to the profiler alone (which
 * the recorder must forward, as a shell would).
 */
#ifndef PTPROF_RECORD_PROFILER_SIGNALS_H
#define PTPROF_RECORD_PROFILER_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

int profsig_open(sigset_t *original);
void profsig_close(int fd, const sigset_t *original);
bool profsig_pending_in(pid_t pid, int sig);

#endif
