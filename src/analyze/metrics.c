/* metrics.c - see metrics.h */
#include "analyze/metrics.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_SLOT UINT32_MAX

struct thread_state {
    uint64_t cpu_ns;
    uint64_t time_ns;
    size_t sample; /* index of its previous appearance */
};

struct tid_slot {
    uint32_t tid;
    uint32_t slot; /* NO_SLOT: empty */
};

enum energy_mode {
    ENERGY_NONE,
    ENERGY_CHANNELS, /* power and energy channels, summed */
    ENERGY_CURRENT_VOLTAGE,
};

/* Samples merged into one energy window (CPU-time sampled profiles). */
struct energy_window {
    double energy;       /* J measured over the window */
    double span;         /* s: its duration */
    double busy;         /* s: the threads' busy time inside it (their CPU time spread over
                            the span each sample covers) */
    double cpu_samples;  /* s: the CPU time of the thread samples taken in it */
    double weight;       /* J: their power at their own instant x their CPU time */
    double used;         /* the share of its span its threads were busy, at most 1 */
    double parallel;     /* span / busy where the threads were busier than the span, else 1 */
    uint64_t start, end; /* ns: the sample before its first, and its last */
};

struct metrics {
    const struct profile *p;
    struct metrics_options opts;
    enum energy_mode mode;
    size_t *channels; /* power/energy channel indexes */
    size_t nchannels;
    size_t current, voltage;
    struct thread_state *threads;
    size_t nthreads, threads_cap;
    struct tid_slot *index;
    size_t index_cap; /* a power of two, at least twice nthreads */
    size_t next_sample;
    struct metrics_totals totals;
    bool count_from_start; /* threads' CPU time starts inside the profile */
    /* Energy windows (NULL: each sample's interval is its own window). */
    struct energy_window *windows;
    size_t *window_of;   /* sample -> window */
    bool by_power;       /* windows split by power x CPU time (else by CPU time) */
    double weight_scale; /* J per J of power x CPU time, over the whole profile */
    double *values;      /* the last sample's, nthreads x nvalue_types */
    size_t values_cap;
    uint64_t *counters; /* per slot, per value type: a counter's last value */
    size_t counters_cap;
};

static bool is_energy_kind(enum pmu_kind k)
{
    return k == PMU_KIND_POWER || k == PMU_KIND_ENERGY;
}

static int choose_channels(struct metrics *m, char **error)
{
    const struct profile *p = m->p;
    m->channels = xcalloc(p->nchannels ? p->nchannels : 1, sizeof(*m->channels));
    if (m->opts.channel) {
        size_t found = p->nchannels;
        for (size_t i = 0; i < p->nchannels; i++)
            if (strcmp(p->channels[i].name, m->opts.channel) == 0)
                found = i;
        if (found == p->nchannels) {
            char *end;
            unsigned long v = strtoul(m->opts.channel, &end, 10);
            if (m->opts.channel[0] >= '0' && m->opts.channel[0] <= '9' && *end == '\0' &&
                v < p->nchannels)
                found = v;
        }
        if (found == p->nchannels) {
            *error = xasprintf("no channel '%s' in the profile (it has %zu)", m->opts.channel,
                               p->nchannels);
            return -1;
        }
        if (!is_energy_kind(p->channels[found].kind)) {
            *error = xasprintf("channel '%s' is not power or energy", p->channels[found].name);
            return -1;
        }
        m->channels[m->nchannels++] = found;
    } else {
        for (size_t i = 0; i < p->nchannels; i++)
            if (is_energy_kind(p->channels[i].kind))
                m->channels[m->nchannels++] = i;
    }
    if (m->nchannels) {
        m->mode = ENERGY_CHANNELS;
        size_t len = 1;
        for (size_t i = 0; i < m->nchannels; i++)
            len += strlen(p->channels[m->channels[i]].name) + 3;
        char *s = xmalloc(len);
        s[0] = '\0';
        for (size_t i = 0; i < m->nchannels; i++) {
            if (i)
                strcat(s, " + ");
            strcat(s, p->channels[m->channels[i]].name);
        }
        m->totals.energy_source = s;
        return 0;
    }
    m->current = m->voltage = p->nchannels;
    for (size_t i = p->nchannels; i-- > 0;) {
        if (p->channels[i].kind == PMU_KIND_CURRENT)
            m->current = i;
        if (p->channels[i].kind == PMU_KIND_VOLTAGE)
            m->voltage = i;
    }
    if (m->current < p->nchannels && m->voltage < p->nchannels) {
        m->mode = ENERGY_CURRENT_VOLTAGE;
        m->totals.energy_source =
            xasprintf("%s x %s", p->channels[m->current].name, p->channels[m->voltage].name);
    }
    return 0;
}

