/*
 * select.h - ordering report rows and keeping the ones that matter.
 *
 * Contract: report_select() sorts R's rows by the exclusive value of R's
 * metric, then the inclusive one (both descending), then by key, so equal
 * input gives identical output.  THRESHOLD (percent, < 0: off) drops rows
 * whose exclusive and inclusive shares are both below it.  LIMIT
 * (percent, < 0: off) then keeps the rows, in order, until the exclusive
 * shares of those kept reach LIMIT (the row that reaches it is kept);
 * a LIMIT of 100 or more keeps every row.  report_limit_reached() says
 * whether shares adding up to CUMULATIVE reach LIMIT: to within 1e-9
 * points, so that how a sum of shares rounds (100 - 1e-14 or 100 + 1e-14
 * for the same rows) never decides which rows are shown.
 * R->hidden counts what was dropped.
 */
#ifndef PTPROF_ANALYZE_SELECT_H
#define PTPROF_ANALYZE_SELECT_H

#include "analyze/report.h"

#include <stdbool.h>

void report_sort(struct report *r);
void report_select(struct report *r, double limit_pct, double threshold_pct);
bool report_limit_reached(double cumulative_pct, double limit_pct);

#endif
