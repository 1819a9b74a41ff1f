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
    "                      [--format table|csv|json] [-s DIR]...\n"                                \
    "       ptprof compare [OPTION]... A1 [A2...] -- B1 [B2...]\n"

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Compare profiles with a baseline, per key: the baseline's value, each profile's\n"
            "value and its error. Any profile format, plain or compressed.\n"
            "\n"
            "With '--' between them, two sides of one run or more each (repeated runs of two\n"
            "builds): per key, the mean shares of both sides, their difference and whether it\n"
            "is significant (p < 0.05: Welch's t-test over the runs' shares, or with a single\n"
            "run on a side a test on the sample counts), the most significant first. Options\n"
            "go before the '--'.\n"
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
    char **files; /* in order; with sides, side A's then side B's */
    size_t nfiles;
    size_t side_a; /* sides: how many of FILES are side A's; 0: no sides */
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
    optind = 0; /* 0: getopt reads the optstring's leading '-' again */
    opterr = 0;
    a->files = xcalloc((size_t)argc + 1, sizeof(*a->files));
    /* '-': files come back in order (code 1), so '--' can split them into sides. */
    while ((opt = getopt_long(argc, argv, "-:a:" ANALYSIS_SHORT_OPTIONS "h", longopts, NULL)) !=
           -1) {
        if (opt == 1) {
            a->files[a->nfiles++] = optarg;
            continue;
        }
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
    if (optind > 1 && optind <= argc && strcmp(argv[optind - 1], "--") == 0) {
        a->side_a = a->nfiles;
        while (optind < argc)
            a->files[a->nfiles++] = argv[optind++];
        if (a->side_a == 0 || a->nfiles == a->side_a) {
            pt_err("compare: each side of '--' needs a profile (A1 [A2...] -- B1 [B2...])");
            fputs(USAGE_LINE, stderr);
            return 1;
        }
        if (a->cmp.aggregate != AGG_NONE) {
            pt_err("compare: --aggregate compares profiles with a baseline, not two sides");
            return 1;
        }
    } else if (a->nfiles < 2) {
        pt_err("compare: %s",
               a->nfiles ? "nothing to compare the baseline with" : "no profiles given");
        fputs(USAGE_LINE, stderr);
        return 1;
    }
    analysis_args_done(&a->an);
    return 0;
}

/* The two sides' names: --names A,B, else each side's first file name,
 * with its number of runs when it has several. */
static char **side_names(const struct compare_args *a)
{
    char *first[2] = {a->files[0], a->files[a->side_a]};
    char **names = analysis_profile_names(a->names, first, 2);
    size_t runs[2] = {a->side_a, a->nfiles - a->side_a};
    for (int i = 0; names && !a->names && i < 2; i++) {
        if (runs[i] > 1) {
            char *n = xasprintf("%s+%zu", names[i], runs[i] - 1);
            free(names[i]);
            names[i] = n;
        }
    }
    return names;
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
        free(a.files);
        analysis_args_free(&a.an);
        return rc < 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    }
    char **files = a.files;
    size_t nfiles = a.nfiles;
    size_t nnames = a.side_a ? 2 : nfiles;
    char **names = a.side_a ? side_names(&a) : analysis_profile_names(a.names, files, nfiles);
    if (!names) {
        if (a.side_a)
            pt_err("compare: --names wants 2 names with two sides (A,B)");
        else
            pt_err("compare: --names wants %zu names, one per profile (baseline first)", nfiles);
        free(a.files);
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
        if (a.side_a) {
            /* The test is on shares: the values shown are those shares. */
            a.cmp.share = true;
            const struct report **all = xcalloc(nfiles, sizeof(*all));
            for (size_t i = 0; i < nfiles; i++)
                all[i] = &reports[i];
            compare_sides(all, a.side_a, all + a.side_a, nfiles - a.side_a, &a.cmp, &res);
            free(all);
        } else {
            compare_reports(&reports[0], others, nfiles - 1, &a.cmp, &res);
        }
        int width = a.format == RENDER_TABLE ? term_width(STDOUT_FILENO) : 0;
        if (render_compare(stdout, &res, (const char *const *)names, a.format, width) != 0) {
            pt_err("compare: cannot write to standard output");
            rc = PT_EXIT_USAGE;
        }
        compare_free(&res);
    }
    for (size_t i = 0; i < nfiles; i++)
        report_free(&reports[i]);
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    free(a.files);
    free(reports);
    free(others);
    analysis_args_free(&a.an);
    return rc;
}
