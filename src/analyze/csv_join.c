/*
 * csv_join.c - see csv_join.h: a device's readings as channels of a
 * profile.
 *
 * Each series becomes a signal over time (step or linear between its
 * readings).  A sample's mean over its interval is found by binary search
 * and summed over the readings inside it; with more than LOCAL_SUM_MAX of
 * them it is a difference of running integrals precomputed at every
 * reading, so the join costs O((readings + samples) log readings) in any
 * case.  Times are seconds from the CSV's first reading, where a double
 * still resolves nanoseconds over months.
 */
#include "analyze/csv_join.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/log.h"
#include "util/xalloc.h"

/* Readings inside one sample interval summed one by one, at most. */
#define LOCAL_SUM_MAX 4096

struct signal {
    size_t n;
    double *x, *v, *F; /* time (s from the base), value, integral from x[0] */
    bool linear;
    bool counter; /* an energy counter: interpolated, never averaged */
};

/* A new channel before it is added: its values per row, and what it is. */
struct source {
    char *name;
    const char *unit;
    enum pmu_kind kind;
    double *values; /* per row; owned when DERIVED */
    bool derived;
};

static void signal_build(struct signal *s, const struct csv_timeline *t, const double *values,
                         bool linear, bool counter)
{
    memset(s, 0, sizeof(*s));
    s->linear = linear;
    s->counter = counter;
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++)
        n += !isnan(values[i]);
    if (!n)
        return;
    s->x = xmalloc(n * sizeof(double));
    s->v = xmalloc(n * sizeof(double));
    s->F = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < t->nrows; i++) {
        if (isnan(values[i]))
            continue;
        /* Times never go back, so the difference fits 64 bits unsigned. */
        s->x[s->n] = (double)((uint64_t)t->time_ns[i] - (uint64_t)t->time_ns[0]) / 1e9;
        s->v[s->n] = values[i];
        s->F[s->n] = 0;
        if (s->n) {
            double dx = s->x[s->n] - s->x[s->n - 1];
            double mean = linear ? (s->v[s->n] + s->v[s->n - 1]) / 2 : s->v[s->n];
            s->F[s->n] = s->F[s->n - 1] + mean * dx;
        }
        s->n++;
    }
}

static void signal_free(struct signal *s)
{
    free(s->x);
    free(s->v);
    free(s->F);
}

