/* timeline.c - see timeline.h */
#include "analyze/timeline.h"
#include "analyze/metrics.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_KEY UINT32_MAX
/* A run this long always covers a whole column, which it then wins. */
#define PHASE_MAX_COLUMNS 2.0

/* One column of a lane once the samples have passed it. */
struct cell {
    uint32_t key;  /* strtab id of the winner, NO_KEY: not sampled there */
    int32_t phase; /* index of the short phase given this column, else -1 */
    float dom;     /* seconds the winner holds in the column */
    float covered; /* seconds the thread was sampled in the column */
};

struct acc {
    uint32_t key;
    double s;
};

/* A run of consecutive samples of one thread in one key. */
struct run {
    uint32_t key;
    double t0, t1;
};

struct lane_state {
    bool kept;
    bool seen;
    char *label;
    double cpu_s, wall_s;
    struct cell *cells; /* columns entries once the thread shows up in view */
    int64_t open;       /* the column being accumulated, -1: none */
    struct acc *acc;
    size_t nacc, acc_cap;
    bool in_run;
    size_t run_last; /* sample index of the run's last sample */
    struct run run;
    struct run *phases; /* candidates: runs shorter than PHASE_MAX_COLUMNS */
    size_t nphases, phases_cap;
};

struct key_total {
    double wall_s, cpu_s;
    bool seen;
};

struct series_acc {
    double *min, *max, *wsum, *w, *psum;
    uint32_t *pn;
};

struct timeline_builder {
    const struct profile *p;
    const struct strtab *keys;
    struct timeline_options o;
    char *key_names;
    uint64_t origin_ns;
    double *t;    /* each sample's time, seconds from the origin, never going back */
    double end_s; /* the last sample */
    double t0, t1, col_s;
    size_t view_samples;
    struct lane_state *lanes; /* by slot */
    size_t nlanes;
    size_t threads_in_view;
    struct key_total *totals; /* by key id */
    size_t ntotals;
    struct timeline_series *series;
    size_t nseries;
};

/* --- time ------------------------------------------------------------------ */

static uint64_t profile_origin(const struct profile *p)
{
    if (p->nsamples == 0)
        return 0;
    uint64_t first = p->samples[0].time_ns, last = first;
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].time_ns > last)
            last = p->samples[i].time_ns;
    const char *s = profile_meta(p, "start_time");
    if (s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end != s && *end == '\0' && v <= first && first - v <= last - first + 1000000000ull)
            return v;
    }
    return first;
}

/* The start of sample I's interval. */
static double interval_start(const struct timeline_builder *b, size_t i)
{
    return i > 0 ? b->t[i - 1] : 0;
}

/* [A, B] clipped to the view; false when nothing of it is left. */
static bool clip(const struct timeline_builder *b, double *a, double *e)
{
    if (*a < b->t0)
        *a = b->t0;
    if (*e > b->t1)
        *e = b->t1;
    return *a < *e;
}

/* Does sample I's interval meet the view?  [*S, *E] is the part in it
 * (S == E for a sample of no duration, counted at its time). */
static bool sample_in_view(const struct timeline_builder *b, size_t i, double *s, double *e)
{
    *s = interval_start(b, i);
    *e = b->t[i];
    if (*s >= *e)
        return *e >= b->t0 && *e <= b->t1;
    return clip(b, s, e);
}

static size_t column_of(const struct timeline_builder *b, double t)
{
    double x = floor((t - b->t0) / b->col_s);
    if (!(x >= 0))
        return 0;
    if (x >= b->o.columns)
        return b->o.columns - 1;
    return (size_t)x;
}

/* --- channels ------------------------------------------------------------- */

static void series_acc_init(struct series_acc *a, unsigned n)
{
    a->min = xmalloc(n * sizeof(double));
    a->max = xmalloc(n * sizeof(double));
    a->wsum = xcalloc(n, sizeof(double));
    a->w = xcalloc(n, sizeof(double));
    a->psum = xcalloc(n, sizeof(double));
    a->pn = xcalloc(n, sizeof(uint32_t));
    for (unsigned i = 0; i < n; i++) {
        a->min[i] = INFINITY;
        a->max[i] = -INFINITY;
    }
}