/* The profile's CPU times count whole sampling periods (META cpu_time
 * "sampled": the perf engine, perf.data), not a clock read at each sample. */
static bool cpu_time_sampled(const struct profile *p)
{
    const char *v = profile_meta(p, "cpu_time");
    return v && strcmp(v, "sampled") == 0;
}

static void plan_energy_windows(struct metrics *m);

struct metrics *metrics_new(const struct profile *p, const struct metrics_options *opts,
                            char **error)
{
    struct metrics *m = xcalloc(1, sizeof(*m));
    m->p = p;
    if (opts)
        m->opts = *opts;
    *error = NULL;
    /* Threads of a started program are born inside the recording; those of
     * a process we attached to carry CPU time from before, unless the CPU
     * time is what the recording sampled (the perf engine). */
    const char *attached = profile_meta(p, "attached");
    m->count_from_start = !(attached && strcmp(attached, "1") == 0) || cpu_time_sampled(p);
    if (choose_channels(m, error) != 0) {
        metrics_free(m);
        return NULL;
    }
    m->totals.has_energy = m->mode != ENERGY_NONE;
    if (p->has_totals && p->totals.samples > 0)
        m->totals.latency_per_sample_s =
            (double)p->totals.latency_ns / 1e9 / (double)p->totals.samples;
    m->index_cap = 64;
    m->index = xmalloc(m->index_cap * sizeof(*m->index));
    for (size_t i = 0; i < m->index_cap; i++)
        m->index[i].slot = NO_SLOT;
    if (m->mode != ENERGY_NONE && cpu_time_sampled(p) && p->frequency > 0)
        plan_energy_windows(m);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    free(m->windows);
    free(m->window_of);
    free(m->channels);
    free(m->threads);
    free(m->index);
    free(m->values);
    free(m->counters);
    free(m->totals.energy_source);
    free(m);
}

static size_t tid_hash(uint32_t tid, size_t cap)
{
    return (size_t)((tid * 2654435761u) & (cap - 1));
}

static void index_grow(struct metrics *m)
{
    size_t cap = m->index_cap * 2;
    struct tid_slot *idx = xmalloc(cap * sizeof(*idx));
    for (size_t i = 0; i < cap; i++)
        idx[i].slot = NO_SLOT;
    for (size_t i = 0; i < m->index_cap; i++) {
        if (m->index[i].slot == NO_SLOT)
            continue;
        size_t j = tid_hash(m->index[i].tid, cap);
        while (idx[j].slot != NO_SLOT)
            j = (j + 1) & (cap - 1);
        idx[j] = m->index[i];
    }
    free(m->index);
    m->index = idx;
    m->index_cap = cap;
}

/* The slot of TID, and whether it is new. */
static uint32_t slot_of(struct metrics *m, uint32_t tid, bool *first)
{
    size_t j = tid_hash(tid, m->index_cap);
    for (; m->index[j].slot != NO_SLOT; j = (j + 1) & (m->index_cap - 1)) {
        if (m->index[j].tid == tid) {
            *first = false;
            return m->index[j].slot;
        }
    }
    *first = true;
    m->threads = xgrow(m->threads, &m->threads_cap, m->nthreads + 1, sizeof(*m->threads));
    uint32_t slot = (uint32_t)m->nthreads++;
    m->index[j] = (struct tid_slot){tid, slot};
    if (2 * m->nthreads > m->index_cap)
        index_grow(m);
    return slot;
}

static double finite_or_zero(double v)
{
    return isfinite(v) ? v : 0.0;
}

