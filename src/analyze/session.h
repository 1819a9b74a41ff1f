/*
 * session.h - one profile file through the analysis: load it (any format,
 * format/load.h), symbolize its addresses (symbol/symbolizer.h) and walk
 * it with a visitor (walk.h).
 *
 * Contract: session_walk_file() returns 0 with TOTALS filled, or -1 after
 * one message naming the file (unreadable, not a profile, or lacking what
 * OPTS ask for, such as a channel).  Binaries are searched in
 * OPTS->search_dirs, then in the profile's own directory and the current
 * directory (the original raw format records base names only, and a
 * profile is often written next to its program).  Key and name ids are
 * interned into KEYS and NAMES, which outlive the file.
 * session_report_file() is the walk with the flat aggregation.
 *
 * session_load() is profile_load_with() (format/load.h), so that a reader
 * that reads the profiled binaries to lay the profile out (the original raw
 * format's map entries) finds them as the symbolizer does, through
 * session_binary_search() (-s DIR and --binary of OPTS); and then
 * session_use_binaries(): the binaries OPTS names (--binary) are those the
 * symbolizer reads for the profile's maps of their name (or for its
 * program), and a gmon.out, which holds addresses of one executable laid
 * out as that file says, takes the first of them as its executable
 * (gmon_set_binary()).  Both return 0, or -1 after a message.
 *
 * session_walk_profile() walks a profile already loaded (PATH names it in
 * messages and gives its directory); session_symbolizer() is the
 * symbolizer both use (the search directories above, prepared), for
 * writers that resolve addresses themselves; symbolizer_free() frees it.
 */
#ifndef PTPROF_ANALYZE_SESSION_H
#define PTPROF_ANALYZE_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"
#include "symbol/binary_finder.h"

struct session_options {
    struct walk_options walk;
    const char *const *search_dirs;
    size_t nsearch_dirs;
    const char *const *binaries; /* files the user named as the profiled ones */
    size_t nbinaries;
    bool cache;    /* the persistent symbol cache */
    bool progress; /* a progress bar on a terminal */
};

/* The flat report of PATH (aggregate.h) keyed by OPTS->walk.keys,
 * measured by METRIC (a name, metric.h; NULL: session_metric()'s default). */
int session_report_file(const char *path, const struct session_options *opts, const char *metric,
                        struct report *out);
/* NAME resolved against COLUMNS (what the walk of PATH filled); NAME NULL
 * is the profile's default metric (T->default_metric, e.g. pprof's default
 * sample type) when it has one, else cpu.  -1 after a message naming PATH
 * and the metrics it has. */
int session_metric(const char *path, const char *name, const struct walk_totals *t,
                   const struct value_columns *columns, struct metric *out);

int session_load(const char *path, const struct session_options *opts, struct profile *out);
struct binary_search session_binary_search(const struct session_options *opts);
int session_use_binaries(const struct session_options *opts, struct profile *p);

struct symbolizer;

struct symbolizer *session_symbolizer(const char *path, const struct profile *prof,
                                      const struct session_options *opts);
int session_walk_profile(const char *path, const struct profile *prof,
                         const struct session_options *opts, struct strtab *keys,
                         struct strtab *names, const struct walk_visitor *v,
                         struct walk_totals *totals);
/* Hands FN the call counts of PROF (walk_arcs(): gmon.out's arcs), keyed
 * as session_walk_profile() keys its samples; 0, nothing when it has none. */
int session_walk_arcs(const char *path, const struct profile *prof,
                      const struct session_options *opts, struct strtab *keys, struct strtab *names,
                      void (*fn)(void *ctx, const struct walk_arc *a), void *ctx);
/* The call tree of FILES (analyze/calltree.h): the mean of their runs,
 * keyed by OPTS->walk.keys, finished for METRIC (session_metric() with
 * the first file's default), without the nodes a cut at CUT of the whole
 * leaves out (calltree_keep_wide(); 0 keeps every node); NULL after a
 * message. */
struct calltree;
struct calltree *session_calltree(char *const *files, size_t nfiles,
                                  const struct session_options *opts, const char *metric,
                                  double cut, struct strtab *keys, struct strtab *names);
int session_walk_file(const char *path, const struct session_options *opts, struct strtab *keys,
                      struct strtab *names, const struct walk_visitor *v,
                      struct walk_totals *totals);

#endif
