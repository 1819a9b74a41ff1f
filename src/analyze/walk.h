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
 * missing channel), or when the profile's value types clash with the
 * visitor's columns.
 *
 * Values: a visitor that keeps value columns (values.h) points V->values
 * at them; the walk adds the profile's value types to them before the
 * first event and hands each thread sample's values (metrics_values())
 * in those columns: E->values[c] for c < E->nvalues (the columns' count
 * when the walk began), 0 where the profile has no such type.  A visitor
 * without columns gets E->values NULL.
 */
#ifndef PTPROF_ANALYZE_WALK_H
#define PTPROF_ANALYZE_WALK_H

#include <stdbool.h>

#include "analyze/keys.h"
#include "analyze/metric.h"
#include "analyze/metrics.h"
#include "analyze/paths.h"
#include "analyze/strtab.h"
#include "model/profile.h"

struct walk_event {
    const struct path *path;
    const struct path *prev;
    const double *q;      /* Q_COUNT quantities */
    const double *values; /* per value column of the visitor, NULL: none */
    size_t nvalues;
    uint32_t slot;
    size_t sample;      /* index into the profile's samples */
    uint64_t time_ns;   /* that sample's time */
    const char *thread; /* "NAME#N" */
    bool stack_cut;     /* its stack lost its outer frames (PROF_THREAD_STACK_TRUNCATED) */
};

struct walk_visitor {
    void (*sample)(void *ctx, const struct walk_event *e);
    void (*unattributed)(void *ctx, double energy_j, double idle_s); /* may be NULL */
    void *ctx;
    struct value_columns *values; /* NULL: the visitor takes no values */
};

struct walk_totals {
    double samples;          /* sampling rounds: a round whose threads stand for several
                                samples (weights) counts as the most of them */
    double thread_samples;   /* thread appearances, each as the samples it stands for */
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
    /* Each sample is one thread's event, requested REQUESTED_HZ times per
     * second of each thread's counting (a perf.data of an event that is not
     * a clock): the achieved rate is of all threads per wall second, which
     * no thread's request is comparable with. */
    bool requested_per_thread;
    bool has_energy;
    bool has_stacks;  /* some thread sample has a return address */
    bool has_latency; /* the recorder reported its figures */
    bool truncated;
    char energy_source[256];
    char default_metric[METRIC_NAME_MAX]; /* the profile's choice, "" for none */
};

struct walk_options {
    struct key_spec keys;
    struct metrics_options metrics;
    size_t max_paths; /* paths cached at most (paths.h); 0: the default */
};

int walk_profile(const struct profile *p, const struct frame_resolver *r,
                 const struct walk_options *opts, struct strtab *keys, struct strtab *names,
                 const struct walk_visitor *v, struct walk_totals *totals, char **error);

/* A call-graph arc counted by the program (prof_arc, gmon.out): the path
 * of the call instruction in the caller and of the callee's address, each
 * a lone PC's frames (the outermost is the function its symbol names). */
struct walk_arc {
    const struct path *caller, *callee;
    uint64_t count;
};

/* Hands FN every arc of P, its ends keyed as walk_profile() keys frames
 * (the same KEYS and NAMES), paths valid during the call.  Returns 0. */
int walk_arcs(const struct profile *p, const struct frame_resolver *r,
              const struct walk_options *opts, struct strtab *keys, struct strtab *names,
              void (*fn)(void *ctx, const struct walk_arc *a), void *ctx);

/* One walk feeding several visitors: walk_fanout_add() each (at most
 * WALK_FANOUT_MAX), then walk with walk_fanout_visitor().  The walk fills
 * the fan-out's own value columns (kept across walks, so several files
 * share them); each visitor with columns of its own gets every event with
 * the values moved to those columns (added to them as they appear).
 * walk_fanout_clear() forgets the visitors (for the next file's), keeping
 * the columns; walk_fanout_free() frees what the fan-out holds. */
#define WALK_FANOUT_MAX 4

struct walk_fanout {
    struct walk_visitor to[WALK_FANOUT_MAX];
    size_t n;
    struct value_columns columns;
    uint32_t *column_of[WALK_FANOUT_MAX]; /* fan-out column -> the visitor's */
    size_t mapped[WALK_FANOUT_MAX];
    double *scratch;
    size_t scratch_cap;
};

void walk_fanout_add(struct walk_fanout *f, struct walk_visitor v);
struct walk_visitor walk_fanout_visitor(struct walk_fanout *f);
void walk_fanout_clear(struct walk_fanout *f);
void walk_fanout_free(struct walk_fanout *f);

#endif
