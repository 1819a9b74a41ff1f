/*
 * recorder.h - "ptprof record" and "sampler": run a command under ptrace
 * and sample every thread at a fixed frequency.
 *
 * Contract: record_run() starts OPTS->argv with PTRACE_SEIZE, stops all of
 * its threads with PTRACE_INTERRUPT on absolute deadlines, reads each
 * thread's PC and CPU time plus the PMU, resumes them, and writes the
 * profile when the target exits (or when the profiler is interrupted; see
 * docs/recording.md).  It returns the exit code the profiler should end
 * with: the target's own status (128+N when it died by signal N), 126/127
 * when the command cannot be run, 1 for usage errors found late (output
 * path, PMU).  No signal is ever injected into the target.
 *
 * With OPTS->debug, a summary is printed to stderr at the end:
 *   [debug] wall time:   S s
 *   [debug] latency:     S s total, U us per sample
 *   [debug] samples:     N ideal, M actual
 *   [debug] frequency:   F Hz requested, G Hz achieved
 *   [debug] threads:     T seen
 *   [debug] signals:     K passed to the target
 */
#ifndef PTPROF_RECORD_RECORDER_H
#define PTPROF_RECORD_RECORDER_H

#include <stdbool.h>

struct record_options {
    char **argv;          /* the command, NULL-terminated */
    double frequency;     /* Hz, validated by the caller: (0, 100000] */
    const char *pmu_spec; /* "NAME[:ARG]" or NULL for none */
    const char *output;   /* path, "-" for stdout, NULL for no file */
    bool debug;
};

int record_run(const struct record_options *opts);

#endif
