/*
 * cmd_postprocess.c - "ptprof postprocess RAW [-o OUT] [-s DIR]...": turn
 * a raw profile (native or the original format) into a self-contained .pbin
 * that carries its own symbol tables (docs/postprocess.md).
 */
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "format/load.h"
#include "format/pbin.h"
#include "symbol/symbolizer.h"
#include "util/compress.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_LINE                                                                                 \
    "usage: ptprof postprocess [PROGRAM] RAW [-o OUT.pbin] [-s DIR]... [--binary PATH]\n"          \
    "                          [--no-cache]\n"

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Symbolize a raw profile (ptprof's native format or the original sampler's) and\n"
            "write it as a .pbin: the same profile plus the binary, function, source line and\n"
            "inline chain of every address its samples use, so it can be analysed on another\n"
            "machine without the profiled binaries.\n"
            "\n"
            "  -o, --output OUT   where to write (default: RAW with its suffix replaced by\n"
            "                     .pbin); compressed when OUT ends in .gz, .bz2 or .zst\n"
            "  -s, --search DIR   look for the profiled binaries in DIR first (repeatable);\n"
            "                     the profile's own directory is searched after them\n"
            "      --binary PATH  PATH is the profiled program (or, by its name, one of its\n"
            "                     libraries); also given before RAW as PROGRAM\n"
            "      --no-cache     neither read nor write the persistent symbol cache\n"
            "  -h, --help         show this help\n"
            "\n"
            "RAW may be compressed with gzip, bzip2 or zstd; \"-\" reads standard input\n"
            "(then -o is required).\n");
}

static int bad_usage(const char *what, const char *arg)
{
    pt_err("postprocess: %s%s", what, arg);
    fputs(USAGE_LINE, stderr);
    return PT_EXIT_USAGE;
}

/* RAW with its compression suffix and then its own suffix replaced by
 * .pbin: run.prof.zst -> run.pbin; a name without a suffix gains one. */
static char *default_output(const char *raw)
{
    char *out = xasprintf("%s", raw);
    if (compression_for_path(out) != COMPRESSION_NONE)
        *strrchr(out, '.') = '\0';
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    char *dot = strrchr(base, '.');
    /* A leading dot names a hidden file, not a suffix. */
    if (dot && dot != base)
        *dot = '\0';
    char *pbin = xasprintf("%s.pbin", out);
    free(out);
    return pbin;
}

/* The -s directories, then the profile's own: the original format names
 * binaries by base name only, and a profile is most often written next to
 * its program. */
static const char **search_dirs(const char *raw, const char *const *dirs, size_t ndirs, char **own,
                                size_t *n)
{
    const char **all = xcalloc(ndirs + 1, sizeof(*all));
    for (size_t i = 0; i < ndirs; i++)
        all[i] = dirs[i];
    *n = ndirs;
    *own = NULL;
    const char *slash = strcmp(raw, "-") != 0 ? strrchr(raw, '/') : NULL;
    if (slash) {
        *own = xasprintf("%.*s", slash == raw ? 1 : (int)(slash - raw), raw);
        all[(*n)++] = *own;
    } else if (strcmp(raw, "-") != 0) {
        all[(*n)++] = ".";
    }
    return all;
}

int cmd_postprocess(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"search", required_argument, NULL, 's'},
        {"no-cache", no_argument, NULL, 'C'},
        {"binary", required_argument, NULL, ANALYSIS_OPT_BINARY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    const char **dirs = xcalloc((size_t)argc + 1, sizeof(*dirs));
    size_t ndirs = 0;
    bool cache = true;
    struct analysis_args an; /* --binary and the program before RAW */
    analysis_args_init(&an, "postprocess");
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            output = optarg;
            break;
        case 's':
            dirs[ndirs++] = optarg;
            /* Loading places the raw format's map entries in the files it
             * finds (by base name, as the original's labels): here too. */
            if (analysis_args_option(&an, opt, optarg) < 0) {
                analysis_args_free(&an);
                free(dirs);
                return PT_EXIT_USAGE;
            }
            break;
        case 'C':
            cache = false;
            break;
        case ANALYSIS_OPT_BINARY:
            if (analysis_args_option(&an, opt, optarg) < 0) {
                analysis_args_free(&an);
                free(dirs);
                return PT_EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            analysis_args_free(&an);
            free(dirs);
            return PT_EXIT_OK;
        default:
            analysis_args_free(&an);
            free(dirs);
            return bad_usage("option is not known or lacks its argument: ", argv[optind - 1]);
        }
    }
    analysis_args_take_programs(&an, argv, optind, &argc);
    analysis_args_done(&an);
    if (optind >= argc || optind + 1 < argc) {
        analysis_args_free(&an);
        free(dirs);
        return bad_usage(optind >= argc ? "no raw profile given" : "one raw profile at a time: ",
                         optind >= argc ? "" : argv[optind + 1]);
    }
    const char *raw = argv[optind];
    char *own_output = NULL;
    if (!output) {
        if (strcmp(raw, "-") == 0) {
            analysis_args_free(&an);
            free(dirs);
            return bad_usage("reading standard input needs -o OUT", "");
        }
        output = own_output = default_output(raw);
        if (strcmp(output, raw) == 0) {
            free(own_output);
            analysis_args_free(&an);
            free(dirs);
            return bad_usage("the default output would replace the input; give -o OUT: ", raw);
        }
    }

    int rc = PT_EXIT_BAD_INPUT;
    struct profile p;
    if (session_load(raw, &an.session, &p) == 0) {
        char *own_dir;
        size_t nall;
        const char **all = search_dirs(raw, dirs, ndirs, &own_dir, &nall);
        struct symbolizer_options opts = {
            .search_dirs = all,
            .nsearch_dirs = nall,
            .binaries = an.session.binaries,
            .nbinaries = an.session.nbinaries,
            .cache = cache,
            .progress = true,
        };
        if (pbin_symbolize(&p, &opts) != 0)
            rc = PT_EXIT_BAD_INPUT;
        else
            rc = native_write_profile(output, &p) == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
        free(all);
        free(own_dir);
    }
    profile_free(&p);
    free(own_output);
    analysis_args_free(&an);
    free(dirs);
    return rc;
}
