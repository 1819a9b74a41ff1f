/*
 * callgraph.h - who calls a function, and what it calls, as a walk
 * visitor (walk.h).
 *
 * Contract: FUNCTION matches a frame whose demangled or mangled name is
 * FUNCTION, or whose demangled name is FUNCTION followed by a parameter
 * list ("ns::f" matches "ns::f(int)"); a FUNCTION holding a wildcard (*, ?
 * or [...]) also matches every whole name it matches as a shell pattern
 * (fnmatch(3): "work_*", "*::draw*", "*hotLoop*"), and every matching
 * function is one focus.  For every thread sample whose path
 * holds a matching frame, its quantities go to:
 *  - FOCUS_CALLERS: the key of the frame right outside each matching frame
 *    ("[no caller]" when the match is the outermost frame);
 *  - FOCUS_CALLEES: the key of the frame right inside each matching frame
 *    ("[self]" when the match is the innermost frame);
 *  each key once per path, and to the function's own total once (values,
 *  walk.h, too).  The
 *  report's rows have equal self and total (executions are not counted),
 *  and its BASE is the function's total, so the callees and "[self]" add
 *  up to 100 % (callers too, unless the function is recursive).
 *
 * A profile with call counts (gmon.out's arcs) is shown as gprof's call
 * graph shows it: callgraph_arc() takes its arcs (walk_arcs(), after the
 * samples), keyed by the function of each end, and the report is built
 * from them instead of the stacks (it has none): a function's total is
 * its own samples' plus, per callee, the callee's total times this
 * function's share of the callee's calls (calls of a function to itself
 * left out; a call closing a cycle propagates nothing, where gprof
 * collapses the cycle); a caller's row is the function's total times the
 * caller's share of its calls ("[no caller]" when nobody counted calls
 * into it: gprof's <spontaneous>), a callee's row the callee's total times
 * its share, "[self]" the function's own.  A value column "calls" counts
 * the calls of each row (the base: calls into the function, or made by
 * it for callees): --metric calls.
 */
#ifndef PTPROF_ANALYZE_CALLGRAPH_H
#define PTPROF_ANALYZE_CALLGRAPH_H

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"

#define CALLGRAPH_NO_CALLER "[no caller]"
#define CALLGRAPH_SELF "[self]"

struct callgraph;

struct callgraph *callgraph_new(const struct strtab *keys, const struct strtab *names,
                                const struct key_spec *spec, const char *function,
                                enum report_focus direction);
struct walk_visitor callgraph_visitor(struct callgraph *g);
/* For walk_arcs() (CTX the callgraph), after the walk of the samples. */
void callgraph_arc(void *ctx, const struct walk_arc *a);
/* The value columns the walk filled, which M is resolved against. */
const struct value_columns *callgraph_columns(const struct callgraph *g);
void callgraph_report(struct callgraph *g, const struct walk_totals *t, const struct metric *m,
                      struct report *out);
/* A flat report R of the same walk (KEYS: its key table) counts each
 * function's executions as the calls into it that G's arcs counted, where
 * the profile has them (gmon.out: gprof's "calls"); else R is left as is. */
void callgraph_set_executions(const struct callgraph *g, struct strtab *keys, struct report *r);
void callgraph_free(struct callgraph *g);

#endif
