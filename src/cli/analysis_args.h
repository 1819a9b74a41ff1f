/*
 * analysis_args.h - the options every command that analyses profiles
 * shares: which keys rows are made of (-k), which metric (-m, --wall),
 * latency accounting, the energy channel, where binaries are (-s), which
 * file is the profiled program (--binary) and the symbol cache.  One
 * parser, so the commands agree on their spelling, defaults and messages.
 *
 * analysis_args_take_programs() lets a command take the program the way
 * gprof and pprof do, before the profile ("report prog gmon.out"): the ELF
 * files among its positional arguments (a profile never is one) become
 * --binary options and leave the list.
 *
 * Use: put ANALYSIS_SHORT_OPTIONS in the getopt string and
 * ANALYSIS_LONG_OPTIONS in the long option table, hand every option to
 * analysis_args_option() first (it returns 1 when it took it, 0 when the
 * option is the command's own, -1 after a message for a bad value), then
 * call analysis_args_done() once, which points SESSION at the search
 * directories.  ANALYSIS_HELP is the matching --help text.
 */
#ifndef PTPROF_CLI_ANALYSIS_ARGS_H
#define PTPROF_CLI_ANALYSIS_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "analyze/report.h"
#include "analyze/session.h"

struct analysis_args {
    const char *command; /* "report", ... in messages */
    struct session_options session;
    const char *metric; /* a metric's name (analyze/metric.h); NULL: the profile's default */
    bool metric_given;
    const char **dirs;
    size_t ndirs;
    const char **binaries; /* --binary, in order */
    size_t nbinaries;
};

enum analysis_option {
    ANALYSIS_OPT_WALL = 0x1000, /* above every command's own option values */
    ANALYSIS_OPT_LATENCY,
    ANALYSIS_OPT_CHANNEL,
    ANALYSIS_OPT_NO_CACHE,
    ANALYSIS_OPT_BINARY,
};

#define ANALYSIS_SHORT_OPTIONS "k:m:s:"
#define ANALYSIS_LONG_OPTIONS                                                                      \
    {"keys", required_argument, NULL, 'k'}, {"metric", required_argument, NULL, 'm'},              \
        {"wall", no_argument, NULL, ANALYSIS_OPT_WALL},                                            \
        {"account-latency", no_argument, NULL, ANALYSIS_OPT_LATENCY},                              \
        {"channel", required_argument, NULL, ANALYSIS_OPT_CHANNEL},                                \
        {"search", required_argument, NULL, 's'},                                                  \
        {"binary", required_argument, NULL, ANALYSIS_OPT_BINARY},                                  \
    {                                                                                              \
        "no-cache", no_argument, NULL, ANALYSIS_OPT_NO_CACHE                                       \
    }

/* The --help lines of these options: ANALYSIS_HELP, or its parts for a
 * command that says -m its own way (flamegraph: only metrics that add up). */
#define ANALYSIS_HELP_KEYS                                                                         \
    "  -k, --keys KEYS       comma list of pc, binary, file, procedure,\n"                         \
    "                        procedure_mangled, symbol, line, thread\n"                            \
    "                        (binary,procedure; symbol: the function the code was\n"               \
    "                        compiled into, not the function inlined there; line:\n"               \
    "                        file:line)\n"
#define ANALYSIS_HELP_METRIC                                                                       \
    "  -m, --metric M        cpu, wall, samples, energy, power, executions, calls\n"               \
    "                        (gmon.out's --callers/--callees), or a value the profile\n"           \
    "                        carries (alloc_space, instructions, ipc...: `ptprof info`\n"          \
    "                        lists them); default: the profile's own, else cpu\n"
#define ANALYSIS_HELP_OTHERS                                                                       \
    "      --wall            the same as --metric wall: every thread, on or off CPU\n"             \
    "      --account-latency subtract the profiler's own time per sample from wall time\n"         \
    "      --channel C       the energy channel to use (name or index; default: all\n"             \
    "                        power and energy channels)\n"                                         \
    "  -s, --search DIR      look for the profiled binaries in DIR first (repeatable)\n"           \
    "      --binary PATH     PATH is the profiled program (or, by its name, one of its\n"          \
    "                        libraries), wherever the profile says it was; also\n"                 \
    "                        given before the profile: report PROG gmon.out\n"                     \
    "      --no-cache        do not read or write the symbol cache\n"
#define ANALYSIS_HELP ANALYSIS_HELP_KEYS ANALYSIS_HELP_METRIC ANALYSIS_HELP_OTHERS

/* Defaults: keys binary,procedure, the profile's metric (cpu unless it
 * says: a pprof profile's default sample type), cache on, progress bar on. */
void analysis_args_init(struct analysis_args *a, const char *command);
int analysis_args_option(struct analysis_args *a, int opt, const char *arg);
void analysis_args_done(struct analysis_args *a);
/* Moves the ELF files among ARGV[FIRST..*ARGC) to the binaries, keeping
 * the others in order; *ARGC shrinks by their number. */
void analysis_args_take_programs(struct analysis_args *a, char **argv, int first, int *argc);
void analysis_args_free(struct analysis_args *a);

/* A percentage in [0, 100] (above 0 unless ZERO_OK) for option OPT, else
 * -1 after a message naming the command. */
int analysis_parse_pct(const struct analysis_args *a, const char *opt, const char *s, bool zero_ok,
                       double *out);

/* Names for the profiles FILES: the comma list LIST (one per file, NULL
 * when it has another count), else their base names, else the paths when
 * two base names are the same.  Allocated, each and the array. */
char **analysis_profile_names(const char *list, char **files, size_t n);

#endif
