/*
 * recorder.h - "ptprof record" and "sampler": run a command (or attach to a
 * process) and sample every thread at a fixed frequency.
 *
 * Contract: record_run() chooses the engine before anything starts
 * (engine.h) and lets it record: the perf engine (perf_engine.c: the
 * kernel samples every thread's CPU time, nobody is stopped) or the ptrace
 * engine (ptrace_engine.c: every thread that ran is stopped at each tick,
 * its registers, schedstat and the top of its stack copied as it stops).
 * The profile is complete when the first process exits, when the profiler
 * is interrupted (once the program died of the signal, or after 1 s), or
 * after OPTS->duration (see docs/recording.md).  It returns the exit code
 * the profiler should end with: the target's own status (128+N when it
 * died by signal N), 126/127 when the command cannot be run, 1 for usage
 * errors (an engine that may not run, bad counters, output path, PMU,
 * pid), 0 after detaching from --pid.  No signal is ever injected into the
 * target.
 *
 * With OPTS->debug, a summary is printed to stderr at the end; both
 * engines begin with (recording.h)
 *   [debug] engine:      ENGINE (REASON)
 *   [debug] wall time:   S s
 *   [debug] latency:     S s total, U us per sample
 *   [debug] samples:     N ideal, M actual
 *   [debug] frequency:   F Hz requested, G Hz achieved [(per CPU second)]
 *   [debug] threads:     T seen
 *   [debug] deadlines:   D dropped (...)
 *   [debug] host steal:  P% of the CPUs' time (...)   (host_steal.h)
 * then the ptrace engine adds
 *   [debug] signals:     K passed to the target
 *   [debug] window:      W us from the first interrupt to the last resume
 *                        (copying C us) per sample
 *   [debug] outside:     check X us, unwind U us, after A us per sample
 *   [debug] stops:       S threads stopped, R reused (...), O left out
 *                        (...), D deferred (...) per round
 *   [debug] stacks:      N cut at the end of their copy
 *   [debug] call exits:  N of M samples of threads that ran stopped at a
 *                        system call's exit (...); K kept there (...), ...
 *   [debug] program:     U s user, K s kernel (...)
 * (latency: the mean time a stopped thread stood still, per sample), and
 * the perf engine
 *   [debug] cpu time:    S s (task-clock of every thread, MODES mode)
 *   [debug] lost:        N samples (ring buffer full), T throttled
 *   [debug] rings:       K KiB per CPU, B bytes per sample record
 *   [debug] ticks:       N (...)
 *   [debug] outside:     unwind U us per sample
 *   [debug] stacks:      N cut at the end of their copy
 *   [debug] children:    N ended, the exit status of K read ...
 *   [debug] counter:     NAME TOTAL (...)   (one per -e event)
 */
#ifndef PTPROF_RECORD_RECORDER_H
#define PTPROF_RECORD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "record/engine.h"
#include "record/output.h"
#include "record/snapshots.h"
#include "unwind/stack.h"

struct record_options {
    char **argv;          /* the command, NULL-terminated (unless attaching) */
    pid_t attach_pid;     /* --pid: attach instead of starting argv */
    double duration;      /* --duration seconds, 0 = until the end */
    double frequency;     /* Hz, validated by the caller: (0, 100000] */
    const char *pmu_spec; /* "NAME[:ARG]" or NULL for none */
    const char *output;   /* path, "-" for stdout, NULL for no file */
    enum output_format format;
    enum stack_mode stack_mode;
    size_t stack_size; /* --stack-size: bytes of stack copied for dwarf; 0: the engine's default */
    bool inherit;      /* follow fork/vfork/clone children */
    bool debug;
    enum record_engine engine; /* --engine / PTPROF_ENGINE (engine.h) */
    bool engine_from_env;      /* PTPROF_ENGINE chose it, not --engine */
    const char *events;        /* -e EVENT[,EVENT...]: counters (perf engine), or NULL */
    /* --switch-output, --switch-max-files (snapshots.h) */
    struct snapshot_options snapshots;
};

int record_run(const struct record_options *opts);

#endif
