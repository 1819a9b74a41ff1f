/*
 * test_csv_join.c - a measurement device's CSV joined to a real recording
 * ("ptprof convert PROFILE --join-csv DEVICE.csv"), and the samples
 * exported as CSV ("ptprof convert PROFILE -o samples.csv").
 *
 * The device CSVs are written here from the recording's own sample times,
 * so the energy they hold over the profile's span is known exactly: a
 * square wave of power (absolute epoch seconds; relative milliseconds with
 * semicolons, decimal commas and --csv-offset; milliamperes with ISO 8601
 * times and --voltage), a linear ramp read more sparsely than the samples,
 * and a power that depends on the function the program was in, which
 * "report --metric power" must give back per function.  Hostile CSVs end
 * with exit 2 and a message naming the file and line.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/load.h"
#include "profile_query.h"
#include "record_native.h"
#include "util/xalloc.h"

#define HIGH_W 10.0
#define LOW_W 2.0

/* --- running ptprof ---------------------------------------------------------- */

/* Run ptprof ARGS (NULL-terminated) into RES; returns its exit code. */
static int ptprof(struct spawn_result *res, const char *const *args)
{
    const char *argv[40];
    char *bin = build_ptprof();
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(n, 39u);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    spawn_run(&o, res);
    free(bin);
    return spawn_exit_code(res->status);
}

/* Run ptprof ARGS expecting exit 0; its stdout, allocated; its stderr into
 * *ERR when ERR is not NULL. */
static char *ptprof_ok(const char *const *args, char **err)
{
    struct spawn_result res;
    int code = ptprof(&res, args);
    cr_assert_eq(code, 0, "ptprof %s %s %s: " REC_FMT, args[0], args[1], args[2] ? args[2] : "",
                 REC_ARGS(&res));
    char *out = xstrdup(res.out);
    if (err)
        *err = xstrdup(res.err);
    spawn_result_free(&res);
    return out;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

static double json_number_after(const char *text, const char *name)
{
    char *pat = xasprintf("\"%s\":", name);
    const char *at = strstr(text, pat);
    cr_assert_not_null(at, "no %s in %.300s", pat, text);
    double v = strtod(at + strlen(pat), NULL);
    free(pat);
    return v;
}

/* The total energy "ptprof report --metric energy" measures in PROFILE. */
static double reported_energy(const char *profile)
{
    char *out = ptprof_ok(
        (const char *[]){"report", profile, "--metric", "energy", "--format", "json", NULL}, NULL);
    double e = json_number_after(out, "energy");
    free(out);
    return e;
}

/* shares with one thread for 2 s at 200 Hz: the recording every test joins
 * to. */
/* With the ptrace engine: the energy test below models a profile whose
 * every sample holds its one thread once (the perf engine's ticks hold 0,
 * 1 or more CPU samples of it, docs/recording.md). */
static void record_shares(struct recording *rec)
{
    char *prog = build_workload("shares");
    record_native_engine(rec, "ptrace", (const char *[]){"-f", "200", "--", prog, "1", "2", NULL},
                         0, 90);
    free(prog);
    cr_assert_gt(rec->prof.nsamples, 100u, "too few samples to test with");
}

/* --- the device's signal --------------------------------------------------- */

/* Readings as a device would export them: each holds since the previous
 * one (the default, "step", reading of a CSV). */
struct readings {
    size_t n, cap_t, cap_w;
    int64_t *t;
    double *w;
};

static void add(struct readings *r, int64_t t, double w)
{
    r->t = xgrow(r->t, &r->cap_t, r->n + 1, sizeof(*r->t));
    r->w = xgrow(r->w, &r->cap_w, r->n + 1, sizeof(*r->w));
    r->t[r->n] = t;
    r->w[r->n++] = w;
}

static void readings_free(struct readings *r)
{
    free(r->t);
    free(r->w);
}

/* The energy of the step signal over [A, B]: each reading's value over the
 * part of (previous reading, reading] inside it. */
static double step_integral(const struct readings *r, int64_t a, int64_t b)
{
    double e = 0;
    for (size_t k = 1; k < r->n; k++) {
        int64_t lo = r->t[k - 1] > a ? r->t[k - 1] : a, hi = r->t[k] < b ? r->t[k] : b;
        if (hi > lo)
            e += r->w[k] * (double)(hi - lo) / 1e9;
    }
    return e;
}

/* High until MID (a sample's time), low after it: a reading every
 * millisecond from 50 ms before the profile to 50 ms after it, and one at
 * MID itself so the edge is exact. */
static void square_wave(struct readings *r, int64_t first, int64_t last, int64_t mid)
{
    memset(r, 0, sizeof(*r));
    bool edge = false;
    for (int64_t t = first - 50000000; t <= last + 50000000; t += 1000000) {
        if (!edge && t > mid) {
            add(r, mid, HIGH_W);
            edge = true;
        }
        if (t != mid)
            add(r, t, t <= mid ? HIGH_W : LOW_W);
    }
}

static int64_t sample_ns(const struct profile *p, size_t i)
{
    return (int64_t)p->samples[i].time_ns;
}

static char *epoch_seconds(int64_t ns)
{
    return xasprintf("%" PRId64 ".%09" PRId64, ns / 1000000000, ns % 1000000000);
}

static char *iso_utc(int64_t ns)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char day[32];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    return xasprintf("%s.%09" PRId64 "Z", day, ns % 1000000000);
}

