/*
 * csv_samples_write.h - a profile's thread samples as CSV ("ptprof convert
 * PROFILE -o samples.csv"), one row per thread per sample, for
 * spreadsheets and scripts (docs/formats/csv.md, "Export").
 *
 * Contract: an export writer (interop/export.h).  The header is stable:
 *   time,time_s,pid,tid,thread,pc,cpu_s,wall_s,binary,function
 * then one column per channel, "NAME [UNIT]" (or NAME without a unit),
 * then, only for a profile whose thread samples stand for several samples
 * or carry values (format/profile.h), "samples" (the weight) and one
 * column per value type, named as it is, with its integer value.
 * time is CLOCK_REALTIME in seconds with nine decimals, time_s the seconds
 * since the profile's start (META start_time, else its first sample),
 * cpu_s and wall_s the thread's CPU and wall time since its previous
 * appearance (analyze/metrics.h), binary and function the leaf PC's
 * innermost frame (symbol/symbolizer.h); a channel's value is the
 * sample's, written so it reads back to the same double, empty when NaN.
 * The file reads back as a device CSV (csv_timeline.h: the time column is
 * found by name, the channels by their units), which gives every sample
 * its own value again.  --metric does not apply (-1 with a message).
 */
#ifndef PTPROF_EXPORT_CSV_SAMPLES_WRITE_H
#define PTPROF_EXPORT_CSV_SAMPLES_WRITE_H

#include "export/export.h"

int csv_samples_export(const char *in_name, const struct profile *p, const char *path,
                       const struct export_options *o);

#endif
