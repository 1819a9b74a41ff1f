/*
 * cmd_timeline.c - "ptprof timeline": a profile over time as an SVG picture
 * or an HTML page: each measurement channel, and under them one lane per
 * thread showing where it was (docs/timeline.md).
 */
#include "analyze/timeline.h"
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "format/load.h"
#include "render/timeline_svg.h"
#include "util/log.h"
#include "util/outfile.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define USAGE_LINE                                                                                 \
    "usage: ptprof timeline FILE [-o OUT.svg|OUT.html] [--start S] [--end S] [-k KEYS]\n"          \
    "                       [--width PX] [--max-threads N] [-s DIR]... [--binary PATH]\n"          \
    "                       [--no-cache]\n"

#define DEFAULT_WIDTH 1600
#define DEFAULT_MAX_THREADS 64
#define MAX_THREADS_LIMIT 1000

static void usage(FILE *out)
{
    fprintf(out,
            USAGE_LINE
            "\n"
            "Draw a profile over time: every measurement channel (power, current, voltage...)\n"
            "and, under them, one lane per thread coloured by the function it was in.\n"
            "\n"
            "  -o, --output OUT      the picture: .svg, or .html for a page holding it\n"
            "                        (timeline.svg; compressed if OUT ends in .gz, .bz2 or\n"
            "                        .zst; - is standard output)\n"
            "      --format F        svg or html, whatever OUT's name says\n"
            "      --start S         begin S seconds after the profile's start\n"
            "      --end S           end S seconds after the profile's start\n"
            "  -k, --keys KEYS       what lanes show: comma list of pc, binary, file,\n"
            "                        procedure, procedure_mangled, symbol, line (procedure)\n"
            "      --width PX        the picture's width in pixels (%d; %d to %d)\n"
            "      --max-threads N   lanes for at most N threads, those with the most CPU\n"
            "                        time (%d; at most %d)\n"
            "  -s, --search DIR      look for the profiled binaries in DIR first (repeatable)\n"
            "      --binary PATH     PATH is the profiled program (also given before FILE)\n"
            "      --no-cache        do not read or write the symbol cache\n"
            "  -h, --help            show this help\n",
            DEFAULT_WIDTH, TIMELINE_SVG_MIN_WIDTH, TIMELINE_SVG_MAX_WIDTH, DEFAULT_MAX_THREADS,
            MAX_THREADS_LIMIT);
}

enum out_format { OUT_BY_NAME, OUT_SVG, OUT_HTML };

struct timeline_args {
    struct analysis_args analysis;
    struct timeline_options tl;
    const char *output;
    enum out_format format;
    unsigned width;
};

