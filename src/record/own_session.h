/*
 * own_session.h - run the ptrace recorder in a scheduling group of its own.
 *
 * Why: with the kernel's autogroup on (/proc/sys/kernel/sched_autogroup_enabled,
 * the default of Debian's and Ubuntu's kernels), the scheduler shares the
 * CPUs between sessions first and between the tasks of a session second.
 * A recorder in the program's session is one task among the program's
 * threads: with 64 busy threads on 2 CPUs it gets about 3% of a CPU and
 * samples at a seventh of the rate asked for.  In a session of its own it
 * competes with the program as a whole, as `--pid` from another terminal
 * already does (docs/recording.md, "Many threads").
 *
 * Contract: own_session_split() is called by the ptrace engine before it
 * starts a thread or opens a file, when it starts the program itself.
 * Where autogroup is on, it forks.  The calling process stays where the
 * shell put it, as the *front*: it forwards every signal it receives to the
 * recorder (which decides, as before, whether the program got it too), it
 * stops when the recorder stops for a job-control stop and continues it
 * when continued, and it exits as the recorder exits (the same status, or
 * the same signal).  It never returns.  The child, which a SIGKILL of the
 * front kills too (PR_SET_PDEATHSIG), returns true and goes on
 * as the recorder; it calls own_session_leave() once the program was
 * started, so the program keeps the shell's session and process group (its
 * terminal, job control and signals are as without us) while the recorder
 * moves to a new session, hence a new autogroup.  Where autogroup is off,
 * the process already has threads, or fork fails, the split returns false
 * and nothing changes.  PTPROF_OWN_SESSION=0 turns it off (benchmarks).
 *
 * own_session_describe() says for -d what was done.
 */
#ifndef PTPROF_RECORD_OWN_SESSION_H
#define PTPROF_RECORD_OWN_SESSION_H

#include <stdbool.h>

bool own_session_split(void);
void own_session_leave(void);
const char *own_session_describe(void);

#endif