/* --- CSV files ------------------------------------------------------------- */

enum style {
    EPOCH_WATTS,         /* time,Power (W) */
    RELATIVE_MILLIWATTS, /* Zeit [ms];P[mW] with decimal commas, since DEVICE_START */
    ISO_MILLIAMPS,       /* Timestamp,Current [mA] at 5 V */
};

static char *write_csv(const char *dir, const char *name, const struct readings *r, enum style s,
                       int64_t device_start)
{
    char *path = xasprintf("%s/%s", dir, name);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fputs(s == EPOCH_WATTS           ? "# written by test_csv_join\ntime,Power (W)\n"
          : s == RELATIVE_MILLIWATTS ? "\xef\xbb\xbfZeit [ms];P[mW]\r\n"
                                     : "Timestamp,Current [mA]\n",
          f);
    for (size_t k = 0; k < r->n; k++) {
        if (s == EPOCH_WATTS) {
            char *t = epoch_seconds(r->t[k]);
            fprintf(f, "%s,%.17g\n", t, r->w[k]);
            free(t);
        } else if (s == RELATIVE_MILLIWATTS) {
            int64_t rel = r->t[k] - device_start;
            cr_assert_geq(rel, 0);
            char *mw = xasprintf("%.6f", r->w[k] * 1000);
            *strchr(mw, '.') = ',';
            fprintf(f, "%" PRId64 ",%06" PRId64 ";%s\r\n", rel / 1000000, rel % 1000000, mw);
            free(mw);
        } else {
            char *t = iso_utc(r->t[k]);
            fprintf(f, "%s,%.17g\n", t, r->w[k] / 5 * 1000);
            free(t);
        }
    }
    fclose(f);
    write_text(path, text, len);
    free(text);
    return path;
}

static char *join(const char *dir, const char *profile, const char *csv, const char *out_name,
                  const char *const *extra, char **err)
{
    char *out = xasprintf("%s/%s", dir, out_name);
    const char *args[24] = {"convert", profile, "--join-csv", csv, "-o", out};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    free(ptprof_ok(args, err));
    return out;
}

static void expect_energy(const char *profile, double expected, const char *what)
{
    double e = reported_energy(profile);
    cr_expect(fabs(e - expected) <= 1e-6 * expected, "%s: report says %.9g J, the CSV holds %.9g J",
              what, e, expected);
}

/* Split LINE (modified) at commas outside quotes, unquoting. */
static size_t fields(char *line, char **out, size_t max)
{
    size_t n = 0;
    char *s = line;
    for (;;) {
        char *start = s, *o = s;
        if (*s == '"') {
            start = o = ++s;
            while (*s && !(*s == '"' && s[1] != '"')) {
                if (*s == '"')
                    s++;
                *o++ = *s++;
            }
            if (*s == '"')
                s++;
        } else {
            while (*s && *s != ',')
                *o++ = *s++;
        }
        char sep = *s;
        *o = '\0';
        if (n < max)
            out[n++] = start;
        if (sep != ',')
            return n;
        s++;
    }
}