/* The energy measured between samples I-1 and I. */
static double interval_energy(const struct metrics *m, size_t i, double dt)
{
    if (i == 0 || m->mode == ENERGY_NONE)
        return 0;
    const struct prof_sample *s = &m->p->samples[i], *prev = &m->p->samples[i - 1];
    if (!s->values || !prev->values)
        return 0;
    double e = 0;
    if (m->mode == ENERGY_CURRENT_VOLTAGE) {
        e = finite_or_zero(s->values[m->current] * s->values[m->voltage] * dt);
        return e > 0 ? e : 0;
    }
    for (size_t c = 0; c < m->nchannels; c++) {
        size_t ch = m->channels[c];
        double step;
        if (m->p->channels[ch].kind == PMU_KIND_ENERGY)
            step = finite_or_zero(s->values[ch] - prev->values[ch]);
        else
            step = finite_or_zero(s->values[ch] * dt);
        if (step > 0)
            e += step;
    }
    return e;
}

/* The time a thread sample stood for in the machine: its CPU time, and of
 * the time the profiler held it stopped (ptrace: the mean stop per sample)
 * the share it ran of the rest of its span: a thread that never sleeps is
 * busy its whole span, one that ran a quarter of it a quarter of the stop,
 * so that busy time stays in proportion to CPU time. */
static double busy_time(const struct metrics *m, const struct thread_metrics *o)
{
    double cpu = o->q[Q_CPU], held = m->totals.latency_per_sample_s;
    /* A stop that takes a good part of the span is the profiler waiting
     * for a CPU, not the thread's time: no credit then. */
    if (cpu <= 0 || held <= 0 || held > o->since / 4)
        return cpu;
    double busy = cpu * o->since / (o->since - held);
    return busy < o->since ? busy : cpu > o->since ? cpu : o->since;
}

/*
 * With windows: each thread sample is worth the power of the interval its
 * instant fell in times its CPU time, scaled down where the window's
 * threads were busier than its span (threads in parallel), and by the one
 * factor that makes the whole profile's thread samples add up to what its
 * windows attribute (each window: its energy times the share of its span
 * its threads were busy).  A window's measured mean power is not used for
 * its samples: a window may hold one sample, or a change of power.  This
 * sample takes its part of its window's rest by its duration.
 */
static void split_window_energy(struct metrics *m, size_t i, double e, double dt, uint32_t nthreads,
                                struct thread_metrics *out, double *unattributed_j, double *idle_s)
{
    const struct energy_window *w = &m->windows[m->window_of[i]];
    double power = dt > 0 ? e / dt : 0;
    for (uint32_t j = 0; j < nthreads; j++) {
        double cpu = out[j].q[Q_CPU];
        if (m->by_power)
            out[j].q[Q_ENERGY] = power * cpu * w->parallel * m->weight_scale;
        else
            out[j].q[Q_ENERGY] =
                w->cpu_samples > 0 ? w->energy * w->used * cpu / w->cpu_samples : 0;
    }
    double share = w->span > 0 ? dt / w->span : 1;
    *unattributed_j = w->energy * (1 - w->used) * share;
    *idle_s = dt * (1 - w->used);
}

/* The values of sample S's threads (metrics.h), OUT being their metrics. */
static void sample_values(struct metrics *m, const struct prof_sample *s,
                          const struct thread_metrics *out)
{
    const struct profile *p = m->p;
    size_t nv = p->nvalue_types;
    m->values = xgrow(m->values, &m->values_cap, (size_t)s->nthreads * nv + 1, sizeof(*m->values));
    m->counters =
        xgrow(m->counters, &m->counters_cap, metrics_nslots(m) * nv + 1, sizeof(*m->counters));
    for (uint32_t j = 0; j < s->nthreads; j++) {
        const uint64_t *v = prof_thread_values(p, s, j);
        double *o = m->values + (size_t)j * nv;
        uint64_t *last = m->counters + (size_t)out[j].slot * nv;
        for (size_t k = 0; k < nv; k++) {
            uint64_t x = v ? v[k] : 0;
            switch (p->value_types[k].agg) {
            case PROF_VALUE_COUNTER:
                if (out[j].first)
                    o[k] = m->count_from_start ? (double)x : 0;
                else
                    o[k] = x >= last[k] ? (double)(x - last[k]) : 0;
                last[k] = x;
                break;
            case PROF_VALUE_LEVEL:
                o[k] = (double)x * out[j].q[Q_SAMPLES];
                break;
            case PROF_VALUE_SUM:
            default:
                o[k] = (double)x;
                break;
            }
        }
    }
}

