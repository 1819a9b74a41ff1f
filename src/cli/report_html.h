/*
 * report_html.h - what `ptprof report --html OUT` puts on its page and
 * how it gets it: the mean report of the files (the top table), the flame
 * graph of their mean call tree, the first file's timeline, and with
 * several files the comparison of each with the first (render/html_report.h
 * writes the page).
 *
 * Contract: the figures are fed by the same walk that makes each file's
 * report, so a file is read, symbolized and walked once whatever the page
 * shows.  html_figures_new() comes before the first file, given the key
 * table every file is walked into.  For each file, in order,
 * html_figures_visitor() returns a visitor that feeds the report's
 * visitor REPORT and the figures (PROF is the file, loaded, and must live
 * until html_figures_add_run(), which follows the file's walk with its
 * totals).  report_html() then writes OUT atomically (util/outfile.h; "-"
 * is standard output) from the MEAN report, the per-file REPORTS (same
 * keys as AN says, measured by MEAN's metric, which the flame graph uses
 * too when it adds up) and the figures.  Returns a PT_EXIT_* code
 * after a message on failure.  html_figures_free() frees the figures,
 * finished or not.
 */
#ifndef PTPROF_CLI_REPORT_HTML_H
#define PTPROF_CLI_REPORT_HTML_H

#include <stddef.h>

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"
#include "cli/analysis_args.h"
#include "model/profile.h"

struct html_figures;

struct html_figures *html_figures_new(const struct analysis_args *an, struct strtab *keys);
struct walk_visitor html_figures_visitor(struct html_figures *f, size_t file, const char *path,
                                         const struct profile *prof, struct walk_visitor report);
void html_figures_add_run(struct html_figures *f, size_t file, const struct walk_totals *wt);
void html_figures_free(struct html_figures *f);

int report_html(const struct analysis_args *an, char **files, size_t nfiles,
                const struct report *mean, const struct report *reports,
                struct html_figures *figures, const char *out);

#endif
