/*
 * outfile.h - output files that are written completely or not at all.
 *
 * Contract: outfile_open() creates a hidden temporary file next to PATH
 * (same directory, so the final rename is atomic) and fails early, with a
 * message naming PATH, when the directory is not writable.  The temporary
 * has no name (O_TMPFILE) until it is moved into place, so a writer that
 * dies at any point, even of SIGKILL, leaves nothing behind; where the
 * file system cannot, it is ".NAME.tmp.XXXXXX", removed at exit() and on
 * the terminating signals whose action was the default (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGXFSZ, SIGPIPE): only SIGKILL leaves that one.  Nothing at PATH
 * changes until outfile_commit() succeeds; outfile_abort() removes the
 * temporary and leaves any existing PATH untouched.  PATH "-" is standard
 * output: data streams straight through and commit only flushes.  So is
 * a PATH that exists and is not a regular file (a device such as
 * /dev/null, a FIFO): it is opened and written in place, never replaced.
 *
 * Compression: when PATH ends in .gz, .bz2 or .zst (compress.h),
 * outfile_stream() is a compressing stream over the temporary: writers
 * fwrite plain data, fflush makes everything so far decodable from the
 * file, and commit finishes the compressed stream.  Standard output is
 * never compressed.
 *
 * outfile_seekable() tells a writer whether it may seek back to patch a
 * header (true for the temporary of an uncompressed regular file, false
 * for stdout and for compressed output).
 *
 * Publishing early: outfile_publish() renames the temporary to PATH at once
 * and writing goes on into the same file, so a writer that is killed later
 * leaves what it flushed at PATH (the native recorder publishes once the
 * profiled program has started).  After publish, commit only finishes,
 * flushes and syncs; abort closes the file (finishing a compressed stream)
 * and leaves it at PATH.  Publishing stdout, or publishing twice, does
 * nothing.
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
/* Flush what was written, then move the file to PATH now.  Returns 0, or
 * -1 after reporting (the outfile is then still unpublished and usable). */
int outfile_publish(struct outfile *out);
/* Flush, sync and move into place.  Returns 0, or -1 after reporting. */
int outfile_commit(struct outfile *out);
void outfile_abort(struct outfile *out);

#endif