static void series_acc_free(struct series_acc *a)
{
    free(a->min);
    free(a->max);
    free(a->wsum);
    free(a->w);
    free(a->psum);
    free(a->pn);
}

static void series_point(struct series_acc *a, size_t c, double v)
{
    if (v < a->min[c])
        a->min[c] = v;
    if (v > a->max[c])
        a->max[c] = v;
}

/* Value V held over [A, E]. */
static void series_add(const struct timeline_builder *b, struct series_acc *a, double s, double e,
                       double v)
{
    if (!isfinite(v))
        return;
    if (e <= s) { /* a reading of no duration counts at its time */
        if (e < b->t0 || e > b->t1)
            return;
        size_t c = column_of(b, e);
        series_point(a, c, v);
        a->psum[c] += v;
        a->pn[c]++;
        return;
    }
    if (!clip(b, &s, &e))
        return;
    for (size_t c = column_of(b, s); c < b->o.columns; c++) {
        double cs = b->t0 + (double)c * b->col_s, ce = cs + b->col_s;
        if (cs >= e)
            break;
        double w = (e < ce ? e : ce) - (s > cs ? s : cs);
        series_point(a, c, v);
        if (w > 0) {
            a->wsum[c] += v * w;
            a->w[c] += w;
        } else {
            a->psum[c] += v;
            a->pn[c]++;
        }
    }
}

static void series_finish(const struct timeline_builder *b, struct series_acc *a,
                          struct timeline_series *s)
{
    unsigned n = b->o.columns;
    s->px = xcalloc(n, sizeof(*s->px));
    s->min = s->max = s->mean = NAN;
    double wsum = 0, w = 0, psum = 0, pn = 0;
    for (unsigned c = 0; c < n; c++) {
        struct timeline_point *pt = &s->px[c];
        if (a->min[c] > a->max[c]) {
            pt->min = pt->max = pt->mean = NAN;
            continue;
        }
        pt->min = a->min[c];
        pt->max = a->max[c];
        pt->mean = a->w[c] > 0 ? a->wsum[c] / a->w[c] : a->psum[c] / a->pn[c];
        if (!(s->min <= pt->min))
            s->min = pt->min;
        if (!(s->max >= pt->max))
            s->max = pt->max;
        wsum += a->wsum[c];
        w += a->w[c];
        psum += a->psum[c];
        pn += a->pn[c];
    }
    if (w > 0)
        s->mean = wsum / w;
    else if (pn > 0)
        s->mean = psum / pn;
}

static const char *quantity_of(enum pmu_kind k)
{
    switch (k) {
    case PMU_KIND_POWER:
    case PMU_KIND_ENERGY:
        return "power";
    case PMU_KIND_CURRENT:
        return "current";
    case PMU_KIND_VOLTAGE:
        return "voltage";
    default:
        return "custom";
    }
}

/* The unit of an energy counter's rate: J -> W, mJ -> mW, anything else per second. */
static char *rate_unit(const char *unit)
{
    size_t n = strlen(unit);
    if (n == 0)
        return xstrdup("");
    if (unit[n - 1] == 'J' && n <= 3)
        return xasprintf("%.*sW", (int)(n - 1), unit);
    return xasprintf("%s/s", unit);
}

static void add_series(struct timeline_builder *b, const char *name, enum pmu_kind kind,
                       const char *unit, bool derived, struct series_acc *a)
{
    b->series = xrealloc(b->series, (b->nseries + 1) * sizeof(*b->series));
    struct timeline_series *s = &b->series[b->nseries++];
    memset(s, 0, sizeof(*s));
    s->name = xstrdup(name);
    s->quantity = xstrdup(quantity_of(kind));
    s->unit = kind == PMU_KIND_ENERGY ? rate_unit(unit) : xstrdup(unit);
    s->derived = derived || kind == PMU_KIND_ENERGY;
    s->source_kind = kind;
    series_finish(b, a, s);
}

