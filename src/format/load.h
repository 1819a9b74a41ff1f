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
 * (perf_script.h) and folded stacks (folded.h); content no detector claims
 * goes to the format it most resembles (resemble.h: the original raw
 * format, pperf.h, for a binary file whose header counts fit), so a
 * damaged file gets its own format's error, and a perf.data of perf's first
 * version (PERFFILE) is named as such with the way to read it.  It
 * returns 0 with OUT filled, or -1 after one message naming the file (and
 * the offset or line where the reader stopped); OUT is then empty, and
 * profile_free() is harmless either way.
 *
 * Memory follows the content, not the file: a native profile is read
 * record by record from the (decompressing) stream, so a reader that meets
 * damage stops reading there, and a native header followed by gigabytes of
 * zeros costs nothing; the text formats (perf script, folded stacks), told
 * by their first bytes (TEXT_HEAD_SIZE in load.c: what their detectors look
 * at), are read line by line from the stream, so gigabytes of repeated
 * lines cost their distinct stacks.  The other formats are parsed whole,
 * so their content is collected first, with two bounds: a run of zero
 * bytes longer than any such format holds (1 MiB; 64 MiB for gmon.out's
 * histograms) is damage, and the first PROFILE_HEAD_SIZE bytes must
 * resemble a profile before the rest is read, so /dev/zero, /dev/urandom
 * or a decompression bomb stop early with an error naming the file and the
 * offset.  A compressed native profile cut short loads as truncated, as a
 * plain one does; a text whose stream is damaged loads up to its last
 * whole line, as truncated at the end of that line; the original format's
 * header counts cover the whole file, so a damaged compressed pperf file
 * is an error.
 *
 * profile_file_read() and profile_parse() are the two halves, for commands
 * that also want the first bytes or the compression (info, dump).  After
 * profile_file_read() a native or text file is still an open stream (IN),
 * which profile_parse() consumes once; profile_file_hold() reads it whole
 * into RAW instead, for a reader that wants the bytes (convert --from).
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

#include "model/profile.h"
#include "util/slurp.h"

struct stream_format;

struct profile_file {
    char *name; /* the path, or "<stdin>" */
    /* The first bytes of the content, decompressed, whatever the format. */
    unsigned char head[16];
    size_t head_len;
    /* A native profile or a text (perf script, folded stacks): the
     * stream, positioned at its start, and which of them it is. */
    struct instream *in;
    const struct stream_format *stream;
    /* Any other format: the content, decompressed.  RAW.truncated: the
     * compressed stream ended early or is corrupt, and RAW.error says
     * where.  RAW.compression is the input's compression in every case. */
    struct slurp raw;
};

int profile_file_read(const char *path, struct profile_file *f);
/* The same for content in memory (kept alive until profile_file_free),
 * named NAME, the formats read whole limited to MAX_LEN bytes (streams are
 * not: they keep only what the profile holds): for tests and the fuzz
 * target. */
int profile_file_read_memory(const char *name, const void *data, size_t len, size_t max_len,
                             struct profile_file *f);
/* Read a native stream whole into RAW (nothing to do for other formats). */
int profile_file_hold(struct profile_file *f);
/* Decompressed bytes read so far: all of them once parsed. */
uint64_t profile_file_length(const struct profile_file *f);
void profile_file_free(struct profile_file *f);
/* "native", "perf-data", "gmon", "gperftools", "pprof", "perf-script",
 * "folded", or for content no detector claims what it most resembles
 * ("pperf", "perf.data", ..., "unknown"). */
const char *profile_file_format(const struct profile_file *f);
int profile_parse(const struct profile_file *f, struct profile *out);
int profile_load(const char *path, struct profile *out);
/* The same, with the binaries found where SEARCH says (-s DIR, --binary;
 * symbol/binary_finder.h) by a reader that reads them to lay the profile
 * out: the original raw format places its map entries in their files
 * (interop/pperf.h).  profile_load() says nothing (NULL): such a reader
 * still looks next to the profile, at the recorded paths and in the
 * library directories. */
struct binary_search;
int profile_parse_with(const struct profile_file *f, const struct binary_search *search,
                       struct profile *out);
int profile_load_with(const char *path, const struct binary_search *search, struct profile *out);

#endif
