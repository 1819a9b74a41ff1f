/*
 * pprof_write.c - see pprof_write.h: a symbolized, measured profile as a
 * gzipped pprof profile.proto, encoded with protobuf-c.
 */
#include "export/pprof_write.h"
#include "interop/pprof.h"
#include "analyze/metrics.h"
#include "analyze/session.h"
#include "model/map_index.h"
#include "symbol/addr_table.h"
#include "symbol/build_id.h"
#include "symbol/symbolizer.h"
#include "symbol/syscall_names.h"
#include "util/compress.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/version.h"
#include "util/xalloc.h"

#include "pprof.pb-c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NONE SIZE_MAX
#define UNATTRIBUTED "[unattributed]"

enum column {
    COL_SAMPLES,
    COL_CPU,
    COL_WALL,
    COL_ENERGY,
    COL_N,
};

struct mapping_out {
    size_t map; /* the first map of P it stands for */
    uint32_t filename, build_id;
    bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct location_out {
    size_t mapping; /* index + 1 into mappings, 0: none */
    uint64_t address;
    size_t first_line;
    uint32_t nlines;
};

struct line_out {
    uint64_t function; /* index + 1 */
    int64_t line;
};

struct function_out {
    uint32_t name, system_name, filename;
};

/* A call path as location indexes, leaf first, interned. */
struct path_out {
    size_t first;
    uint32_t depth;
};

struct sample_out {
    uint32_t pid, tid;
    uint32_t path;
    uint64_t samples; /* exact: a double loses counts past 2^53 */
    size_t v;         /* its other values: vals[v .. v + ncols) */
};

struct exporter {
    const struct profile *p;
    const struct frame_resolver *r;
    struct strtab *strings;
    /* maps */
    struct map_index *maps;
    /* what is written */
    struct mapping_out *mappings;
    size_t nmappings, mappings_cap;
    struct location_out *locations;
    size_t nlocations, locations_cap;
    struct line_out *lines;
    size_t nlines, lines_cap;
    struct function_out *functions;
    size_t nfunctions, functions_cap;
    uint32_t *path_pool;
    size_t npath_pool, path_pool_cap;
    struct path_out *paths;
    size_t npaths, paths_cap;
    struct sample_out *samples;
    size_t nsamples, samples_cap;
    double *vals; /* per sample: COL_N built-in columns, then one per value type */
    size_t ncols, vals_cap;
    /* lookups */
    struct addr_table mapping_ids, location_ids, function_ids, path_ids, path_cache, sample_ids,
        thread_names;
    uint32_t *scratch;
    size_t scratch_cap;
};

static uint32_t str(struct exporter *x, const char *s)
{
    return strtab_intern_str(x->strings, s ? s : "");
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdu;
    return h ^ (h >> 32);
}

/* --- which map holds an address (as the symbolizer decides) -------------- */

/* --- mappings, functions, locations -------------------------------------- */

/* The mapping (index + 1) for map MI: maps of equal file and range, in
 * whichever process, are one mapping. */
static size_t mapping_of(struct exporter *x, size_t mi)
{
    const struct prof_map *m = &x->p->maps[mi];
    uint32_t path = str(x, m->path);
    uint64_t v;
    for (uint64_t k = 0;; k++) {
        if (!addr_table_get(&x->mapping_ids, m->start, (uint64_t)path | k << 32, &v)) {
            addr_table_put(&x->mapping_ids, m->start, (uint64_t)path | k << 32, x->nmappings + 1);
            break;
        }
        const struct prof_map *o = &x->p->maps[x->mappings[v - 1].map];
        if (o->end == m->end && o->offset == m->offset)
            return (size_t)v;
    }
    /* The recorder keeps the build-id with one map of a file. */
    const struct prof_map *with_id = m;
    for (size_t i = 0; with_id->build_id_len == 0 && i < x->p->nmaps; i++) {
        const struct prof_map *o = &x->p->maps[i];
        if (o->pid == m->pid && o->build_id_len && strcmp(o->path, m->path) == 0)
            with_id = o;
    }
    char hex[2 * PROF_BUILD_ID_MAX + 1];
    build_id_hex(with_id->build_id, with_id->build_id_len, hex);
    x->mappings = xgrow(x->mappings, &x->mappings_cap, x->nmappings + 1, sizeof(*x->mappings));
    x->mappings[x->nmappings] =
        (struct mapping_out){.map = mi, .filename = path, .build_id = str(x, hex)};
    return ++x->nmappings;
}

static uint64_t function_of(struct exporter *x, const char *name, const char *mangled,
                            const char *file)
{
    uint32_t n = str(x, name), s = str(x, mangled && *mangled ? mangled : name), f = str(x, file);
    uint64_t v;
    if (addr_table_get(&x->function_ids, n, (uint64_t)s << 32 | f, &v))
        return v;
    x->functions = xgrow(x->functions, &x->functions_cap, x->nfunctions + 1, sizeof(*x->functions));
    x->functions[x->nfunctions++] = (struct function_out){n, s, f};
    addr_table_put(&x->function_ids, n, (uint64_t)s << 32 | f, x->nfunctions);
    return x->nfunctions;
}

/* What the symbolizer says when it cannot name an address. */
static bool placeholder(const struct sym_location *l)
{
    if (!l || l->nframes == 0 || !l->frames)
        return true;
    const struct sym_frame *f = &l->frames[0];
    if (l->nframes != 1 || *f->mangled || *f->file)
        return false;
    size_t n = strlen(f->binary);
    return strcmp(f->binary, "[unmapped]") == 0 ||
           (strncmp(f->function, f->binary, n) == 0 && strncmp(f->function + n, "+0x", 3) == 0);
}

static uint32_t new_location(struct exporter *x, size_t mapping, uint64_t address)
{
    x->locations = xgrow(x->locations, &x->locations_cap, x->nlocations + 1, sizeof(*x->locations));
    x->locations[x->nlocations] =
        (struct location_out){.mapping = mapping, .address = address, .first_line = x->nlines};
    return (uint32_t)x->nlocations++;
}

static void add_line(struct exporter *x, uint32_t loc, uint64_t function, uint32_t line)
{
    x->lines = xgrow(x->lines, &x->lines_cap, x->nlines + 1, sizeof(*x->lines));
    x->lines[x->nlines++] = (struct line_out){function, line};
    x->locations[loc].nlines++;
}

/* A location with one line naming NAME and nothing else (keyed by KEY). */
static uint32_t named_location(struct exporter *x, uint64_t key, const char *name)
{
    uint64_t v;
    if (addr_table_get(&x->location_ids, key, 0, &v))
        return (uint32_t)v;
    uint32_t loc = new_location(x, 0, 0);
    add_line(x, loc, function_of(x, name, "", ""), 0);
    addr_table_put(&x->location_ids, key, 0, loc);
    return loc;
}

static uint32_t location_of(struct exporter *x, uint32_t pid, uint64_t time, uint64_t pc, bool ra)
{
    size_t mi = map_index_find(x->maps, pid, pc, time);
    size_t mapping = mi == MAP_INDEX_NONE ? 0 : mapping_of(x, mi);
    uint64_t key =
        mapping ? (uint64_t)mapping << 1 | ra : (uint64_t)1 << 63 | (uint64_t)pid << 1 | ra;
    uint64_t v;
    if (addr_table_get(&x->location_ids, key, pc, &v))
        return (uint32_t)v;
    const struct sym_location *l = x->r->resolve(x->r->ctx, pid, time, pc, ra);
    /* A caller's address points after its call: name the call. */
    uint32_t loc = new_location(x, mapping, ra && pc > 0 ? pc - 1 : pc);
    addr_table_put(&x->location_ids, key, pc, loc);
    if (!l || l->nframes == 0 || !l->frames) {
        add_line(x, loc, function_of(x, "[unknown]", "", ""), 0);
        return loc;
    }
    bool named = !placeholder(l);
    for (uint32_t i = 0; i < l->nframes; i++) {
        const struct sym_frame *f = &l->frames[i];
        add_line(x, loc, function_of(x, f->function, f->mangled, f->file), f->line);
        if (mapping && named) {
            struct mapping_out *m = &x->mappings[mapping - 1];
            m->has_functions = true;
            m->has_filenames |= *f->file != '\0';
            m->has_line_numbers |= f->line != 0;
            m->has_inline_frames |= l->nframes > 1;
        }
    }
    return loc;
}

/* --- call paths and samples ----------------------------------------------- */

static uint32_t intern_path(struct exporter *x, const uint32_t *locs, uint32_t depth)
{
    uint64_t h = depth, v;
    for (uint32_t i = 0; i < depth; i++)
        h = mix(h, locs[i]);
    for (uint64_t k = 0;; k++) {
        if (!addr_table_get(&x->path_ids, h, k, &v)) {
            addr_table_put(&x->path_ids, h, k, x->npaths);
            break;
        }
        const struct path_out *o = &x->paths[v];
        if (o->depth == depth && memcmp(x->path_pool + o->first, locs, depth * sizeof(*locs)) == 0)
            return (uint32_t)v;
    }
    x->path_pool =
        xgrow(x->path_pool, &x->path_pool_cap, x->npath_pool + depth + 1, sizeof(*x->path_pool));
    memcpy(x->path_pool + x->npath_pool, locs, depth * sizeof(*locs));
    x->paths = xgrow(x->paths, &x->paths_cap, x->npaths + 1, sizeof(*x->paths));
    x->paths[x->npaths] = (struct path_out){x->npath_pool, depth};
    x->npath_pool += depth;
    return (uint32_t)x->npaths++;
}

/* The path of thread sample T at TIME, as `ptprof report` builds it
 * (analyze/paths.h): the system call, then the PC's frames, then the
 * return addresses'. */
static uint32_t path_of(struct exporter *x, uint64_t time, const struct prof_thread_sample *t)
{
    const struct profile *p = x->p;
    int32_t sc = (t->flags & PROF_THREAD_IN_SYSCALL) && t->syscall >= 0 ? t->syscall : -1;
    bool stacked = t->stack != 0 && t->stack < p->nstacks && p->stacks[t->stack].depth > 0;
    uint64_t cache_a = (uint64_t)t->pid << 32 | map_index_epoch(x->maps, t->pid, time);
    uint64_t cache_b = (uint64_t)t->stack << 32 | (uint32_t)sc, v;
    if (stacked && addr_table_get(&x->path_cache, cache_a, cache_b, &v))
        return (uint32_t)v;
    const uint64_t *pcs = stacked ? p->stacks[t->stack].pcs : &t->pc;
    uint32_t depth = stacked ? p->stacks[t->stack].depth : 1;
    x->scratch = xgrow(x->scratch, &x->scratch_cap, (size_t)depth + 1, sizeof(*x->scratch));
    uint32_t n = 0;
    if (sc >= 0) {
        const char *name = syscall_name(sc);
        char fn[64];
        if (name)
            snprintf(fn, sizeof(fn), "[syscall %s]", name);
        else
            snprintf(fn, sizeof(fn), "[syscall %" PRId32 "]", sc);
        x->scratch[n++] = named_location(x, (uint64_t)1 << 62 | (uint32_t)sc, fn);
    }
    for (uint32_t i = 0; i < depth; i++) {
        /* A return address where no code is: the rest is not a call chain. */
        const struct sym_location *l =
            i > 0 ? x->r->resolve(x->r->ctx, t->pid, time, pcs[i], true) : NULL;
        if (l && l->not_code)
            break;
        x->scratch[n++] = location_of(x, t->pid, time, pcs[i], i > 0);
    }
    uint32_t path = intern_path(x, x->scratch, n);
    if (stacked)
        addr_table_put(&x->path_cache, cache_a, cache_b, path);
    return path;
}

static struct sample_out *sample_of(struct exporter *x, uint32_t pid, uint32_t tid, uint32_t path)
{
    uint64_t v;
    if (addr_table_get(&x->sample_ids, (uint64_t)pid << 32 | tid, path, &v))
        return &x->samples[v];
    x->samples = xgrow(x->samples, &x->samples_cap, x->nsamples + 1, sizeof(*x->samples));
    size_t at = x->nsamples * x->ncols, old = x->vals_cap;
    x->vals = xgrow(x->vals, &x->vals_cap, at + x->ncols, sizeof(*x->vals));
    memset(x->vals + old, 0, (x->vals_cap - old) * sizeof(*x->vals));
    addr_table_put(&x->sample_ids, (uint64_t)pid << 32 | tid, path, x->nsamples);
    x->samples[x->nsamples] = (struct sample_out){.pid = pid, .tid = tid, .path = path, .v = at};
    return &x->samples[x->nsamples++];
}

/* Every thread sample into its Sample, with what metrics.h says it is
 * worth; the energy no thread used into one Sample of its own. */
static int measure(struct exporter *x, const struct export_options *o, bool *has_energy,
                   char **error)
{
    const struct profile *p = x->p;
    struct metrics *m = metrics_new(p, &o->session.walk.metrics, error);
    if (!m)
        return -1;
    *has_energy = metrics_totals(m)->has_energy;
    struct thread_metrics *tm = NULL;
    size_t tm_cap = 0;
    double unattributed_j = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        tm = xgrow(tm, &tm_cap, (size_t)s->nthreads + 1, sizeof(*tm));
        double un, idle;
        metrics_sample(m, i, tm, &un, &idle);
        const double *values = metrics_values(m);
        unattributed_j += un;
        for (uint32_t j = 0; j < s->nthreads; j++) {
            const struct prof_thread_sample *t = &s->threads[j];
            struct sample_out *so = sample_of(x, t->pid, t->tid, path_of(x, s->time_ns, t));
            double *v = x->vals + so->v;
            uint64_t n = prof_counted(s, j);
            so->samples = n > UINT64_MAX - so->samples ? UINT64_MAX : so->samples + n;
            v[COL_CPU] += tm[j].q[Q_CPU] * 1e9;
            v[COL_WALL] += tm[j].q[Q_WALL] * 1e9;
            v[COL_ENERGY] += tm[j].q[Q_ENERGY] * 1e6;
            for (size_t k = 0; values && k < p->nvalue_types; k++)
                v[COL_N + k] += values[(size_t)j * p->nvalue_types + k];
        }
    }
    if (*has_energy && unattributed_j > 0) {
        uint32_t loc = named_location(x, (uint64_t)1 << 61, UNATTRIBUTED);
        struct sample_out *so = sample_of(x, 0, 0, intern_path(x, &loc, 1));
        so->pid = so->tid = UINT32_MAX; /* no labels */
        x->vals[so->v + COL_ENERGY] += unattributed_j * 1e6;
    }
    free(tm);
    metrics_free(m);
    return 0;
}

