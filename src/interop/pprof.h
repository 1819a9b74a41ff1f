/*
 * pprof.h - pprof's profile.proto (what `go tool pprof`, Go's runtime/pprof
 * and the services that ingest pprof read and write), read into a struct
 * profile (profile.h).  The writer is an export writer (render/
 * pprof_write.h): pprof carries names and metric values.  The schema is
 * interop/pprof.proto; how pprof's samples become ours, and back, is in
 * docs/formats/pprof.md.
 *
 * Reader contract: pprof_detect() is true when DATA (already
 * decompressed: pprof files are gzipped, and util/slurp undoes that) is a
 * well-formed protobuf Profile whose string table starts with "" (the
 * wire check of pprof_wire.h, nothing decoded), or begins with a complete
 * sample type as every pprof writer's files do (so that a damaged one is
 * reported as pprof, with the offset where it breaks).  pprof_load_buffer()
 * decodes it with protobuf-c (its allocations capped in proportion to the
 * input), validates every index and id, and fills OUT:
 *  - every sample type is read: "samples" gives the number of samples,
 *    "cpu" and "wall" in a time unit the CPU and wall time, "energy" in a
 *    joule unit an energy channel (the first of each); every other type
 *    is a value type of the profile (profile.h, aggregation sum) named as
 *    the type (TYPE/UNIT when that name is taken), so each is a metric of
 *    its own (alloc_space, inuse_objects, contentions, delay...).  The
 *    profile's default metric is the default sample type, else the last
 *    one, as `go tool pprof` chooses.  Without a "cpu" type, CPU time is
 *    the sampling period when the period type is "cpu" time;
 *  - one process per "pid" label (else one, pid 0), one thread per "tid"
 *    label within it (else the pid), named by its "thread_comm" label;
 *  - a pprof sample counted N times (its "samples" value; 1 without that
 *    type, when it measures anything) becomes one thread sample standing
 *    for N samples (a weight: memory and time follow the file, not its
 *    counts) with its values, CPU time, wall time and energy, on a
 *    synthetic timeline laid out so that ptprof's metrics (analyze/
 *    metrics.h) give back the file's values: samples, values, CPU time and
 *    energy exactly, wall time exactly but for a thread whose every sample
 *    is counted once (its first sample's wall time is 0: ptprof measures
 *    wall time between two appearances of a thread; a thread's first
 *    sample counted N > 1 times is a sample of one count, then one of the
 *    other N - 1, so none is lost);
 *  - a sample with no count, CPU or wall time or value but energy is
 *    energy no thread used ("[unattributed]" in a report);
 *  - locations are the stacks' PCs: a location's own address when it has
 *    one no other location took, else a synthetic address.  When locations
 *    carry functions and lines, OUT->locations holds them (one frame per
 *    line, inlined ones first) and the symbolizer answers from that table;
 *    otherwise the mappings become maps (with their build-ids) and the
 *    binaries are read as for a recording;
 *  - frequency from the period when the period type is time, totals from
 *    duration_nanos, time from time_nanos;
 *  - the samples recorded and ideal, and whether the CPU time was sampled
 *    (meta cpu_time "sampled", the rate per CPU second), from the comment
 *    ptprof's writer adds (PPROF_TOTALS_COMMENT): pprof has no rounds, its
 *    samples are thread samples.  Without it both counts are the samples'.
 * Errors are "NAME: offset N: what is wrong" and -1 with OUT empty: bad
 * protobuf (the wire check), an index outside the string table, a missing
 * or duplicate id, no sample type or more than PROF_VALUE_TYPES_MAX, a
 * sample with the wrong number of values or a negative one, a label pid
 * or tid over 32 bits, counts adding up past 2^62, values that overflow
 * 64-bit nanoseconds.  Stacks deeper than PPROF_MAX_DEPTH keep their
 * innermost frames (a warning; their samples are flagged
 * PROF_THREAD_STACK_TRUNCATED).
 */
#ifndef PTPROF_INTEROP_PPROF_H
#define PTPROF_INTEROP_PPROF_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

#define PPROF_MAX_DEPTH 4096
/* The comment ptprof writes of a profile's totals (pprof_write.c): samples
 * recorded, ideal, and "wall" or "CPU", the second the rate is per. */
#define PPROF_TOTALS_COMMENT                                                                       \
    "ptprof totals: %" PRIu64 " samples recorded of %" PRIu64 " ideal, rate per %s second"
#define PPROF_TOTALS_SCAN                                                                          \
    "ptprof totals: %" SCNu64 " samples recorded of %" SCNu64 " ideal, rate per %4s second%n"
/* Memory protobuf-c may use: this many times the input, plus 1 MiB. */
#define PPROF_DECODE_FACTOR 64

bool pprof_detect(const void *data, size_t len);
int pprof_load_buffer(const char *name, const void *data, size_t len, struct profile *out);

#endif