/* --- joins ----------------------------------------------------------------- */

Test(csv_join, energy_is_the_integral_of_the_csv_over_the_profile, .timeout = 240)
{
    struct recording rec;
    record_shares(&rec);
    const struct profile *p = &rec.prof;
    int64_t first = sample_ns(p, 0), last = sample_ns(p, p->nsamples - 1);
    int64_t mid = sample_ns(p, p->nsamples / 2);
    struct readings sq;
    square_wave(&sq, first, last, mid);
    double expected = step_integral(&sq, first, last);
    cr_assert_float_eq(
        expected, HIGH_W * (double)(mid - first) / 1e9 + LOW_W * (double)(last - mid) / 1e9, 1e-9);

    /* Absolute epoch seconds. */
    char *csv = write_csv(rec.dir, "epoch.csv", &sq, EPOCH_WATTS, 0);
    char *err;
    char *out = join(rec.dir, rec.path, csv, "epoch.data", NULL, &err);
    cr_expect_eq(err[0], '\0', "a CSV covering the profile: no warning, got %s", err);
    free(err);
    expect_energy(out, expected, "epoch seconds");
    struct profile joined;
    cr_assert_eq(profile_load(out, &joined), 0);
    cr_assert_eq(joined.nchannels, 1);
    cr_expect_str_eq(joined.channels[0].name, "Power");
    cr_expect_str_eq(joined.channels[0].unit, "W");
    cr_expect_eq(joined.channels[0].kind, PMU_KIND_POWER);
    profile_free(&joined);
    /* --metric power: the mean power over the run, as with a power source. */
    char *rep = ptprof_ok(
        (const char *[]){"report", out, "--metric", "power", "--format", "json", NULL}, NULL);
    double duration = json_number_after(rep, "duration");
    cr_expect_float_eq(json_number_after(rep, "power"), expected / duration, 1e-6 * HIGH_W);
    free(rep);
    free(out);
    free(csv);

    /* Relative milliseconds from a device started 250.123 ms before the
     * first sample, in mW with decimal commas, semicolons and CRLF. */
    int64_t device_start = first - 250123000;
    struct readings late = {0};
    for (size_t k = 0; k < sq.n; k++)
        if (sq.t[k] >= device_start)
            add(&late, sq.t[k], sq.w[k]);
    csv = write_csv(rec.dir, "relative.csv", &late, RELATIVE_MILLIWATTS, device_start);
    struct spawn_result res;
    cr_expect_eq(ptprof(&res, (const char *[]){"convert", rec.path, "--join-csv", csv, "-o",
                                               "/dev/null", NULL}),
                 2, "relative times without an offset");
    cr_expect(strstr(res.err, "relative") && strstr(res.err, csv), "%s", res.err);
    spawn_result_free(&res);
    char *offset = epoch_seconds(device_start);
    out = join(rec.dir, rec.path, csv, "relative.data",
               (const char *[]){"--csv-offset", offset, NULL}, NULL);
    expect_energy(out, expected, "relative times + --csv-offset EPOCH");
    free(out);
    free(offset);
    /* The same offset given from the profile's start. */
    const char *st = profile_meta(p, "start_time");
    cr_assert_not_null(st);
    int64_t from_start = device_start - strtoll(st, NULL, 10);
    offset =
        xasprintf("profile%s%" PRId64 ".%09" PRId64, from_start < 0 ? "-" : "+",
                  (int64_t)llabs(from_start) / 1000000000, (int64_t)llabs(from_start) % 1000000000);
    out = join(rec.dir, rec.path, csv, "relative2.data",
               (const char *[]){"--csv-offset", offset, NULL}, NULL);
    expect_energy(out, expected, offset);
    free(out);
    free(offset);
    free(csv);
    readings_free(&late);

    /* Current only, in mA at 5 V, with ISO 8601 times. */
    csv = write_csv(rec.dir, "current.csv", &sq, ISO_MILLIAMPS, 0);
    out = join(rec.dir, rec.path, csv, "current.data", (const char *[]){"--voltage", "5", NULL},
               NULL);
    expect_energy(out, expected, "current x --voltage");
    cr_assert_eq(profile_load(out, &joined), 0);
    cr_assert_eq(joined.nchannels, 2);
    cr_expect_eq(joined.channels[0].kind, PMU_KIND_CURRENT);
    cr_expect_str_eq(joined.channels[1].name, "Current x 5 V");
    cr_expect_eq(joined.channels[1].kind, PMU_KIND_POWER);
    profile_free(&joined);
    free(out);
    free(csv);

    /* A CSV that stops at MID: a warning says how much it covers, and the
     * energy is what it holds. */
    struct readings half = {0};
    for (size_t k = 0; k < sq.n && sq.t[k] <= mid; k++)
        add(&half, sq.t[k], sq.w[k]);
    csv = write_csv(rec.dir, "half.csv", &half, EPOCH_WATTS, 0);
    out = join(rec.dir, rec.path, csv, "half.data", NULL, &err);
    char *want = xasprintf("the readings cover %.1f%% of the profile's",
                           100.0 * (double)(mid - first) / (double)(last - first));
    cr_expect(strstr(err, want) && strstr(err, csv), "expected '%s' in: %s", want, err);
    free(want);
    free(err);
    expect_energy(out, step_integral(&half, first, mid), "half covered");
    free(out);
    free(csv);
    readings_free(&half);
    readings_free(&sq);

    /* A ramp read every 100 ms (sparser than the samples), joined as a
     * straight line between readings: the ramp's own integral. */
    struct readings ramp = {0};
    int64_t r0 = first - 100000000;
    for (int64_t t = r0; t <= last + 200000000; t += 100000000)
        add(&ramp, t, 1 + 4.0 * (double)(t - r0) / 1e9);
    csv = write_csv(rec.dir, "ramp.csv", &ramp, EPOCH_WATTS, 0);
    out = join(rec.dir, rec.path, csv, "ramp.data",
               (const char *[]){"--csv-interpolate", "linear", NULL}, NULL);
    double a = (double)(first - r0) / 1e9, b = (double)(last - r0) / 1e9;
    expect_energy(out, (b - a) + 2 * (b * b - a * a), "linear ramp");
    free(out);
    free(csv);
    readings_free(&ramp);
    recording_free(&rec);
}

