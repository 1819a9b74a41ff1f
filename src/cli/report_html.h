/*
 * report_html.h - what `ptprof report --html OUT` puts on its page and
 * how it gets it: the mean report of the files (the top table), the
 * figures, and with several files the comparison of each with the first
 * (render/html_report.h writes the page).
 *
 * Contract: report_html() writes OUT atomically (util/outfile.h; "-" is
 * standard output) from the already computed MEAN report and the per-file
 * REPORTS (same keys and metric as AN says), walking the files again for
 * the figures.  Returns a PT_EXIT_* code after a message on failure.
 */
#ifndef PTPROF_CLI_REPORT_HTML_H
#define PTPROF_CLI_REPORT_HTML_H

#include <stddef.h>

#include "analyze/report.h"
#include "cli/analysis_args.h"

int report_html(const struct analysis_args *an, char **files, size_t nfiles,
                const struct report *mean, const struct report *reports, const char *out);

#endif
