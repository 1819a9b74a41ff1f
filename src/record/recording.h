/*
 * recording.h - what every engine's recording shares: the measurement
 * source and its values, the output, the profiler's own signals, the tick
 * schedule, the -d summary's common lines and the exit code.
 *
 * Contract:
 *  - recording_open() does everything that can fail for the user's
 *    reasons before the program exists: opens the measurement source
 *    (-p) and the output (returns PT_EXIT_USAGE after a message, nothing
 *    started); recording_catch_signals() then blocks the profiler's
 *    signals into a signalfd (profiler_signals.h), keeping the mask the
 *    program must start with.  recording_close() releases what is left
 *    (an unfinished output is aborted: an existing file is untouched).
 *  - recording_start_output() makes the output visible once the program
 *    runs and writes the META every recording starts with (record_meta.h),
 *    and with a source, META pmu_timing: "instant" or "interval" (pmu.h).
 *    It also sets up the interpreter frame reader (interp/interp.h), off
 *    without stacks or with PTPROF_INTERP=0.
 *  - recording_begin() starts sampling: the source primed, the tick clock
 *    started at tick_hz, or the requested rate when the engine left it 0
 *    (tick_clock.h; PTPROF_MIN_GAP_PCT
 *    overrides its gap, a benchmark knob), the --duration deadline set;
 *    the profiler asks for a short scheduling slice (priority.h: after the
 *    program was forked, which must not inherit it) and unsets
 *    DEBUGINFOD_URLS (the unwinder must not fetch debug information over
 *    the network mid-recording).  Returns 0, or -1 after a message.
 *  - recording_read_pmu() reads the source into pmu_values at a tick (the
 *    machine's reading, not the threads'), stamped in pmu_at with the
 *    instant the reading stands for (pmu.h: when it was taken, not when it
 *    is written); with join_readings set (before recording_begin()) every
 *    reading, the priming one included, is also kept in `join`
 *    (reading_join.h).  A failed read gives NaN values for that reading
 *    only and is counted (pmu_failures); the next tick tries again.  A
 *    source that has failed for RECORDING_PMU_PATIENCE_NS in a row is given
 *    up, with one warning saying why: NaN from then on.
 *    recording_note_pmu(), before the output is finished, writes the
 *    counts as META (pmu_readings, pmu_failed_readings) and warns once when
 *    readings failed.
 *  - recording_print_summary() prints the -d lines both engines have
 *    (engine, wall time, latency, samples, frequency, threads, deadlines,
 *    interpreter frames);
 *    each engine prints its own after them.
 *  - recording_exit_code(): the program's status as the shell reports it
 *    (128+N for signal N), 0 after an attach, and PT_EXIT_INCOMPLETE (74)
 *    whenever the profile could not be written whole (a full disk: the
 *    writer said which file and why, this says the program's status).
 */
#ifndef PTPROF_RECORD_RECORDING_H
#define PTPROF_RECORD_RECORDING_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmu/pmu.h"
#include "record/engine.h"
#include "record/host_steal.h"
#include "record/output.h"
#include "record/reading_join.h"
#include "record/snapshots.h"
#include "record/tick_clock.h"

struct record_options;
struct interp;

/* After a sample, the program runs at least this share of a period before
 * the next one (docs/recording.md: how it was chosen). */
#define RECORDING_MIN_GAP_PERCENT 25
/* Ticks move up to this share of a period either way from their grid
 * points; the ptrace engine spreads them over whole periods (50). */
#define RECORDING_TICK_SPREAD_PERCENT 25
/* A source failing this long without a good reading is given up. */
#define RECORDING_PMU_PATIENCE_NS 1000000000ULL

struct recording {
    const struct record_options *opts;
    const struct engine_choice *choice;
    struct output *out;
    struct pmu_source *pmu; /* NULL: none */
    double *pmu_values;     /* one per channel */
    uint64_t pmu_at;        /* monotonic: the instant pmu_values stand for */
    bool pmu_failed;        /* given up */
    uint64_t pmu_readings, pmu_failures;
    uint64_t pmu_failing_since; /* monotonic, of the first failure in a row; 0: none */
    uint64_t pmu_failing_reads; /* in a row */
    bool join_readings;         /* keep every reading in join */
    struct reading_join join;
    int signal_fd;
    sigset_t original_mask; /* what the program starts with */
    struct tick_clock clock;
    double tick_hz; /* the clock's rate if not the requested one (0) */
    /* How far a tick moves from its grid point, in percent of a period
     * either way (tick_clock.h); 0: RECORDING_TICK_SPREAD_PERCENT. */
    unsigned tick_spread_pct;
    uint64_t start_mono, end_mono;
    struct host_steal steal_start; /* at start_mono: -d's host steal */
    uint64_t deadline;             /* --duration, monotonic; 0 = none */
    /* --switch-output (snapshots.h), NULL: one file */
    struct snapshots *snapshots;
    /* interpreter frames (interp/interp.h), NULL: off */
    struct interp *interp;
};

/* The common lines of the -d summary. */
struct recording_summary {
    uint64_t latency_ns;      /* the time threads stood still, summed over samples */
    uint64_t samples, ideal;  /* samples taken, and the ideal number */
    const char *samples_note; /* after "N ideal, M actual" ("" or " (...)") */
    bool per_cpu_second;      /* the rate is per second of CPU time */
    uint64_t threads;         /* seen */
};

int recording_open(struct recording *r, const struct record_options *opts,
                   const struct engine_choice *choice);
int recording_catch_signals(struct recording *r);
/* STACK_SIZE: META stack_size, the copy each thread starts with. */
void recording_start_output(struct recording *r, pid_t first_pid, size_t stack_size);
int recording_begin(struct recording *r);
void recording_read_pmu(struct recording *r);
void recording_note_pmu(struct recording *r);
/* --switch-output (snapshots.h): at a tick, start the next file when due;
 * recording_on_signal() takes SIGUSR2 as the request (true: it took SIG). */
void recording_tick(struct recording *r, uint64_t now_ns);
bool recording_on_signal(struct recording *r, int sig);
/* Before output_finish(): the META that says what interpreter frames were
 * read, and how they were kept consistent with the native stacks. */
void recording_interp_meta(struct recording *r);
void recording_print_summary(const struct recording *r, const struct recording_summary *s);
int recording_exit_code(const struct recording *r, int status, int written);
void recording_close(struct recording *r);

#endif