/* Power that depends on the function the program was in during each
 * sample interval: per function, the reported power is that power (less
 * where a sample counted more CPU time than wall time, as metrics.h
 * splits an interval's energy). */
Test(csv_join, energy_splits_by_function, .timeout = 180)
{
    struct recording rec;
    record_shares(&rec);
    const struct profile *p = &rec.prof;
    static const struct {
        const char *fn;
        double w;
    } want[] = {{"work_heavy", HIGH_W}, {"work_medium", LOW_W}, {"work_light", LOW_W}};
    /* What metrics.h makes of it for one thread: each interval's energy
     * (power x dt) times min(1, busy / dt), credited to the function the
     * sample found the thread in; busy is the CPU time and the share of
     * the ptrace engine's mean stop per sample (held) that the thread ran
     * of the rest of the interval, cpu x dt / (dt - held), where the stop
     * is at most a quarter of the interval. */
    double held = p->has_totals && p->totals.samples
                      ? (double)p->totals.latency_ns / 1e9 / (double)p->totals.samples
                      : 0;
    double expect_j[3] = {0}, expect_cpu[3] = {0};
    struct profile_query q;
    pq_init(&q, p);
    struct readings r = {0};
    add(&r, sample_ns(p, 0), LOW_W);
    size_t heavy = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_assert_eq(s->nthreads, 1, "shares 1 runs one thread");
        const char *fn = pq_function(&q, s->threads[0].pid, s->threads[0].pc, s->time_ns);
        bool hot = fn && strcmp(fn, "work_heavy") == 0;
        double cpu = (double)s->threads[0].cpu_ns / 1e9, dt = 0;
        if (i > 0) {
            const struct prof_sample *prev = &p->samples[i - 1];
            heavy += hot;
            add(&r, sample_ns(p, i), hot ? HIGH_W : LOW_W);
            cpu = s->threads[0].cpu_ns >= prev->threads[0].cpu_ns
                      ? (double)(s->threads[0].cpu_ns - prev->threads[0].cpu_ns) / 1e9
                      : 0;
            dt = (double)(s->time_ns - prev->time_ns) / 1e9;
        }
        for (size_t w = 0; fn && w < 3; w++) {
            if (strcmp(fn, want[w].fn) != 0)
                continue;
            expect_cpu[w] += cpu;
            double busy = cpu > 0 && held <= dt / 4 ? cpu * dt / (dt - held) : cpu;
            expect_j[w] += (hot ? HIGH_W : LOW_W) * (busy < dt ? busy : dt);
        }
    }
    pq_free(&q);
    cr_assert_gt(heavy, p->nsamples / 5, "work_heavy is half of shares' work");
    char *csv = write_csv(rec.dir, "by-function.csv", &r, EPOCH_WATTS, 0);
    char *out = join(rec.dir, rec.path, csv, "by-function.data", NULL, NULL);
    expect_energy(out, step_integral(&r, sample_ns(p, 0), sample_ns(p, p->nsamples - 1)),
                  "power by function");

    char *table = ptprof_ok((const char *[]){"report", out, "-k", "procedure", "--metric", "power",
                                             "--format", "csv", NULL},
                            NULL);
    bool seen[3] = {false};
    double reported[3] = {0};
    size_t power_col = SIZE_MAX;
    for (char *rest = table, *line; (line = strsep(&rest, "\n")) && *line;) {
        char *f[32];
        size_t n = fields(line, f, 32);
        if (power_col == SIZE_MAX) {
            for (size_t c = 0; c < n; c++)
                if (strcmp(f[c], "power") == 0 && power_col == SIZE_MAX)
                    power_col = c;
            cr_assert_neq(power_col, SIZE_MAX, "no power column in %s", line);
            continue;
        }
        for (size_t w = 0; w < 3; w++) {
            if (strcmp(f[0], want[w].fn) != 0 || power_col >= n)
                continue;
            double watts = strtod(f[power_col], NULL), expected = expect_j[w] / expect_cpu[w];
            cr_expect(fabs(watts - expected) <= 0.03 * expected,
                      "%s drew %.3f W in the report, %.3f W from the CSV (%.1f W while it ran)",
                      want[w].fn, watts, expected, want[w].w);
            reported[w] = watts;
            seen[w] = true;
        }
    }
    for (size_t w = 0; w < 3; w++)
        cr_expect(seen[w], "no row for %s", want[w].fn);
    cr_expect_gt(reported[0], 3 * reported[2], "work_heavy's 10 W against work_light's 2 W");
    free(table);
    free(out);
    free(csv);
    readings_free(&r);
    recording_free(&rec);
}