static int parse_seconds(const char *opt, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < 0) {
        pt_err("timeline: %s wants seconds from the profile's start (0 or more), not '%s'", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_count(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) {
        pt_err("timeline: %s wants a whole number from %ld to %ld, not '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* 0 ok, 1 usage error, -1 --help shown. */
static int parse_args(int *argcp, char **argv, struct timeline_args *a)
{
    int argc = *argcp;
    enum {
        OPT_START = 256,
        OPT_END,
        OPT_WIDTH,
        OPT_MAX_THREADS,
        OPT_FORMAT,
    };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"start", required_argument, NULL, OPT_START},
        {"end", required_argument, NULL, OPT_END},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"max-threads", required_argument, NULL, OPT_MAX_THREADS},
        {"keys", required_argument, NULL, 'k'},
        {"search", required_argument, NULL, 's'},
        {"no-cache", no_argument, NULL, ANALYSIS_OPT_NO_CACHE},
        {"binary", required_argument, NULL, ANALYSIS_OPT_BINARY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    long v;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:k:s:h", longopts, NULL)) != -1) {
        int taken = analysis_args_option(&a->analysis, opt, optarg);
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        switch (opt) {
        case 'o':
            a->output = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "svg") == 0) {
                a->format = OUT_SVG;
            } else if (strcmp(optarg, "html") == 0) {
                a->format = OUT_HTML;
            } else {
                pt_err("timeline: unknown format '%s' (svg or html)", optarg);
                return 1;
            }
            break;
        case OPT_START:
            if (parse_seconds("--start", optarg, &a->tl.start_s) != 0)
                return 1;
            break;
        case OPT_END:
            if (parse_seconds("--end", optarg, &a->tl.end_s) != 0)
                return 1;
            break;
        case OPT_WIDTH:
            if (parse_count("--width", optarg, TIMELINE_SVG_MIN_WIDTH, TIMELINE_SVG_MAX_WIDTH,
                            &v) != 0)
                return 1;
            a->width = (unsigned)v;
            break;
        case OPT_MAX_THREADS:
            if (parse_count("--max-threads", optarg, 1, MAX_THREADS_LIMIT, &v) != 0)
                return 1;
            a->tl.max_lanes = (size_t)v;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default: /* ':' missing value, '?' unknown option */
            pt_err("timeline: option '%s' %s", argv[optind - 1],
                   opt == ':' ? "needs a value" : "is not known");
            fputs(USAGE_LINE, stderr);
            return 1;
        }
    }
    if (key_spec_has(&a->analysis.session.walk.keys, KEY_THREAD)) {
        pt_err("timeline: -k thread: every thread has its own lane already");
        return 1;
    }
    if (a->tl.end_s >= 0 && a->tl.end_s <= a->tl.start_s) {
        pt_err("timeline: --end %g is not after --start %g", a->tl.end_s, a->tl.start_s);
        return 1;
    }
    /* The program before the profile, as gprof and pprof take it. */
    analysis_args_take_programs(&a->analysis, argv, optind, argcp);
    argc = *argcp;
    if (optind >= argc) {
        pt_err("timeline: no profile given");
        fputs(USAGE_LINE, stderr);
        return 1;
    }
    if (argc - optind > 1) {
        pt_err("timeline: one profile at a time (got %d)", argc - optind);
        return 1;
    }
    analysis_args_done(&a->analysis);
    return 0;
}

/* HTML when the name (before a compression suffix) ends in .html or .htm. */
static bool html_by_name(const char *path)
{
    size_t n = strlen(path);
    static const char *const compressed[] = {".gz", ".bz2", ".zst"};
    for (size_t i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        size_t k = strlen(compressed[i]);
        if (n > k && strcmp(path + n - k, compressed[i]) == 0) {
            n -= k;
            break;
        }
    }
    return (n >= 5 && strncasecmp(path + n - 5, ".html", 5) == 0) ||
           (n >= 4 && strncasecmp(path + n - 4, ".htm", 4) == 0);
}

static int write_output(const struct timeline_args *a, const struct timeline *t)
{
    bool html = a->format == OUT_HTML || (a->format == OUT_BY_NAME && html_by_name(a->output));
    struct outfile *of = outfile_open(a->output);
    if (!of)
        return PT_EXIT_USAGE;
    FILE *out = outfile_stream(of);
    struct timeline_svg_options so = {0};
    int rc = html ? timeline_html_write(out, t, &so) : timeline_svg_write(out, t, &so);
    if (rc != 0) {
        pt_err("timeline: cannot write %s", strcmp(a->output, "-") == 0 ? "<stdout>" : a->output);
        outfile_abort(of);
        return PT_EXIT_USAGE;
    }
    return outfile_commit(of) == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
}

int cmd_timeline(int argc, char **argv)
{
    struct timeline_args a = {
        .tl = {.start_s = 0, .end_s = -1, .max_lanes = DEFAULT_MAX_THREADS},
        .width = DEFAULT_WIDTH,
    };
    analysis_args_init(&a.analysis, "timeline");
    char err[160];
    key_spec_parse("procedure", &a.analysis.session.walk.keys, err, sizeof(err));
    int rc = parse_args(&argc, argv, &a);
    if (rc != 0) {
        analysis_args_free(&a.analysis);
        return rc < 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
    }
    if (!a.output)
        a.output = a.format == OUT_HTML ? "timeline.html" : "timeline.svg";
    a.tl.columns = timeline_svg_columns(a.width);
    const char *path = argv[optind];
    struct profile prof;
    struct timeline *t = NULL;
    rc = PT_EXIT_BAD_INPUT;
    if (session_load(path, &a.analysis.session, &prof) == 0 &&
        timeline_build(path, &prof, &a.analysis.session, &a.tl, &t) == 0)
        rc = write_output(&a, t);
    timeline_free(t);
    profile_free(&prof);
    analysis_args_free(&a.analysis);
    return rc;
}
