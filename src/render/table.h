/*
 * table.h - a flat profile as a text table or as CSV.
 *
 * Contract: render_flat_profile() prints FP's rows sorted by CPU time,
 * then samples (both descending), then binary and function name, so equal
 * input gives byte-identical output.  LIMIT > 0 prints at most LIMIT rows.
 *
 * TABLE_TEXT: a header line of totals (samples, thread samples, wall time,
 * achieved frequency = recorded samples / wall time and the requested one
 * when known, profiler latency per sample when the recorder reported it,
 * CPU time), a note when the profile is incomplete, then aligned columns
 * "cpu time s", "cpu %", "samples", "binary", "function", and a note when
 * rows were left out.
 *
 * TABLE_CSV: the header "binary:procedure,samples,cpu_time,cpu_time_pct",
 * one line per row, times in seconds and percentages of the total CPU
 * time (0-100); fields are quoted as RFC 4180 asks when needed.
 *
 * Returns 0, or -1 when writing to OUT failed.
 */
#ifndef PTPROF_RENDER_TABLE_H
#define PTPROF_RENDER_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "analyze/flat_profile.h"

enum table_format {
    TABLE_TEXT,
    TABLE_CSV,
};

int render_flat_profile(FILE *out, const struct flat_profile *fp, enum table_format format,
                        size_t limit);

#endif
