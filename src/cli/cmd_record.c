/*
 * cmd_record.c - "ptprof record" and "sampler": parse options, run the
 * recorder.  The two differ only in defaults: sampler keeps the original
 * tool's behaviour (no -o, no file), record writes ptprof.data as perf
 * writes perf.data.
 */
#include "cli/cli.h"
#include "pmu/pmu.h"
#include "record/recorder.h"
#include "util/log.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FREQUENCY 1000.0
#define MAX_FREQUENCY 100000.0
#define DEFAULT_OUTPUT "ptprof.data"

static void print_pmus(FILE *out)
{
    fprintf(out, "\nMeasurement sources (-p NAME[:ARG]):\n");
    for (const struct pmu_ops *const *p = pmu_sources(); *p; p++)
        fprintf(out, "  %-8s %s\n", (*p)->name, (*p)->about);
}

static void usage_record(FILE *out)
{
    fprintf(out,
            "usage: ptprof record [-o FILE] [-f HZ] [-p PMU[:ARG]] [-d] [--] COMMAND [ARGS...]\n"
            "\n"
            "Run COMMAND under ptrace and sample every thread: PC, CPU time, wall time\n"
            "and the PMU's reading.  Exits with COMMAND's exit status.\n"
            "\n"
            "  -o, --output=FILE      write the profile to FILE ('-' for stdout;\n"
            "                         default " DEFAULT_OUTPUT ")\n"
            "  -f, --frequency=HZ     samples per second (default 1000, at most 100000)\n"
            "  -p, --pmu-arg=PMU      measurement source, see below (default none)\n"
            "  -d, --debug            print the profiler's own cost at the end\n"
            "  -h, --help             show this help\n");
    print_pmus(out);
}

static void usage_sampler(FILE *out)
{
    fprintf(out, "usage: sampler [options] -- COMMAND [ARGS...]\n"
                 "\n"
                 "  -o, --output=FILE      write to FILE (without it nothing is written)\n"
                 "  -p, --pmu-arg=ARG      PMU argument: NAME[:ARG] or a sysfs path\n"
                 "  -f, --frequency=HZ     sampling frequency (default 1000)\n"
                 "  -d, --debug            print sampling information at the end\n"
                 "  -h, --help             show this help\n");
    print_pmus(out);
}

static int parse_frequency(const char *text, double *hz)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v) || v <= 0 || v > MAX_FREQUENCY) {
        pt_err("invalid frequency '%s': expected a number of Hz above 0 and at most %.0f", text,
               MAX_FREQUENCY);
        return -1;
    }
    *hz = v;
    return 0;
}

static int run(int argc, char **argv, bool sampler)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},  {"frequency", required_argument, NULL, 'f'},
        {"pmu-arg", required_argument, NULL, 'p'}, {"debug", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    void (*usage)(FILE *) = sampler ? usage_sampler : usage_record;
    struct record_options opts = {
        .frequency = DEFAULT_FREQUENCY,
        .output = sampler ? NULL : DEFAULT_OUTPUT,
    };
    int c;
    opterr = 0;
    /* '+': stop at the command, whose own options are not ours. */
    while ((c = getopt_long(argc, argv, "+:o:f:p:dh", options, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                pt_err("empty output file name");
                return PT_EXIT_USAGE;
            }
            opts.output = optarg;
            break;
        case 'f':
            if (parse_frequency(optarg, &opts.frequency) != 0)
                return PT_EXIT_USAGE;
            break;
        case 'p':
            opts.pmu_spec = optarg;
            break;
        case 'd':
            opts.debug = true;
            break;
        case 'h':
            usage(stdout);
            return PT_EXIT_OK;
        case ':':
            pt_err("option '%s' needs an argument", argv[optind - 1]);
            return PT_EXIT_USAGE;
        default:
            if (optopt)
                pt_err("unknown option '-%c'; see --help", optopt);
            else
                pt_err("unknown option '%s'; see --help", argv[optind - 1]);
            return PT_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        pt_err("no command to profile; usage: %s",
               sampler ? "sampler [options] -- COMMAND [ARGS...]"
                       : "ptprof record [options] [--] COMMAND [ARGS...]");
        return PT_EXIT_USAGE;
    }
    opts.argv = argv + optind;
    return record_run(&opts);
}

int cmd_record(int argc, char **argv)
{
    return run(argc, argv, false);
}

int cmd_sampler(int argc, char **argv)
{
    return run(argc, argv, true);
}