/* --- export ---------------------------------------------------------------- */

Test(csv_export, rows_header_values_and_round_trip, .timeout = 180)
{
    struct recording rec;
    record_shares(&rec);
    const struct profile *p = &rec.prof;
    int64_t first = sample_ns(p, 0), last = sample_ns(p, p->nsamples - 1);
    struct readings sq;
    square_wave(&sq, first, last, sample_ns(p, p->nsamples / 3));
    char *csv = write_csv(rec.dir, "device.csv", &sq, EPOCH_WATTS, 0);
    char *joined_path = join(rec.dir, rec.path, csv, "joined.data", NULL, NULL);
    struct profile joined;
    cr_assert_eq(profile_load(joined_path, &joined), 0);

    char *samples = xasprintf("%s/samples.csv", rec.dir);
    free(ptprof_ok((const char *[]){"convert", joined_path, "-o", samples, NULL}, NULL));
    size_t len;
    char *text = test_read_file(samples, &len);
    cr_assert_not_null(text);
    char *line = text, *next = strchr(line, '\n');
    cr_assert_not_null(next);
    *next = '\0';
    cr_expect_str_eq(line, "time,time_s,pid,tid,thread,pc,cpu_s,wall_s,binary,function,Power [W]");
    size_t rows = 0, in_work = 0, thread_samples = 0;
    double cpu = 0, prev_s = -1;
    const char *st = profile_meta(&joined, "start_time");
    int64_t start = st ? strtoll(st, NULL, 10) : first;
    for (size_t i = 0; i < joined.nsamples; i++) {
        const struct prof_sample *s = &joined.samples[i];
        thread_samples += s->nthreads;
        for (uint32_t j = 0; j < s->nthreads; j++) {
            line = next + 1;
            next = strchr(line, '\n');
            cr_assert_not_null(next, "fewer rows than thread samples");
            *next = '\0';
            char *f[16];
            cr_assert_eq(fields(line, f, 16), 11, "row %zu: %s", rows, line);
            char *dot = strchr(f[0], '.');
            cr_assert_not_null(dot);
            *dot = '\0';
            int64_t ns = strtoll(f[0], NULL, 10) * 1000000000 + strtoll(dot + 1, NULL, 10);
            cr_expect_eq(ns, (int64_t)s->time_ns, "row %zu: time", rows);
            double ts = strtod(f[1], NULL);
            cr_expect(fabs(ts - (double)((int64_t)s->time_ns - start) / 1e9) < 1e-6);
            cr_expect_geq(ts, prev_s, "time_s never goes back");
            prev_s = ts;
            cr_expect_eq(strtoul(f[2], NULL, 10), s->threads[j].pid);
            cr_expect_eq(strtoul(f[3], NULL, 10), s->threads[j].tid);
            cr_expect_str_eq(f[4], "shares");
            cr_expect_eq(strtoull(f[5], NULL, 16), s->threads[j].pc);
            cpu += strtod(f[6], NULL);
            in_work += strncmp(f[9], "work_", 5) == 0;
            cr_expect_str_eq(f[8], strncmp(f[9], "work_", 5) == 0 ? "shares" : f[8]);
            double v = s->values[0];
            if (isnan(v))
                cr_expect_str_eq(f[10], "", "row %zu: NaN is an empty field", rows);
            else
                cr_expect(strtod(f[10], NULL) == v, "row %zu: %s is not %.17g", rows, f[10], v);
            rows++;
        }
    }
    cr_expect_eq(next[1], '\0', "more rows than thread samples");
    cr_expect_eq(rows, thread_samples);
    cr_expect_gt(in_work, rows * 8 / 10, "the leaf's function: %zu of %zu rows in work_*", in_work,
                 rows);
    char *rep = ptprof_ok((const char *[]){"report", joined_path, "--format", "json", NULL}, NULL);
    double cpu_reported = json_number_after(rep, "cpu_time");
    cr_expect(fabs(cpu - cpu_reported) < 1e-6 * (1 + cpu_reported),
              "cpu_s sums to %.9f, report %.9f", cpu, cpu_reported);
    free(rep);

    /* The export reads back as a device CSV: every sample gets its value
     * again. */
    char *back = join(rec.dir, rec.path, samples, "back.data", NULL, NULL);
    struct profile rt;
    cr_assert_eq(profile_load(back, &rt), 0);
    cr_assert_eq(rt.nsamples, joined.nsamples);
    cr_assert_eq(rt.nchannels, 1);
    cr_expect_str_eq(rt.channels[0].name, "Power");
    for (size_t i = 0; i < rt.nsamples; i++) {
        double a = joined.samples[i].values[0], b = rt.samples[i].values[0];
        cr_expect(a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-12 * fabs(a),
                  "sample %zu: %.17g joined, %.17g after the round trip", i, a, b);
    }
    cr_expect_float_eq(reported_energy(back), reported_energy(joined_path), 1e-9);
    profile_free(&rt);
    free(back);
    free(text);
    free(samples);
    profile_free(&joined);
    free(joined_path);
    free(csv);
    readings_free(&sq);
    recording_free(&rec);
}

