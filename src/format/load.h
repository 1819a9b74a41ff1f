/*
 * load.h - open any profile file into a struct profile (profile.h).
 *
 * Contract: profile_load() reads PATH ("-" is standard input, named
 * "<stdin>" in messages), decompresses gzip, bzip2 or zstd recognised by
 * their magic bytes, and decides the format by content, never by name: the
 * native magic selects the native reader (native.h), "PERFILE2" perf's
 * perf.data (perf_data.h), "gmon" gprof's
 * gmon.out (gmon.h: the executable is then the map "a.out"), then
 * gperftools' header (gperftools.h), pprof's profile.proto (pprof.h: a
 * well-formed protobuf with pprof's string table), the text of `perf script`
 * (perf_script.h) and folded stacks (folded.h); anything else is tried as
 * the original raw format (pperf.h).  A text format whose compressed
 * stream is damaged loads up to its last whole line, as truncated.  It
 * returns 0 with OUT filled, or -1 after one message naming the file (and
 * the offset where the reader stopped); OUT is then empty, and
 * profile_free() is harmless either way.
 * A compressed native profile cut short loads as truncated, as a plain one
 * does; the original format's header counts cover the whole file, so a
 * damaged compressed pperf file is an error.
 *
 * profile_file_read() and profile_parse() are the two halves, for commands
 * that also want the raw bytes or the compression (info, dump).
 *
 * The readers live in format/ (ptprof's own formats) and interop/ (every
 * other format); this file only chooses among them.
 */
#ifndef PTPROF_FORMAT_LOAD_H
#define PTPROF_FORMAT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/profile.h"
#include "util/slurp.h"

struct profile_file {
    char *name; /* the path, or "<stdin>" */
    /* The content, decompressed.  RAW.truncated: the compressed stream
     * ended early or is corrupt, and RAW.error says where. */
    struct slurp raw;
};

int profile_file_read(const char *path, struct profile_file *f);
void profile_file_free(struct profile_file *f);
/* "native", "perf-data", "gmon", "gperftools", "pprof", "perf-script",
 * "folded" or "pperf", by content. */
const char *profile_file_format(const struct profile_file *f);
int profile_parse(const struct profile_file *f, struct profile *out);
int profile_load(const char *path, struct profile *out);

#endif
