/*
 * cmd_report.c - "ptprof report": where the time (or energy) of one or
 * more profiles went, per key, as a table, CSV or JSON; also the callers
 * or callees of a function and the call tree (docs/report.md).
 */
#include "analyze/aggregate.h"
#include "analyze/callgraph.h"
#include "analyze/calltree.h"
#include "analyze/multi.h"
#include "analyze/select.h"
#include "analyze/session.h"
#include "analyze/uncertainty.h"
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "cli/report_html.h"
#include "format/load.h"
#include "render/report_render.h"
#include "render/termwidth.h"
#include "render/tree_render.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define USAGE_LINE                                                                                 \
    "usage: ptprof report [PROGRAM] [FILE...] [-k KEYS] [--metric M]\n"                            \
    "                     [--callers F | --callees F | --tree] [--limit P] [--threshold P]\n"      \
    "                     [--format table|csv|json] [--html OUT] [--ci] [-s DIR]...\n"             \
    "                     [--binary PATH]\n"

/* The tree is unreadable with every node; it shows those over 0.5 % unless told. */
#define TREE_THRESHOLD 0.5

static void usage(FILE *out)
{
    fprintf(
        out,
        USAGE_LINE
        "\n"
        "Show where the time or energy of a profile went, per key. Several files of the\n"
        "same program are averaged (repeated runs). Any profile format, plain or compressed;\n"
        "without FILE, " PT_DEFAULT_PROFILE " (what record writes unless told).\n"
        "PROGRAM, an executable named before the profiles as for gprof and pprof, is the\n"
        "profiled program (the same as --binary PROGRAM).\n"
        "\n"
        "      --callers FUNC    what called FUNC, as shares of FUNC's total; FUNC is a\n"
        "                        name, or a pattern with * ? [...] ('work_*')\n"
        "      --callees FUNC    what FUNC called, and its own share ([self])\n"
        "      --tree            the call tree, outermost frames first\n"
        "      --limit P         keep the top rows until they hold P %% of the total\n"
        "                        (100: every row)\n"
        "      --threshold P     drop rows under P %% (self and total; tree default %g)\n"
        "      --format F        table (default), csv or json\n"
        "      --ci              a 95%% interval for each share (and energy): from the\n"
        "                        sample counts, or from the spread of several runs\n"
        "      --html OUT        write a self-contained HTML page instead: the totals, the\n"
        "                        sortable table, the flame graph and the timeline, and\n"
        "                        with several files their comparison with the first\n" ANALYSIS_HELP
        "  -h, --help            show this help\n"
        "\n"
        "Rows have self (the key was the innermost frame) and total (the key was anywhere\n"
        "on the stack) values. The CSV and JSON columns are described in docs/report.md.\n",
        TREE_THRESHOLD);
}

struct report_args {
    struct analysis_args an;
    enum render_format format;
    double limit, threshold;
    const char *focus_function;
    enum report_focus focus;
    bool tree;
    const char *html; /* --html OUT */
    bool ci;          /* --ci: intervals (analyze/uncertainty.h) */
};