/* The first reading at or after X (S->n if none). */
static size_t lower_bound(const struct signal *s, double x)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->x[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool inside(const struct signal *s, double x)
{
    return s->n && x >= s->x[0] && x <= s->x[s->n - 1];
}

/* The straight line between readings K-1 and K at X. */
static double lerp(const struct signal *s, size_t k, double x)
{
    double dx = s->x[k] - s->x[k - 1];
    if (dx <= 0)
        return s->v[k];
    return s->v[k - 1] + (s->v[k] - s->v[k - 1]) * ((x - s->x[k - 1]) / dx);
}

/* The signal's value at X (inside its readings). */
static double point(const struct signal *s, double x)
{
    size_t k = lower_bound(s, x);
    if (k == 0 || s->x[k] == x || !(s->linear || s->counter))
        return s->v[k];
    return lerp(s, k, x);
}

/* Its integral from the first reading to X (inside its readings). */
static double integral(const struct signal *s, double x)
{
    size_t k = lower_bound(s, x);
    if (k == 0 || s->x[k] == x)
        return s->F[k];
    double dx = x - s->x[k - 1];
    if (s->linear)
        return s->F[k - 1] + dx * (s->v[k - 1] + lerp(s, k, x)) / 2;
    return s->F[k - 1] + dx * s->v[k];
}

/* Its integral over [LO, HI] inside segment K (from reading K-1 to K). */
static double segment(const struct signal *s, size_t k, double lo, double hi)
{
    if (s->linear)
        return (hi - lo) * (lerp(s, k, lo) + lerp(s, k, hi)) / 2;
    return (hi - lo) * s->v[k];
}

/* Its mean over [A, B] (A < B, both inside).  Summed segment by segment
 * when few readings fall inside, so a constant stays that constant; a
 * difference of running integrals otherwise, which bounds the work per
 * sample whatever order the samples come in. */
static double mean(const struct signal *s, double a, double b)
{
    size_t ka = lower_bound(s, a), kb = lower_bound(s, b);
    if (kb - ka > LOCAL_SUM_MAX)
        return (integral(s, b) - integral(s, a)) / (b - a);
    if (ka == kb)
        return segment(s, kb, a, b) / (b - a);
    double e = ka ? segment(s, ka, a, s->x[ka]) : 0;
    for (size_t k = ka + 1; k < kb; k++)
        e += segment(s, k, s->x[k - 1], s->x[k]);
    e += segment(s, kb, s->x[kb - 1], b);
    return e / (b - a);
}

/* Sample I's value: see csv_join.h.  X holds the samples' times on the
 * signal's axis, NaN for times it cannot express. */
static double sample_value(const struct signal *s, const double *x, size_t i)
{
    if (!inside(s, x[i]))
        return NAN;
    if (s->counter || i == 0 || !(x[i - 1] < x[i]))
        return point(s, x[i]);
    if (!inside(s, x[i - 1]))
        return NAN;
    return mean(s, x[i - 1], x[i]);
}

int csv_parse_offset(const char *s, int64_t profile_start_ns, int64_t *out)
{
    const char *why;
    bool datetime;
    int64_t d;
    if (strncasecmp(s, "profile", 7) == 0) {
        if (s[7] == '\0') {
            *out = profile_start_ns;
            return 0;
        }
        if ((s[7] != '+' && s[7] != '-') ||
            csv_parse_time(s + 7 + (s[7] == '+'), 1000000000, &datetime, &d, &why) != 0 || datetime)
            return -1;
        return __builtin_add_overflow(profile_start_ns, d, out) ? -1 : 0;
    }
    return csv_parse_time(s, 1000000000, &datetime, out, &why);
}

/* The profile's start: META start_time, else its first sample. */
static int64_t profile_start(const struct profile *p)
{
    const char *st = profile_meta(p, "start_time");
    if (st) {
        char *end;
        unsigned long long v = strtoull(st, &end, 10);
        if (*st && *end == '\0' && v <= INT64_MAX)
            return (int64_t)v;
    }
    return p->nsamples && p->samples[0].time_ns <= INT64_MAX ? (int64_t)p->samples[0].time_ns : 0;
}

/* NS as "2024-03-05T14:22:01.123Z". */
static const char *iso(int64_t ns, char *buf, size_t size)
{
    time_t secs = (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
    long ms = (long)(((ns % 1000000000) + 1000000000) % 1000000000 / 1000000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, size, "%" PRId64 " ns", ns);
        return buf;
    }
    char day[40];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03ldZ", day, ms);
    return buf;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool has_channel(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < p->nchannels; i++)
        if (strcmp(p->channels[i].name, name) == 0)
            return true;
    return false;
}

/* The series and derived power channels the join adds, or -1. */
static int choose_sources(const char *name, const struct csv_timeline *t,
                          const struct csv_join_options *o, struct source *src, size_t *nsrc)
{
    size_t power = t->nseries, voltage = t->nseries, nvoltage = 0, ncurrent = 0;
    for (size_t i = 0; i < t->nseries; i++) {
        const struct csv_series *s = &t->series[i];
        src[(*nsrc)++] = (struct source){xstrdup(s->name), s->unit, s->kind, s->values, false};
        if (s->kind == PMU_KIND_POWER && power == t->nseries)
            power = i;
        if (s->kind == PMU_KIND_VOLTAGE)
            voltage = i, nvoltage++;
        ncurrent += s->kind == PMU_KIND_CURRENT;
    }
    if (o->voltage > 0 && power < t->nseries) {
        pt_err("%s: a voltage is given, but column '%s' already measures power", name,
               t->series[power].label);
        return -1;
    }
    if (o->voltage > 0 && !ncurrent) {
        pt_err("%s: a voltage is given, but no column measures current (columns are read as "
               "current from a unit such as mA, or a name such as \"Current\" or \"I\")",
               name);
        return -1;
    }
    bool derive = o->voltage > 0 || (power == t->nseries && ncurrent && nvoltage == 1);
    for (size_t i = 0; derive && i < t->nseries; i++) {
        const struct csv_series *s = &t->series[i];
        if (s->kind != PMU_KIND_CURRENT)
            continue;
        double *v = xmalloc(t->nrows * sizeof(double));
        for (size_t r = 0; r < t->nrows; r++)
            v[r] = s->values[r] * (o->voltage > 0 ? o->voltage : t->series[voltage].values[r]);
        char *n = o->voltage > 0 ? xasprintf("%s x %g V", s->name, o->voltage)
                                 : xasprintf("%s x %s", s->name, t->series[voltage].name);
        src[(*nsrc)++] = (struct source){n, "W", PMU_KIND_POWER, v, true};
    }
    return 0;
}

static void describe_existing(const struct profile *p, const char *name)
{
    char list[256] = "";
    size_t o = 0, n = 0;
    for (size_t i = 0; i < p->nchannels; i++) {
        if (p->channels[i].kind != PMU_KIND_POWER && p->channels[i].kind != PMU_KIND_ENERGY)
            continue;
        int w = snprintf(list + o, sizeof(list) - o, "%s%s", n++ ? ", " : "", p->channels[i].name);
        if (w > 0 && (size_t)w < sizeof(list) - o)
            o += (size_t)w;
    }
    if (n)
        pt_warn("%s: the profile already has power or energy channels (%s): reports add the "
                "CSV's to them unless one channel is chosen (--channel)",
                name, list);
}

int csv_join(const char *name, const struct csv_timeline *t, const struct csv_join_options *o,
             struct profile *p, struct csv_join_result *r)
{
    char b1[48], b2[48], b3[48], b4[48];
    if (!p->nsamples) {
        pt_err("%s: the profile has no samples to join readings to", name);
        return -1;
    }
    if (!t->nrows || !t->nseries) {
        pt_err("%s: no readings to join", name);
        return -1;
    }
    int64_t start = profile_start(p), offset = 0;
    if (o->offset && csv_parse_offset(o->offset, start, &offset) != 0) {
        pt_err("%s: offset '%s' is not seconds, an ISO 8601 date-time or profile[+-S]", name,
               o->offset);
        return -1;
    }
    if (!t->absolute && !o->offset) {
        pt_err("%s: times in column '%s' are relative (the first is %.9g s after 1970): give "
               "the device's start as an offset (epoch seconds, a date-time, or 'profile')",
               name, t->time_label, (double)t->time_ns[0] / 1e9);
        return -1;
    }
    int64_t base, last;
    if (__builtin_add_overflow(t->time_ns[0], offset, &base) ||
        __builtin_add_overflow(t->time_ns[t->nrows - 1], offset, &last)) {
        pt_err("%s: the offset puts the readings out of range", name);
        return -1;
    }

    struct source src[2 * CSV_TIMELINE_MAX_SERIES];
    size_t nsrc = 0;
    int rc = -1;
    double *x = xmalloc(p->nsamples * sizeof(double));
    double *values = NULL;
    if (choose_sources(name, t, o, src, &nsrc) != 0)
        goto out;
    for (size_t i = 0; i < p->nsamples; i++) {
        uint64_t ns = p->samples[i].time_ns;
        int64_t d;
        bool ok = ns <= INT64_MAX && !__builtin_sub_overflow((int64_t)ns, base, &d);
        x[i] = ok ? (double)d / 1e9 : NAN;
    }
    values = xcalloc(nsrc * p->nsamples, sizeof(double));
    size_t covered_samples = 0;
    for (size_t c = 0; c < nsrc; c++) {
        struct signal s;
        signal_build(&s, t, src[c].values, o->interpolation == CSV_LINEAR,
                     src[c].kind == PMU_KIND_ENERGY);
        if (!s.n)
            pt_warn("%s: column '%s' has no readings", name, src[c].name);
        size_t got = 0;
        for (size_t i = 0; i < p->nsamples; i++) {
            double v = sample_value(&s, x, i);
            values[c * p->nsamples + i] = v;
            got += !isnan(v);
        }
        if (got > covered_samples)
            covered_samples = got;
        signal_free(&s);
    }

    uint64_t first = p->samples[0].time_ns, end = p->samples[p->nsamples - 1].time_ns;
    int64_t pf = first <= INT64_MAX ? (int64_t)first : INT64_MAX;
    int64_t pl = end <= INT64_MAX ? (int64_t)end : INT64_MAX;
    if (!covered_samples) {
        pt_err("%s: the readings (%s to %s) cover none of the profile's samples (%s to %s); "
               "check the offset and the time zone",
               name, iso(base, b1, sizeof(b1)), iso(last, b2, sizeof(b2)), iso(pf, b3, sizeof(b3)),
               iso(pl, b4, sizeof(b4)));
        goto out;
    }
    double span = pl > pf ? (double)(pl - pf) / 1e9 : 0;
    double lo = (double)((base > pf ? base : pf) - pf) / 1e9;
    double hi = (double)((last < pl ? last : pl) - pf) / 1e9;
    double covered = span > 0 ? (hi > lo ? (hi - lo) / span : 0) : 1;
    if (covered_samples < p->nsamples)
        pt_warn("%s: the readings cover %.1f%% of the profile's %.3f s (from +%.3f s to +%.3f "
                "s); %zu of its %zu samples have no value",
                name, 100 * covered, span, lo, hi, p->nsamples - covered_samples, p->nsamples);
    describe_existing(p, name);

    /* Commit: nothing above changed P. */
    size_t old = p->nchannels;
    p->channels = xrealloc(p->channels, (old + nsrc) * sizeof(*p->channels));
    for (size_t c = 0; c < nsrc; c++) {
        struct prof_channel *ch = &p->channels[old + c];
        ch->name = has_channel(p, src[c].name) ? xasprintf("%s (%s)", src[c].name, base_name(name))
                                               : xstrdup(src[c].name);
        ch->unit = xstrdup(src[c].unit);
        ch->kind = src[c].kind;
        p->nchannels = old + c + 1;
    }
    for (size_t i = 0; i < p->nsamples; i++) {
        struct prof_sample *s = &p->samples[i];
        double *v = xcalloc(old + nsrc, sizeof(double));
        for (size_t c = 0; c < old; c++)
            v[c] = s->values ? s->values[c] : NAN;
        for (size_t c = 0; c < nsrc; c++)
            v[old + c] = values[c * p->nsamples + i];
        free(s->values);
        s->values = v;
    }
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta].key = xstrdup("csv_join");
    p->meta[p->nmeta].value = xasprintf("%s offset %.9f s", base_name(name), (double)offset / 1e9);
    p->nmeta++;
    if (r)
        *r = (struct csv_join_result){nsrc, covered_samples, covered, offset};
    rc = 0;
out:
    for (size_t c = 0; c < nsrc; c++) {
        free(src[c].name);
        if (src[c].derived)
            free(src[c].values);
    }
    free(values);
    free(x);
    return rc;
}
