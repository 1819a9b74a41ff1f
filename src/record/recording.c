/* recording.c - see recording.h */
#include "record/recording.h"
#include "record/interp/interp.h"
#include "record/own_session.h"
#include "record/priority.h"
#include "record/profiler_signals.h"
#include "record/record_meta.h"
#include "record/recorder.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

int recording_open(struct recording *r, const struct record_options *opts,
                   const struct engine_choice *choice)
{
    memset(r, 0, sizeof(*r));
    r->opts = opts;
    r->choice = choice;
    r->signal_fd = -1;
    r->clock.fd = -1;
    if (opts->pmu_spec) {
        r->pmu = pmu_open(opts->pmu_spec);
        if (!r->pmu)
            return PT_EXIT_USAGE;
        r->pmu_values = xcalloc(r->pmu->nchannels ? r->pmu->nchannels : 1, sizeof(double));
    }
    r->snapshots = snapshots_new(opts->output, &opts->snapshots);
    r->out = output_open(r->snapshots ? snapshots_path(r->snapshots) : opts->output, opts->format,
                         r->pmu);
    if (r->snapshots)
        output_keep_state(r->out);
    return r->out ? 0 : PT_EXIT_USAGE;
}

int recording_catch_signals(struct recording *r)
{
    r->signal_fd = profsig_open(&r->original_mask);
    if (r->signal_fd >= 0 && r->opts->snapshots.on_signal) {
        /* SIGUSR2 starts the next file, as with perf: ours, not the program's. */
        sigset_t set;
        sigprocmask(SIG_BLOCK, NULL, &set);
        sigaddset(&set, SIGUSR2);
        sigprocmask(SIG_SETMASK, &set, NULL);
        signalfd(r->signal_fd, &set, 0);
    }
    return r->signal_fd >= 0 ? 0 : -1;
}

void recording_start_output(struct recording *r, pid_t first_pid, size_t stack_size)
{
    output_started(r->out);
    record_meta_write(r->out, r->opts, first_pid, r->choice, stack_size);
    /* What the readings' values stand for (docs/pmu.md, "The join"). */
    if (r->pmu && r->pmu->nchannels)
        output_meta(r->out, "pmu_timing",
                    r->pmu->timing == PMU_AT_INSTANT ? "instant" : "interval");
    /* The original raw format keeps no stacks: no frames to read for it. */
    r->interp =
        interp_new(r->out, r->opts->stack_mode != STACK_NONE && r->opts->format == OUTPUT_NATIVE);
}

void recording_interp_meta(struct recording *r)
{
    interp_write_meta(r->interp, r->out,
                      r->choice->engine == ENGINE_PTRACE
                          ? "read while each thread was stopped"
                          : "read at the tick after the sample; reads that changed under the "
                            "reader dropped");
}

/* A tuning knob for benchmarks: the gap in percent of the period. */
static unsigned min_gap_percent(void)
{
    const char *gap = getenv("PTPROF_MIN_GAP_PCT");
    return gap && *gap ? (unsigned)strtoul(gap, NULL, 10) : RECORDING_MIN_GAP_PERCENT;
}

int recording_begin(struct recording *r)
{
    /* The program has its environment; the unwinder must not fetch debug
     * info over the network in the middle of a recording. */
    unsetenv("DEBUGINFOD_URLS");
    recorder_prefer_latency();
    r->start_mono = monotonic_ns();
    if (r->opts->debug)
        host_steal_mark(&r->steal_start); /* for -d's summary only */
    if (r->opts->duration > 0)
        r->deadline = r->start_mono + (uint64_t)(r->opts->duration * 1e9);
    if (r->pmu && r->join_readings)
        reading_join_init(&r->join, r->pmu->timing, r->pmu->nchannels);
    recording_read_pmu(r); /* primes the counters: the first interval starts here */
    double hz = r->tick_hz > 0 ? r->tick_hz : r->opts->frequency;
    return tick_clock_start(&r->clock, hz, min_gap_percent(),
                            r->tick_spread_pct ? r->tick_spread_pct
                                               : RECORDING_TICK_SPREAD_PERCENT);
}

/* A failed read: this reading is NaN; a source failing for long is given up. */
static void pmu_read_failed(struct recording *r)
{
    uint64_t now = monotonic_ns();
    r->pmu_at = now;
    for (unsigned i = 0; i < r->pmu->nchannels; i++)
        r->pmu_values[i] = NAN;
    if (r->pmu_failed)
        return;
    r->pmu_failures++;
    if (!r->pmu_failing_since) {
        r->pmu_failing_since = now;
        r->pmu_failing_reads = 0;
    }
    r->pmu_failing_reads++;
    if (now - r->pmu_failing_since >= RECORDING_PMU_PATIENCE_NS) {
        pt_warn("PMU '%s' failed for %.1f s (%llu reads in a row; the last: %s): given up, its "
                "values are NaN from now on",
                r->pmu->ops->name, (double)(now - r->pmu_failing_since) / 1e9,
                (unsigned long long)r->pmu_failing_reads, r->pmu->why);
        r->pmu_failed = true;
    }
}

