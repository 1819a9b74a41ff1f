/*
 * output.h - where the recorder's samples go.
 *
 * Contract: the recorder hands every sample and, at the end, the totals and
 * memory maps to an output; the output owns the file format.  Today that is
 * the original sampler's raw format (src/format/pperf.h).  An output opened
 * with PATH NULL discards everything (the original sampler without -o).
 * output_open() fails early (before the target is started) when PATH
 * cannot be written.  output_finish() writes the file completely or leaves
 * any existing file untouched.
 */
#ifndef PTPROF_RECORD_OUTPUT_H
#define PTPROF_RECORD_OUTPUT_H

#include <stdint.h>

#include "pmu/pmu.h"
#include "record/maps.h"

struct sample_thread {
    uint32_t tid;
    uint64_t pc;
    uint64_t cpu_ns;
};

struct record_totals {
    uint64_t wall_ns;
    uint64_t latency_ns;
    uint64_t samples;
};

struct output;

struct output *output_open(const char *path, const struct pmu_source *pmu);
int output_sample(struct output *out, uint64_t realtime_ns, const double *pmu_values,
                  uint32_t nthreads, const struct sample_thread *threads);
/* Returns 0 when the profile was written (or discarded by design). */
int output_finish(struct output *out, const struct record_totals *totals,
                  const struct map_list *maps);
void output_abort(struct output *out);

#endif
