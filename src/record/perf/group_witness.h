/*
 * group_witness.h - was a signal the profiler received sent to its whole
 * process group (the terminal, killpg) or to the profiler alone?
 *
 * Without ptrace the profiler cannot see the program's signals, yet it
 * must forward one sent to it alone (as the shell's child would have got
 * it) and must not repeat one the program already got from the group.
 * The witness is a small child of the profiler in the same process group
 * that blocks every signal it can: whatever the group receives, it
 * receives too, and it reports each signal on a pipe.  Forked before the
 * program, it is signalled before the profiler by a kill() of the group
 * (the kernel signals a group's newest members first); group_witness_saw()
 * still waits a little for its report.  It holds none of the profiler's
 * descriptors (stdin, stdout and stderr go to /dev/null) and ends when
 * the profiler closes its pipe, or dies.
 *
 * Contract: group_witness_start() returns 0, or -1 when it could not be
 * started (then every signal counts as the profiler's alone);
 * group_witness_saw() returns true when the witness reported SIG within
 * WAIT_NS, consuming the report; group_witness_stop() ends and reaps it.
 */
#ifndef PTPROF_RECORD_PERF_GROUP_WITNESS_H
#define PTPROF_RECORD_PERF_GROUP_WITNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct group_witness {
    pid_t pid;     /* 0: none */
    int control;   /* closing it ends the witness */
    int reports;   /* signal numbers, one byte each */
    uint64_t seen; /* bit N: signal N reported and not yet consumed */
};

int group_witness_start(struct group_witness *w);
bool group_witness_saw(struct group_witness *w, int sig, uint64_t wait_ns);
void group_witness_stop(struct group_witness *w);

#endif