void metrics_sample(struct metrics *m, size_t i, struct thread_metrics *out, double *unattributed_j,
                    double *idle_s)
{
    const struct prof_sample *s = &m->p->samples[i];
    double dt = 0;
    if (i > 0 && s->time_ns > m->p->samples[i - 1].time_ns)
        dt = (double)(s->time_ns - m->p->samples[i - 1].time_ns) / 1e9;
    double busy_sum = 0, cpu_sum = 0;
    for (uint32_t j = 0; j < s->nthreads; j++) {
        const struct prof_thread_sample *t = &s->threads[j];
        struct thread_metrics *o = &out[j];
        memset(o, 0, sizeof(*o));
        o->q[Q_SAMPLES] = (double)prof_counted(s, j);
        o->slot = slot_of(m, t->tid, &o->first);
        struct thread_state *st = &m->threads[o->slot];
        if (o->first && m->count_from_start) {
            /* A thread born inside the recording used all its CPU time
             * since the previous (non-existent) sample: count it. */
            o->q[Q_CPU] = (double)t->cpu_ns / 1e9;
        } else if (!o->first) {
            if (t->cpu_ns >= st->cpu_ns)
                o->q[Q_CPU] = (double)(t->cpu_ns - st->cpu_ns) / 1e9;
            if (s->time_ns > st->time_ns) {
                double wall = (double)(s->time_ns - st->time_ns) / 1e9;
                o->since = wall;
                if (m->opts.account_latency)
                    wall -= m->totals.latency_per_sample_s * (double)(i - st->sample);
                o->q[Q_WALL] = wall > 0 ? wall : 0;
            }
        }
        st->cpu_ns = t->cpu_ns;
        st->time_ns = s->time_ns;
        st->sample = i;
        o->busy = busy_time(m, o);
        busy_sum += o->busy;
        cpu_sum += o->q[Q_CPU];
        m->totals.cpu_s += o->q[Q_CPU];
        m->totals.wall_s += o->q[Q_WALL];
    }
    double e = interval_energy(m, i, dt);
    if (m->windows) {
        split_window_energy(m, i, e, dt, s->nthreads, out, unattributed_j, idle_s);
    } else {
        /* The interval's energy, as much of it as the threads' busy time
         * filled, split over them by their CPU time; the rest is nobody's. */
        double used = cpu_sum <= 0 ? 0 : dt > busy_sum ? busy_sum / dt : 1;
        for (uint32_t j = 0; j < s->nthreads; j++)
            out[j].q[Q_ENERGY] = used > 0 ? e * used * out[j].q[Q_CPU] / cpu_sum : 0;
        *unattributed_j = e * (1 - used);
        *idle_s = dt * (1 - used);
    }
    m->totals.energy_j += e;
    m->totals.unattributed_j += *unattributed_j;
    m->totals.idle_s += *idle_s;
    m->next_sample = i + 1;
    if (m->p->nvalue_types)
        sample_values(m, s, out);
}

const double *metrics_values(const struct metrics *m)
{
    return m->p->nvalue_types ? m->values : NULL;
}

/*
 * A profile whose thread samples come at their own instants (the perf
 * engine: CPU-time periods, not ticks) has, in an interval between two
 * readings, 0, 1 or 2 samples of a busy thread: splitting each interval's
 * energy over its own samples would give the empty intervals' energy to
 * nobody.  So its intervals are merged into windows of at least
 * ENERGY_WINDOW_PERIODS periods; a window's energy goes to the samples
 * taken in it, each weighted by the power of the interval its instant fell
 * in (docs/pmu.md, "The join"), so merging does not blur which function
 * ran at which power.  How much of it is attributed is the share of the
 * window the threads were busy: each thread sample's busy time is placed
 * right before its instant (a thread that was waiting for a CPU ran last
 * just before it was sampled), within the span since the thread's previous
 * sample, so the periods that straddle a window's ends count in the window
 * they ran in.  A pass of the ordinary rule gathers every sample's energy,
 * busy time and span.
 */
#define ENERGY_WINDOW_PERIODS 10.0

/* Spread BUSY seconds evenly over (FROM, TO] (ns) across the windows up to W
 * (all of it in W when the span is empty). */
