/*
 * cmd_convert.c - "ptprof convert IN -o OUT [--to FORMAT] [--from FORMAT]":
 * read a profile in any format the project reads and write it in another.
 * Formats are one table: a new format is one entry (docs/formats/).
 */
#include "cli/analysis_args.h"
#include "cli/cli.h"
#include "cli/csv_options.h"
#include "interop/folded.h"
#include "interop/gmon.h"
#include "interop/gperftools.h"
#include "format/load.h"
#include "format/native.h"
#include "format/pbin.h"
#include "interop/perf_script.h"
#include "interop/pperf.h"
#include "interop/pprof.h"
#include "export/csv_samples_write.h"
#include "export/export.h"
#include "export/folded_write.h"
#include "export/pprof_write.h"
#include "export/speedscope_write.h"
#include "util/compress.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GMON_FILE_NAME "gmon.out"

#define USAGE_LINE                                                                                 \
    "usage: ptprof convert [PROGRAM] IN -o OUT [--to FORMAT] [--from FORMAT] [--metric M]\n"       \
    "                      [-k KEYS] [-s DIR]... [--binary PATH]\n"

/* Readers take a decompressed file image; writers a path (compressed by
 * its suffix, atomic, "-" for standard output).  Formats that are views of
 * the analysis (names, metrics) have an export writer instead
 * (interop/export.h). */
typedef int (*convert_read_fn)(const char *name, const void *data, size_t len, struct profile *out);
typedef int (*convert_write_fn)(const struct profile *p, const char *path);

struct convert_format {
    const char *name;
    const char *suffixes;   /* space-separated names of files in it, for --to */
    convert_read_fn read;   /* NULL: cannot be read */
    convert_write_fn write; /* NULL: cannot be written (or exported) */
    export_fn export;       /* writes from the analysis, when write is NULL */
    const char *summary;
};

static int read_pperf(const char *name, const void *data, size_t len, struct profile *out)
{
    struct pperf_profile pp;
    profile_init(out);
    if (pperf_load_buffer(name, data, len, &pp) != 0)
        return -1;
    int rc = profile_from_pperf(&pp, name, NULL, out);
    pperf_free(&pp);
    return rc;
}

static int write_native(const struct profile *p, const char *path)
{
    return native_write_profile(path, p);
}

