/*
 * multi.h - several runs of the same program as one report: their mean.
 *
 * Contract: report_mean() merges the N reports by key: every quantity of
 * a key is the sum over the reports divided by N (a run where the key
 * does not appear counts 0), and so are the totals and the percentage
 * bases; totals.runs is the sum of the inputs' runs.  Flags: truncated,
 * has_stacks and has_energy if any input has them, has_latency if all do.
 * Value columns are the union of the inputs' by name (a name in another
 * unit stays a column of its own, "NAME (UNIT)").  Keys, metric and focus
 * come from the first report.  The inputs are left as they are; rows come
 * out in no particular order.
 * report_mean_taking() is the same mean, but the inputs' rows are used up:
 * one input's rows become the mean's, several inputs' rows are freed once
 * merged, so the report is not held twice.  The inputs keep everything but
 * their rows (nrows 0) and still need report_free().
 */
#ifndef PTPROF_ANALYZE_MULTI_H
#define PTPROF_ANALYZE_MULTI_H

#include <stddef.h>

#include "analyze/report.h"

void report_mean(const struct report *const *in, size_t n, struct report *out);
void report_mean_taking(struct report *const *in, size_t n, struct report *out);

#endif
