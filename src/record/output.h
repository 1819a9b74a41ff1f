/*
 * output.h - where the recorder's events and samples go.
 *
 * Contract: the recorder reports what happens (processes, threads, maps,
 * captured images, stacks, samples) to an output; the output owns the file
 * format.  OUTPUT_NATIVE streams everything (docs/format.md); OUTPUT_PPERF
 * writes the original sampler's raw format, which keeps only samples
 * (tid, pc, cpu time, the PMU values) and one process's executable file
 * mappings; without PMU channels it writes what the original's default
 * build does (its dummy PMU: power, 0.0 per sample).  An output
 * opened with PATH NULL discards everything (the original sampler without
 * -o).  output_open() fails early, before the target is started, when PATH
 * cannot be written; output_started() is called once the target runs (a
 * native file becomes visible at PATH then, so a killed profiler leaves a
 * readable prefix there).  output_finish() completes the file; on failure
 * before output_started() an existing file at PATH is left untouched.
 * Every function but output_open() accepts a NULL output and does nothing,
 * so events that happen after the profile was finished go nowhere.
 *
 * Per-sample values (counters an engine reads per thread: instructions,
 * page faults...): output_value_types() declares them once, before the
 * first sample (name, unit, aggregation: format/profile.h; e.g.
 * {"instructions", "count", PROF_VALUE_SUM} for a count since the
 * thread's previous sample, or PROF_VALUE_COUNTER for the counter's
 * running total); output_sample_values() then gives every thread of a
 * sample one value per type, thread by thread (nthreads x ntypes).
 * Analyses make each type a metric (`--metric instructions`) and derive
 * ratios such as ipc (instructions / cycles).  The pperf format has no
 * room for them: it drops them.
 */
#ifndef PTPROF_RECORD_OUTPUT_H
#define PTPROF_RECORD_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"
#include "pmu/pmu.h"
#include "model/maps.h"

enum output_format {
    OUTPUT_NATIVE,
    OUTPUT_PPERF,
};

struct output;

struct output *output_open(const char *path, enum output_format format,
                           const struct pmu_source *pmu);
int output_started(struct output *out);
void output_meta(struct output *out, const char *key, const char *value);
void output_process(struct output *out, uint32_t pid, uint32_t ppid, uint64_t time_ns);
void output_exec(struct output *out, uint32_t pid, uint64_t time_ns, const char *path);
void output_exit(struct output *out, uint32_t pid, uint64_t time_ns, int32_t status);
void output_thread(struct output *out, uint32_t pid, uint32_t tid, uint64_t time_ns,
                   const char *name);
void output_thread_exit(struct output *out, uint32_t tid, uint64_t time_ns);
void output_map(struct output *out, const struct prof_map *m);
void output_unmap(struct output *out, uint32_t pid, uint64_t time_ns, uint64_t start, uint64_t end);
void output_image(struct output *out, uint32_t pid, uint64_t start, const char *name,
                  const void *data, size_t size);
/* A LOCATION record naming PC of process PID (an interpreter's frame,
 * record/interp/interp.h); formats without symbol tables drop it. */
void output_location(struct output *out, const struct prof_location *loc);
/* 0 = no stack (also for formats without stacks). */
uint32_t output_stack(struct output *out, const uint64_t *pcs, uint32_t depth);
int output_sample(struct output *out, uint64_t time_ns, const double *values,
                  const struct prof_thread_sample *threads, uint32_t nthreads);
/* Returns 0, or -1 when writing failed, a sample came first, or N exceeds
 * PROF_VALUE_TYPES_MAX. */
int output_value_types(struct output *out, const struct prof_value_type *types, uint32_t n);
/* output_sample() whose threads carry THREAD_VALUES (see above; NULL: 0). */
int output_sample_values(struct output *out, uint64_t time_ns, const double *values,
                         const struct prof_thread_sample *threads, uint32_t nthreads,
                         const uint64_t *thread_values);
/* PPERF_MAPS: the maps the raw format keeps (the first process's
 * executable file mappings seen since its last exec); other formats
 * ignore it. */
int output_finish(struct output *out, const struct prof_totals *totals,
                  const struct map_list *pperf_maps);
/* --switch-output: output_keep_state() (before the first event) makes the
 * output one file of a series: it remembers what a later file must repeat
 * (output_state.h), appears only when complete (output_started() does not
 * publish it), and is finished with totals of its own part of the run
 * (its wall time and samples; no latency figures) whatever output_finish()
 * is given.  output_switch() opens PATH in the same format, writes that
 * state to it, finishes the current file and goes on in the new one (OUT
 * stays the same object), so that every file reads alone and no event is
 * lost.  Returns the finished file's result (0, or -1 when it could not
 * be written), or -1 with nothing changed when PATH cannot be opened;
 * *OPENED says whether the new file was started. */
void output_keep_state(struct output *out);
/* The current file's size so far, before compression (0 if unknown). */
uint64_t output_bytes(const struct output *out);
int output_switch(struct output *out, const char *path, bool *opened);
void output_abort(struct output *out);

#endif