static void build_channel(struct timeline_builder *b, size_t ch)
{
    const struct profile *p = b->p;
    const struct prof_channel *c = &p->channels[ch];
    struct series_acc a;
    series_acc_init(&a, b->o.columns);
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        if (!s->values)
            continue;
        double start = interval_start(b, i), v = s->values[ch];
        if (c->kind == PMU_KIND_ENERGY) {
            if (i == 0 || !p->samples[i - 1].values || b->t[i] <= start)
                continue;
            double step = v - p->samples[i - 1].values[ch];
            v = step >= 0 ? step / (b->t[i] - start) : NAN;
        }
        series_add(b, &a, start, b->t[i], v);
    }
    add_series(b, c->name, c->kind, c->unit, false, &a);
    series_acc_free(&a);
}

/* metrics.h's choice: current x voltage only when nothing measures power or energy. */
static void build_current_voltage(struct timeline_builder *b)
{
    const struct profile *p = b->p;
    size_t cur = p->nchannels, volt = p->nchannels;
    for (size_t i = p->nchannels; i-- > 0;) {
        enum pmu_kind k = p->channels[i].kind;
        if (k == PMU_KIND_POWER || k == PMU_KIND_ENERGY)
            return;
        if (k == PMU_KIND_CURRENT)
            cur = i;
        if (k == PMU_KIND_VOLTAGE)
            volt = i;
    }
    if (cur == p->nchannels || volt == p->nchannels)
        return;
    struct series_acc a;
    series_acc_init(&a, b->o.columns);
    for (size_t i = 0; i < p->nsamples; i++) {
        const double *v = p->samples[i].values;
        if (v)
            series_add(b, &a, interval_start(b, i), b->t[i], v[cur] * v[volt]);
    }
    char *name = xasprintf("%s x %s", p->channels[cur].name, p->channels[volt].name);
    add_series(b, name, PMU_KIND_POWER, "W", true, &a);
    free(name);
    series_acc_free(&a);
}

/* --- lanes ------------------------------------------------------------------ */

/* Which threads get a lane: every thread with time in the view, or the
 * MAX_LANES with the most CPU time there (then wall time), found with the
 * walk's own slot numbering and CPU deltas (metrics.h) before the walk. */
static void choose_lanes(struct timeline_builder *b)
{
    const struct profile *p = b->p;
    char *error = NULL;
    struct metrics *m = metrics_new(p, NULL, &error);
    free(error);
    if (!m)
        return;
    struct thread_metrics *tm = NULL;
    size_t tm_cap = 0;
    double *cpu = NULL, *wall = NULL;
    bool *seen = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        tm = xgrow(tm, &tm_cap, s->nthreads + 1, sizeof(*tm));
        double u, idle;
        metrics_sample(m, i, tm, &u, &idle);
        double a, e, full = b->t[i] - interval_start(b, i);
        if (!sample_in_view(b, i, &a, &e))
            continue;
        double frac = full > 0 ? (e - a) / full : 1;
        for (uint32_t j = 0; j < s->nthreads; j++) {
            size_t slot = tm[j].slot, old = cap;
            if (slot >= cap) {
                cap = slot + 64;
                cpu = xrealloc(cpu, cap * sizeof(*cpu));
                wall = xrealloc(wall, cap * sizeof(*wall));
                seen = xrealloc(seen, cap * sizeof(*seen));
                for (size_t k = old; k < cap; k++) {
                    cpu[k] = wall[k] = 0;
                    seen[k] = false;
                }
            }
            cpu[slot] += tm[j].q[Q_CPU] * frac;
            wall[slot] += e - a;
            seen[slot] = true;
        }
    }
    b->nlanes = metrics_nslots(m);
    b->lanes = xcalloc(b->nlanes + 1, sizeof(*b->lanes));
    size_t *order = xcalloc(b->nlanes + 1, sizeof(*order));
    size_t n = 0;
    for (size_t s = 0; s < b->nlanes && s < cap; s++)
        if (seen[s])
            order[n++] = s;
    b->threads_in_view = n;
    /* Insertion of the busiest first: a partial selection, MAX_LANES is small. */
    size_t keep = b->o.max_lanes && b->o.max_lanes < n ? b->o.max_lanes : n;
    for (size_t k = 0; k < keep; k++) {
        size_t best = k;
        for (size_t j = k + 1; j < n; j++) {
            size_t x = order[j], y = order[best];
            if (cpu[x] > cpu[y] || (cpu[x] == cpu[y] && wall[x] > wall[y]))
                best = j;
        }
        size_t tmp = order[k];
        order[k] = order[best];
        order[best] = tmp;
        b->lanes[order[k]].kept = true;
    }
    free(order);
    free(cpu);
    free(wall);
    free(seen);
    free(tm);
    metrics_free(m);
}