static const struct convert_format formats[] = {
    {"native", ".data .pbin", native_load_buffer, write_native, NULL,
     "ptprof's own (a .pbin when the input has symbols)"},
    {"gperftools", ".prof", gperftools_load_buffer, gperftools_write_path, NULL,
     "gperftools' CPU profile (google-pprof, go tool pprof)"},
    {"gmon", ".gmon gmon.out", gmon_load_buffer, gmon_write_path, NULL,
     "gprof's gmon.out (gprof BINARY FILE; the executable's histogram and arcs)"},
    {"pperf", "", read_pperf, NULL, NULL, "the original sampler's raw format"},
    {"csv", ".csv", NULL, NULL, csv_samples_export,
     "one row per thread sample (docs/formats/csv.md)"},
    {"folded", ".folded .collapsed", folded_load_buffer, NULL, folded_export,
     "folded stacks, a line per stack (flame graph tools; default metric samples,\n"
     "                                 frames named by procedure unless -k)"},
    {"perf-script", "", perf_script_load_buffer, NULL, NULL,
     "the text of `perf script` (with -g: call chains)"},
    {"pprof", ".pb .pprof", pprof_load_buffer, NULL, pprof_export,
     "pprof's profile.proto, gzipped (go tool pprof; every metric a sample type,\n"
     "                                 --metric: the default one)"},
    {"speedscope", ".speedscope.json", NULL, NULL, speedscope_export,
     "speedscope's JSON, a timeline per thread (default metric: the profile's own)"},
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static const struct convert_format *find_format(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Convert a profile between formats. IN is recognised by its content (plain or\n"
            "compressed with gzip, bzip2 or zstd; \"-\" is standard input); OUT is compressed\n"
            "when its name ends in .gz, .bz2 or .zst (\"-\" is standard output).\n"
            "\n"
            "  -o, --output OUT     where to write (required)\n"
            "  -t, --to FORMAT      the output's format; by default from OUT's name (before a\n"
            "                       compression suffix) when it says, else native\n"
            "      --from FORMAT    read IN as FORMAT instead of recognising it\n"
            "  -m, --metric M       what formats with one value per stack count: samples,\n"
            "                       cpu, wall, energy, or a value the profile carries\n"
            "                       (alloc_space, instructions...); each format has its\n"
            "                       default\n"
            "  -k, --keys KEYS      folded stacks: what names a frame, as in report\n"
            "                       (procedure unless told; e.g. binary,procedure)\n"
            "      --channel C      the energy channel (name or index; default: all power\n"
            "                       and energy channels)\n"
            "  -s, --search DIR     look for the profiled binaries in DIR first, for formats\n"
            "                       that carry names (repeatable)\n"
            "      --binary PATH    PATH is the profiled program (also given before IN)\n"
            "      --no-cache       do not read or write the symbol cache\n"
            "  -h, --help           show this help\n"
            "\n");
    csv_cli_usage(out);
    fprintf(out, "\n"
                 "Formats (r: read, w: written; the names that choose them for --to):\n");
    for (size_t i = 0; i < NFORMATS; i++) {
        const struct convert_format *f = &formats[i];
        bool writes = f->write || f->export;
        const char *modes = !writes ? "r" : f->read ? "r/w" : "w";
        fprintf(out, "  %-11s %-3s  %-18s %s\n", f->name, modes, f->suffixes, f->summary);
    }
}

/* The format OUT's name asks for: how it ends, after any compression
 * suffix, when exactly one format claims that ending; else native. */
static const struct convert_format *format_by_name(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = compression_stripped_length(base);
    /* What gcc -pg programs write, and gprof reads unless told. */
    if (len == strlen(GMON_FILE_NAME) && strncmp(base, GMON_FILE_NAME, len) == 0)
        return find_format("gmon");
    /* A suffix may hold dots of its own (".speedscope.json"). */
    const struct convert_format *found = NULL;
    size_t claims = 0;
    for (size_t i = 0; i < NFORMATS; i++) {
        for (const char *s = formats[i].suffixes; *s;) {
            size_t w = strcspn(s, " ");
            if (len > w && strncmp(base + len - w, s, w) == 0 &&
                (formats[i].write || formats[i].export)) {
                found = &formats[i];
                claims++;
            }
            s += w + (s[w] == ' ');
        }
    }
    return claims == 1 ? found : find_format("native");
}

const char *convert_output_format(const char *path)
{
    return format_by_name(path)->name;
}

static int load_input(const char *path, const struct convert_format *from,
                      const struct session_options *session, struct profile *p)
{
    struct profile_file f;
    profile_init(p);
    if (profile_file_read(path, &f) != 0)
        return -1;
    int rc;
    if (!from || strcmp(profile_file_format(&f), from->name) == 0) {
        struct binary_search search = session_binary_search(session);
        rc = profile_parse_with(&f, &search, p);
    } else if (profile_file_hold(&f) != 0) {
        rc = -1;
    } else if (f.raw.truncated) {
        /* Forced readers take no damaged input: say where it broke. */
        pt_err("%s", f.raw.error);
        rc = -1;
    } else {
        rc = from->read(f.name, f.raw.data, f.raw.len, p);
    }
    profile_file_free(&f);
    return rc;
}

static int bad_usage(const char *fmt, const char *arg)
{
    pt_err(fmt, arg);
    fputs(USAGE_LINE, stderr);
    return PT_EXIT_USAGE;
}

int cmd_convert(int argc, char **argv)
{
    enum { OPT_FROM = 256 }; /* below analysis_args.h's and csv_options.h's */
    /* -k, -s, --channel and --no-cache as every analysing command spells
     * them (analysis_args.h); -m is convert's own: formats of one value per
     * stack take an additive metric, pprof its default sample type. */
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"to", required_argument, NULL, 't'},
        {"from", required_argument, NULL, OPT_FROM},
        {"metric", required_argument, NULL, 'm'},
        {"keys", required_argument, NULL, 'k'},
        {"channel", required_argument, NULL, ANALYSIS_OPT_CHANNEL},
        {"search", required_argument, NULL, 's'},
        {"no-cache", no_argument, NULL, ANALYSIS_OPT_NO_CACHE},
        {"binary", required_argument, NULL, ANALYSIS_OPT_BINARY},
        {"help", no_argument, NULL, 'h'},
        CSV_CLI_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    const struct convert_format *to = NULL, *from = NULL;
    struct export_options eo = {.metric = NULL};
    struct analysis_args an;
    analysis_args_init(&an, "convert");
    struct csv_cli csv;
    csv_cli_init(&csv);
    int opt, rc = PT_EXIT_OK;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:t:m:k:s:h", longopts, NULL)) != -1) {
        if (opt >= CSV_CLI_FIRST) {
            if (csv_cli_option(&csv, opt, optarg) != 0) {
                rc = PT_EXIT_USAGE;
                goto out;
            }
            continue;
        }
        switch (opt) {
        case 'o':
            output = optarg;
            break;
        case 't':
            to = find_format(optarg);
            if (!to || !(to->write || to->export)) {
                rc = bad_usage("convert: cannot write format '%s' (see --help)", optarg);
                goto out;
            }
            break;
        case OPT_FROM:
            from = find_format(optarg);
            if (!from || !from->read) {
                rc = bad_usage("convert: cannot read format '%s' (see --help)", optarg);
                goto out;
            }
            break;
        case 'm':
            if (!*optarg) {
                rc = bad_usage("convert: --metric wants a metric's name%s", "");
                goto out;
            }
            eo.metric = optarg; /* which exist depends on the profile */
            break;
        case 'k':
            if (analysis_args_option(&an, opt, optarg) < 0) {
                rc = PT_EXIT_USAGE;
                goto out;
            }
            eo.keys_given = true;
            break;
        case 's':
        case ANALYSIS_OPT_CHANNEL:
        case ANALYSIS_OPT_NO_CACHE:
        case ANALYSIS_OPT_BINARY:
            if (analysis_args_option(&an, opt, optarg) < 0) {
                rc = PT_EXIT_USAGE;
                goto out;
            }
            break;
        case 'h':
            usage(stdout);
            goto out;
        default:
            rc = bad_usage("convert: option '%s' is not known or lacks its argument",
                           argv[optind - 1]);
            goto out;
        }
    }
    analysis_args_done(&an);
    eo.session = an.session;
    if (csv_cli_check(&csv) != 0) {
        rc = PT_EXIT_USAGE;
        goto out;
    }
    /* The program before the profile, as gprof and pprof take it. */
    analysis_args_take_programs(&an, argv, optind, &argc);
    eo.session = an.session;
    if (optind >= argc) {
        rc = bad_usage("convert: no input profile given%s", "");
        goto out;
    }
    if (optind + 1 < argc) {
        rc = bad_usage("convert: one input profile only ('%s' is extra)", argv[optind + 1]);
        goto out;
    }
    if (!output) {
        rc = bad_usage("convert: no output given (-o OUT)%s", "");
        goto out;
    }
    if (!to)
        to = format_by_name(output);
    if (eo.metric && !to->export) {
        rc = bad_usage("convert: --metric applies to formats of one value per stack, not '%s'",
                       to->name);
        goto out;
    }
    if (eo.keys_given && strcmp(to->name, "folded") != 0) {
        rc = bad_usage("convert: -k names the frames of folded stacks, not of '%s'", to->name);
        goto out;
    }

    struct profile p;
    if (load_input(argv[optind], from, &an.session, &p) != 0 ||
        session_use_binaries(&an.session, &p) != 0 || csv_cli_join(&csv, &p) != 0) {
        profile_free(&p);
        rc = PT_EXIT_BAD_INPUT;
        goto out;
    }
    int wrc = to->write ? to->write(&p, output) : to->export(argv[optind], &p, output, &eo);
    profile_free(&p);
    /* A writer's -2: the profile holds values no file of that format can
     * carry in proportion (interop/gmon.h): the input is at fault. */
    rc = wrc == 0 ? PT_EXIT_OK : wrc == GMON_WRITE_BAD_INPUT ? PT_EXIT_BAD_INPUT : PT_EXIT_USAGE;
out:
    csv_cli_free(&csv);
    analysis_args_free(&an);
    return rc;
}
