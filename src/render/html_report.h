/*
 * html_report.h - `ptprof report --html`: one self-contained page.
 *
 * Contract: html_report_write() writes to OUT a page that needs nothing
 * but itself (no network, no other file): the run's totals, the files it
 * stands for, the top table (every row of REPORT, in its order, sortable
 * by any column in the browser), each figure (a complete SVG document,
 * embedded as a data: URI so its own script runs in its own document),
 * and with COMPARISON the comparison of each profile against the first.
 * The page is well-formed XML as well as HTML5.  Every string that comes
 * from a profile (keys, file names, names) goes through render/svg.h's
 * escaping; the only script is our own constant code.  Returns 0, or -1
 * when writing failed.
 */
#ifndef PTPROF_RENDER_HTML_REPORT_H
#define PTPROF_RENDER_HTML_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "analyze/compare.h"
#include "analyze/report.h"

struct html_figure {
    const char *id;    /* the section's anchor: ours, [a-z-] */
    const char *title; /* the section heading */
    const char *svg;   /* a complete SVG document */
    size_t svg_len;
    double width, height; /* its size in CSS px (0: the page's width, 600) */
};

struct html_report {
    const char *title;
    const struct report *report;
    const char *const *files;
    size_t nfiles;
    const struct html_figure *figures;
    size_t nfigures;
    const struct compare_result *comparison; /* NULL: one profile */
    const char *const *names;                /* the comparison's profile names */
};

int html_report_write(FILE *out, const struct html_report *r);

#endif