static void close_column(struct timeline_builder *b, struct lane_state *l)
{
    if (l->open < 0)
        return;
    struct cell *c = &l->cells[l->open];
    size_t best = 0;
    double covered = 0;
    for (size_t i = 0; i < l->nacc; i++) {
        covered += l->acc[i].s;
        if (l->acc[i].s > l->acc[best].s)
            best = i;
    }
    if (l->nacc) {
        c->key = l->acc[best].key;
        c->dom = (float)l->acc[best].s;
        c->covered = (float)covered;
    }
    l->open = -1;
    l->nacc = 0;
    (void)b;
}

/* The thread was in KEY over [S, E] (already clipped to the view). */
static void lane_add(struct timeline_builder *b, struct lane_state *l, uint32_t key, double s,
                     double e)
{
    if (!l->cells) {
        l->cells = xmalloc(b->o.columns * sizeof(*l->cells));
        for (unsigned c = 0; c < b->o.columns; c++)
            l->cells[c] = (struct cell){NO_KEY, -1, 0, 0};
    }
    for (size_t c = column_of(b, s); c < b->o.columns; c++) {
        double cs = b->t0 + (double)c * b->col_s, ce = cs + b->col_s;
        if (cs >= e)
            break;
        double w = (e < ce ? e : ce) - (s > cs ? s : cs);
        if (w <= 0)
            continue;
        /* Times never go back, so neither do columns; rounding at a
         * boundary may only make one look earlier. */
        if ((int64_t)c < l->open)
            c = (size_t)l->open;
        if ((int64_t)c != l->open) {
            close_column(b, l);
            l->open = (int64_t)c;
        }
        size_t i = 0;
        while (i < l->nacc && l->acc[i].key != key)
            i++;
        if (i == l->nacc) {
            l->acc = xgrow(l->acc, &l->acc_cap, l->nacc + 1, sizeof(*l->acc));
            l->acc[l->nacc++] = (struct acc){key, 0};
        }
        l->acc[i].s += w;
    }
}

static void close_run(struct timeline_builder *b, struct lane_state *l)
{
    if (!l->in_run)
        return;
    l->in_run = false;
    double s = l->run.t0, e = l->run.t1;
    if (!clip(b, &s, &e))
        return;
    double cols = (e - s) / b->col_s;
    if (cols >= TIMELINE_PHASE_MIN_COLUMNS && cols < PHASE_MAX_COLUMNS) {
        l->phases = xgrow(l->phases, &l->phases_cap, l->nphases + 1, sizeof(*l->phases));
        l->phases[l->nphases++] = (struct run){l->run.key, s, e};
    }
}

static struct key_total *total_of(struct timeline_builder *b, uint32_t key)
{
    if (key >= b->ntotals) {
        size_t n = b->ntotals ? b->ntotals : 256;
        while (n <= key)
            n *= 2;
        b->totals = xrealloc(b->totals, n * sizeof(*b->totals));
        memset(b->totals + b->ntotals, 0, (n - b->ntotals) * sizeof(*b->totals));
        b->ntotals = n;
    }
    return &b->totals[key];
}

static void on_sample(void *ctx, const struct walk_event *ev)
{
    struct timeline_builder *b = ctx;
    if (ev->slot >= b->nlanes || ev->sample >= b->p->nsamples)
        return;
    struct lane_state *l = &b->lanes[ev->slot];
    uint32_t key = ev->path->frames[0].key;
    double s, e, full = b->t[ev->sample] - interval_start(b, ev->sample);
    if (!sample_in_view(b, ev->sample, &s, &e))
        return;
    if (!l->seen) {
        l->seen = true;
        l->label = xstrdup(ev->thread ? ev->thread : "");
    }
    double span = e - s;
    double cpu = ev->q[Q_CPU] * (full > 0 ? span / full : 1);
    struct key_total *kt = total_of(b, key);
    kt->seen = true;
    kt->wall_s += span;
    kt->cpu_s += cpu;
    l->wall_s += span;
    l->cpu_s += cpu;
    if (!l->kept)
        return;
    if (l->in_run && l->run.key == key && l->run_last + 1 == ev->sample) {
        l->run.t1 = b->t[ev->sample];
    } else {
        close_run(b, l);
        l->in_run = true;
        l->run = (struct run){key, interval_start(b, ev->sample), b->t[ev->sample]};
    }
    l->run_last = ev->sample;
    if (span > 0)
        lane_add(b, l, key, s, e);
}

