/*
 * linereader.h - the lines of a text, one at a time, from an instream
 * (instream.h), so that a reader of a text format holds the line it
 * parses, not the file.
 *
 * Contract: line_reader_next() makes the next line visible: *LINE points
 * at its *LEN bytes, without the '\n' (a '\r' before it stays: formats
 * decide), until the next call on R or its stream; R->lineno is its number,
 * from 1.  It returns 1 for a line, 0 at the end of the data, or -1 after
 * one message naming the stream (and the line): a line longer than
 * LINE_READER_MAX, which the text of no profile holds (the window would
 * grow with it), or an input that cannot be read.
 *
 * The end: a last line without '\n' is a line when the data ended cleanly.
 * When it ended at damage (instream_end() is INSTREAM_DAMAGED: a compressed
 * stream cut short or corrupt, a run of zeros past the stream's limit) the
 * bytes after the last '\n' are not a line and are left unconsumed, so
 * instream_offset() is then the end of the last whole line; whether damage
 * is fatal is the caller's decision, and nothing is printed for it.
 *
 * Memory: the stream's window, which holds the current line and at most a
 * piece of decoded input after it.
 */
#ifndef PTPROF_UTIL_LINEREADER_H
#define PTPROF_UTIL_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

#include "util/instream.h"

#define LINE_READER_MAX ((size_t)64 << 20)

struct line_reader {
    struct instream *in;
    uint64_t lineno;
    size_t pending; /* bytes of the line last returned, with its '\n', not yet consumed */
};

void line_reader_init(struct line_reader *r, struct instream *in);
int line_reader_next(struct line_reader *r, const char **line, size_t *len);

#endif
