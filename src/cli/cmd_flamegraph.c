/*
 * cmd_flamegraph.c - "ptprof flamegraph": a profile's call stacks as an
 * interactive SVG flame graph, or how they changed against a baseline
 * (docs/flamegraph.md).
 */
#include "analyze/calltree.h"
#include "analyze/flame.h"
#include "analyze/session.h"
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "render/flamegraph_svg.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As perf writes flamegraph.html: a file, since megabytes of SVG are of no
 * use on a terminal; "-o -" writes to standard output. */
#define DEFAULT_OUTPUT "flamegraph.svg"

#define USAGE_LINE                                                                                 \
    "usage: ptprof flamegraph FILE... [-o OUT.svg] [--diff BASELINE] [--metric M] [--icicle]\n"    \
    "                         [--colors hot|binary] [-k KEYS] [--title T] [-s DIR]... "            \
    "[--binary PATH]\n"                                                                            \
    "                         [--no-cache]\n"

static void usage(FILE *out)
{
    fputs(USAGE_LINE
          "\n"
          "Draw the call stacks of a profile as an interactive SVG flame graph: each frame\n"
          "as wide as its share of the metric, callers below callees. Click a frame to\n"
          "zoom, Search (or Ctrl-F) to highlight functions and see their share; hover for\n"
          "samples, time and percentage. Several files of the same program are averaged.\n"
          "Any profile format, plain or compressed.\n"
          "\n"
          "  -o, --output OUT      the SVG to write (default " DEFAULT_OUTPUT "; - is standard\n"
          "                        output; .gz, .bz2, .zst compress)\n"
          "      --diff BASELINE   colour each frame by how its share of the whole changed\n"
          "                        from BASELINE: red grew, blue shrank\n"
          "      --icicle          draw top-down: the outermost frame at the top\n"
          "      --colors C        hot (default: a warm colour per function) or binary\n"
          "                        (a hue per binary, with -k keys that include binary)\n"
          "      --title T         the heading (default: Flame Graph)\n"
          "      --width PX        the image width in pixels (default 1200)\n"
          "      --min-width PX    leave out frames narrower than PX pixels (default "
          "0.1)\n" ANALYSIS_HELP_KEYS
          "  -m, --metric M        what adds up along a stack: cpu, wall, samples, energy,\n"
          "                        or a value that does (alloc_space, instructions...);\n"
          "                        default: the profile's own, else cpu\n" ANALYSIS_HELP_OTHERS
          "  -h, --help            show this help\n",
          out);
}

struct flame_args {
    struct analysis_args an;
    const char *output;
    const char *baseline;
    const char *title;
    bool icicle;
    bool by_binary;
    double width, min_px;
};

