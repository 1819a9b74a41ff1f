/* report_html.c - see report_html.h */
#include "cli/report_html.h"
#include "analyze/calltree.h"
#include "analyze/compare.h"
#include "analyze/flame.h"
#include "analyze/timeline.h"
#include "format/load.h"
#include "render/flamegraph_svg.h"
#include "render/html_report.h"
#include "render/timeline_svg.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The figures' width in pixels: a page's usual width. */
#define FIGURE_WIDTH 1200

/* A figure being drawn into memory. */
struct drawing {
    char *svg;
    size_t len;
    FILE *out;
};

static void drawing_start(struct drawing *d)
{
    memset(d, 0, sizeof(*d));
    d->out = open_memstream(&d->svg, &d->len);
    if (!d->out) {
        pt_err("out of memory for a figure");
        exit(70); /* as xalloc.h does */
    }
}

/* The size our own writers give their <svg> tag (render/svg.h svg_open). */
static double svg_size(const char *svg, const char *attr)
{
    const char *tag = strstr(svg, "<svg ");
    const char *v = tag ? strstr(tag, attr) : NULL;
    return v ? strtod(v + strlen(attr), NULL) : 0;
}

/* The flame graph of all the files (their mean), by the report's metric
 * when a flame graph can show it; false (nothing to draw) leaves FIG. */
static bool flame_figure(const struct analysis_args *an, const struct metric *metric, char **files,
                         size_t nfiles, struct html_figure *fig, char **svg)
{
    const char *m = flame_metric_ok(metric) ? metric->name : "cpu";
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct calltree *t = session_calltree(files, nfiles, &an->session, m, keys, names);
    bool ok = false;
    if (t && (t->metric.kind != METRIC_ENERGY || t->totals.has_energy)) {
        struct drawing d;
        drawing_start(&d);
        struct flamegraph_options o = {.metric = t->metric, .width = FIGURE_WIDTH};
        ok = flamegraph_svg(d.out, t, NULL, &o) == 0;
        ok = fclose(d.out) == 0 && ok;
        *svg = d.svg;
        *fig = (struct html_figure){"flame",
                                    "flame graph",
                                    d.svg,
                                    d.len,
                                    svg_size(d.svg, " width=\""),
                                    svg_size(d.svg, " height=\"")};
    }
    calltree_free(t);
    strtab_free(names);
    strtab_free(keys);
    return ok;
}

/* The first file's timeline. */
static bool timeline_figure(const struct analysis_args *an, const char *path,
                            struct html_figure *fig, char **svg)
{
    struct profile prof;
    struct timeline *t = NULL;
    struct timeline_options o = {.end_s = -1, .columns = timeline_svg_columns(FIGURE_WIDTH)};
    bool ok = false;
    if (profile_load(path, &prof) == 0 && timeline_build(path, &prof, &an->session, &o, &t) == 0) {
        struct drawing d;
        drawing_start(&d);
        struct timeline_svg_options so = {0};
        ok = timeline_svg_write(d.out, t, &so) == 0;
        ok = fclose(d.out) == 0 && ok;
        *svg = d.svg;
        *fig = (struct html_figure){"timeline",
                                    "timeline",
                                    d.svg,
                                    d.len,
                                    timeline_svg_width(t),
                                    timeline_svg_height(t, &so)};
    }
    timeline_free(t);
    profile_free(&prof);
    return ok;
}

/* The page's title: the first profile's file name, and how many more. */
static char *page_title(char **files, size_t nfiles)
{
    const char *slash = strrchr(files[0], '/');
    const char *base = slash && slash[1] ? slash + 1 : files[0];
    if (nfiles == 1)
        return xstrdup(base);
    return xasprintf("%s and %zu more", base, nfiles - 1);
}

int report_html(const struct analysis_args *an, char **files, size_t nfiles,
                const struct report *mean, const struct report *reports, const char *out)
{
    struct compare_result cmp;
    bool compared = nfiles > 1;
    char **names = NULL;
    if (compared) {
        const struct report **others = xcalloc(nfiles - 1, sizeof(*others));
        for (size_t i = 1; i < nfiles; i++)
            others[i - 1] = &reports[i];
        struct compare_options co = {.metric = mean->metric,
                                     .error = ERR_ERROR,
                                     .aggregate = AGG_RMSE,
                                     .limit_pct = -1,
                                     .threshold_pct = 0.5};
        compare_reports(&reports[0], others, nfiles - 1, &co, &cmp);
        free(others);
        names = analysis_profile_names(NULL, files, nfiles);
    }
    struct html_figure figures[2];
    char *drawn[2] = {NULL, NULL};
    size_t nfigures = 0;
    if (flame_figure(an, &mean->metric, files, nfiles, &figures[nfigures], &drawn[0]))
        nfigures++;
    if (timeline_figure(an, files[0], &figures[nfigures], &drawn[1]))
        nfigures++;
    char *title = page_title(files, nfiles);
    struct html_report page = {
        .title = title,
        .report = mean,
        .files = (const char *const *)files,
        .nfiles = nfiles,
        .figures = figures,
        .nfigures = nfigures,
        .comparison = compared ? &cmp : NULL,
        .names = (const char *const *)names,
    };
    int rc = PT_EXIT_OK;
    struct outfile *of = outfile_open(out);
    if (!of) {
        rc = PT_EXIT_USAGE;
    } else {
        if (html_report_write(outfile_stream(of), &page) != 0) {
            pt_err("report: cannot write %s", out);
            outfile_abort(of);
            rc = PT_EXIT_USAGE;
        } else if (outfile_commit(of) != 0) {
            rc = PT_EXIT_USAGE;
        }
    }
    free(title);
    free(drawn[0]);
    free(drawn[1]);
    if (compared) {
        compare_free(&cmp);
        for (size_t i = 0; i < nfiles; i++)
            free(names[i]);
        free(names);
    }
    return rc;
}
