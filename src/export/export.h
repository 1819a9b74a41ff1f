/*
 * export.h - what writers that analyse before they write are told.
 *
 * Most formats are written from the profile alone (format/).  Some are
 * views of the analysis: pprof's sample values and function names, folded
 * stacks keyed by function with a chosen metric, a CSV of samples.  Their
 * writers (render/) take the loaded profile, its file name (messages, and
 * where binaries are searched: analyze/session.h) and these options.
 *
 * Contract of every export writer:
 *   int X_export(const char *in_name, const struct profile *p, const char *path,
 *                const struct export_options *o);
 * writes PATH ("-" is standard output; compressed by its suffix, complete
 * or not at all: util/outfile.h) and returns 0, or -1 after one message.
 */
#ifndef PTPROF_EXPORT_EXPORT_H
#define PTPROF_EXPORT_EXPORT_H

#include "analyze/report.h"
#include "analyze/session.h"
#include "model/profile.h"

struct export_options {
    struct session_options session; /* keys, metrics options, search dirs, cache */
    const char *metric; /* what a single-valued format counts (metric.h); NULL: the format's
                           default */
    bool keys_given;    /* session.walk.keys were chosen (-k), else the format's own */
};

typedef int (*export_fn)(const char *in_name, const struct profile *p, const char *path,
                         const struct export_options *o);

#endif
