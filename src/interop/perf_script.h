/*
 * perf_script.h - the text `perf script` prints from a perf.data recording,
 * read into a struct profile, so perf recordings get ptprof's reports,
 * diffs and flame graphs.  docs/formats/perf-script.md has the details.
 *
 * What is read: events, each a header line
 *     COMM PID/TID [CPU] SECONDS.FRACTION: PERIOD EVENT: [IP SYM+OFF (DSO)]
 * where PID/ may be missing (perf's default prints the tid alone), and
 * [CPU], the time and the period may be missing too; then, with -g, its
 * call chain, one frame a line indented by a tab, leaf first:
 *     \t IP SYM+OFF (DSO)
 * (SYM, +OFF and (DSO) optional; "[unknown]" as perf prints it; DSO
 * "(inlined)" marks an inlined function, which joins the next frame's
 * location), each frame optionally followed by a source line "  FILE:LINE"
 * (-F +srcline; a line indented by spaces after a frame that is not a
 * header is one); a blank line ends the event.  Lines starting with '#'
 * (--header) and side-band events (PERF_RECORD_*) are skipped.
 *
 * Reader contract: perf_script_load_stream() reads IN (util/instream.h)
 * line by line, and perf_script_load_buffer() the bytes DATA/LEN as they
 * are (nothing decompressed), named NAME; either fills OUT with
 *  - one sample per event (one thread sample), in file order, at the
 *    event's time (perf's clock, usually CLOCK_MONOTONIC: not the epoch);
 *    without a time, 1 ms after the previous event.  An event that repeats
 *    the thread's last one exactly (the same time, stack, event and
 *    period: only a file whose lines repeat has such events, since no time
 *    passes between them) is one more of that sample's weight (profile.h),
 *    and its period counts as many times;
 *  - its stack: the call chain (or the header's frame), leaf first, as
 *    synthetic PCs (interop/folded_names.h) whose locations name the
 *    function (SYM without +OFF), the binary (DSO's base name) and its path,
 *    source file and line when given, and as offset the address perf
 *    printed; an event with no frame has the one frame "[unknown]";
 *  - threads per tid (named by their last COMM) and processes per pid;
 *    without PID/, a thread belongs to the process of the first thread seen
 *    with the same COMM (pid = that thread's tid), and keeps it;
 *  - CPU time: each thread's CPU time grows with the periods of the
 *    file's CPU event: the first cpu-clock or task-clock event in it (their
 *    period is nanoseconds), else the first event, whose period is turned
 *    into time by the median interval between a thread's consecutive
 *    samples over the median period (1 ms a sample when nothing says);
 *    samples of the other events count as samples only;
 *  - per-sample values (profile.h): unless the file is of one clock event
 *    alone, every event is a value type of aggregation sum, named after
 *    the event without perf's modifiers (cycles:u is cycles; the whole
 *    name when two events would share one), in nanoseconds for a clock
 *    event else "count", and each sample carries its period in its event's
 *    column: `perf record -e instructions,cycles` gives the metrics
 *    instructions, cycles and ipc;
 *  - frequency 1e9 / period when the CPU event is a clock with one period
 *    throughout, else 0; totals from the samples (span, count).
 * Errors are "NAME:LINE: what is wrong" and -1 with OUT empty: a line that
 * is neither a header, a frame, a source line, a comment nor blank; an
 * address that is not hex or longer than 16 digits; a frame before any
 * header; control characters; a line longer than LINE_READER_MAX
 * (util/linereader.h).  Call chains deeper than PERF_SCRIPT_MAX_DEPTH keep
 * their innermost frames, with a warning naming the first such event's
 * header line, and their samples are flagged PROF_THREAD_STACK_TRUNCATED
 * (`ptprof info` counts them).  Memory follows the profile, not the file:
 * one event's text is held at a time, and what stays is a sample per
 * distinct event, the distinct stacks and names.  The stream's end is the
 * caller's to judge: a stream that ends at damage gives its lines up to
 * the last whole one (util/linereader.h), and format/load.c says the
 * profile is truncated; the event such a stream ends in keeps the frames
 * that arrived and is flagged PROF_THREAD_STACK_TRUNCATED.
 *
 * perf_script_detect() is true when the first non-blank, non-comment line
 * of DATA is an event header (as above, with its EVENT: and either a time
 * or a frame after it) and the lines after it, within
 * PERF_SCRIPT_DETECT_LINES, read as this format; it looks at the first
 * PERF_SCRIPT_DETECT_BYTES only (a line cut by that limit is not judged).
 */
#ifndef PTPROF_INTEROP_PERF_SCRIPT_H
#define PTPROF_INTEROP_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

#define PERF_SCRIPT_MAX_DEPTH 4096
#define PERF_SCRIPT_DETECT_LINES 64
/* perf script --header prints a few kB of comments before the events. */
#define PERF_SCRIPT_DETECT_BYTES 65536

struct instream;

bool perf_script_detect(const void *data, size_t len);
int perf_script_load_stream(struct instream *in, struct profile *out);
int perf_script_load_buffer(const char *name, const void *data, size_t len, struct profile *out);

#endif