/* --- the message ------------------------------------------------------------- */

typedef Perftools__Profiles__Profile PbProfile;

static const char *const col_types[COL_N][2] = {
    {"samples", "count"},
    {"cpu", "nanoseconds"},
    {"wall", "nanoseconds"},
    {"energy", "microjoules"},
};

/* The columns written (indexes into a sample's values), in order: samples;
 * CPU and wall time unless the profile counts values and has none of them
 * (a Go heap profile read back has no time); energy when measured; every
 * value type.  Returns how many. */
static size_t chosen_columns(const struct exporter *x, bool has_energy, size_t *cols)
{
    const struct profile *p = x->p;
    size_t n = 0;
    cols[n++] = COL_SAMPLES;
    for (size_t c = COL_CPU; c <= COL_WALL; c++) {
        bool any = p->nvalue_types == 0;
        for (size_t i = 0; !any && i < x->nsamples; i++)
            any = x->vals[x->samples[i].v + c] > 0;
        if (any)
            cols[n++] = c;
    }
    if (has_energy)
        cols[n++] = COL_ENERGY;
    for (size_t k = 0; k < p->nvalue_types; k++)
        cols[n++] = COL_N + k;
    return n;
}

static const char *column_type(const struct exporter *x, size_t c)
{
    return c < COL_N ? col_types[c][0] : x->p->value_types[c - COL_N].name;
}