void recording_read_pmu(struct recording *r)
{
    if (!r->pmu)
        return;
    r->pmu_readings++;
    if (!r->pmu_failed && pmu_read(r->pmu, r->pmu_values) == 0) {
        r->pmu_at = r->pmu->read_at;
        r->pmu_failing_since = 0;
    } else {
        pmu_read_failed(r);
    }
    if (r->join_readings)
        reading_join_add(&r->join, r->pmu_values, r->pmu_at);
}

void recording_note_pmu(struct recording *r)
{
    if (!r->pmu || !r->out)
        return;
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->pmu_readings);
    output_meta(r->out, "pmu_readings", buf);
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->pmu_failures);
    output_meta(r->out, "pmu_failed_readings", buf);
    if (r->pmu_failures && !r->pmu_failed)
        pt_warn("PMU '%s': %llu of %llu readings failed and were taken again at the next tick "
                "(the last: %s); the intervals they ended have no energy",
                r->pmu->ops->name, (unsigned long long)r->pmu_failures,
                (unsigned long long)r->pmu_readings, r->pmu->why);
}

void recording_print_summary(const struct recording *r, const struct recording_summary *s)
{
    double wall = (double)(r->end_mono - r->start_mono) / 1e9;
    double span = s->per_cpu_second ? (double)s->ideal / r->opts->frequency : wall;
    fprintf(stderr, "[debug] engine:      %s (%s)\n", engine_name(r->choice->engine),
            r->choice->reason);
    const char *session = own_session_describe();
    if (session)
        fprintf(stderr, "[debug] session:     %s\n", session);
    fprintf(stderr, "[debug] wall time:   %.6f s\n", wall);
    fprintf(stderr, "[debug] latency:     %.6f s total, %.2f us per sample%s\n",
            (double)s->latency_ns / 1e9,
            s->samples ? (double)s->latency_ns / 1e3 / (double)s->samples : 0.0,
            r->choice->engine == ENGINE_PERF ? " (nothing is stopped)" : "");
    fprintf(stderr, "[debug] samples:     %llu ideal, %llu actual%s\n",
            (unsigned long long)s->ideal, (unsigned long long)s->samples, s->samples_note);
    fprintf(stderr, "[debug] frequency:   %.2f Hz requested, %.2f Hz achieved%s\n",
            r->opts->frequency, span > 0 ? (double)s->samples / span : 0.0,
            s->per_cpu_second ? " (per CPU second)" : "");
    fprintf(stderr, "[debug] threads:     %llu seen\n", (unsigned long long)s->threads);
    fprintf(stderr,
            "[debug] deadlines:   %llu dropped (a sample ran into them, or left the "
            "program less than %.0f us)\n",
            (unsigned long long)r->clock.dropped, (double)r->clock.min_gap / 1e3);
    struct host_steal now;
    host_steal_mark(&now);
    fprintf(stderr,
            "[debug] host steal:  %.1f%% of the CPUs' time (the VM's host ran other work; %s)\n",
            100 * host_steal_share(&r->steal_start, &now),
            r->choice->engine == ENGINE_PERF
                ? "task-clock counts it where a thread was on the CPU, its own clock does not"
                : "not in the threads' CPU time");
    if (r->pmu)
        fprintf(
            stderr, "[debug] measurement: %llu readings (%.2f Hz), %llu failed and taken again%s\n",
            (unsigned long long)r->pmu_readings, wall > 0 ? (double)r->pmu_readings / wall : 0.0,
            (unsigned long long)r->pmu_failures, r->pmu_failed ? ", then given up" : "");
    interp_print_summary(r->interp, stderr);
}

int recording_exit_code(const struct recording *r, int status, int written)
{
    int rc;
    if (r->opts->attach_pid)
        rc = written == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    else if (WIFSIGNALED(status))
        rc = 128 + WTERMSIG(status);
    else
        rc = WEXITSTATUS(status);
    /* The profile is incomplete or lost (a full disk): say so whatever
     * the program's status (-d gives it); the writer named the file and
     * the reason once. */
    if (written != 0) {
        if (!r->opts->attach_pid)
            pt_debug("the profile is incomplete: exit status %d; the program %s %d",
                     PT_EXIT_INCOMPLETE,
                     WIFSIGNALED(status) ? "was killed by signal" : "exited with",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        rc = PT_EXIT_INCOMPLETE;
    }
    return rc;
}

void recording_tick(struct recording *r, uint64_t now_ns)
{
    if (r->out && snapshots_due(r->snapshots, now_ns, output_bytes(r->out)))
        snapshots_switch(r->snapshots, r->out, now_ns);
}

bool recording_on_signal(struct recording *r, int sig)
{
    if (sig != SIGUSR2 || !r->opts->snapshots.on_signal)
        return false;
    snapshots_request(r->snapshots);
    return true;
}

void recording_close(struct recording *r)
{
    output_abort(r->out);
    r->out = NULL;
    snapshots_free(r->snapshots); /* after the last file was finished */
    r->snapshots = NULL;
    tick_clock_close(&r->clock);
    if (r->signal_fd >= 0)
        profsig_close(r->signal_fd, &r->original_mask);
    r->signal_fd = -1;
    if (r->pmu)
        pmu_close(r->pmu);
    r->pmu = NULL;
    free(r->pmu_values);
    r->pmu_values = NULL;
    if (r->join_readings)
        reading_join_free(&r->join);
    interp_free(r->interp);
    r->interp = NULL;
}
