/*
 * cmd_info.c - "ptprof info FILE...": what a profile holds and how well it
 * was recorded, for either raw format and any compression (docs/info.md).
 */
#include "cli/cli.h"
#include "format/load.h"
#include "util/log.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USAGE_LINE "usage: ptprof info FILE...\n"
/* Beyond this many processes, info lists the first ones and counts the rest. */
#define MAX_LISTED_PROCESSES 20

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Describe profiles: format, program, recording engine, start time, duration,\n"
            "samples, requested and achieved frequency, profiler latency, threads,\n"
            "processes, measurement channels, the values samples carry (each a metric),\n"
            "stacks and those cut short, maps, and whether the file is complete or was cut\n"
            "short.\n"
            "Reads every format the other commands read (ptprof's native and .pbin, the\n"
            "original sampler's raw format, perf.data, perf script, pprof, gperftools,\n"
            "gmon.out, folded stacks), recognised by content, plain or compressed with\n"
            "gzip, bzip2 or zstd (\"-\" reads standard input).\n"
            "\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 when every file was readable, 2 when one was not.\n");
}

/* ISO 8601 in local time with milliseconds and the UTC offset. */
static void format_time(uint64_t ns, char *buf, size_t len)
{
    time_t sec = (time_t)(ns / 1000000000u);
    struct tm tm;
    char date[32], zone[8];
    if (!localtime_r(&sec, &tm) || strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0 ||
        strftime(zone, sizeof(zone), "%z", &tm) != 5) {
        snprintf(buf, len, "%" PRIu64 " ns since the epoch", ns);
        return;
    }
    snprintf(buf, len, "%s.%03u%.3s:%.2s", date, (unsigned)(ns / 1000000u % 1000u), zone, zone + 3);
}

static uint64_t start_ns(const struct profile *p)
{
    const char *s = profile_meta(p, "start_time");
    if (s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end != s && *end == '\0')
            return v;
    }
    return p->nsamples ? p->samples[0].time_ns : 0;
}

/* Wall time of the run: the recorder's own figure, or what the samples
 * span when it never wrote one. */
static uint64_t wall_ns(const struct profile *p, uint64_t start)
{
    if (p->has_totals)
        return p->totals.wall_ns;
    if (!p->nsamples)
        return 0;
    uint64_t last = p->samples[p->nsamples - 1].time_ns;
    return last > start ? last - start : 0;
}

static void print_format(const struct profile_file *f)
{
    static const struct {
        const char *name, *description;
    } described[] = {
        {"pperf", "pperf (the original sampler's raw format)"},
        {"gperftools", "gperftools CPU profile"},
        {"gmon", "gmon.out (gprof)"},
    };
    const unsigned char *d = f->head;
    const char *format = profile_file_format(f);
    const char *text = format;
    for (size_t i = 0; i < sizeof(described) / sizeof(described[0]); i++)
        if (strcmp(format, described[i].name) == 0)
            text = described[i].description;
    if (strcmp(format, "native") == 0 && f->head_len >= 12)
        printf("  format:     native %u.%u", (unsigned)(d[8] | d[9] << 8),
               (unsigned)(d[10] | d[11] << 8));
    else
        printf("  format:     %s", text);
    if (f->raw.compression != COMPRESSION_NONE)
        printf(", %s-compressed", compression_name(f->raw.compression));
    putchar('\n');
}

/* Recorded by the perf engine: a sample is one thread's period of CPU
 * time, not a tick that read every thread (docs/recording.md). */
static bool by_perf_engine(const struct profile *p)
{
    const char *engine = profile_meta(p, "engine");
    return engine && strcmp(engine, "perf") == 0;
}

static void print_engine(const struct profile *p)
{
    const char *engine = profile_meta(p, "engine");
    const char *why = profile_meta(p, "engine_reason");
    if (engine)
        printf("  engine:     %s%s%s%s\n", engine, why && *why ? " (" : "", why ? why : "",
               why && *why ? ")" : "");
}

