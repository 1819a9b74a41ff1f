/*
 * cmd_compare.c - "ptprof compare": how profiles differ from a baseline,
 * key by key, under an error function, optionally aggregated over the keys
 * (docs/report.md).
 */
#include "analyze/compare.h"
#include "analyze/session.h"
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "render/compare_render.h"
#include "render/termwidth.h"
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
    "usage: ptprof compare BASELINE FILE... [--error FN] [--aggregate FN] [--metric M]\n"          \
    "                      [-k KEYS] [--limit P] [--threshold P] [--names A,B,...]\n"              \
    "                      [--format table|csv|json] [-s DIR]...\n"

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Compare profiles with a baseline, per key: the baseline's value, each profile's\n"
            "value and its error. Any profile format, plain or compressed.\n"
            "\n"
            "      --error FN        error (default), absolute_error, relative_error,\n"
            "                        absolute_relative_error, weighted_error,\n"
            "                        absolute_weighted_error, weighted_relative_error,\n"
            "                        absolute_weighted_relative_error (weight: the key's\n"
            "                        share of the baseline)\n"
            "  -a, --aggregate FN    one number per profile over the keys: sum, min, max,\n"
            "                        mean, wmean, rmse, wrmse\n"
            "      --inclusive       compare total (inclusive) values instead of self\n"
            "      --share           compare each key's percentage of its profile's total\n"
            "      --limit P         keep the keys holding the top P %% of the baseline\n"
            "      --threshold P     keep keys reaching P %% in some profile\n"
            "      --names A,B,...   names for the profiles, baseline first (default: file names)\n"
            "      --format F        table (default), csv or json\n" ANALYSIS_HELP
            "  -h, --help            show this help\n");
}

struct compare_args {
    struct analysis_args an;
    struct compare_options cmp;
    enum render_format format;
    const char *names;
};

/* 0 ok, 1 usage error, -1 --help shown. */
static int parse_args(int argc, char **argv, struct compare_args *a)
{
    enum {
        OPT_INCLUSIVE = 256,
        OPT_ERROR,
        OPT_SHARE,
        OPT_LIMIT,
        OPT_THRESHOLD,
        OPT_NAMES,
        OPT_FORMAT
    };
    static const struct option longopts[] = {
        ANALYSIS_LONG_OPTIONS,
        {"error", required_argument, NULL, OPT_ERROR},
        {"aggregate", required_argument, NULL, 'a'},
        {"inclusive", no_argument, NULL, OPT_INCLUSIVE},
        {"share", no_argument, NULL, OPT_SHARE},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"names", required_argument, NULL, OPT_NAMES},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":a:" ANALYSIS_SHORT_OPTIONS "h", longopts, NULL)) !=
           -1) {
        int taken = analysis_args_option(&a->an, opt, optarg);
        if (taken < 0)
            return 1;
        if (taken)
            continue;
        switch (opt) {
        case OPT_ERROR:
            if (error_fn_parse(optarg, &a->cmp.error) != 0) {
                pt_err("compare: unknown error function '%s' (see --help)", optarg);
                return 1;
            }
            break;
        case 'a':
            if (aggregate_fn_parse(optarg, &a->cmp.aggregate) != 0) {
                pt_err("compare: unknown aggregate '%s' (sum, min, max, mean, wmean, rmse, "
                       "wrmse)",
                       optarg);
                return 1;
            }
            break;
        case OPT_INCLUSIVE:
            a->cmp.inclusive = true;
            break;
        case OPT_SHARE:
            a->cmp.share = true;
            break;
        case OPT_LIMIT:
            if (analysis_parse_pct(&a->an, "--limit", optarg, false, &a->cmp.limit_pct) != 0)
                return 1;
            break;
        case OPT_THRESHOLD:
            if (analysis_parse_pct(&a->an, "--threshold", optarg, true, &a->cmp.threshold_pct) != 0)
                return 1;
            break;
        case OPT_NAMES:
            a->names = optarg;
            break;
        case OPT_FORMAT:
            if (render_format_parse(optarg, &a->format) != 0) {
                pt_err("compare: unknown format '%s' (table, csv or json)", optarg);
                return 1;
            }
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            pt_err("compare: option '%s' %s", argv[optind - 1],
                   opt == ':' ? "needs a value" : "is not known");
            fputs(USAGE_LINE, stderr);
            return 1;
        }
    }
    if (argc - optind < 2) {
        pt_err("compare: %s",
               argc - optind ? "nothing to compare the baseline with" : "no profiles given");
        fputs(USAGE_LINE, stderr);
        return 1;
    }
    analysis_args_done(&a->an);
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_args a = {
        .cmp = {.error = ERR_ERROR, .aggregate = AGG_NONE, .limit_pct = -1, .threshold_pct = -1},
        .format = RENDER_TABLE,
    };
    analysis_args_init(&a.an, "compare");
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        analysis_args_free(&a.an);
        return rc < 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    }
    char **files = argv + optind;
    size_t nfiles = (size_t)(argc - optind);
    char **names = analysis_profile_names(a.names, files, nfiles);
    if (!names) {
        pt_err("compare: --names wants %zu names, one per profile (baseline first)", nfiles);
        analysis_args_free(&a.an);
        return PT_EXIT_USAGE;
    }

    struct report *reports = xcalloc(nfiles, sizeof(*reports));
    const struct report **others = xcalloc(nfiles, sizeof(*others));
    size_t done = 0;
    rc = PT_EXIT_OK;
    for (; done < nfiles; done++) {
        /* Every profile by the baseline's metric (its default unless told). */
        const char *metric = done ? reports[0].metric.name : a.an.metric;
        if (session_report_file(files[done], &a.an.session, metric, &reports[done]) != 0) {
            rc = PT_EXIT_BAD_INPUT;
            break;
        }
        if (done > 0)
            others[done - 1] = &reports[done];
    }
    if (rc == PT_EXIT_OK) {
        a.cmp.metric = reports[0].metric;
        if ((a.cmp.metric.kind == METRIC_ENERGY || a.cmp.metric.kind == METRIC_POWER) &&
            !reports[0].totals.has_energy)
            pt_warn("compare: %s has no power or energy channel", files[0]);
        struct compare_result res;
        compare_reports(&reports[0], others, nfiles - 1, &a.cmp, &res);
        int width = a.format == RENDER_TABLE ? term_width(STDOUT_FILENO) : 0;
        if (render_compare(stdout, &res, (const char *const *)names, a.format, width) != 0) {
            pt_err("compare: cannot write to standard output");
            rc = PT_EXIT_USAGE;
        }
        compare_free(&res);
    }
    for (size_t i = 0; i < nfiles; i++) {
        report_free(&reports[i]);
        free(names[i]);
    }
    free(names);
    free(reports);
    free(others);
    analysis_args_free(&a.an);
    return rc;
}
