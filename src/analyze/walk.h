/*
 * walk.h - one pass over a profile's thread samples, handing each with its
 * call path (paths.h) and its worth (metrics.h) to a visitor.
 *
 * Contract: walk_profile() visits the samples in order and, within a
 * sample, its threads in order.  For each thread sample the visitor gets
 * its path, the path of the same thread at its previous appearance (NULL
 * at the first: a thread's first sample counts as entering whatever it
 * runs), its quantities (Q_EXECUTIONS 0: visitors count entries from the
 * two paths), its thread slot, the index and time of its sample, and the
 * thread's label (valid until walk_profile() returns).  After the threads
 * of a sample it gets the energy of that interval no thread used, with the
 * idle time, when the profile has energy.  Threads are labelled "NAME#N"
 * for the thread key (keys.h), N being slot + 1 and NAME the thread's last
 * recorded name.  TOTALS describe the run (recorder's figures when it
 * finished, else what the samples show).  Returns 0, or -1 with a message
 * in *ERROR (allocated) when OPTS ask for what the profile cannot give (a
 * missing channel).
 */
#ifndef PTPROF_ANALYZE_WALK_H
#define PTPROF_ANALYZE_WALK_H

#include <stdbool.h>

#include "analyze/keys.h"
#include "analyze/metrics.h"
#include "analyze/paths.h"
#include "analyze/strtab.h"
#include "format/profile.h"

struct walk_event {
    const struct path *path;
    const struct path *prev;
    const double *q; /* Q_COUNT quantities */
    uint32_t slot;
    size_t sample;      /* index into the profile's samples */
    uint64_t time_ns;   /* that sample's time */
    const char *thread; /* "NAME#N" */
};

struct walk_visitor {
    void (*sample)(void *ctx, const struct walk_event *e);
    void (*unattributed)(void *ctx, double energy_j, double idle_s); /* may be NULL */
    void *ctx;
};

struct walk_totals {
    double samples;          /* sampling rounds in the file */
    double thread_samples;   /* thread appearances */
    double recorded_samples; /* the recorder's count, else samples */
    double duration_s;       /* the recorder's wall time, else the samples' span */
    double latency_s;        /* time the target spent stopped, 0 if unknown */
    double requested_hz;     /* 0 if unknown */
    double cpu_s, wall_s, energy_j, unattributed_j, idle_s;
    /* Samples count CPU time (META cpu_time, the perf engine): the achieved
     * frequency is per second of the CPU time the recorder measured,
     * RATE_SPAN_S; otherwise it is per second of DURATION_S. */
    bool per_cpu_second;
    double rate_span_s;
    bool has_energy;
    bool has_stacks;  /* some thread sample has a return address */
    bool has_latency; /* the recorder reported its figures */
    bool truncated;
    char energy_source[256];
};

struct walk_options {
    struct key_spec keys;
    struct metrics_options metrics;
};

int walk_profile(const struct profile *p, const struct frame_resolver *r,
                 const struct walk_options *opts, struct strtab *keys, struct strtab *names,
                 const struct walk_visitor *v, struct walk_totals *totals, char **error);

#endif