/* What the recorder read of an interpreter's own frames (docs/python.md). */
static void print_interpreter(const struct profile *p)
{
    const char *interp = profile_meta(p, "interp");
    if (!interp)
        return;
    const char *how = profile_meta(p, "interp_consistency");
    const char *read = profile_meta(p, "interp_stacks");
    const char *bad = profile_meta(p, "interp_unreadable");
    printf("  frames of:  %s, %s stacks read, %s unreadable (native frames kept)%s%s\n", interp,
           read ? read : "?", bad ? bad : "?", how ? "; " : "", how ? how : "");
}

/* The perf engine's counts: CPU samples against CPU time x frequency, and
 * what the ring buffers lost. */
static void print_cpu_sampling(const struct profile *p)
{
    uint64_t recorded = p->has_totals ? p->totals.samples : 0;
    if (!p->has_totals) {
        for (size_t i = 0; i < p->nsamples; i++)
            for (uint32_t t = 0; t < p->samples[i].nthreads; t++)
                recorded += !(p->samples[i].threads[t].flags &
                              (PROF_THREAD_IN_SYSCALL | PROF_THREAD_STOPPED));
    }
    printf("  samples:    %" PRIu64 " of CPU time", recorded);
    double cpu_s =
        p->has_totals && p->frequency > 0 ? (double)p->totals.ideal_samples / p->frequency : 0;
    if (p->has_totals && p->totals.ideal_samples)
        printf(", %" PRIu64 " ideal (%.1f%%)", p->totals.ideal_samples,
               100.0 * (double)recorded / (double)p->totals.ideal_samples);
    const char *lost = profile_meta(p, "lost_samples");
    if (lost && strcmp(lost, "0") != 0)
        printf(", %s lost (ring buffer full)", lost);
    printf(", in %zu ticks\n", p->nsamples);
    if (p->frequency > 0)
        printf("  frequency:  %g Hz of CPU time requested", p->frequency);
    else
        printf("  frequency:  unknown requested");
    if (cpu_s > 0)
        printf(", %.1f Hz achieved (%.3f s of CPU)\n", (double)recorded / cpu_s, cpu_s);
    else
        printf(", achieved unknown\n");
    printf("  latency:    none (the kernel samples without stopping the program)\n");
}

static void print_timing(const struct profile *p)
{
    uint64_t start = start_ns(p);
    uint64_t wall = wall_ns(p, start);
    double secs = (double)wall / 1e9;
    char when[64];

    if (start) {
        format_time(start, when, sizeof(when));
        printf("  started:    %s\n", when);
    } else {
        printf("  started:    unknown\n");
    }
    printf("  duration:   %.3f s%s\n", secs,
           p->has_totals ? "" : " (spanned by the samples; the recorder did not finish)");
    /* A perf engine recording, also once through pprof (its reader says the
     * CPU time was sampled from the comment ptprof wrote). */
    const char *sampled = profile_meta(p, "cpu_time");
    if (by_perf_engine(p) || (p->format && strcmp(p->format, "pprof") == 0 && sampled &&
                              strcmp(sampled, "sampled") == 0)) {
        print_cpu_sampling(p);
        return;
    }

    uint64_t recorded = p->has_totals ? p->totals.samples : p->nsamples;
    printf("  samples:    %" PRIu64 " recorded", recorded);
    if (recorded != p->nsamples)
        printf(" (%zu in the file)", p->nsamples);
    if (p->has_totals && p->totals.ideal_samples)
        printf(", %" PRIu64 " ideal (%.1f%%)\n", p->totals.ideal_samples,
               100.0 * (double)recorded / (double)p->totals.ideal_samples);
    else if (!p->has_totals && p->frequency > 0 && wall > 0)
        printf(", %.0f ideal (estimated from the frequency)\n", secs * p->frequency);
    else
        printf(", ideal unknown\n");

    /* A perf.data of an event that is not a clock: its request is per
     * thread, what was achieved is every thread's samples per wall second. */
    const char *cpu_time = profile_meta(p, "cpu_time");
    bool per_thread = p->format && strcmp(p->format, "perf-data") == 0 &&
                      !(cpu_time && strcmp(cpu_time, "sampled") == 0);
    if (p->frequency > 0)
        printf("  frequency:  %g Hz requested%s", p->frequency, per_thread ? " per thread" : "");
    else
        printf("  frequency:  unknown requested");
    if (wall > 0)
        printf(", %.1f Hz achieved%s\n", (double)recorded / secs,
               per_thread ? " per wall second, all threads" : "");
    else
        printf(", achieved unknown\n");

    if (p->has_totals) {
        printf("  latency:    %.3f ms total", (double)p->totals.latency_ns / 1e6);
        if (recorded)
            printf(", %.3f us per sample", (double)p->totals.latency_ns / 1e3 / (double)recorded);
        putchar('\n');
    } else {
        printf("  latency:    unknown (the recorder did not finish)\n");
    }
}