/* 0 ok, 1 usage error, -1 --help shown. */
static int parse_args(int *argcp, char **argv, struct report_args *a)
{
    int argc = *argcp;
    enum {
        OPT_CALLERS = 256,
        OPT_CALLEES,
        OPT_TREE,
        OPT_LIMIT,
        OPT_THRESHOLD,
        OPT_FORMAT,
        OPT_HTML,
        OPT_CI
    };
    static const struct option longopts[] = {
        ANALYSIS_LONG_OPTIONS,
        {"callers", required_argument, NULL, OPT_CALLERS},
        {"callees", required_argument, NULL, OPT_CALLEES},
        {"tree", no_argument, NULL, OPT_TREE},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"html", required_argument, NULL, OPT_HTML},
        {"ci", no_argument, NULL, OPT_CI},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, views = 0;
    optind = 1;
    opterr = 0; /* our own messages, with our program name */
    while ((opt = getopt_long(argc, argv, ":" ANALYSIS_SHORT_OPTIONS "h", longopts, NULL)) != -1) {
        int taken = analysis_args_option(&a->an, opt, optarg);
        if (taken < 0)
            return 1;
        if (taken)
            continue;
        switch (opt) {
        case OPT_CALLERS:
        case OPT_CALLEES:
            a->focus = opt == OPT_CALLERS ? FOCUS_CALLERS : FOCUS_CALLEES;
            a->focus_function = optarg;
            views++;
            break;
        case OPT_TREE:
            a->tree = true;
            views++;
            break;
        case OPT_LIMIT:
            if (analysis_parse_pct(&a->an, "--limit", optarg, false, &a->limit) != 0)
                return 1;
            break;
        case OPT_THRESHOLD:
            if (analysis_parse_pct(&a->an, "--threshold", optarg, true, &a->threshold) != 0)
                return 1;
            break;
        case OPT_HTML:
            a->html = optarg;
            break;
        case OPT_CI:
            a->ci = true;
            break;
        case OPT_FORMAT:
            if (render_format_parse(optarg, &a->format) != 0) {
                pt_err("report: unknown format '%s' (table, csv or json)", optarg);
                return 1;
            }
            break;
        case 'h':
            usage(stdout);
            return -1;
        default: /* ':' missing value, '?' unknown option */
            pt_err("report: option '%s' %s", argv[optind - 1],
                   opt == ':' ? "needs a value" : "is not known");
            fputs(USAGE_LINE, stderr);
            return 1;
        }
    }
    if (views > 1) {
        pt_err("report: --callers, --callees and --tree are different views; choose one");
        return 1;
    }
    if (a->ci && views) {
        pt_err("report: --ci is for the flat report, not --callers, --callees or --tree");
        return 1;
    }
    if (a->html && a->tree) {
        pt_err("report: --html shows the flat report and the flame graph, not --tree");
        return 1;
    }
    /* "report prog gmon.out", as gprof and pprof take it. */
    analysis_args_take_programs(&a->an, argv, optind, argcp);
    analysis_args_done(&a->an);
    return 0;
}

static int run_tree(struct report_args *a, char **files, size_t nfiles, int width)
{
    double threshold = a->threshold >= 0 ? a->threshold : TREE_THRESHOLD;
    /* The nodes the threshold hides are never built (issue 19): the rest
     * are shown as from the whole tree, with the count of those hidden. */
    double cut = threshold > 0 ? threshold / 100 : 0;
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct calltree *t =
        session_calltree(files, nfiles, &a->an.session, a->an.metric, cut, keys, names);
    int rc = t ? PT_EXIT_OK : PT_EXIT_BAD_INPUT;
    if (t) {
        if (render_tree(stdout, t, &t->metric, threshold, a->format, width) != 0) {
            pt_err("report: cannot write the report to standard output");
            rc = PT_EXIT_USAGE;
        }
    }
    calltree_free(t);
    strtab_free(names);
    strtab_free(keys);
    return rc;
}

/* The report of one file by METRIC (a name, NULL: the profile's own):
 * flat, or the callers/callees of a function.  Its key ids go into KEYS
 * and NAMES, shared by all the files; with FIGURES (--html) the same walk
 * feeds the page's figures. */
