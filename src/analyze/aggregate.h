/*
 * aggregate.h - the flat profile with self and total per key, as a walk
 * visitor (walk.h).
 *
 * Contract: for every thread sample, its quantities go to the self of the
 * key of its innermost frame and to the total of every distinct key on its
 * path (once per path, so recursion does not count twice).  Executions:
 * self executions of a key count the thread samples whose innermost key
 * is that key while the same thread's previous sample's was not (or the
 * thread is new); total executions the same for "on the path".  Energy no
 * thread used goes to one row whose every component is "[unattributed]",
 * so the energy of the rows adds up to the measured total (no such row
 * when there is none).
 * Values (walk.h) add up the same way, per value column.
 * aggregate_report() gives every key seen, in no particular order, with
 * the run's totals and the totals as BASE, measured by M (resolved
 * against aggregate_columns()); call it once, after the walk.
 */
#ifndef PTPROF_ANALYZE_AGGREGATE_H
#define PTPROF_ANALYZE_AGGREGATE_H

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"

struct aggregate;

/* KEYS is the table the walk interns key ids into. */
struct aggregate *aggregate_new(const struct strtab *keys, const struct key_spec *spec);
struct walk_visitor aggregate_visitor(struct aggregate *a);
/* The value columns the walk filled. */
const struct value_columns *aggregate_columns(const struct aggregate *a);
void aggregate_report(struct aggregate *a, const struct walk_totals *t, const struct metric *m,
                      struct report *out);
void aggregate_free(struct aggregate *a);

#endif