/* Distinct threads in sample I (the perf engine may list a thread once per
 * period of CPU it used since the previous tick). */
static uint32_t distinct_threads(const struct prof_sample *s)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < s->nthreads; t++) {
        uint32_t k = 0;
        while (k < t && s->threads[k].tid != s->threads[t].tid)
            k++;
        n += k == t;
    }
    return n;
}

/* A process whose threads all ended, without an exit record: the perf
 * engine saw it end but was not its parent. */
static bool ended_without_status(const struct profile *p, const struct prof_process *pr)
{
    size_t threads = 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        if (p->threads[i].pid != pr->pid)
            continue;
        if (!p->threads[i].end_ns)
            return false;
        threads++;
    }
    return threads > 0;
}

static void print_tasks(const struct profile *p)
{
    uint32_t at_once = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        uint32_t n = distinct_threads(&p->samples[i]);
        at_once = n > at_once ? n : at_once;
    }
    printf("  threads:    %zu (at most %" PRIu32 " at once)\n", p->nthreads, at_once);

    printf("  processes:  %zu\n", p->nprocesses);
    size_t shown = p->nprocesses < MAX_LISTED_PROCESSES ? p->nprocesses : MAX_LISTED_PROCESSES;
    int width = 0;
    for (size_t i = 0; i < shown; i++) {
        const char *exe = p->processes[i].exe;
        size_t n = exe && *exe ? strlen(exe) : strlen("unknown");
        if (n > (size_t)width)
            width = n > 60 ? 60 : (int)n;
    }
    for (size_t i = 0; i < shown; i++) {
        const struct prof_process *pr = &p->processes[i];
        char status[80] = "no exit recorded";
        if (pr->exited)
            profile_describe_status(pr->exit_status, status, sizeof(status));
        else if (by_perf_engine(p) && ended_without_status(p, pr))
            snprintf(status, sizeof(status), "ended (status unknown: not the profiler's child)");
        printf("    %-8" PRIu32 " %-*s  %s\n", pr->pid, width,
               pr->exe && *pr->exe ? pr->exe : "unknown", status);
    }
    if (p->nprocesses > MAX_LISTED_PROCESSES)
        printf("    ... and %zu more\n", p->nprocesses - MAX_LISTED_PROCESSES);
}

/* META KEY of a profile read from the raw format (a conversion keeps the
 * META but is not that file), or NULL. */
static const char *pperf_meta(const struct profile *p, const char *key)
{
    return strcmp(p->format, "pperf") == 0 ? profile_meta(p, key) : NULL;
}

/* The raw format's two map tables (interop/pperf.h), in the words of
 * docs/formats/pperf.md. */
static const char *pperf_maps_form(const struct profile *p)
{
    const char *form = pperf_meta(p, "pperf.maps");
    if (!form)
        return NULL;
    if (strcmp(form, "mapping") == 0)
        return "the original sampler's form: one per executable mapping";
    if (strcmp(form, "load") == 0)
        return "ptprof 0.2.0's form: one per loaded file, from its load base";
    return "both forms mixed";
}

