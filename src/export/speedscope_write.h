/*
 * speedscope_write.h - a profile in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json), for the speedscope
 * viewer: one evented profile per thread, so its "Time Order" view shows
 * each thread's samples in order.  docs/formats/speedscope.md.
 *
 * Contract (an export writer, export/export.h): speedscope_export() walks P
 * through the analysis (analyze/session.h), so names and numbers are those
 * `ptprof report` shows, and writes one JSON document:
 *  - "shared.frames": one frame per function and source file, named as
 *    report names functions (inlined functions are frames of their own,
 *    "[syscall X]" for time in a system call), with "file" and "line" (the
 *    lowest source line a sample saw in it) where known; with
 *    O->keys_given a frame is a key as report shows it (-k binary,procedure
 *    gives "BINARY:FUNCTION") and has no file or line unless the keys do;
 *  - "profiles": one "evented" profile per thread that has samples, the
 *    processes in order of first appearance, each one's main thread (TID
 *    = PID) first and its other threads in order of first appearance, so
 *    the viewer opens on the program's main thread whichever thread the
 *    kernel sampled first; named "PROGRAM[PID] NAME#N (tid TID)"; its
 *    events open and close the frames of consecutive samples' call paths
 *    (outermost first, properly nested), each sample advancing the
 *    thread's clock by its worth in O->metric (default: the profile's own
 *    metric, else cpu): CPU and wall time in "seconds", a value in a time
 *    unit in seconds, bytes in "bytes", samples, energy (J) and other
 *    values as "none" (the metric's name and unit are in the profile's
 *    name).  A sample worth nothing opens nothing.  Metrics that do not
 *    add up (power, executions, means, ratios) are refused;
 *  - "name" (IN's name), "exporter" ("ptprof VERSION"), "activeProfileIndex" 0.
 *  Strings are valid JSON (render/json.h).  Returns 0, or -1 after one
 *  message (the walk failed; a metric it cannot show; energy asked of a
 *  profile without energy; the output could not be written).
 */
#ifndef PTPROF_EXPORT_SPEEDSCOPE_WRITE_H
#define PTPROF_EXPORT_SPEEDSCOPE_WRITE_H

#include "export/export.h"

int speedscope_export(const char *in_name, const struct profile *p, const char *path,
                      const struct export_options *o);

#endif
