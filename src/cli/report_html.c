/* report_html.c - see report_html.h.  One walk per file feeds several
 * visitors at once through a fan-out visitor: the report's, the call tree
 * of the flame graph, and for the first file the timeline builder. */
#include "cli/report_html.h"
#include "analyze/calltree.h"
#include "analyze/compare.h"
#include "analyze/flame.h"
#include "analyze/timeline.h"
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

struct html_figures {
    const struct analysis_args *an;
    struct strtab *keys;
    struct calltree *tree;             /* the flame graph's: every file, their mean */
    struct timeline_builder *building; /* the first file's timeline, while walked */
    struct timeline *timeline;
    struct walk_fanout fan; /* the report's visitor and the figures' */
};

struct html_figures *html_figures_new(const struct analysis_args *an, struct strtab *keys)
{
    struct html_figures *f = xcalloc(1, sizeof(*f));
    f->an = an;
    f->keys = keys;
    f->tree = calltree_new(keys, &an->session.walk.keys);
    /* Only what the figure can draw (as cmd_flamegraph.c keeps it). */
    struct flamegraph_options sizes = {.width = FIGURE_WIDTH};
    calltree_keep_wide(f->tree, flamegraph_min_fraction(&sizes));
    return f;
}

struct walk_visitor html_figures_visitor(struct html_figures *f, size_t file, const char *path,
                                         const struct profile *prof, struct walk_visitor report)
{
    walk_fanout_clear(&f->fan);
    walk_fanout_add(&f->fan, report);
    walk_fanout_add(&f->fan, calltree_visitor(f->tree));
    if (file == 0) {
        struct timeline_options o = {.end_s = -1, .columns = timeline_svg_columns(FIGURE_WIDTH)};
        char *error = NULL;
        f->building = timeline_builder_new(prof, f->keys, &f->an->session.walk.keys, &o, &error);
        if (f->building)
            walk_fanout_add(&f->fan, timeline_visitor(f->building));
        else
            pt_err("%s: %s", strcmp(path, "-") == 0 ? "<stdin>" : path, error);
        free(error);
    }
    return walk_fanout_visitor(&f->fan);
}

void html_figures_add_run(struct html_figures *f, size_t file, const struct walk_totals *wt)
{
    calltree_add_run(f->tree, wt);
    if (file == 0 && f->building) {
        f->timeline = timeline_finish(f->building, wt);
        f->building = NULL;
    }
}

void html_figures_free(struct html_figures *f)
{
    if (!f)
        return;
    if (f->building)
        timeline_finish(f->building, NULL);
    timeline_free(f->timeline);
    calltree_free(f->tree);
    walk_fanout_free(&f->fan);
    free(f);
}

/* The flame graph of all the files (their mean), by the report's metric
 * METRIC when a flame graph can show it (else CPU time); false (nothing to
 * draw) leaves FIG. */
static bool flame_figure(const struct metric *metric, struct calltree *t, struct html_figure *fig,
                         char **svg)
{
    struct metric m;
    if (!flame_metric_ok(metric) || metric_resolve(metric->name, &t->columns, &m) != 0)
        m = *metric_builtin(METRIC_CPU);
    calltree_finish(t, &m);
    if (m.kind == METRIC_ENERGY && !t->totals.has_energy)
        return false;
    struct drawing d;
    drawing_start(&d);
    struct flamegraph_options o = {.metric = m, .width = FIGURE_WIDTH};
    bool ok = flamegraph_svg(d.out, t, NULL, &o) == 0;
    ok = fclose(d.out) == 0 && ok;
    *svg = d.svg;
    *fig = (struct html_figure){"flame",
                                "flame graph",
                                d.svg,
                                d.len,
                                svg_size(d.svg, " width=\""),
                                svg_size(d.svg, " height=\"")};
    return ok;
}

/* The first file's timeline. */
static bool timeline_figure(const struct timeline *t, struct html_figure *fig, char **svg)
{
    if (!t)
        return false;
    struct drawing d;
    drawing_start(&d);
    struct timeline_svg_options so = {0};
    bool ok = timeline_svg_write(d.out, t, &so) == 0;
    ok = fclose(d.out) == 0 && ok;
    *svg = d.svg;
    *fig = (struct html_figure){
        "timeline", "timeline", d.svg, d.len, timeline_svg_width(t), timeline_svg_height(t, &so)};
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
                const struct report *mean, const struct report *reports,
                struct html_figures *figures, const char *out)
{
    (void)an; /* its options shaped MEAN and the figures: the metric is MEAN's */
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
    struct html_figure figs[2];
    char *drawn[2] = {NULL, NULL};
    size_t nfigures = 0;
    if (flame_figure(&mean->metric, figures->tree, &figs[nfigures], &drawn[0]))
        nfigures++;
    if (timeline_figure(figures->timeline, &figs[nfigures], &drawn[1]))
        nfigures++;
    char *title = page_title(files, nfiles);
    struct html_report page = {
        .title = title,
        .report = mean,
        .files = (const char *const *)files,
        .nfiles = nfiles,
        .figures = figs,
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
