/*
 * cmd_convert.c - "ptprof convert IN -o OUT [--to FORMAT] [--from FORMAT]":
 * read a profile in any format the project reads and write it in another.
 * Formats are one table: a new format is one entry (docs/formats/).
 */
#include "cli/cli.h"
#include "format/gmon.h"
#include "format/gperftools.h"
#include "format/load.h"
#include "format/native.h"
#include "format/pbin.h"
#include "format/pperf.h"
#include "util/log.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define USAGE_LINE "usage: ptprof convert IN -o OUT [--to FORMAT] [--from FORMAT]\n"

/* Readers take a decompressed file image; writers a path (compressed by
 * its suffix, atomic, "-" for standard output). */
typedef int (*convert_read_fn)(const char *name, const void *data, size_t len, struct profile *out);
typedef int (*convert_write_fn)(const struct profile *p, const char *path);

struct convert_format {
    const char *name;
    const char *suffixes;   /* space-separated names of files in it, for --to */
    convert_read_fn read;   /* NULL: cannot be read */
    convert_write_fn write; /* NULL: cannot be written */
    const char *summary;
};

static int read_pperf(const char *name, const void *data, size_t len, struct profile *out)
{
    struct pperf_profile pp;
    profile_init(out);
    if (pperf_load_buffer(name, data, len, &pp) != 0)
        return -1;
    int rc = profile_from_pperf(&pp, out);
    pperf_free(&pp);
    return rc;
}

static int write_native(const struct profile *p, const char *path)
{
    return native_write_profile(path, p);
}

static const struct convert_format formats[] = {
    {"native", ".data .pbin", native_load_buffer, write_native,
     "ptprof's own (a .pbin when the input has symbols)"},
    {"gperftools", ".prof", gperftools_load_buffer, gperftools_write_path,
     "gperftools' CPU profile (google-pprof, go tool pprof)"},
    {"gmon", ".gmon", gmon_load_buffer, gmon_write_path,
     "gprof's gmon.out (gprof BINARY FILE; the executable's histogram and arcs)"},
    {"pperf", "", read_pperf, NULL, "the original sampler's raw format"},
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
            "  -f, --from FORMAT    read IN as FORMAT instead of recognising it\n"
            "  -h, --help           show this help\n"
            "\n"
            "Formats (r: read, w: written; the names that choose them for --to):\n");
    for (size_t i = 0; i < NFORMATS; i++) {
        const struct convert_format *f = &formats[i];
        const char *modes = !f->write ? "r" : f->read ? "r/w" : "w";
        fprintf(out, "  %-11s %-3s  %-12s %s\n", f->name, modes, f->suffixes, f->summary);
    }
}

/* The format OUT's name asks for: its last suffix, after any compression
 * suffix, when exactly one format claims it; else native. */
static const struct convert_format *format_by_name(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strlen(base);
    static const char *const compressed[] = {".gz", ".bz2", ".zst"};
    for (size_t i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        size_t n = strlen(compressed[i]);
        if (len > n && strcmp(base + len - n, compressed[i]) == 0) {
            len -= n;
            break;
        }
    }
    const char *dot = NULL;
    for (size_t i = len; i-- > 1 && !dot;)
        if (base[i] == '.')
            dot = base + i;
    const struct convert_format *found = NULL;
    size_t claims = 0;
    for (size_t i = 0; dot && i < NFORMATS; i++) {
        size_t n = (size_t)(base + len - dot);
        for (const char *s = formats[i].suffixes; *s;) {
            size_t w = strcspn(s, " ");
            if (w == n && strncmp(s, dot, n) == 0 && formats[i].write) {
                found = &formats[i];
                claims++;
            }
            s += w + (s[w] == ' ');
        }
    }
    return claims == 1 ? found : find_format("native");
}

static int load_input(const char *path, const struct convert_format *from, struct profile *p)
{
    struct profile_file f;
    profile_init(p);
    if (profile_file_read(path, &f) != 0)
        return -1;
    int rc;
    if (!from || strcmp(profile_file_format(&f), from->name) == 0) {
        rc = profile_parse(&f, p);
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
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"to", required_argument, NULL, 't'},
        {"from", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    const struct convert_format *to = NULL, *from = NULL;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:t:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            output = optarg;
            break;
        case 't':
            to = find_format(optarg);
            if (!to || !to->write)
                return bad_usage("convert: cannot write format '%s' (see --help)", optarg);
            break;
        case 'f':
            from = find_format(optarg);
            if (!from || !from->read)
                return bad_usage("convert: cannot read format '%s' (see --help)", optarg);
            break;
        case 'h':
            usage(stdout);
            return PT_EXIT_OK;
        default:
            return bad_usage("convert: option '%s' is not known or lacks its argument",
                             argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return bad_usage("convert: no input profile given%s", "");
    if (optind + 1 < argc)
        return bad_usage("convert: one input profile only ('%s' is extra)", argv[optind + 1]);
    if (!output)
        return bad_usage("convert: no output given (-o OUT)%s", "");
    if (!to)
        to = format_by_name(output);

    struct profile p;
    if (load_input(argv[optind], from, &p) != 0) {
        profile_free(&p);
        return PT_EXIT_BAD_INPUT;
    }
    int rc = to->write(&p, output);
    profile_free(&p);
    return rc == 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
}