static int parse_px(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || v > hi) {
        pt_err("flamegraph: %s wants a number of pixels from %g to %g, not '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* 0 ok, 1 usage error, -1 --help shown. */
static int parse_args(int *argcp, char **argv, struct flame_args *a)
{
    int argc = *argcp;
    enum { OPT_DIFF = 256, OPT_ICICLE, OPT_TITLE, OPT_WIDTH, OPT_MIN_WIDTH, OPT_COLORS };
    static const struct option longopts[] = {
        ANALYSIS_LONG_OPTIONS,
        {"output", required_argument, NULL, 'o'},
        {"diff", required_argument, NULL, OPT_DIFF},
        {"icicle", no_argument, NULL, OPT_ICICLE},
        {"colors", required_argument, NULL, OPT_COLORS},
        {"colours", required_argument, NULL, OPT_COLORS},
        {"title", required_argument, NULL, OPT_TITLE},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"min-width", required_argument, NULL, OPT_MIN_WIDTH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    optind = 1;
    opterr = 0; /* our own messages, with our program name */
    while ((opt = getopt_long(argc, argv, ":" ANALYSIS_SHORT_OPTIONS "o:h", longopts, NULL)) !=
           -1) {
        int taken = analysis_args_option(&a->an, opt, optarg);
        if (taken < 0)
            return 1;
        if (taken)
            continue;
        switch (opt) {
        case 'o':
            a->output = optarg;
            break;
        case OPT_DIFF:
            a->baseline = optarg;
            break;
        case OPT_ICICLE:
            a->icicle = true;
            break;
        case OPT_COLORS:
            if (strcmp(optarg, "hot") != 0 && strcmp(optarg, "binary") != 0) {
                pt_err("flamegraph: unknown colours '%s' (hot or binary)", optarg);
                return 1;
            }
            a->by_binary = strcmp(optarg, "binary") == 0;
            break;
        case OPT_TITLE:
            a->title = optarg;
            break;
        case OPT_WIDTH:
            if (parse_px("--width", optarg, 100, 100000, &a->width) != 0)
                return 1;
            break;
        case OPT_MIN_WIDTH:
            if (parse_px("--min-width", optarg, 0.01, 1000, &a->min_px) != 0)
                return 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default: /* ':' missing value, '?' unknown option */
            pt_err("flamegraph: option '%s' %s", argv[optind - 1],
                   opt == ':' ? "needs a value" : "is not known");
            fputs(USAGE_LINE, stderr);
            return 1;
        }
    }
    /* A built-in that does not add up is refused before any reading. */
    struct metric m;
    if (a->an.metric && metric_resolve(a->an.metric, NULL, &m) == 0 && !flame_metric_ok(&m)) {
        pt_err("flamegraph: the %s metric does not add up along a stack (cpu, wall, samples, "
               "energy or a value such as alloc_space)",
               m.name);
        return 1;
    }
    if (a->by_binary && !key_spec_has(&a->an.session.walk.keys, KEY_BINARY)) {
        pt_err("flamegraph: --colors binary needs binary among the keys (-k)");
        return 1;
    }
    /* The program before the profile, as gprof and pprof take it. */
    analysis_args_take_programs(&a->an, argv, optind, argcp);
    argc = *argcp;
    if (optind >= argc) {
        pt_err("flamegraph: no profile given");
        fputs(USAGE_LINE, stderr);
        return 1;
    }
    analysis_args_done(&a->an);
    return 0;
}

static char *subtitle(const struct flame_args *a, char **files, size_t nfiles,
                      const struct calltree *t)
{
    char what[METRIC_NAME_MAX + 128];
    const struct metric *m = &t->metric;
    const double *root = calltree_total(t, 0);
    switch (m->kind) {
    case METRIC_ENERGY:
        snprintf(what, sizeof(what), "energy, %.4g J", root[Q_ENERGY]);
        break;
    case METRIC_SAMPLES:
        snprintf(what, sizeof(what), "%.0f thread samples", root[Q_SAMPLES]);
        break;
    case METRIC_CPU:
    case METRIC_WALL:
        snprintf(what, sizeof(what), "%s, %.4g s in %.0f thread samples", flame_metric_words(m),
                 root[m->kind == METRIC_WALL ? Q_WALL : Q_CPU], root[Q_SAMPLES]);
        break;
    default: /* a value: counts in full, others to 4 digits */
        snprintf(what, sizeof(what),
                 m->integral ? "%s, %.0f%s%s in %.0f thread samples"
                             : "%s, %.4g%s%s in %.0f thread samples",
                 m->name, calltree_value(t, 0, m, true), *m->unit ? " " : "", m->unit,
                 root[Q_SAMPLES]);
    }
    char runs[64] = "";
    if (nfiles > 1)
        snprintf(runs, sizeof(runs), " (mean of %zu runs)", nfiles);
    if (a->baseline)
        return xasprintf("%s%s \xe2\x80\x94 %s against %s", what, runs, files[0], a->baseline);
    return xasprintf("%s%s \xe2\x80\x94 %s", what, runs, files[0]);
}

/* Writes and commits *OF (which is then gone: *OF is set to NULL). */
static int write_graph(struct flame_args *a, struct outfile **of, char **files, size_t nfiles,
                       const struct calltree *t, const struct calltree *base)
{
    char *sub = subtitle(a, files, nfiles, t);
    struct flamegraph_options o = {
        .metric = t->metric,
        .icicle = a->icicle,
        .colour_by_binary = a->by_binary,
        .title = a->title,
        .subtitle = sub,
        .width = a->width,
        .min_px = a->min_px,
    };
    int rc = flamegraph_svg(outfile_stream(*of), t, base, &o);
    free(sub);
    /* A write that failed is said by the commit, naming the file. */
    if (rc != 0 && !ferror(outfile_stream(*of)))
        return PT_EXIT_BAD_INPUT;
    rc = outfile_commit(*of);
    *of = NULL;
    return rc == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
}

int cmd_flamegraph(int argc, char **argv)
{
    struct flame_args a = {0};
    analysis_args_init(&a.an, "flamegraph");
    int rc = parse_args(&argc, argv, &a);
    if (rc != 0) {
        analysis_args_free(&a.an);
        return rc < 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    }
    char **files = argv + optind;
    size_t nfiles = (size_t)(argc - optind);
    /* An unusable output path is known before minutes of analysis. */
    struct outfile *of = outfile_open(a.output ? a.output : DEFAULT_OUTPUT);
    if (!of) {
        analysis_args_free(&a.an);
        return PT_EXIT_USAGE;
    }
    /* Nodes too narrow to be drawn are not built (issue 19: a node per
     * distinct prefix outweighed the profile).  A differential graph
     * matches the baseline path by path: every node. */
    struct flamegraph_options sizes = {.width = a.width, .min_px = a.min_px};
    double cut = a.baseline ? 0 : flamegraph_min_fraction(&sizes);
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct calltree *t = session_calltree(files, nfiles, &a.an.session, a.an.metric, cut, keys,
                                          names),
                    *base = NULL;
    rc = PT_EXIT_BAD_INPUT;
    if (t && !flame_metric_ok(&t->metric)) {
        pt_err("flamegraph: the %s metric does not add up along a stack", t->metric.name);
    } else if (t && a.baseline) {
        /* The baseline by the same metric as the profile (its default, maybe). */
        char *b[] = {(char *)a.baseline};
        base = session_calltree(b, 1, &a.an.session, t->metric.name, 0, keys, names);
    }
    if (t && flame_metric_ok(&t->metric) && (!a.baseline || base)) {
        if (t->metric.kind == METRIC_ENERGY && !t->totals.has_energy)
            pt_err("flamegraph: no power or energy channel in the profile (record with -p)");
        else if (base && !(calltree_value(base, 0, &base->metric, true) > 0))
            pt_err("flamegraph: %s: no %s to compare with", a.baseline,
                   flame_metric_words(&t->metric));
        else
            rc = write_graph(&a, &of, files, nfiles, t, base);
    }
    if (of)
        outfile_abort(of);
    calltree_free(base);
    calltree_free(t);
    strtab_free(names);
    strtab_free(keys);
    analysis_args_free(&a.an);
    return rc;
}
