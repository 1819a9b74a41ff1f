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
 * front kills too (PR_SET_PDEATHSIG), returns true and goes on as the
 * recorder, in the program's session and process group, as the front's
 * child.
 *
 * It stays there while the program's threads do not want more than the
 * CPUs (their CPU time and their waits for one, per second): in one session, the recorder's short
 * slice (priority.h) lets it take a CPU the moment its tick is due, where across sessions it waits
 * behind a program thread it has just resumed for that thread's slice,
 * milliseconds in which no sample is taken (docs/recording.md).  Once
 * they do, own_session_round() moves the recorder to a session of its
 * own, hence an autogroup of its own, for good (the program keeps the
 * shell's session, process group and terminal);
 * what decided it is kept for -d.  It does nothing unless the split
 * happened and the recorder has not left yet.
 *
 * While the recorder shares the front's process group, a signal sent to
 * the group (the terminal's Ctrl-C, killpg()) reaches it twice: directly,
 * and forwarded by the front.  own_session_echo() is called with every
 * signal the recorder reads, in order, and is true for the front's copy
 * of one that came directly (within a second): the recorder ignores it.
 * A signal sent to the front alone is forwarded once and is not an echo.
 *
 * Where autogroup is off, the process already has threads, or fork fails,
 * the split returns false and nothing changes.  PTPROF_OWN_SESSION=0 turns
 * it off; PTPROF_OWN_SESSION=1 leaves as soon as the program started
 * (own_session_program_started()), as the recorder did before it waited
 * for a crowd: benchmarks compare the three.
 *
 * own_session_describe() says for -d what was done.
 */
#ifndef PTPROF_RECORD_OWN_SESSION_H
#define PTPROF_RECORD_OWN_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

bool own_session_split(void);
/* The program started: with PTPROF_OWN_SESSION=1, leave now. */
void own_session_program_started(void);
/* A round began ELAPSED_NS after the last one, CPUS in the machine,
 * AFTER_S seconds into the recording; the program's threads it looked at
 * ran and waited for a CPU WANTED_NS since they were last looked at.
 * Once they want more than the CPUs, on average over the last few rounds,
 * leave for good.  ELAPSED_NS 0 (the first round) is not counted. */
void own_session_round(uint64_t wanted_ns, uint64_t elapsed_ns, unsigned cpus, double after_s);
bool own_session_echo(const struct signalfd_siginfo *si, uint64_t now_ns);
const char *own_session_describe(void);

#endif