static const char *column_unit(const struct exporter *x, size_t c)
{
    return c < COL_N ? col_types[c][1] : x->p->value_types[c - COL_N].unit;
}

/* The default sample type: O's metric, else the profile's own, else cpu
 * (samples when cpu is not written); NULL when O asks for one not written. */
static const char *default_type(const struct exporter *x, const struct export_options *o,
                                const size_t *cols, size_t ncols)
{
    const char *want = o->metric ? o->metric : x->p->default_metric;
    if (want && strcmp(want, "time") == 0)
        want = "cpu";
    for (size_t i = 0; want && i < ncols; i++)
        if (strcmp(column_type(x, cols[i]), want) == 0)
            return want;
    if (o->metric)
        return NULL;
    for (size_t i = 0; i < ncols; i++)
        if (cols[i] == COL_CPU)
            return "cpu";
    return "samples";
}

/* The main program's mapping first (pprof names the profile after it). */
static void order_mappings(struct exporter *x, size_t *id_of)
{
    const char *exe = x->p->nprocesses ? x->p->processes[0].exe : NULL;
    size_t main_map = NONE;
    for (size_t i = 0; exe && *exe && i < x->nmappings && main_map == NONE; i++)
        if (strcmp(strtab_get(x->strings, x->mappings[i].filename), exe) == 0 &&
            x->p->maps[x->mappings[i].map].offset == 0)
            main_map = i;
    for (size_t i = 0; exe && *exe && i < x->nmappings && main_map == NONE; i++)
        if (strcmp(strtab_get(x->strings, x->mappings[i].filename), exe) == 0)
            main_map = i;
    size_t next = 1;
    if (main_map != NONE)
        id_of[main_map] = next++;
    for (size_t i = 0; i < x->nmappings; i++)
        if (i != main_map)
            id_of[i] = next++;
}