/* --- hostile files and bad options ------------------------------------------ */

Test(csv_join, hostile_csvs_fail_naming_file_and_line, .timeout = 120)
{
    struct recording rec;
    char *prog = build_workload("shares");
    record_native(&rec, (const char *[]){"-f", "100", "--", prog, "1", "0.3", NULL}, 0, 60);
    free(prog);
    char *t0 = epoch_seconds(sample_ns(&rec.prof, 0));
    char *t1 = epoch_seconds(sample_ns(&rec.prof, rec.prof.nsamples - 1) + 1000000);
    static const struct {
        const char *name, *line, *what;
        const char *fmt; /* %1$s: a time in the profile, %2$s: a later one */
    } cases[] = {
        {"garbage", ":1:", "NUL byte",
         "\x7f"
         "ELF\x02\x01\x01%1$s\n"},
        {"huge-value", ":3:", "out of range", "time,P (W)\n%1$s,1\n%2$s,1e308\n"},
        {"nan", ":3:", "'NaN' is not a decimal number", "time,P (W)\n%1$s,1\n%2$s,NaN\n"},
        {"backwards", ":4:", "goes back", "time,P (W)\n%1$s,1\n%2$s,1\n%1$s,1\n"},
        {"missing-column", ":3:", "1 field, the header has 2", "time,P (W)\n%1$s,1\n%2$s\n"},
        {"no-value-column", ":2:", "no column says", "# device\ntime,temperature\n%1$s,1\n"},
        {"no-column", ":1:", "no column 'Watts'", "time,P (W)\n%1$s,1\n"},
        {"no-overlap", ":", "cover none of the profile",
         "time,P (W)\n1000000000,1\n1000000001,1\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *path = xasprintf("%s/%s.csv", rec.dir, cases[i].name);
        char *text = xasprintf(cases[i].fmt, t0, t1);
        size_t len = strlen(text);
        if (strcmp(cases[i].name, "garbage") == 0)
            text[1] = '\0'; /* a NUL byte on the first line */
        write_text(path, text, len);
        struct spawn_result res;
        const char *args[] = {"convert",
                              rec.path,
                              "--join-csv",
                              path,
                              "-o",
                              "/dev/null",
                              strcmp(cases[i].name, "no-column") == 0 ? "--csv-column" : NULL,
                              "Watts",
                              NULL};
        int code = ptprof(&res, args);
        char *where = xasprintf("ptprof: %s%s ", path, cases[i].line);
        cr_expect_eq(code, 2, "%s: " REC_FMT, cases[i].name, REC_ARGS(&res));
        cr_expect(strstr(res.err, where) && strstr(res.err, cases[i].what),
                  "%s: expected '%s ... %s' in: %s", cases[i].name, where, cases[i].what, res.err);
        cr_expect_eq(strchr(res.err, '\n'), res.err + strlen(res.err) - 1, "one line: %s", res.err);
        spawn_result_free(&res);
        free(where);
        free(text);
        free(path);
    }
    /* A huge line is refused at the record limit. */
    char *path = xasprintf("%s/huge-line.csv", rec.dir);
    size_t n = 1 << 20;
    char *text = xmalloc(n + 1);
    int head = snprintf(text, n, "time,P (W)\n%s,", t0);
    memset(text + head, '7', n - (size_t)head);
    write_text(path, text, n);
    struct spawn_result res;
    cr_expect_eq(ptprof(&res, (const char *[]){"convert", rec.path, "--join-csv", path, "-o",
                                               "/dev/null", NULL}),
                 2);
    cr_expect(strstr(res.err, ":2: a record longer than"), "%s", res.err);
    spawn_result_free(&res);
    free(text);
    free(path);

    /* Options: usage errors, exit 1. */
    static const char *const bad[][4] = {
        {"--csv-column", "P", NULL},
        {"--join-csv", "x.csv", "--voltage", "-5"},
        {"--join-csv", "x.csv", "--csv-interpolate", "cubic"},
        {"--join-csv", "x.csv", "--csv-offset", "yesterday"},
        {"--join-csv", "x.csv", "--csv-column", "P:furlong"},
        {"--join-csv", "x.csv", "--csv-time", "t:fortnights"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *args[] = {"convert", rec.path,  "-o",      "/dev/null", bad[i][0],
                              bad[i][1], bad[i][2], bad[i][3], NULL};
        cr_expect_eq(ptprof(&res, args), 1, "%s %s %s %s: %s", bad[i][0], bad[i][1],
                     bad[i][2] ? bad[i][2] : "", bad[i][3] ? bad[i][3] : "", res.err);
        spawn_result_free(&res);
    }
    free(t0);
    free(t1);
    recording_free(&rec);
}
