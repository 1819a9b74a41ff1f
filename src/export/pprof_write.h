/*
 * pprof_write.h - a profile written as pprof's profile.proto, gzipped, for
 * `go tool pprof` and the services that ingest pprof (interop/pprof.proto;
 * docs/formats/pprof.md).  An export writer (interop/export.h): pprof
 * carries function names and per-sample values, so the profile is
 * symbolized (analyze/session.h) and measured (analyze/metrics.h) first.
 *
 * Contract of pprof_encode(): the profile.proto of P, uncompressed, in a
 * buffer it allocates (*OUT, *LEN), frames from R:
 *  - sample types samples/count, cpu/nanoseconds, wall/nanoseconds, and
 *    energy/microjoules when P has energy (metrics.h, with O's metrics
 *    options: the channel); the default sample type is O's metric when
 *    given (energy without energy is an error), else cpu; the period type
 *    cpu/nanoseconds with a period of 1 / P's frequency (else the mean
 *    interval between samples); time_nanos the first sample's time,
 *    duration_nanos the run's wall time;
 *  - one Sample per distinct (process, thread, system call, call path),
 *    values summed over its thread samples (each rounded so that every
 *    column adds up to its rounded total), labelled pid, tid and, when the
 *    thread has a name, thread_comm (the labels perf_data_converter uses);
 *    the energy no thread used is one more Sample at a location
 *    "[unattributed]" with no count, CPU or wall time;
 *  - locations leaf first: a sampled PC at its address, a return address
 *    at the address before it (inside the call instruction, as Go writes
 *    them), each with one Line per frame the resolver gives, innermost
 *    (inlined) first, in the mapping that holds it in that process at that
 *    time; a thread stopped in a system call gets a location
 *    "[syscall NAME]" above its stack, as in ptprof report;
 *  - functions by (name, mangled name, file): name the demangled name,
 *    system_name the symbol as in the binary (the name when there is none);
 *  - mappings the maps that locations use, the main program's first, with
 *    start, limit, file offset, file name and hex build-id (a map without
 *    one takes the build-id of its file's other maps in that process), and
 *    has_functions, has_filenames, has_line_numbers, has_inline_frames
 *    from what the resolver named in them.  A mapping where nothing could
 *    be named keeps has_functions false so that pprof may symbolize it;
 *    its locations carry the "BINARY+0xOFFSET" names ptprof shows.
 * Returns 0, or -1 with an allocated message in *ERROR.
 *
 * pprof_export() is the export writer: it symbolizes P as `ptprof report`
 * does (IN_NAME's directory and O's search directories, the symbol cache)
 * and writes PATH gzipped, as pprof expects, whatever its name: when PATH
 * ends in .gz, .bz2 or .zst the output file's own compression (util/
 * outfile.h) is the only one, so out.pb.gz is gzipped once.
 */
#ifndef PTPROF_EXPORT_PPROF_WRITE_H
#define PTPROF_EXPORT_PPROF_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/paths.h"
#include "model/profile.h"
#include "export/export.h"

int pprof_encode(const struct profile *p, const struct frame_resolver *r,
                 const struct export_options *o, uint8_t **out, size_t *len, char **error);
int pprof_export(const char *in_name, const struct profile *p, const char *path,
                 const struct export_options *o);

#endif
