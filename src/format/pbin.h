/*
 * pbin.h - a whole profile written in the native format, and .pbin files:
 * a profile together with the symbol tables that make it self-contained
 * (docs/postprocess.md).
 *
 * Contract:
 *  - native_write_profile() writes any struct profile (whatever format it
 *    was read from) as a native file at PATH ("-" is standard output;
 *    compressed when PATH ends in .gz, .bz2 or .zst, util/outfile.h), so
 *    that native_load_buffer() reads back the same profile: META, CHANNEL,
 *    STACK, then processes, execs, threads, maps, unmaps, images, samples,
 *    thread exits and exits in time order, then one LOCATION per entry of
 *    P->locations, then END when P has totals.  A process that records
 *    name but no PROCESS record introduces gets one (starting with the
 *    profile), so the file always reads back whole.  What the native model
 *    cannot say is lost: the time of an exec (only the last program of a
 *    process is kept, written at the process's start; the maps it ended
 *    keep their end times).  Nothing appears at PATH unless all of it was
 *    written; returns 0, or -1 after a message.
 *  - pbin_collect_locations() resolves with S every address the samples of
 *    P use, per process: each thread's PC and the innermost frame of its
 *    stack as they are, every outer stack frame as a return address.  Each
 *    (pid, pc, return address) is resolved once, at the time of the first
 *    sample that uses it, and copied: the result (sorted by pid, pc, then
 *    return address) outlives S and is freed by pbin_locations_free().
 *  - pbin_symbolize() does that with a symbolizer of its own over OPTS and
 *    replaces P->locations with the result, and sets META "symbolized" to
 *    "1": P is then a .pbin, ready for native_write_profile().  When P
 *    already has locations, the symbolizer answers from them.
 */
#ifndef PTPROF_FORMAT_PBIN_H
#define PTPROF_FORMAT_PBIN_H

#include <stddef.h>

#include "model/profile.h"

struct symbolizer;
struct symbolizer_options;

int native_write_profile(const char *path, const struct profile *p);

size_t pbin_collect_locations(const struct profile *p, struct symbolizer *s,
                              struct prof_location **out);
void pbin_locations_free(struct prof_location *locs, size_t n);
int pbin_symbolize(struct profile *p, const struct symbolizer_options *opts);

#endif