/* --- building ----------------------------------------------------------------- */

struct timeline_builder *timeline_builder_new(const struct profile *p, const struct strtab *keys,
                                              const struct key_spec *spec,
                                              const struct timeline_options *o, char **error)
{
    *error = NULL;
    struct timeline_builder *b = xcalloc(1, sizeof(*b));
    b->p = p;
    b->keys = keys;
    b->o = *o;
    if (b->o.columns == 0)
        b->o.columns = 1;
    b->key_names = key_spec_header(spec);
    b->origin_ns = profile_origin(p);
    b->t = xcalloc(p->nsamples + 1, sizeof(*b->t));
    double last = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        uint64_t ns = p->samples[i].time_ns;
        double t = ns > b->origin_ns ? (double)(ns - b->origin_ns) / 1e9 : 0;
        last = t > last ? t : last;
        b->t[i] = last;
    }
    b->end_s = last;
    double start = o->start_s > 0 ? o->start_s : 0;
    double end = o->end_s >= 0 && o->end_s < last ? o->end_s : last;
    if (o->start_s > 0 && start >= last) {
        *error = xasprintf("--start %g s is past the profile's end (%.6g s)", o->start_s, last);
        timeline_finish(b, NULL);
        return NULL;
    }
    if (o->end_s >= 0 && o->end_s <= start) {
        *error = xasprintf("--end %g s is not after the start (%g s)", o->end_s, start);
        timeline_finish(b, NULL);
        return NULL;
    }
    if (end <= start) /* a profile of one instant: a millisecond around it */
        end = start + 1e-3;
    b->t0 = start;
    b->t1 = end;
    b->col_s = (end - start) / b->o.columns;
    for (size_t i = 0; i < p->nsamples; i++) {
        double s, e;
        b->view_samples += sample_in_view(b, i, &s, &e);
    }
    for (size_t ch = 0; ch < p->nchannels; ch++)
        build_channel(b, ch);
    build_current_voltage(b);
    choose_lanes(b);
    return b;
}

struct walk_visitor timeline_visitor(struct timeline_builder *b)
{
    return (struct walk_visitor){on_sample, NULL, b, NULL};
}

