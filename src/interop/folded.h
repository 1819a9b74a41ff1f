/*
 * folded.h - folded stacks ("collapsed" stacks): one line per distinct call
 * stack, `frame;frame;...;leaf COUNT`, outermost frame first, as Brendan
 * Gregg's stackcollapse scripts, `google-pprof --collapsed` and ptprof's
 * own writer (render/folded_write.h) produce and flame graph tools read.
 * docs/formats/folded.md says what ptprof makes of them.
 *
 * Reader contract: folded_load_stream() reads IN (util/instream.h) line by
 * line, and folded_load_buffer() the bytes DATA/LEN as they are (nothing
 * decompressed), named NAME; either fills OUT with one process and one
 * thread (pid and tid 0, no program name: the format names neither), one
 * stack per distinct line stack (synthetic PCs, interop/folded_names.h: a
 * frame is its name alone, binary "[unknown]", except that the
 * "<ADDRESS>" of 16 hex digits google-pprof --collapsed appends is taken
 * off the name and kept as the frame's offset; profile.locations resolves
 * them), and samples on a synthetic timeline in which a count of 1 is one
 * sample of FOLDED_COUNT_NS of CPU time:
 *  - lines with the same stack add up; stacks come in order of first
 *    appearance;
 *  - a stack counted N times is one sample standing for N samples (its
 *    weight, profile.h: memory and time follow the file, not its counts);
 *    a decimal count stands for round(N) samples, at least 1, and the
 *    samples stop meaning counts; the first stack's first sample is one of
 *    its own (a thread's first appearance counts no wall time);
 *  - the thread's CPU time grows by count x FOLDED_COUNT_NS over each
 *    stack's samples, so `--metric cpu` always gives the counts exactly
 *    (in ms); sample times are the CPU time used so far.
 * Blank lines are skipped; a frame that is empty is "[unknown]"; stacks
 * deeper than FOLDED_MAX_DEPTH keep their innermost frames, with a warning
 * naming the first such line, and their samples are flagged
 * PROF_THREAD_STACK_TRUNCATED (`ptprof info` counts them).  Errors are
 * "NAME:LINE: what is wrong" and -1 with OUT empty: a line without a count
 * after its stack, a count that is not a non-negative decimal number, a
 * line with a control character (not text), counts adding up to more than
 * FOLDED_MAX_TOTAL, a line longer than LINE_READER_MAX (util/linereader.h).
 * Memory follows the distinct stacks and frame names, not the input's
 * size: one line is held at a time, and a stack met again only adds to
 * its count.  The stream's end is the caller's to judge: a stream that
 * ends at damage gives the lines before the last whole one
 * (util/linereader.h), and format/load.c says the profile is truncated.
 *
 * folded_detect() is true when DATA starts like a folded file: the first
 * non-empty lines (the first one whole, however long; the others up to
 * FOLDED_DETECT_BYTES; a line cut by that limit is
 * not judged) all read as folded lines, whose stack does not end in ','
 * (a comma-separated table with a space before its last number is not a
 * folded file) nor start with '#' (a comment of another text format).  A file of blank lines is not
 * one.
 */
#ifndef PTPROF_INTEROP_FOLDED_H
#define PTPROF_INTEROP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* What a count of 1 stands for: one sample of 1 ms of CPU (1 kHz, ptprof
 * record's default rate). */
#define FOLDED_COUNT_NS 1000000u
/* Counts in all (1e12 ms: the CPU time stays inside 64 bits of ns). */
#define FOLDED_MAX_TOTAL 1e12
#define FOLDED_MAX_DEPTH 4096
#define FOLDED_DETECT_BYTES 65536

struct instream;

bool folded_detect(const void *data, size_t len);
int folded_load_stream(struct instream *in, struct profile *out);
int folded_load_buffer(const char *name, const void *data, size_t len, struct profile *out);

#endif
