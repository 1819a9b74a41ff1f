/*
 * report_render.h - a report (analyze/report.h) as a text table, CSV or
 * JSON; the schemas are in docs/report.md and are stable.
 *
 * Contract:
 *  - RENDER_TABLE: the run's totals first (samples, duration, achieved
 *    and requested frequency, latency, CPU time, energy and power, runs),
 *    wrapped to WIDTH; then aligned columns (shares of the chosen metric,
 *    its value, samples, energy when measured, one column per key) fitted
 *    to WIDTH (0: no limit), then how many rows were left out.
 *  - RENDER_CSV: a header line (first column the key names joined by ':',
 *    then REPORT_CSV_COLUMNS, then per value column of the report NAME,
 *    NAME_pct (a sum or counter) and total_NAME, then per derived metric
 *    its NAME and total_NAME) and one line per row, in the report's order.
 *  - RENDER_JSON: one object with the keys, metric, focus, files, totals
 *    (with the value columns' totals) and rows (each with the CSV columns
 *    and the key's components).
 *  FILES names the profiles the report stands for.  Returns 0, or -1 when
 *  writing failed.
 */
#ifndef PTPROF_RENDER_REPORT_RENDER_H
#define PTPROF_RENDER_REPORT_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "analyze/report.h"

#define REPORT_CSV_COLUMNS                                                                         \
    "samples,cpu_time,cpu_time_pct,wall_time,wall_time_pct,energy,energy_pct,power,executions,"    \
    "self,self_pct,total,total_pct,total_samples,total_cpu_time,total_wall_time,total_energy,"     \
    "total_power,total_executions"

enum render_format {
    RENDER_TABLE,
    RENDER_CSV,
    RENDER_JSON,
};

int render_format_parse(const char *name, enum render_format *out);
/* V as the table shows a value of M. */
void format_metric(char *buf, size_t len, const struct metric *m, double v);
/* The totals line items of R into the table's header, wrapped to WIDTH. */
void render_totals(FILE *out, const struct report_totals *t, int width);
/* Those items ("samples 1234", "duration 2.000 s"...) as text: returns
 * how many of ITEMS it filled (at most REPORT_TOTALS_ITEMS_MAX). */
#define REPORT_TOTALS_ITEMS_MAX 9
#define REPORT_TOTALS_ITEM_LEN 160
size_t report_totals_items(const struct report_totals *t, char items[][REPORT_TOTALS_ITEM_LEN]);
#define REPORT_TRUNCATED_NOTE                                                                      \
    "note: a profile is incomplete (cut short or damaged); figures cover what was read"

int render_report(FILE *out, const struct report *r, enum render_format format, int width,
                  const char *const *files, size_t nfiles);

#endif