static int phase_cmp(const void *x, const void *y)
{
    const struct run *a = x, *b = y;
    double la = a->t1 - a->t0, lb = b->t1 - b->t0;
    if (la != lb)
        return la > lb ? -1 : 1;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* Give short phases that won no column one column each (timeline.h). */
static void rescue_phases(struct timeline_builder *b, struct lane_state *l)
{
    unsigned n = b->o.columns;
    if (l->nphases > 1)
        qsort(l->phases, l->nphases, sizeof(*l->phases), phase_cmp);
    for (size_t k = 0; k < l->nphases; k++) {
        const struct run *r = &l->phases[k];
        size_t c0 = column_of(b, r->t0), c1 = column_of(b, r->t1);
        if (c1 > c0 && b->t0 + (double)c1 * b->col_s >= r->t1)
            c1--; /* ends on the boundary: the next column is not touched */
        bool shown = false;
        for (size_t c = c0; c <= c1; c++)
            shown |= l->cells[c].key == r->key;
        if (shown)
            continue;
        size_t best = n;
        double best_s = 0;
        for (size_t c = c0; c <= c1; c++) {
            const struct cell *x = &l->cells[c];
            if (x->phase >= 0 || x->key == NO_KEY)
                continue;
            bool left = c > 0 && l->cells[c - 1].key == x->key && l->cells[c - 1].phase < 0;
            bool right = c + 1 < n && l->cells[c + 1].key == x->key && l->cells[c + 1].phase < 0;
            double cs = b->t0 + (double)c * b->col_s, ce = cs + b->col_s;
            double s = (r->t1 < ce ? r->t1 : ce) - (r->t0 > cs ? r->t0 : cs);
            if ((left || right) && s > best_s) {
                best = c;
                best_s = s;
            }
        }
        if (best < n) {
            l->cells[best].key = r->key;
            l->cells[best].dom = (float)best_s;
            l->cells[best].phase = (int32_t)k;
        }
    }
}

/* The most thread time first, then CPU time, then by identity. */
static int key_cmp(const void *x, const void *y, void *ctx)
{
    const struct timeline_builder *b = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const struct key_total *a = &b->totals[i], *c = &b->totals[j];
    if (a->wall_s != c->wall_s)
        return a->wall_s > c->wall_s ? -1 : 1;
    if (a->cpu_s != c->cpu_s)
        return a->cpu_s > c->cpu_s ? -1 : 1;
    return strcmp(strtab_get(b->keys, i), strtab_get(b->keys, j));
}

/* The keys seen in the view, sorted; *INDEX maps a key id to its place. */
static void finish_keys(struct timeline_builder *b, struct timeline *t, uint32_t **index)
{
    uint32_t *ids = xcalloc(b->ntotals + 1, sizeof(*ids));
    size_t n = 0;
    for (size_t k = 0; k < b->ntotals; k++)
        if (b->totals[k].seen)
            ids[n++] = (uint32_t)k;
    qsort_r(ids, n, sizeof(*ids), key_cmp, b);
    t->keys = xcalloc(n + 1, sizeof(*t->keys));
    *index = xcalloc(b->ntotals + 1, sizeof(**index));
    for (size_t i = 0; i < n; i++) {
        struct timeline_key *x = &t->keys[t->nkeys++];
        x->id = xstrdup(strtab_get(b->keys, ids[i]));
        x->name = key_display(x->id);
        x->wall_s = b->totals[ids[i]].wall_s;
        x->cpu_s = b->totals[ids[i]].cpu_s;
        t->thread_wall_s += x->wall_s;
        (*index)[ids[i]] = (uint32_t)i;
    }
    free(ids);
}

static void finish_lane(struct timeline_builder *b, struct lane_state *l, const uint32_t *index,
                        struct timeline_lane *out)
{
    unsigned n = b->o.columns;
    out->spans = xcalloc(n + 1, sizeof(*out->spans));
    for (unsigned c = 0; c < n;) {
        const struct cell *x = &l->cells[c];
        if (x->key == NO_KEY) {
            c++;
            continue;
        }
        unsigned e = c + 1;
        double dom = x->dom, cov = x->covered;
        while (x->phase < 0 && e < n && l->cells[e].key == x->key && l->cells[e].phase < 0) {
            dom += l->cells[e].dom;
            cov += l->cells[e].covered;
            e++;
        }
        struct timeline_span *s = &out->spans[out->nspans++];
        s->x0 = c;
        s->x1 = e;
        s->key = index[x->key];
        s->phase = x->phase >= 0;
        if (s->phase) {
            s->t0_s = l->phases[x->phase].t0;
            s->t1_s = l->phases[x->phase].t1;
        } else {
            s->t0_s = b->t0 + c * b->col_s;
            s->t1_s = b->t0 + e * b->col_s;
        }
        s->share = cov > 0 ? (float)(dom / cov > 1 ? 1 : dom / cov) : 1;
        c = e;
    }
}

static char *program_of(const struct profile *p)
{
    const char *cmd = profile_meta(p, "command");
    if (cmd && *cmd)
        return xstrdup(cmd);
    for (size_t i = 0; i < p->nprocesses; i++)
        if (p->processes[i].exe && *p->processes[i].exe)
            return xstrdup(p->processes[i].exe);
    return xstrdup("unknown program");
}

struct timeline *timeline_finish(struct timeline_builder *b, const struct walk_totals *wt)
{
    struct timeline *t = NULL;
    if (wt) {
        t = xcalloc(1, sizeof(*t));
        const struct profile *p = b->p;
        t->program = program_of(p);
        t->duration_s = wt->duration_s;
        t->recorded_samples = wt->recorded_samples;
        t->samples = wt->samples;
        t->thread_samples = wt->thread_samples;
        t->requested_hz = wt->requested_hz;
        /* The rate report gives: per second of the span the samples
         * measure (of CPU time for the perf engine's). */
        t->achieved_hz = wt->rate_span_s > 0 ? wt->recorded_samples / wt->rate_span_s : 0;
        t->achieved_per_cpu_second = wt->per_cpu_second;
        t->requested_per_thread = wt->requested_per_thread;
        t->latency_per_sample_s = wt->has_latency && wt->recorded_samples > 0
                                      ? wt->latency_s / wt->recorded_samples
                                      : NAN;
        t->truncated = wt->truncated;
        t->key_names = b->key_names;
        b->key_names = NULL;
        t->origin_ns = b->origin_ns;
        t->profile_end_s = b->end_s;
        t->t0_s = b->t0;
        t->t1_s = b->t1;
        t->columns = b->o.columns;
        t->view_samples = b->view_samples;
        t->series = b->series;
        t->nseries = b->nseries;
        b->series = NULL;
        b->nseries = 0;
        t->threads_in_view = b->threads_in_view;
        uint32_t *index;
        finish_keys(b, t, &index);
        t->lanes = xcalloc(b->nlanes + 1, sizeof(*t->lanes));
        for (size_t s = 0; s < b->nlanes; s++) {
            struct lane_state *l = &b->lanes[s];
            if (!l->kept || !l->seen)
                continue;
            struct timeline_lane *out = &t->lanes[t->nlanes++];
            out->label = l->label;
            l->label = NULL;
            out->slot = (uint32_t)s;
            out->cpu_s = l->cpu_s;
            out->wall_s = l->wall_s;
            if (!l->cells)
                continue;
            close_column(b, l);
            close_run(b, l);
            rescue_phases(b, l);
            finish_lane(b, l, index, out);
        }
        free(index);
    }
    for (size_t s = 0; s < b->nlanes; s++) {
        struct lane_state *l = &b->lanes[s];
        free(l->label);
        free(l->cells);
        free(l->acc);
        free(l->phases);
    }
    for (size_t i = 0; i < b->nseries; i++) {
        free(b->series[i].name);
        free(b->series[i].quantity);
        free(b->series[i].unit);
        free(b->series[i].px);
    }
    free(b->series);
    free(b->lanes);
    free(b->totals);
    free(b->t);
    free(b->key_names);
    free(b);
    return t;
}

void timeline_free(struct timeline *t)
{
    if (!t)
        return;
    free(t->program);
    free(t->key_names);
    for (size_t i = 0; i < t->nseries; i++) {
        free(t->series[i].name);
        free(t->series[i].quantity);
        free(t->series[i].unit);
        free(t->series[i].px);
    }
    free(t->series);
    for (size_t i = 0; i < t->nlanes; i++) {
        free(t->lanes[i].label);
        free(t->lanes[i].spans);
    }
    free(t->lanes);
    for (size_t i = 0; i < t->nkeys; i++) {
        free(t->keys[i].id);
        free(t->keys[i].name);
    }
    free(t->keys);
    free(t);
}

int timeline_build(const char *path, const struct profile *p, const struct session_options *so,
                   const struct timeline_options *o, struct timeline **out)
{
    *out = NULL;
    struct strtab *keys = strtab_new(), *names = strtab_new();
    char *error = NULL;
    struct timeline_builder *b = timeline_builder_new(p, keys, &so->walk.keys, o, &error);
    if (!b) {
        pt_err("%s: %s", strcmp(path, "-") == 0 ? "<stdin>" : path, error);
        free(error);
        strtab_free(names);
        strtab_free(keys);
        return -1;
    }
    struct walk_visitor v = timeline_visitor(b);
    struct walk_totals wt;
    int rc = session_walk_profile(path, p, so, keys, names, &v, &wt);
    *out = timeline_finish(b, rc == 0 ? &wt : NULL);
    strtab_free(names);
    strtab_free(keys);
    return rc;
}