/* Values rounded so that each column adds up to its rounded total. */
static int64_t rounded(double *acc, int64_t *done, double v)
{
    *acc += v;
    /* Past 2^63 (a hostile input's sums) the column saturates. */
    int64_t total = *acc < 9.2e18 ? (int64_t)llround(*acc) : INT64_MAX;
    int64_t step = total - *done;
    *done = total;
    return step > 0 ? step : 0;
}

static const char *thread_name(struct exporter *x, uint32_t pid, uint32_t tid)
{
    uint64_t v;
    if (!addr_table_get(&x->thread_names, pid, tid, &v))
        return "";
    const char *name = x->p->threads[v].name;
    return name ? name : "";
}

static int encode(struct exporter *x, const struct export_options *o, bool has_energy,
                  uint8_t **out, size_t *len, char **error)
{
    const struct profile *p = x->p;
    size_t *cols = xcalloc(x->ncols + 1, sizeof(*cols));
    size_t ncols = chosen_columns(x, has_energy, cols);
    const char *default_name = default_type(x, o, cols, ncols);
    if (!default_name) {
        *error = xasprintf("the profile has no %s to write as a sample type (--metric %s)",
                           o->metric, o->metric);
        free(cols);
        return -1;
    }
    for (size_t i = 0; i < p->nthreads; i++)
        addr_table_put(&x->thread_names, p->threads[i].pid, p->threads[i].tid, i);

    PbProfile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
    Perftools__Profiles__ValueType period_type;
    Perftools__Profiles__ValueType *types = xcalloc(ncols + 1, sizeof(*types));
    Perftools__Profiles__ValueType **type_ptrs = xcalloc(ncols + 1, sizeof(*type_ptrs));
    for (size_t c = 0; c < ncols; c++) {
        perftools__profiles__value_type__init(&types[c]);
        types[c].type = str(x, column_type(x, cols[c]));
        types[c].unit = str(x, column_unit(x, cols[c]));
        type_ptrs[c] = &types[c];
    }
    pb.n_sample_type = ncols;
    pb.sample_type = type_ptrs;
    pb.default_sample_type = str(x, default_name);
    perftools__profiles__value_type__init(&period_type);
    period_type.type = str(x, "cpu");
    period_type.unit = str(x, "nanoseconds");
    pb.period_type = &period_type;
    if (p->frequency > 0 && p->frequency < 1e9)
        pb.period = (int64_t)llround(1e9 / p->frequency);
    else if (p->nsamples > 1 && p->samples[p->nsamples - 1].time_ns > p->samples[0].time_ns)
        pb.period = (int64_t)((p->samples[p->nsamples - 1].time_ns - p->samples[0].time_ns) /
                              (p->nsamples - 1));
    uint64_t t0 = p->nsamples     ? p->samples[0].time_ns
                  : p->nprocesses ? p->processes[0].start_ns
                                  : 0;
    pb.time_nanos = t0 <= INT64_MAX ? (int64_t)t0 : 0;
    uint64_t span = p->nsamples ? p->samples[p->nsamples - 1].time_ns - t0 : 0;
    uint64_t duration = p->has_totals && p->totals.wall_ns ? p->totals.wall_ns : span;
    pb.duration_nanos = duration <= INT64_MAX ? (int64_t)duration : 0;
    char *comment =
        xasprintf("ptprof %s, from a %s profile", PTPROF_VERSION, p->format ? p->format : "ptprof");
    int64_t comment_ids[2] = {str(x, comment), 0};
    free(comment);
    pb.n_comment = 1;
    if (p->has_totals) {
        /* pprof has no rounds: what the rate was measured in, for ptprof's
         * reader (pprof_read.c) and for the eye. */
        const char *cpu_time = profile_meta(p, "cpu_time");
        comment = xasprintf(PPROF_TOTALS_COMMENT, p->totals.samples, p->totals.ideal_samples,
                            cpu_time && strcmp(cpu_time, "sampled") == 0 ? "CPU" : "wall");
        comment_ids[pb.n_comment++] = str(x, comment);
        free(comment);
    }
    pb.comment = comment_ids;

    /* Samples, with their labels. */
    Perftools__Profiles__Sample *samples = xcalloc(x->nsamples + 1, sizeof(*samples));
    Perftools__Profiles__Sample **sample_ptrs = xcalloc(x->nsamples + 1, sizeof(*sample_ptrs));
    Perftools__Profiles__Label *labels = xcalloc(3 * x->nsamples + 1, sizeof(*labels));
    Perftools__Profiles__Label **label_ptrs = xcalloc(3 * x->nsamples + 1, sizeof(*label_ptrs));
    int64_t *values = xcalloc(ncols * x->nsamples + 1, sizeof(*values));
    uint64_t *loc_ids = xcalloc(x->npath_pool + 1, sizeof(*loc_ids));
    double *acc = xcalloc(ncols + 1, sizeof(*acc));
    int64_t *done = xcalloc(ncols + 1, sizeof(*done));
    uint32_t k_pid = str(x, "pid"), k_tid = str(x, "tid"), k_comm = str(x, "thread_comm");
    size_t nlabels = 0;
    for (size_t i = 0; i < x->nsamples; i++) {
        const struct sample_out *so = &x->samples[i];
        Perftools__Profiles__Sample *s = &samples[i];
        perftools__profiles__sample__init(s);
        sample_ptrs[i] = s;
        const struct path_out *path = &x->paths[so->path];
        for (uint32_t d = 0; d < path->depth; d++)
            loc_ids[path->first + d] = x->path_pool[path->first + d] + 1;
        s->n_location_id = path->depth;
        s->location_id = loc_ids + path->first;
        s->n_value = ncols;
        s->value = values + ncols * i;
        for (size_t c = 0; c < ncols; c++)
            s->value[c] = cols[c] == COL_SAMPLES
                              ? (int64_t)(so->samples < INT64_MAX ? so->samples : INT64_MAX)
                              : rounded(&acc[c], &done[c], x->vals[so->v + cols[c]]);
        if (so->pid == UINT32_MAX)
            continue;
        s->label = label_ptrs + nlabels;
        const char *name = thread_name(x, so->pid, so->tid);
        for (int k = 0; k < 3; k++) {
            if (k == 2 && !*name)
                break;
            Perftools__Profiles__Label *l = &labels[nlabels];
            perftools__profiles__label__init(l);
            l->key = k == 0 ? k_pid : k == 1 ? k_tid : k_comm;
            if (k < 2)
                l->num = k == 0 ? so->pid : so->tid;
            else
                l->str = str(x, name);
            label_ptrs[nlabels++] = l;
            s->n_label++;
        }
    }
    pb.n_sample = x->nsamples;
    pb.sample = sample_ptrs;

    /* Mappings, main program first. */
    size_t *mapping_id = xcalloc(x->nmappings + 1, sizeof(*mapping_id));
    order_mappings(x, mapping_id);
    Perftools__Profiles__Mapping *mappings = xcalloc(x->nmappings + 1, sizeof(*mappings));
    Perftools__Profiles__Mapping **mapping_ptrs = xcalloc(x->nmappings + 1, sizeof(*mapping_ptrs));
    for (size_t i = 0; i < x->nmappings; i++) {
        const struct mapping_out *mo = &x->mappings[i];
        const struct prof_map *m = &p->maps[mo->map];
        Perftools__Profiles__Mapping *pm = &mappings[mapping_id[i] - 1];
        perftools__profiles__mapping__init(pm);
        pm->id = mapping_id[i];
        pm->memory_start = m->start;
        pm->memory_limit = m->end;
        pm->file_offset = m->offset;
        pm->filename = mo->filename;
        pm->build_id = mo->build_id;
        pm->has_functions = mo->has_functions;
        pm->has_filenames = mo->has_filenames;
        pm->has_line_numbers = mo->has_line_numbers;
        pm->has_inline_frames = mo->has_inline_frames;
        mapping_ptrs[mapping_id[i] - 1] = pm;
    }
    pb.n_mapping = x->nmappings;
    pb.mapping = mapping_ptrs;

    /* Locations and their lines. */
    Perftools__Profiles__Location *locations = xcalloc(x->nlocations + 1, sizeof(*locations));
    Perftools__Profiles__Location **location_ptrs =
        xcalloc(x->nlocations + 1, sizeof(*location_ptrs));
    Perftools__Profiles__Line *lines = xcalloc(x->nlines + 1, sizeof(*lines));
    Perftools__Profiles__Line **line_ptrs = xcalloc(x->nlines + 1, sizeof(*line_ptrs));
    for (size_t i = 0; i < x->nlocations; i++) {
        const struct location_out *lo = &x->locations[i];
        Perftools__Profiles__Location *l = &locations[i];
        perftools__profiles__location__init(l);
        l->id = i + 1;
        l->mapping_id = lo->mapping ? mapping_id[lo->mapping - 1] : 0;
        l->address = lo->address;
        l->n_line = lo->nlines;
        l->line = line_ptrs + lo->first_line;
        for (uint32_t k = 0; k < lo->nlines; k++) {
            Perftools__Profiles__Line *ln = &lines[lo->first_line + k];
            perftools__profiles__line__init(ln);
            ln->function_id = x->lines[lo->first_line + k].function;
            ln->line = x->lines[lo->first_line + k].line;
            line_ptrs[lo->first_line + k] = ln;
        }
        location_ptrs[i] = l;
    }
    pb.n_location = x->nlocations;
    pb.location = location_ptrs;

    Perftools__Profiles__Function *functions = xcalloc(x->nfunctions + 1, sizeof(*functions));
    Perftools__Profiles__Function **function_ptrs =
        xcalloc(x->nfunctions + 1, sizeof(*function_ptrs));
    for (size_t i = 0; i < x->nfunctions; i++) {
        Perftools__Profiles__Function *f = &functions[i];
        perftools__profiles__function__init(f);
        f->id = i + 1;
        f->name = x->functions[i].name;
        f->system_name = x->functions[i].system_name;
        f->filename = x->functions[i].filename;
        function_ptrs[i] = f;
    }
    pb.n_function = x->nfunctions;
    pb.function = function_ptrs;

    /* The string table last: everything above has interned its strings. */
    size_t nstrings = strtab_count(x->strings);
    ProtobufCBinaryData *strings = xcalloc(nstrings + 1, sizeof(*strings));
    for (size_t i = 0; i < nstrings; i++) {
        const char *s = strtab_get(x->strings, (uint32_t)i);
        strings[i] = (ProtobufCBinaryData){strlen(s), (uint8_t *)(uintptr_t)s};
    }
    pb.n_string_table = nstrings;
    pb.string_table = strings;

    *len = perftools__profiles__profile__get_packed_size(&pb);
    *out = xmalloc(*len + 1);
    size_t packed = perftools__profiles__profile__pack(&pb, *out);
    int rc = 0;
    if (packed != *len) {
        *error = xasprintf("protobuf-c packed %zu bytes of %zu", packed, *len);
        free(*out);
        *out = NULL;
        rc = -1;
    }
    free(strings);
    free(functions);
    free(function_ptrs);
    free(lines);
    free(line_ptrs);
    free(locations);
    free(location_ptrs);
    free(mappings);
    free(mapping_ptrs);
    free(mapping_id);
    free(samples);
    free(sample_ptrs);
    free(labels);
    free(label_ptrs);
    free(values);
    free(loc_ids);
    free(acc);
    free(done);
    free(types);
    free(type_ptrs);
    free(cols);
    return rc;
}

