/*
 * load.h - open any profile file into a struct profile (profile.h).
 *
 * Contract: profile_load() reads PATH ("-" is standard input, named
 * "<stdin>" in messages), decompresses gzip, bzip2 or zstd recognised by
 * their magic bytes, and decides the format by content, never by name: the
 * native magic selects the native reader (native.h), "gmon" gprof's
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
 * profile_from_pperf() converts the original raw format: one process (pid =
 * the first sample's first tid, or 0), one thread per tid seen, pmu_size/8
 * channels of the header's magic kind, the map entries as maps, the header
 * as totals; frequency unknown (0).
 *
 * Describing helpers shared by info and dump: a channel kind's name, and a
 * raw wait status as "exit 3" / "killed by SIGSEGV".
 */
#ifndef PTPROF_FORMAT_LOAD_H
#define PTPROF_FORMAT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/pperf.h"
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
/* "native", "gmon", "gperftools", "pprof", "perf-script", "folded" or
 * "pperf", by content. */
const char *profile_file_format(const struct profile_file *f);
int profile_parse(const struct profile_file *f, struct profile *out);
int profile_load(const char *path, struct profile *out);

int profile_from_pperf(const struct pperf_profile *in, struct profile *out);

/* Print every record of a native file in file order, one line each (a
 * sample's threads indented below it), ending with how the file ends.
 * Returns -1 after a message when the file cannot be read at all (bad
 * header, unknown critical record); damage is printed, not an error. */
int native_dump_buffer(const char *name, const void *data, size_t len, FILE *out);

/* "custom", "current", "voltage", "power", "energy". */
const char *profile_kind_name(enum pmu_kind kind);
/* "exit 3", "killed by SIGSEGV", "killed by SIGABRT (core dumped)"... */
void profile_describe_status(int32_t status, char *buf, size_t len);

#endif
