/*
 * folded_write.h - a profile as folded stacks, `process;frame;...;leaf N`
 * per distinct stack, for flame graph tools (FlameGraph's flamegraph.pl,
 * speedscope, inferno) and for diffing as text.  docs/formats/folded.md.
 *
 * Contract (an export writer, interop/export.h): folded_export() walks P
 * through the analysis (analyze/session.h) so the numbers are the ones
 * `ptprof report` shows, and writes one line per distinct (process, call
 * path):
 *  - the first frame is the process: its program's base name, or
 *    "NAME-PID" when the samples come from several processes; no process
 *    frame when no process of P has a program name (a folded input);
 *  - then the path's functions, outermost first, as report names them
 *    (demangled; inlined functions as frames of their own; "[syscall X]"
 *    for time in a system call; "[unknown]" where nothing resolved), with
 *    ';' replaced by ':' and control characters by ' ' inside a name;
 *  - frames are functions; with O->keys_given they are the path's keys as
 *    report shows them (-k binary,procedure gives "BINARY:FUNCTION");
 *  - N is the path's total of O->metric as an integer: samples (the
 *    default), cpu and wall in microseconds, energy in microjoules, a value
 *    type (alloc_space, instructions...) in its own unit, each line rounded
 *    on its own; lines that round to 0 are left out.  Metrics that do not
 *    add up (power, executions, means, ratios) are refused;
 *  - with the energy metric, the energy no thread used (analyze/walk.h)
 *    is one more line, "[unattributed] N", without a process frame;
 *  - lines sorted bytewise, so equal profiles give equal files.
 * Returns 0, or -1 after one message (the walk failed; energy asked of a
 * profile without energy; the output could not be written).
 */
#ifndef PTPROF_EXPORT_FOLDED_WRITE_H
#define PTPROF_EXPORT_FOLDED_WRITE_H

#include "export/export.h"

int folded_export(const char *in_name, const struct profile *p, const char *path,
                  const struct export_options *o);

#endif
