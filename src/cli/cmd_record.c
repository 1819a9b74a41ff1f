/*
 * cmd_record.c - "ptprof record" and "sampler": parse options, run the
 * recorder.  The two differ only in defaults: sampler keeps the original
 * tool's behaviour (no -o, no file), record writes ptprof.data as perf
 * writes perf.data.
 */
#include "cli/cli.h"
#include "pmu/pmu.h"
#include "record/perf/perf_counters.h"
#include "record/recorder.h"
#include "util/compress.h"
#include "util/log.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_FREQUENCY 1000.0
#define MAX_FREQUENCY 100000.0
#define DEFAULT_OUTPUT PT_DEFAULT_PROFILE

#define MAX_STACK_SIZE STACK_COPY_MAX

enum long_only {
    OPT_FORMAT = 256,
    OPT_STACK_SIZE,
    OPT_NO_INHERIT,
    OPT_PID,
    OPT_DURATION,
    OPT_ENGINE,
    OPT_HELP_EVENTS,
    OPT_SWITCH_OUTPUT,
    OPT_SWITCH_MAX_FILES,
};

static void print_pmus(FILE *out)
{
    fprintf(out, "\nMeasurement sources (-p NAME[:ARG]):\n");
    for (const struct pmu_ops *const *p = pmu_sources(); *p; p++)
        fprintf(out, "  %-8s %s\n", (*p)->name, (*p)->about);
}