static void print_contents(const struct profile *p, const struct profile_file *f)
{
    const char *pmu = pperf_meta(p, "pperf.pmu");
    printf("  channels:   %zu%s\n", p->nchannels,
           pmu && strcmp(pmu, "dummy") == 0
               ? " (the original's dummy PMU: power 0.0 in every sample, nothing measured)"
               : "");
    int wname = 0, wunit = 0;
    for (size_t i = 0; i < p->nchannels; i++) {
        const struct prof_channel *c = &p->channels[i];
        size_t n = strlen(c->name), u = *c->unit ? strlen(c->unit) : strlen("(no unit)");
        wname = n > (size_t)wname ? (n > 60 ? 60 : (int)n) : wname;
        wunit = u > (size_t)wunit ? (u > 20 ? 20 : (int)u) : wunit;
    }
    for (size_t i = 0; i < p->nchannels; i++) {
        const struct prof_channel *c = &p->channels[i];
        printf("    %-*s  %-*s  %s\n", wname, c->name, wunit, *c->unit ? c->unit : "(no unit)",
               profile_kind_name(c->kind));
    }
    if (p->nvalue_types || p->default_metric) {
        printf("  values:     %zu", p->nvalue_types);
        if (p->default_metric)
            printf(" (default metric %s)", p->default_metric);
        putchar('\n');
    }
    for (size_t i = 0; i < p->nvalue_types; i++) {
        const struct prof_value_type *v = &p->value_types[i];
        printf("    %-20s  %-12s  %s\n", v->name, *v->unit ? v->unit : "(no unit)",
               profile_value_agg_name(v->agg));
    }
    const char *mode = profile_meta(p, "stacks");
    if (!mode)
        mode = strcmp(p->format, "pperf") == 0 || strcmp(p->format, "gmon") == 0
                   ? "none (the format holds only PCs)"
                   : "unknown";
    printf("  stacks:     %s, %zu distinct", mode, p->nstacks ? p->nstacks - 1 : 0);
    uint64_t cut = profile_truncated_stacks(p);
    if (cut)
        printf("; %" PRIu64 " thread sample%s cut short (outer frames lost)", cut,
               cut == 1 ? "" : "s");
    putchar('\n');
    const char *form = pperf_maps_form(p);
    printf("  maps:       %zu%s%s\n", p->nmaps, form ? ", " : "", form ? form : "");
    /* JIT files the recorder would not read (record/jit_maps.h). */
    for (size_t i = 0; i < p->nmeta; i++)
        if (strncmp(p->meta[i].key, "jit_refused.", 12) == 0)
            printf("  jit refused: %s\n", p->meta[i].value);
    /* A recording ends early when its recorder dies; other files when
     * they were cut or damaged. */
    bool recording = strcmp(p->format, "native") == 0 || strcmp(p->format, "pperf") == 0;
    if (p->truncated)
        printf("  status:     TRUNCATED at offset %" PRIu64 " (%s)\n", p->truncated_at,
               recording ? "recorder killed?" : "the file is cut short or damaged");
    else if (!p->has_totals)
        printf("  status:     TRUNCATED at offset %" PRIu64 " (recorder killed?): no END record\n",
               profile_file_length(f));
    else
        printf("  status:     complete\n");
}

static int info_one(const char *path)
{
    struct profile_file f;
    if (profile_file_read(path, &f) != 0)
        return -1;
    struct profile p;
    if (profile_parse(&f, &p) != 0) {
        profile_file_free(&f);
        return -1;
    }
    const char *program = profile_meta(&p, "command");
    printf("%s\n", f.name);
    print_format(&f);
    printf("  program:    %s\n", program && *program ? program : "unknown");
    print_engine(&p);
    print_interpreter(&p);
    print_timing(&p);
    print_tasks(&p);
    print_contents(&p, &f);
    profile_free(&p);
    profile_file_free(&f);
    return 0;
}

int cmd_info(int argc, char **argv)
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
        pt_err("info: option '%s' is not known", argv[optind - 1]);
        fputs(USAGE_LINE, stderr);
        return PT_EXIT_USAGE;
    }
    if (optind >= argc) {
        pt_err("info: no profile given");
        fputs(USAGE_LINE, stderr);
        return PT_EXIT_USAGE;
    }
    int rc = PT_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        if (i > optind)
            putchar('\n');
        /* Keep stdout and stderr in order when both go to one terminal. */
        fflush(stdout);
        if (info_one(argv[i]) != 0)
            rc = PT_EXIT_BAD_INPUT;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        pt_err("info: cannot write to standard output");
        return PT_EXIT_USAGE;
    }
    return rc;
}