static int file_report(struct report_args *a, const char *file, size_t index, const char *metric,
                       struct strtab *keys, struct strtab *names, struct html_figures *figures,
                       struct report *out)
{
    memset(out, 0, sizeof(*out));
    struct profile prof;
    if (session_load(file, &a->an.session, &prof) != 0) {
        profile_free(&prof);
        return -1;
    }
    struct aggregate *agg = NULL;
    struct callgraph *g = NULL;
    struct walk_visitor v;
    if (a->focus == FOCUS_NONE) {
        agg = aggregate_new(keys, &a->an.session.walk.keys);
        v = aggregate_visitor(agg);
    } else {
        g = callgraph_new(keys, names, &a->an.session.walk.keys, a->focus_function, a->focus);
        v = callgraph_visitor(g);
    }
    if (figures)
        v = html_figures_visitor(figures, index, file, &prof, v);
    struct walk_totals wt;
    struct metric m;
    int rc = session_walk_profile(file, &prof, &a->an.session, keys, names, &v, &wt);
    /* Callers, callees and executions by the program's own call counts
     * (gmon.out): a flat report counts them with a callgraph of its own. */
    if (rc == 0 && !g && prof.narcs)
        g = callgraph_new(keys, names, &a->an.session.walk.keys, "", FOCUS_CALLERS);
    if (rc == 0 && g)
        rc = session_walk_arcs(file, &prof, &a->an.session, keys, names, callgraph_arc, g);
    if (rc == 0 && figures)
        html_figures_add_run(figures, index, &wt);
    /* What the report needs is in the walk's tables now: the profile goes
     * before the rows are made, not after (a profile of many distinct
     * addresses held both; issue 19). */
    profile_free(&prof);
    if (rc == 0)
        rc = session_metric(file, metric, &wt, agg ? aggregate_columns(agg) : callgraph_columns(g),
                            &m);
    if (rc == 0) {
        if (agg) {
            aggregate_report(agg, &wt, &m, out);
            if (g)
                callgraph_set_executions(g, keys, out);
        } else {
            callgraph_report(g, &wt, &m, out);
        }
    }
    aggregate_free(agg);
    callgraph_free(g);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct report_args a = {
        .format = RENDER_TABLE,
        .limit = -1,
        .threshold = -1,
    };
    analysis_args_init(&a.an, "report");
    int rc = parse_args(&argc, argv, &a);
    if (rc != 0) {
        analysis_args_free(&a.an);
        return rc < 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    }
    /* No file: the one record writes unless told, as perf report reads perf.data. */
    static char default_profile[] = PT_DEFAULT_PROFILE;
    char *default_files[] = {default_profile};
    char **files = optind < argc ? argv + optind : default_files;
    size_t nfiles = optind < argc ? (size_t)(argc - optind) : 1;
    int width = a.format == RENDER_TABLE ? term_width(STDOUT_FILENO) : 0;
    if (a.tree) {
        rc = run_tree(&a, files, nfiles, width);
        analysis_args_free(&a.an);
        return rc;
    }

    struct report *reports = xcalloc(nfiles, sizeof(*reports));
    const struct report **ptrs = xcalloc(nfiles, sizeof(*ptrs));
    struct report **taken = xcalloc(nfiles, sizeof(*taken));
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct html_figures *figures = a.html ? html_figures_new(&a.an, keys) : NULL;
    size_t done = 0;
    rc = PT_EXIT_OK;
    for (; done < nfiles; done++) {
        /* Every file by the first one's metric (its default unless told). */
        const char *metric = done ? reports[0].metric.name : a.an.metric;
        if (file_report(&a, files[done], done, metric, keys, names, figures, &reports[done]) != 0) {
            rc = PT_EXIT_BAD_INPUT;
            break;
        }
        ptrs[done] = taken[done] = &reports[done];
    }
    if (rc == PT_EXIT_OK) {
        struct report mean;
        /* The runs' rows are needed again only for intervals and HTML. */
        if (a.ci || a.html)
            report_mean(ptrs, nfiles, &mean);
        else
            report_mean_taking(taken, nfiles, &mean);
        if (a.ci)
            report_uncertainty(&mean, ptrs, nfiles);
        report_select(&mean, a.limit, a.threshold);
        if ((mean.metric.kind == METRIC_ENERGY || mean.metric.kind == METRIC_POWER) &&
            !mean.totals.has_energy)
            pt_warn("report: no power or energy channel in the profile (record with -p)");
        if (a.focus != FOCUS_NONE && !mean.focus_found)
            pt_warn("report: no sample has %s on its stack (FUNC is a name, a name without "
                    "its parameters, or a pattern such as '%s*')",
                    a.focus_function, a.focus_function);
        if (a.html) {
            rc = report_html(&a.an, files, nfiles, &mean, reports, figures, a.html);
        } else if (render_report(stdout, &mean, a.format, width, (const char *const *)files,
                                 nfiles) != 0) {
            pt_err("report: cannot write the report to standard output");
            rc = PT_EXIT_USAGE;
        }
        report_free(&mean);
    }
    for (size_t i = 0; i < done; i++)
        report_free(&reports[i]);
    html_figures_free(figures);
    strtab_free(names);
    strtab_free(keys);
    free(reports);
    free(ptrs);
    free(taken);
    analysis_args_free(&a.an);
    return rc;
}