int pprof_encode(const struct profile *p, const struct frame_resolver *r,
                 const struct export_options *o, uint8_t **out, size_t *len, char **error)
{
    struct exporter x = {.p = p, .r = r, .strings = strtab_new(), .ncols = COL_N + p->nvalue_types};
    *out = NULL;
    *len = 0;
    *error = NULL;
    str(&x, ""); /* string 0, as the format asks */
    x.maps = map_index_new(p);
    bool has_energy = false;
    int rc = measure(&x, o, &has_energy, error);
    if (rc == 0)
        rc = encode(&x, o, has_energy, out, len, error);
    strtab_free(x.strings);
    map_index_free(x.maps);
    free(x.mappings);
    free(x.locations);
    free(x.lines);
    free(x.functions);
    free(x.path_pool);
    free(x.paths);
    free(x.samples);
    free(x.vals);
    free(x.scratch);
    addr_table_free(&x.mapping_ids);
    addr_table_free(&x.location_ids);
    addr_table_free(&x.function_ids);
    addr_table_free(&x.path_ids);
    addr_table_free(&x.path_cache);
    addr_table_free(&x.sample_ids);
    addr_table_free(&x.thread_names);
    return rc;
}

/* --- the file ------------------------------------------------------------------ */

static const struct sym_location *resolve(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t pc,
                                          bool return_address)
{
    return symbolizer_resolve(ctx, pid, time_ns, pc, return_address);
}