static void spread_busy(struct energy_window *windows, size_t w, uint64_t from, uint64_t to,
                        double busy)
{
    if (to <= from) {
        windows[w].busy += busy;
        return;
    }
    for (size_t k = w;; k--) {
        uint64_t lo = windows[k].start > from ? windows[k].start : from;
        uint64_t hi = k == w || windows[k].end > to ? to : windows[k].end;
        if (hi > lo)
            windows[k].busy += busy * (double)(hi - lo) / (double)(to - from);
        if (k == 0 || windows[k].start <= from)
            break;
    }
}

static void plan_energy_windows(struct metrics *m)
{
    const struct profile *p = m->p;
    if (p->nsamples == 0)
        return;
    struct metrics *pass = xcalloc(1, sizeof(*pass));
    *pass = *m;
    pass->threads = NULL;
    pass->nthreads = pass->threads_cap = 0;
    pass->index = xmalloc(m->index_cap * sizeof(*pass->index));
    for (size_t i = 0; i < m->index_cap; i++)
        pass->index[i].slot = NO_SLOT;
    pass->totals.energy_source = NULL; /* channels and the rest are M's */
    pass->windows = NULL;
    pass->window_of = NULL;
    pass->values = NULL; /* the pass's own value buffers, freed below */
    pass->values_cap = 0;
    pass->counters = NULL;
    pass->counters_cap = 0;
    pass->opts.account_latency = false; /* Q_WALL: the span since the previous sample */
    size_t most = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        most = p->samples[i].nthreads > most ? p->samples[i].nthreads : most;
    struct thread_metrics *tm = xcalloc(most ? most : 1, sizeof(*tm));

    m->windows = xcalloc(p->nsamples, sizeof(*m->windows));
    m->window_of = xcalloc(p->nsamples, sizeof(*m->window_of));
    double min_span = ENERGY_WINDOW_PERIODS / p->frequency;
    size_t w = 0;
    m->windows[0].start = m->windows[0].end = p->samples[0].time_ns;
    for (size_t i = 0; i < p->nsamples; i++) {
        double un, idle;
        struct metrics_totals before = pass->totals;
        metrics_sample(pass, i, tm, &un, &idle);
        const struct prof_sample *s = &p->samples[i];
        double dt = i > 0 && s->time_ns > p->samples[i - 1].time_ns
                        ? (double)(s->time_ns - p->samples[i - 1].time_ns) / 1e9
                        : 0;
        double e = pass->totals.energy_j - before.energy_j;
        double power = dt > 0 ? e / dt : 0;
        struct energy_window *win = &m->windows[w];
        win->energy += e;
        win->span += dt;
        if (s->time_ns > win->end)
            win->end = s->time_ns;
        for (uint32_t j = 0; j < s->nthreads; j++) {
            double busy = tm[j].busy;
            double ran = tm[j].since < busy ? tm[j].since : busy;
            uint64_t since = (uint64_t)(ran * 1e9);
            win->cpu_samples += tm[j].q[Q_CPU];
            win->weight += power * tm[j].q[Q_CPU];
            spread_busy(m->windows, w, since < s->time_ns ? s->time_ns - since : 0, s->time_ns,
                        busy);
        }
        m->window_of[i] = w;
        if (win->span >= min_span && i + 1 < p->nsamples) {
            w++;
            m->windows[w].start = m->windows[w].end = s->time_ns;
        }
    }
    double attributed = 0, weight = 0;
    for (size_t k = 0; k <= w; k++) {
        struct energy_window *win = &m->windows[k];
        /* A window without a thread sample has nobody to give energy to. */
        win->used = win->cpu_samples <= 0                    ? 0
                    : win->span > 0 && win->busy < win->span ? win->busy / win->span
                                                             : 1;
        win->parallel = win->busy > win->span && win->span > 0 ? win->span / win->busy : 1;
        attributed += win->energy * win->used;
        weight += win->weight * win->parallel;
    }
    /* Readings at an instant say the power at the samples' instants; an
     * average over an interval, such as a counter's that moves in steps,
     * says it no better than the window does. */
    const char *timing = profile_meta(p, "pmu_timing");
    m->by_power = weight > 0 && timing && strcmp(timing, "instant") == 0;
    m->weight_scale = weight > 0 ? attributed / weight : 0;
    free(tm);
    free(pass->threads);
    free(pass->index);
    free(pass->values);
    free(pass->counters);
    free(pass);
}

const struct metrics_totals *metrics_totals(const struct metrics *m)
{
    return &m->totals;
}

size_t metrics_nslots(const struct metrics *m)
{
    return m->nthreads;
}
