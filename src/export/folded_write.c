/*
 * folded_write.c - see folded_write.h: the analysis' call paths written
 * as folded stacks, one line per (process, path) with the chosen metric.
 */
#include "export/folded_write.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An open-addressing map from a pair of words to an index. */
struct pair_map {
    uint64_t *keys; /* 2 per bucket */
    uint32_t *vals; /* UINT32_MAX: empty */
    size_t mask, count;
};

static uint64_t pair_hash(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ 0x9e3779b97f4a7c15u) * 0xff51afd7ed558ccdu;
    h ^= b + (h >> 29);
    h *= 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 32);
}

static size_t pair_bucket(const struct pair_map *m, uint64_t a, uint64_t b)
{
    size_t i = (size_t)pair_hash(a, b) & m->mask;
    while (m->vals[i] != UINT32_MAX && (m->keys[2 * i] != a || m->keys[2 * i + 1] != b))
        i = (i + 1) & m->mask;
    return i;
}

static bool pair_get(const struct pair_map *m, uint64_t a, uint64_t b, uint32_t *val)
{
    if (!m->mask)
        return false;
    *val = m->vals[pair_bucket(m, a, b)];
    return *val != UINT32_MAX;
}

static void pair_put(struct pair_map *m, uint64_t a, uint64_t b, uint32_t val)
{
    if ((m->count + 1) * 2 > m->mask + 1) {
        struct pair_map g = {.mask = m->mask ? m->mask * 2 + 1 : 255};
        g.keys = xmalloc((g.mask + 1) * 2 * sizeof(*g.keys));
        g.vals = xmalloc((g.mask + 1) * sizeof(*g.vals));
        memset(g.vals, 0xff, (g.mask + 1) * sizeof(*g.vals));
        for (size_t i = 0; m->mask && i <= m->mask; i++)
            if (m->vals[i] != UINT32_MAX)
                pair_put(&g, m->keys[2 * i], m->keys[2 * i + 1], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t i = pair_bucket(m, a, b);
    m->count += m->vals[i] == UINT32_MAX;
    m->keys[2 * i] = a;
    m->keys[2 * i + 1] = b;
    m->vals[i] = val;
}

static void pair_free(struct pair_map *m)
{
    free(m->keys);
    free(m->vals);
}

struct exporter {
    const struct strtab *names, *keys;
    bool by_key; /* frames named by their key (-k), else by function */
    struct metric metric;
    struct value_columns columns;
    uint32_t *slot_process; /* thread slot -> process index */
    char **process_frame;   /* per process index: "name;" or "" */
    size_t nslots, nprocesses;
    struct strtab *lines; /* the folded stacks, without counts */
    double *values;       /* per line id */
    size_t values_cap;
    struct pair_map line_of; /* (path serial, process) -> line id */
    char *buf;
    size_t cap;
    double unattributed_j;
};

/* Name with what would break a folded line replaced (folded_write.h). */
static void append_frame(struct exporter *x, size_t *len, const char *name)
{
    if (!name || !*name)
        name = "[unknown]";
    size_t n = strlen(name);
    x->buf = xgrow(x->buf, &x->cap, *len + n + 2, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        x->buf[(*len)++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
}

static uint32_t line_id(struct exporter *x, const struct path *path, uint32_t process)
{
    uint32_t id;
    if (pair_get(&x->line_of, path->serial, process, &id))
        return id;
    const char *pf = x->process_frame[process];
    size_t len = strlen(pf);
    x->buf = xgrow(x->buf, &x->cap, len + 1, 1);
    memcpy(x->buf, pf, len);
    for (uint32_t k = path->nframes; k-- > 0;) {
        if (x->by_key) {
            char *key = key_display(strtab_get(x->keys, path->frames[k].key));
            append_frame(x, &len, key);
            free(key);
        } else {
            append_frame(x, &len, strtab_get(x->names, path->frames[k].function));
        }
        if (k)
            x->buf[len++] = ';';
    }
    if (path->nframes == 0)
        append_frame(x, &len, NULL);
    id = strtab_intern(x->lines, x->buf, len);
    if (id >= x->values_cap) {
        size_t old = x->values_cap;
        x->values = xgrow(x->values, &x->values_cap, (size_t)id + 1, sizeof(*x->values));
        memset(x->values + old, 0, (x->values_cap - old) * sizeof(*x->values));
    }
    pair_put(&x->line_of, path->serial, process, id);
    return id;
}

static void on_sample(void *ctx, const struct walk_event *e)
{
    struct exporter *x = ctx;
    uint32_t process = e->slot < x->nslots ? x->slot_process[e->slot] : 0;
    uint32_t id = line_id(x, e->path, process); /* may move values */
    x->values[id] += metric_of(&x->metric, e->q, e->values, 0);
}

static void on_unattributed(void *ctx, double energy_j, double idle_s)
{
    struct exporter *x = ctx;
    (void)idle_s;
    if (x->metric.kind == METRIC_ENERGY) /* a line of its own with energy only */
        x->unattributed_j += energy_j;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The walk numbers threads by first appearance of their tid (metrics.h):
 * the same scan tells each slot's process, and each process's frame. */
static void index_processes(struct exporter *x, const struct profile *p)
{
    struct pair_map slot_of = {0}, process_of = {0};
    uint32_t *pids = NULL;
    size_t slots_cap = 0, pids_cap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        for (uint32_t j = 0; j < p->samples[i].nthreads; j++) {
            const struct prof_thread_sample *t = &p->samples[i].threads[j];
            uint32_t v;
            if (pair_get(&slot_of, t->tid, 0, &v))
                continue;
            pair_put(&slot_of, t->tid, 0, (uint32_t)x->nslots);
            if (!pair_get(&process_of, t->pid, 0, &v)) {
                v = (uint32_t)x->nprocesses++;
                pair_put(&process_of, t->pid, 0, v);
                pids = xgrow(pids, &pids_cap, x->nprocesses, sizeof(*pids));
                pids[v] = t->pid;
            }
            x->slot_process = xgrow(x->slot_process, &slots_cap, x->nslots + 1, sizeof(uint32_t));
            x->slot_process[x->nslots++] = v;
        }
    }
    bool named = false;
    for (size_t i = 0; i < p->nprocesses && !named; i++)
        named = p->processes[i].exe && *p->processes[i].exe;
    x->process_frame = xcalloc(x->nprocesses + 1, sizeof(*x->process_frame));
    for (size_t k = 0; k < x->nprocesses; k++) {
        const char *exe = "";
        for (size_t i = 0; i < p->nprocesses; i++) /* the last exec wins */
            if (p->processes[i].pid == pids[k] && p->processes[i].exe && *p->processes[i].exe)
                exe = base_name(p->processes[i].exe);
        if (!named) {
            x->process_frame[k] = xstrdup("");
            continue;
        }
        size_t len = 0;
        char *name = x->nprocesses > 1 ? xasprintf("%s-%u", *exe ? exe : "[unknown]", pids[k])
                                       : xstrdup(*exe ? exe : "[unknown]");
        append_frame(x, &len, name);
        x->buf[len++] = ';';
        x->buf[len] = '\0';
        x->process_frame[k] = xstrdup(x->buf);
        free(name);
    }
    if (x->nprocesses == 0)
        x->process_frame[0] = xstrdup("");
    free(pids);
    pair_free(&slot_of);
    pair_free(&process_of);
}

struct out_line {
    const char *stack;
    unsigned long long count;
};

static int out_line_cmp(const void *a, const void *b)
{
    return strcmp(((const struct out_line *)a)->stack, ((const struct out_line *)b)->stack);
}

static int write_lines(struct exporter *x, const char *path, double scale)
{
    size_t n = strtab_count(x->lines);
    struct out_line *out = xcalloc(n + 1, sizeof(*out));
    size_t k = 0;
    for (uint32_t id = 0; id < n; id++) {
        double v = nearbyint(x->values[id] * scale);
        if (v >= 1)
            out[k++] = (struct out_line){strtab_get(x->lines, id), (unsigned long long)v};
    }
    double u = nearbyint(x->unattributed_j * scale);
    if (u >= 1)
        out[k++] = (struct out_line){"[unattributed]", (unsigned long long)u};
    qsort(out, k, sizeof(*out), out_line_cmp);
    struct outfile *of = outfile_open(path);
    if (!of) {
        free(out);
        return -1;
    }
    FILE *f = outfile_stream(of);
    for (size_t i = 0; i < k; i++)
        fprintf(f, "%s %llu\n", out[i].stack, out[i].count);
    free(out);
    if (ferror(f)) {
        pt_err("%s: cannot write", path);
        outfile_abort(of);
        return -1;
    }
    return outfile_commit(of);
}

/* What a line's number is in: samples as they are, times and energy in
 * micro-units, a value in its own unit (exact integers). */
static double line_scale(const struct metric *m)
{
    if (m->kind == METRIC_SAMPLES)
        return 1;
    if (m->kind >= METRIC_BUILTINS)
        return m->scale > 0 ? 1 / m->scale : 1;
    return 1e6;
}

/* The metric O asks for, against P's value types (which the walk gives
 * the same columns, in order); -1 after a message. */
static int choose_metric(const char *name, const struct profile *p, const struct export_options *o,
                         struct exporter *x)
{
    char *error = NULL;
    for (size_t k = 0; k < p->nvalue_types; k++)
        value_columns_add(&x->columns, &p->value_types[k], &error);
    free(error);
    const char *want = o->metric ? o->metric : "samples";
    if (metric_resolve(want, &x->columns, &x->metric) != 0) {
        char list[1024];
        metric_list(&x->columns, list, sizeof(list));
        pt_err("%s: no metric '%s' in the profile (it has %s)", name, want, list);
        return -1;
    }
    if (!metric_additive(&x->metric)) {
        pt_err("%s: folded stacks add up along a stack; the %s metric does not (samples, cpu, "
               "wall, energy or a value such as alloc_space)",
               name, x->metric.name);
        return -1;
    }
    return 0;
}

int folded_export(const char *in_name, const struct profile *p, const char *path,
                  const struct export_options *o)
{
    const char *name = strcmp(in_name, "-") == 0 ? "<stdin>" : in_name;
    struct exporter x = {.lines = strtab_new()};
    if (choose_metric(name, p, o, &x) != 0) {
        strtab_free(x.lines);
        value_columns_free(&x.columns);
        return -1;
    }
    /* Frames are functions unless -k says what names them. */
    struct session_options so = o->session;
    x.by_key = o->keys_given;
    if (!o->keys_given)
        so.walk.keys = (struct key_spec){.kinds = {KEY_PROCEDURE}, .count = 1};
    index_processes(&x, p);
    struct strtab *keys = strtab_new(), *names = strtab_new();
    x.names = names;
    x.keys = keys;
    struct walk_visitor v = {on_sample, on_unattributed, &x, &x.columns};
    struct walk_totals totals;
    /* Paths exist before their first sample: line_id() grows values. */
    x.values = xcalloc(1, sizeof(*x.values));
    x.values_cap = 1;
    int rc = session_walk_profile(in_name, p, &so, keys, names, &v, &totals);
    if (rc == 0 && x.metric.kind == METRIC_ENERGY && !totals.has_energy) {
        pt_err("%s: the profile has no energy measurements (--metric energy)", name);
        rc = -1;
    }
    if (rc == 0)
        rc = write_lines(&x, path, line_scale(&x.metric));
    for (size_t i = 0; i <= x.nprocesses; i++)
        free(x.process_frame[i]);
    free(x.process_frame);
    free(x.slot_process);
    free(x.values);
    free(x.buf);
    pair_free(&x.line_of);
    value_columns_free(&x.columns);
    strtab_free(x.lines);
    strtab_free(keys);
    strtab_free(names);
    return rc;
}
