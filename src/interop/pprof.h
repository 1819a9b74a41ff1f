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
 *  - sample types map onto ptprof's quantities: "samples" (else, when no
 *    other is known, the first type counted in "count") gives the number
 *    of samples, "cpu" and "wall" in a time unit the CPU and wall time,
 *    "energy" in a joule unit an energy channel; a file with none of them
 *    is an error naming its types.  Without a "cpu" type, CPU time is the
 *    sampling period when the period type is "cpu" time;
 *  - one process per "pid" label (else one, pid 0), one thread per "tid"
 *    label within it (else the pid), named by its "thread_comm" label;
 *  - a pprof sample counted N times becomes N thread samples sharing one
 *    stack, each carrying 1/N of its CPU time, wall time and energy on a
 *    synthetic timeline laid out so that ptprof's metrics (analyze/
 *    metrics.h) give back the file's values: samples, CPU time and energy
 *    exactly, wall time exactly but for a thread whose every sample is
 *    counted once (its first sample's wall time is 0: ptprof measures wall
 *    time between two appearances of a thread);
 *  - a sample with no count, CPU or wall time but energy is energy no
 *    thread used ("[unattributed]" in a report);
 *  - locations are the stacks' PCs: a location's own address when it has
 *    one no other location took, else a synthetic address.  When locations
 *    carry functions and lines, OUT->locations holds them (one frame per
 *    line, inlined ones first) and the symbolizer answers from that table;
 *    otherwise the mappings become maps (with their build-ids) and the
 *    binaries are read as for a recording;
 *  - frequency from the period when the period type is time, totals from
 *    duration_nanos, time from time_nanos.
 * Errors are "NAME: offset N: what is wrong" and -1 with OUT empty: bad
 * protobuf (the wire check), an index outside the string table, a missing
 * or duplicate id, a sample with the wrong number of values or a negative
 * one, a label pid or tid over 32 bits, more than MAX_SAMPLES thread
 * samples in all, values that overflow 64-bit nanoseconds.  Stacks deeper
 * than PPROF_MAX_DEPTH keep their innermost frames.
 */
#ifndef PTPROF_INTEROP_PPROF_H
#define PTPROF_INTEROP_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/profile.h"

/* Thread samples a profile may become (as gperftools.h): 2^25 is 93 hours
 * of samples at 100 Hz, and about 2.7 GB in memory. */
#define PPROF_MAX_SAMPLES ((uint64_t)1 << 25)
#define PPROF_MAX_DEPTH 4096
/* Memory protobuf-c may use: this many times the input, plus 1 MiB. */
#define PPROF_DECODE_FACTOR 64

bool pprof_detect(const void *data, size_t len);
int pprof_load_buffer(const char *name, const void *data, size_t len, struct profile *out);
/* The same with another limit on thread samples (for fuzzing). */
int pprof_load_buffer_max(const char *name, const void *data, size_t len, uint64_t max_samples,
                          struct profile *out);

#endif
