/*
 * cmd_dump.c - "ptprof dump FILE": every record of a raw profile as one
 * line of text, in file order, prefixed with its byte offset
 * (docs/info.md).  The native format is dumped record by record by its
 * reader as it streams in (native_dump_stream); the original raw format
 * here.
 */
#include "cli/cli.h"
#include "format/load.h"
#include "format/native.h"
#include "interop/pperf.h"
#include "util/log.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_LINE "usage: ptprof dump FILE\n"

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Print every record of a raw profile (ptprof's native format or the original\n"
            "sampler's), one line each in file order, prefixed by its byte offset; a\n"
            "sample's threads are indented below it.  Compressed files are decompressed\n"
            "first (offsets are in the decompressed data); \"-\" reads standard input.\n"
            "\n"
            "  -h, --help   show this help\n");
}

static const char *pperf_kind(uint32_t magic)
{
    static const char *const names[] = {"custom", "current", "voltage", "power"};
    return magic < 4 ? names[magic] : "unknown";
}

static void put_double(double d)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%.15g", d);
    if (strtod(buf, NULL) != d && !isnan(d))
        snprintf(buf, sizeof(buf), "%.17g", d);
    fputs(buf, stdout);
}

static void dump_pperf(const struct pperf_profile *p)
{
    printf("@0 HEADER pperf magic=%" PRIu32 " (%s) wall_us=%" PRIu64 " latency_us=%" PRIu64
           " samples=%" PRIu64 " pmu_size=%" PRIu32 " maps=%" PRIu32 "\n",
           p->magic, pperf_kind(p->magic), p->wall_us, p->latency_us, p->nsamples, p->pmu_size,
           p->nmaps);
    uint64_t off = PPERF_HEADER_SIZE;
    for (uint64_t i = 0; i < p->nsamples; i++) {
        const struct pperf_sample *s = &p->samples[i];
        printf("@%" PRIu64 " SAMPLE wall_us=%" PRIu64 " pmu=", off, s->wall_us);
        if (s->pmu) {
            putchar('[');
            for (uint32_t k = 0; k < p->pmu_size / 8; k++) {
                if (k)
                    putchar(',');
                put_double(s->pmu[k]);
            }
            putchar(']');
        } else {
            /* Not whole doubles: show the bytes as they are. */
            for (uint32_t k = 0; k < p->pmu_size; k++)
                printf("%02x", s->pmu_raw[k]);
            if (!p->pmu_size)
                putchar('-');
        }
        printf(" threads=%" PRIu32 "\n", s->nthreads);
        for (uint32_t t = 0; t < s->nthreads; t++)
            printf("    tid=%" PRIu32 " pc=0x%" PRIx64 " cpu_ns=%" PRIu64 "\n", s->threads[t].tid,
                   s->threads[t].pc, s->threads[t].cpu_ns);
        off += 12 + (uint64_t)p->pmu_size + (uint64_t)s->nthreads * PPERF_THREAD_SIZE;
    }
    for (uint32_t i = 0; i < p->nmaps; i++) {
        const struct pperf_map *m = &p->maps[i];
        printf("@%" PRIu64 " MAP address=0x%" PRIx64 " size=0x%" PRIx64 " label=\"", off,
               m->address, m->size);
        for (const unsigned char *c = (const unsigned char *)m->label; *c; c++) {
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if (*c < 0x20 || *c == 0x7f)
                printf("\\x%02x", *c);
            else
                putchar(*c);
        }
        printf("\"\n");
        off += PPERF_MAP_SIZE;
    }
    printf("@%" PRIu64 " EOF\n", off);
}

/* What a user calls the format profile_file_format() names. */
static const char *format_words(const char *format)
{
    static const char *const words[][2] = {
        {"gperftools", "gperftools CPU profile"},
        {"gmon", "gprof gmon.out"},
        {"pprof", "pprof profile"},
        {"perf-data", "perf.data file"},
        {"perf-script", "perf script output"},
        {"folded", "folded-stacks file"},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(words[i][0], format) == 0)
            return words[i][1];
    return format;
}

static int dump_file(const char *path)
{
    struct profile_file f;
    if (profile_file_read(path, &f) != 0)
        return -1;
    int rc = 0;
    if (f.in && strcmp(profile_file_format(&f), "native") == 0) {
        rc = native_dump_stream(f.in, stdout);
    } else if (profile_file_hold(&f) != 0) {
        rc = -1; /* a text, kept as a stream until now */
    } else if (f.raw.truncated) {
        pt_err("%s", f.raw.error);
        rc = -1;
    } else if (strcmp(profile_file_format(&f), "pperf") != 0) {
        /* Another tool's format: its records are not the raw ones dump
         * prints; the pperf reader's complaints would mislead. */
        const char *format = profile_file_format(&f);
        if (strcmp(format, "unknown") == 0 || strcmp(format, "pickle") == 0) {
            struct profile p;
            profile_parse(&f, &p); /* says what it is not, or resembles */
            profile_free(&p);
        } else {
            pt_err("%s: a %s: dump prints the records of ptprof's native format and of the "
                   "original sampler's raw format (pperf) only; 'ptprof info %s' describes it",
                   f.name, format_words(format), f.name);
        }
        rc = -1;
    } else {
        struct pperf_profile p;
        rc = pperf_load_buffer(f.name, f.raw.data, f.raw.len, &p);
        if (rc == 0)
            dump_pperf(&p);
        pperf_free(&p);
    }
    profile_file_free(&f);
    return rc;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return PT_EXIT_OK;
        }
        pt_err("dump: option '%s' is not known", argv[optind - 1]);
        fputs(USAGE_LINE, stderr);
        return PT_EXIT_USAGE;
    }
    if (argc - optind != 1) {
        pt_err("dump: %s", optind >= argc ? "no profile given" : "one profile at a time");
        fputs(USAGE_LINE, stderr);
        return PT_EXIT_USAGE;
    }
    int rc = dump_file(argv[optind]) == 0 ? PT_EXIT_OK : PT_EXIT_BAD_INPUT;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        pt_err("dump: cannot write to standard output");
        return PT_EXIT_USAGE;
    }
    return rc;
}
