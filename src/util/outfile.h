/*
 * outfile.h - output files that are written completely or not at all.
 *
 * Contract: outfile_open() creates a hidden temporary file next to PATH
 * (same directory, so the final rename is atomic) and fails early, with a
 * message naming PATH, when the directory is not writable.  Nothing at PATH
 * changes until outfile_commit() succeeds; outfile_abort() removes the
 * temporary and leaves any existing PATH untouched.  PATH "-" is standard
 * output: data streams straight through and commit only flushes.
 *
 * outfile_seekable() tells a writer whether it may seek back to patch a
 * header (true for the temporary of a regular file, false for stdout).
 */
#ifndef PTPROF_UTIL_OUTFILE_H
#define PTPROF_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile;

struct outfile *outfile_open(const char *path);
FILE *outfile_stream(struct outfile *out);
const char *outfile_path(const struct outfile *out);
bool outfile_seekable(const struct outfile *out);
/* Flush, sync and move into place.  Returns 0, or -1 after reporting. */
int outfile_commit(struct outfile *out);
void outfile_abort(struct outfile *out);

#endif