static void usage_record(FILE *out)
{
    fprintf(out,
            "usage: ptprof record [options] [--] COMMAND [ARGS...]\n"
            "       ptprof record [options] --pid PID [--duration S]\n"
            "\n"
            "Run COMMAND (or attach to process PID) and sample every thread of it and of\n"
            "its children: PC, call stack, CPU time, wall time and the PMU's reading.\n"
            "Exits with COMMAND's exit status.\n"
            "\n"
            "  -o, --output=FILE      write the profile to FILE (default " DEFAULT_OUTPUT "); its\n"
            "                         name picks the format as convert's does: .pb.gz pprof,\n"
            "                         .folded, .prof gperftools, gmon.out or .gmon, .pbin\n"
            "                         symbolized, else native; a .gz, .bz2 or .zst suffix\n"
            "                         compresses; '-' is stdout (native), only with --pid\n"
            "                         when the process writes elsewhere\n"
            "  -F, -f, --frequency=HZ samples per second (default 1000, at most 100000)\n"
            "  -p, --pmu-arg=PMU      measurement source, see below (default none)\n"
            "  -g, --call-graph=MODE  call stacks: dwarf (default), fp or none\n"
            "      --engine=ENGINE    auto (default: perf where perf_event_open is\n"
            "                         permitted, else ptrace), perf or ptrace; also\n"
            "                         PTPROF_ENGINE\n"
            "  -e, --event=EVENTS     counters read with each sample (perf engine), e.g.\n"
            "                         page-faults,context-switches; see --help-events\n"
            "      --help-events      list the counters -e takes, and exit\n"
            "      --stack-size=BYTES stack bytes copied per sample for dwarf (default: 8192,\n"
            "                         growing per thread, with ptrace; 32768 with perf)\n"
            "      --format=FORMAT    native (default) or pperf (the original raw format:\n"
            "                         no stacks, first process only)\n"
            "      --no-inherit       do not follow fork/vfork/clone children\n"
            "      --pid=PID          attach to a running process; stop with Ctrl-C\n"
            "      --duration=S       stop sampling after S seconds\n"
            "      --switch-output[=signal|PERIOD|SIZE]\n"
            "                         a new file every PERIOD (10s, 5m, 1h), SIZE (100M)\n"
            "                         or on SIGUSR2 (the default), each complete alone,\n"
            "                         in the format OUT's suffix names (svc.pb.gz:\n"
            "                         svc.TIMESTAMP.pb.gz; svc.data: svc.data.TIMESTAMP),\n"
            "                         or OUT with %%t replaced by the timestamp\n"
            "                         (-o 'svc-%%t.data')\n"
            "      --switch-max-files=N  keep only the last N files\n"
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

static int parse_positive(const char *what, const char *text, double max, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v) || v <= 0 || v > max) {
        pt_err("invalid %s '%s': expected a number above 0 and at most %.0f", what, text, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_stack_mode(const char *text, enum stack_mode *mode)
{
    if (strcmp(text, "dwarf") == 0) {
        *mode = STACK_DWARF;
    } else if (strcmp(text, "fp") == 0) {
        *mode = STACK_FP;
    } else if (strcmp(text, "none") == 0) {
        *mode = STACK_NONE;
    } else {
        pt_err("invalid call-graph mode '%s': expected dwarf, fp or none", text);
        return -1;
    }
    return 0;
}

static int parse_engine(const char *what, const char *text, enum record_engine *engine)
{
    if (engine_parse(text, engine) != 0) {
        pt_err("invalid %s '%s': expected auto, perf or ptrace", what, text);
        return -1;
    }
    return 0;
}

static int parse_format(const char *text, enum output_format *format)
{
    if (strcmp(text, "native") == 0) {
        *format = OUTPUT_NATIVE;
    } else if (strcmp(text, "pperf") == 0) {
        *format = OUTPUT_PPERF;
    } else {
        pt_err("invalid format '%s': expected native or pperf", text);
        return -1;
    }
    return 0;
}

/* Would "-o -" put the profile on the stream the program writes to?  A
 * started command inherits our standard output; a process attached to
 * writes to it when its descriptor 1 is the same file. */
static bool stdout_is_the_targets(const struct record_options *o)
{
    if (!o->attach_pid)
        return true;
    char fd1[64];
    snprintf(fd1, sizeof(fd1), "/proc/%d/fd/1", (int)o->attach_pid);
    struct stat ours, theirs;
    return fstat(STDOUT_FILENO, &ours) == 0 && stat(fd1, &theirs) == 0 &&
           ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

/* The suffix of PATH's base name after any compression suffix ("" when
 * none), into BUF. */
static const char *output_suffix(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = compression_stripped_length(base);
    size_t dot = len;
    while (dot > 1 && base[dot - 1] != '.')
        dot--;
    dot = dot > 1 ? dot - 1 : len;
    snprintf(buf, size, "%.*s", (int)(len - dot), base + dot);
    return buf;
}

/*
 * What record writes to -o PATH: its own format (native or --format pperf:
 * *CONVERT_TO NULL), or what convert would write to that name (a .pb.gz,
 * .folded, .prof, gmon.out...: *CONVERT_TO is convert's name for it,
 * "pbin" for a symbolized .pbin), converted from a recording when the
 * program has ended.  A name of what other commands draw (.svg, .html,
 * .json, .txt), or a --format the name contradicts, is refused: -1 after
 * one line, before anything starts.
 */
static int choose_output(const char *path, bool format_given, enum output_format format,
                         const char **convert_to)
{
    *convert_to = NULL;
    char suffix[64];
    output_suffix(path, suffix, sizeof(suffix));
    const char *to = strcmp(suffix, ".pbin") == 0 ? "pbin" : convert_output_format(path);
    bool own = strcmp(to, "native") == 0;
    static const char *const drawings[] = {".svg", ".html", ".htm", ".json", ".txt"};
    for (size_t i = 0; own && i < sizeof(drawings) / sizeof(drawings[0]); i++) {
        if (strcmp(suffix, drawings[i]) == 0) {
            pt_err("-o %s: record writes a profile, not a %s file (draw one from the profile "
                   "with flamegraph, timeline or report; name the profile .data, .pb.gz, "
                   ".folded, .prof, .gmon or .pbin)",
                   path, drawings[i] + 1);
            return -1;
        }
    }
    if (format_given && !own) {
        pt_err("-o %s: the name asks for the %s format, --format for %s; drop one of them", path,
               to, format == OUTPUT_PPERF ? "pperf" : "native");
        return -1;
    }
    *convert_to = own ? NULL : to;
    return 0;
}

/* The format -o PATH asks for: convert's name for it, "pbin", or "native". */
static const char *name_format(const char *path)
{
    char suffix[64];
    output_suffix(path, suffix, sizeof(suffix));
    return strcmp(suffix, ".pbin") == 0 ? "pbin" : convert_output_format(path);
}

/* The length of PATH's compression suffix (".gz", ".bz2", ".zst"), or 0. */
static size_t compression_length(const char *path)
{
    static const char *const compressed[] = {".gz", ".bz2", ".zst"};
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        size_t n = strlen(compressed[i]);
        if (len > n && strcmp(path + len - n, compressed[i]) == 0)
            return n;
    }
    return 0;
}

/*
 * The --switch-output pattern (snapshots.h) for -o PATH: PATH when it has
 * "%t"; a plain native name gets ".%t" at its end, as perf names its
 * series (svc.data.TIMESTAMP); any other gets "%t" before the suffix that
 * picks its format or its compression, so that every file is what the
 * name says (svc.pb.gz: svc.TIMESTAMP.pb.gz; svc.speedscope.json:
 * svc.TIMESTAMP.speedscope.json; svc.data.gz: svc.TIMESTAMP.data.gz).
 * NULL after one line when no place keeps the format (gmon.out).
 */
static char *series_pattern(const char *path)
{
    if (strstr(path, "%t"))
        return strdup(path);
    const char *format = name_format(path);
    size_t zip = compression_length(path);
    char *pattern = NULL;
    if (strcmp(format, "native") == 0 && zip == 0)
        return asprintf(&pattern, "%s.%%t", path) < 0 ? NULL : pattern;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char suffix[64];
    output_suffix(path, suffix, sizeof(suffix));
    /* From the format's suffix leftwards: a suffix may hold dots of its own. */
    for (size_t at = strlen(path) - zip - strlen(suffix); at > (size_t)(base - path); at--) {
        if (path[at] != '.')
            continue;
        char *stamped = NULL;
        if (asprintf(&stamped, "%.*s.20260101000000000%s", (int)at, path, path + at) < 0)
            return NULL;
        bool same = strcmp(name_format(stamped), format) == 0;
        free(stamped);
        if (same)
            return asprintf(&pattern, "%.*s.%%t%s", (int)at, path, path + at) < 0 ? NULL : pattern;
    }
    pt_err("-o %s: a timestamp cannot go into this name without changing its format; put %%t "
           "where it goes (-o 'svc-%%t.gmon')",
           path);
    return NULL;
}

/* --switch-output: each finished file converted as convert (or
 * postprocess, for a .pbin) would, in a process of its own. */
static int convert_snapshot(const char *native, const char *path)
{
    char *args[] = {"convert", "-o", (char *)path, (char *)native, NULL};
    return cmd_convert(4, args) == PT_EXIT_OK ? 0 : -1;
}

static int postprocess_snapshot(const char *native, const char *path)
{
    char *args[] = {"postprocess", "-o", (char *)path, (char *)native, NULL};
    return cmd_postprocess(4, args) == PT_EXIT_OK ? 0 : -1;
}

/* An empty file beside PATH for the recording a conversion starts from. */
static char *recording_beside(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *tmp = NULL;
    if (asprintf(&tmp, "%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0, path,
                 slash ? slash + 1 : path) < 0)
        return NULL;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        pt_err("cannot write '%s': %s", path, strerror(errno));
        free(tmp);
        return NULL;
    }
    close(fd);
    return tmp;
}

/* Record into a native file beside the output, then write the output from
 * it as convert (or postprocess, for a .pbin) would.  The program's status
 * stands; a failed conversion keeps the recording and says where. */
static int record_and_convert(struct record_options *opts, const char *to)
{
    const char *output = opts->output;
    char *tmp = recording_beside(output);
    if (!tmp)
        return PT_EXIT_USAGE;
    opts->output = tmp;
    int rc = record_run(opts);
    struct stat st;
    if (stat(tmp, &st) != 0 || st.st_size == 0) {
        unlink(tmp); /* nothing was recorded: record said why */
        free(tmp);
        return rc;
    }
    /* Options first: getopt keeps record's stop at the first operand. */
    char *args[] = {strcmp(to, "pbin") == 0 ? "postprocess" : "convert", "-o", (char *)output, tmp,
                    NULL};
    int converted = strcmp(to, "pbin") == 0 ? cmd_postprocess(4, args) : cmd_convert(4, args);
    if (converted == PT_EXIT_OK) {
        unlink(tmp);
    } else {
        pt_err("could not write %s; the recording is kept in %s", output, tmp);
        rc = rc == 0 ? converted : rc;
    }
    free(tmp);
    return rc;
}

static const struct option record_options_table[] = {
    {"output", required_argument, NULL, 'o'},
    {"frequency", required_argument, NULL, 'f'},
    {"pmu-arg", required_argument, NULL, 'p'},
    {"call-graph", required_argument, NULL, 'g'},
    {"stack-size", required_argument, NULL, OPT_STACK_SIZE},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"no-inherit", no_argument, NULL, OPT_NO_INHERIT},
    {"pid", required_argument, NULL, OPT_PID},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT},
    {"switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"event", required_argument, NULL, 'e'},
    {"help-events", no_argument, NULL, OPT_HELP_EVENTS},
    {"debug", no_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The original tool's options, and only those. */
static const struct option sampler_options_table[] = {
    {"output", required_argument, NULL, 'o'},  {"frequency", required_argument, NULL, 'f'},
    {"pmu-arg", required_argument, NULL, 'p'}, {"debug", no_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
};

static int run(int argc, char **argv, bool sampler)
{
    void (*usage)(FILE *) = sampler ? usage_sampler : usage_record;
    struct record_options opts = {
        .frequency = DEFAULT_FREQUENCY,
        .output = sampler ? NULL : DEFAULT_OUTPUT,
        .format = sampler ? OUTPUT_PPERF : OUTPUT_NATIVE,
        .stack_mode = sampler ? STACK_NONE : STACK_DWARF,
        .stack_size = 0, /* each engine's own default */
        .inherit = !sampler,
        .engine = sampler ? ENGINE_PTRACE : ENGINE_AUTO,
    };
    const char *env_engine = getenv("PTPROF_ENGINE");
    if (!sampler && env_engine && *env_engine &&
        parse_engine("PTPROF_ENGINE", env_engine, &opts.engine) != 0)
        return PT_EXIT_USAGE;
    opts.engine_from_env = !sampler && env_engine && *env_engine;
    bool stack_mode_given = false, format_given = false;
    double value;
    int c;
    opterr = 0;
    /* '+': stop at the command, whose own options are not ours. */
    while ((c = getopt_long(argc, argv, sampler ? "+:o:f:p:dh" : "+:o:f:F:p:g:e:dh",
                            sampler ? sampler_options_table : record_options_table, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (parse_stack_mode(optarg, &opts.stack_mode) != 0)
                return PT_EXIT_USAGE;
            stack_mode_given = true;
            break;
        case OPT_STACK_SIZE:
            if (parse_positive("stack size", optarg, MAX_STACK_SIZE, &value) != 0)
                return PT_EXIT_USAGE;
            opts.stack_size = ((size_t)value + 7) & ~(size_t)7;
            break;
        case OPT_ENGINE:
            if (parse_engine("engine", optarg, &opts.engine) != 0)
                return PT_EXIT_USAGE;
            opts.engine_from_env = false;
            break;
        case 'e':
            if (perf_counters_check(optarg) != 0)
                return PT_EXIT_USAGE;
            opts.events = optarg;
            break;
        case OPT_HELP_EVENTS:
            perf_counters_list(stdout);
            return PT_EXIT_OK;
        case OPT_FORMAT:
            if (parse_format(optarg, &opts.format) != 0)
                return PT_EXIT_USAGE;
            format_given = true;
            break;
        case OPT_NO_INHERIT:
            opts.inherit = false;
            break;
        case OPT_PID:
            if (parse_positive("pid", optarg, 4194304, &value) != 0)
                return PT_EXIT_USAGE;
            opts.attach_pid = (pid_t)value;
            break;
        case OPT_SWITCH_OUTPUT:
            if (snapshots_parse(optarg, &opts.snapshots) != 0)
                return PT_EXIT_USAGE;
            break;
        case OPT_SWITCH_MAX_FILES:
            if (parse_positive("switch-max-files", optarg, 1e6, &value) != 0)
                return PT_EXIT_USAGE;
            opts.snapshots.max_files = (unsigned)value;
            break;
        case OPT_DURATION:
            if (parse_positive("duration", optarg, 1e9, &opts.duration) != 0)
                return PT_EXIT_USAGE;
            break;
        case 'o':
            if (!*optarg) {
                pt_err("empty output file name");
                return PT_EXIT_USAGE;
            }
            opts.output = optarg;
            break;
        case 'F': /* perf record's spelling */
        case 'f':
            if (parse_positive("frequency (Hz)", optarg, MAX_FREQUENCY, &opts.frequency) != 0)
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
    if (opts.attach_pid && optind < argc) {
        pt_err("--pid attaches to a running process: give no command");
        return PT_EXIT_USAGE;
    }
    if (!opts.attach_pid && optind >= argc) {
        pt_err("no command to profile; usage: %s",
               sampler ? "sampler [options] -- COMMAND [ARGS...]"
                       : "ptprof record [options] [--] COMMAND [ARGS...]");
        return PT_EXIT_USAGE;
    }
    if (opts.output && strcmp(opts.output, "-") == 0 && stdout_is_the_targets(&opts)) {
        pt_err("-o -: standard output is also the %s's, so the profile would be mixed with its "
               "output; write the profile to a file",
               opts.attach_pid ? "process" : "command");
        return PT_EXIT_USAGE;
    }
    if (opts.snapshots.max_files && !opts.snapshots.on) {
        pt_err("--switch-max-files is for --switch-output");
        return PT_EXIT_USAGE;
    }
    if (opts.snapshots.on &&
        (!opts.output || strcmp(opts.output, "-") == 0 || opts.format == OUTPUT_PPERF)) {
        pt_err("--switch-output writes a series of files: not to standard output, nor in the "
               "original raw format");
        return PT_EXIT_USAGE;
    }
    if (opts.format == OUTPUT_PPERF) {
        /* The raw format holds one address space and no stacks. */
        if (stack_mode_given && opts.stack_mode != STACK_NONE)
            pt_warn("--format pperf keeps no call stacks; -g is ignored");
        opts.stack_mode = STACK_NONE;
        opts.inherit = false;
    }
    const char *convert_to = NULL;
    if (!sampler && opts.output && strcmp(opts.output, "-") != 0 &&
        choose_output(opts.output, format_given, opts.format, &convert_to) != 0)
        return PT_EXIT_USAGE;
    opts.argv = argv + optind;
    if (opts.snapshots.on) {
        /* A series: each file converted as it is finished (snapshots.h). */
        char *pattern = series_pattern(opts.output);
        if (!pattern)
            return PT_EXIT_USAGE;
        if (convert_to)
            opts.snapshots.convert =
                strcmp(convert_to, "pbin") == 0 ? postprocess_snapshot : convert_snapshot;
        opts.output = pattern;
        int rc = record_run(&opts);
        free(pattern);
        return rc;
    }
    return convert_to ? record_and_convert(&opts, convert_to) : record_run(&opts);
}

int cmd_record(int argc, char **argv)
{
    return run(argc, argv, false);
}

int cmd_sampler(int argc, char **argv)
{
    return run(argc, argv, true);
}