/* DATA gzipped into OUT, as pprof reads its files. */
static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    /* 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char buf[1 << 16] = {0}; /* deflate fills it (cppcheck cannot tell) */
    int zrc = Z_OK;
    size_t at = 0;
    do {
        size_t chunk = len - at > (1u << 30) ? (1u << 30) : len - at;
        z.next_in = (unsigned char *)(uintptr_t)(data + at);
        z.avail_in = (unsigned)chunk;
        at += chunk;
        int flush = at == len ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = buf;
            z.avail_out = sizeof(buf);
            zrc = deflate(&z, flush);
            size_t n = sizeof(buf) - z.avail_out;
            if (zrc == Z_STREAM_ERROR || (n && fwrite(buf, 1, n, out) != n)) {
                deflateEnd(&z);
                return -1;
            }
        } while (z.avail_out == 0);
    } while (at < len);
    deflateEnd(&z);
    return zrc == Z_STREAM_END ? 0 : -1;
}

int pprof_export(const char *in_name, const struct profile *p, const char *path,
                 const struct export_options *o)
{
    const char *name = strcmp(in_name, "-") == 0 ? "<stdin>" : in_name;
    struct symbolizer *sym = session_symbolizer(in_name, p, &o->session);
    struct frame_resolver r = {resolve, sym};
    uint8_t *data;
    size_t len;
    char *error;
    int rc = pprof_encode(p, &r, o, &data, &len, &error);
    symbolizer_free(sym);
    if (rc != 0) {
        pt_err("%s: %s", name, error ? error : "cannot encode it as pprof");
        free(error);
        return -1;
    }
    struct outfile *of = outfile_open(path);
    if (!of) {
        free(data);
        return -1;
    }
    FILE *f = outfile_stream(of);
    /* A name that asks for compression gets it from the output file. */
    bool plain = strcmp(path, "-") != 0 && compression_for_path(path) != COMPRESSION_NONE;
    int wrc = plain ? (fwrite(data, 1, len, f) == len ? 0 : -1) : write_gzip(f, data, len);
    free(data);
    if (wrc != 0) {
        pt_err("%s: cannot write it", outfile_path(of));
        outfile_abort(of);
        return -1;
    }
    return outfile_commit(of);
}
