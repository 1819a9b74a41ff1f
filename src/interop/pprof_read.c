/*
 * pprof_read.c - see pprof.h: a pprof profile.proto into a struct profile.
 * The wire is checked first (pprof_wire.h, for offsets), decoded with
 * protobuf-c (the samples one at a time, each time they are needed; the
 * locations and functions into compact tables), validated, then laid out
 * as thread samples on a synthetic timeline that ptprof's metrics turn
 * back into the file's values.  Beyond the profile it builds, the reader
 * holds 12 to 20 bytes a sample while it reads them, 8 while it lays them
 * out (with the profile at its largest): a file of tiny samples has one
 * every 15 bytes.
 */
#include "interop/pprof.h"
#include "interop/pprof_wire.h"
#include "model/stack_table.h"
#include "model/maps.h"
#include "symbol/addr_table.h"
#include "util/log.h"
#include "util/xalloc.h"

#include "pprof.pb-c.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

/* Synthetic PCs: non-canonical on x86-64 and far above any other
 * architecture's user space, 16 bytes apart so PC - 1 stays distinct. */
#define SYNTHETIC_PC_BASE ((uint64_t)1 << 62)
/* Processes x mappings: every mapping is given to every process. */
#define MAX_MAPS ((uint64_t)1 << 22)

/* --- protobuf-c's memory, capped ----------------------------------------- */

struct budget {
    size_t left;
    bool exceeded;
};

#define BUDGET_HEADER 16 /* keeps malloc's alignment */

static void *budget_alloc(void *ctx, size_t size)
{
    struct budget *b = ctx;
    size_t need = size + BUDGET_HEADER;
    if (need < size || need > b->left) {
        b->exceeded = true;
        return NULL;
    }
    unsigned char *p = malloc(need);
    if (!p) {
        b->exceeded = true;
        return NULL;
    }
    b->left -= need;
    memcpy(p, &need, sizeof(need));
    return p + BUDGET_HEADER;
}

static void budget_free(void *ctx, void *ptr)
{
    struct budget *b = ctx;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - BUDGET_HEADER;
    size_t need;
    memcpy(&need, p, sizeof(need));
    b->left += need;
    free(p);
}

/* --- ids ------------------------------------------------------------------ */

struct id_entry {
    uint64_t id;
    size_t index;
};

struct id_index {
    struct id_entry *e;
    size_t n;
};

static int id_cmp(const void *a, const void *b)
{
    const struct id_entry *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The index of the element with ID, or SIZE_MAX. */
static size_t id_find(const struct id_index *ix, uint64_t id)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->e[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && ix->e[lo].id == id ? ix->e[lo].index : SIZE_MAX;
}

/* --- the reader ----------------------------------------------------------- */

enum quantity_col {
    COL_COUNT,
    COL_CPU,
    COL_WALL,
    COL_ENERGY,
    COL_N,
};

static const char *const col_names[COL_N] = {"samples", "cpu", "wall", "energy"};

struct rthread {
    uint32_t pid, tid;
    const char *name;
    size_t nsamples; /* pprof samples */
    size_t begin;    /* where its samples start in the order array */
};

/* What the reader keeps of a sample between its passes, 8 bytes: a file
 * of many tiny samples has about one per 15 bytes of input.  Its
 * quantities are decoded again where they are needed (measured_at()). */
struct rsample {
    uint32_t thread; /* UINT32_MAX: no thread sample (unattributed energy only) */
    uint32_t stack;
};

/* What a sample measures, from its values (sample_values()). */
struct quantities {
    uint64_t n; /* the samples it stands for (a weight); 0: unattributed energy only */
    uint64_t cpu_ns, wall_ns;
    double energy_j;
};

/* A location, one of its lines, a function, as the reader keeps them:
 * protobuf-c's messages (an allocation each, a line a message of its own)
 * take several times the bytes they came from. */
struct rloc {
    uint64_t id, mapping_id, address;
    size_t line, nlines; /* its lines in reader.lines */
};

struct rline {
    uint64_t function_id;
    int64_t line;
};

struct rfunc {
    uint64_t id;
    int64_t name, system_name, filename;
};

struct reader {
    const char *name;
    const PbProfile *pb; /* everything but the samples (sample_at()), locations and functions */
    ProtobufCAllocator *alloc;
    const unsigned char *data; /* the file, whose samples are decoded one at a time */
    size_t len;                /* its length */
    size_t nsamples;
    char **strings; /* the string table, NUL-terminated copies in STRING_BLOCK */
    char *string_block;
    char **kept; /* per string: its copy in OUT's arena, made when a frame names it */
    char *kept_unknown, *kept_kernel;
    struct pprof_offsets off;
    struct profile *out;
    struct rloc *locs;
    struct rline *lines;
    struct rfunc *funcs;
    size_t nlocs, nfuncs;
    struct id_index mappings, locations, functions;
    int col[COL_N];            /* sample type index, or -1 */
    uint64_t col_scale[COL_N]; /* to ns (cpu, wall) */
    double energy_scale;       /* to J */
    uint64_t period_ns;        /* 0 when the period is not time */
    bool period_is_cpu;
    uint64_t *loc_pc; /* per location */
    bool *loc_named;  /* per location: has lines naming functions */
    struct rthread *threads;
    size_t nthreads;
    struct rsample *samples;
    int *value_of; /* per sample type: its value type in OUT, or -1 (a quantity) */
    size_t nvalues;
    size_t deep; /* samples whose stacks lost outer frames */
};

static const char *str_at(const struct reader *r, int64_t i)
{
    return (i >= 0 && (uint64_t)i < r->pb->n_string_table) ? r->strings[i] : NULL;
}

/* Index I must name a string; ELEMENT, AT say where for the message. */
static int check_str(const struct reader *r, int64_t i, enum pprof_element el, size_t at,
                     const char *what)
{
    if (str_at(r, i))
        return 0;
    pt_err("%s: offset %zu: %s %" PRId64 " is not in the string table (%zu strings)", r->name,
           pprof_offset(&r->off, el, at), what, i, r->pb->n_string_table);
    return -1;
}

static int build_index(const struct reader *r, struct id_index *ix, enum pprof_element el, size_t n,
                       uint64_t (*id_of)(const struct reader *, size_t), const char *what)
{
    ix->e = xcalloc(n ? n : 1, sizeof(*ix->e));
    ix->n = n;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = id_of(r, i);
        if (id == 0) {
            pt_err("%s: offset %zu: %s with id 0", r->name, pprof_offset(&r->off, el, i), what);
            return -1;
        }
        ix->e[i] = (struct id_entry){id, i};
    }
    qsort(ix->e, n, sizeof(*ix->e), id_cmp);
    for (size_t i = 1; i < n; i++)
        if (ix->e[i].id == ix->e[i - 1].id) {
            pt_err("%s: offset %zu: %s id %" PRIu64 " is used twice", r->name,
                   pprof_offset(&r->off, el, ix->e[i].index), what, ix->e[i].id);
            return -1;
        }
    return 0;
}

static uint64_t mapping_id(const struct reader *r, size_t i)
{
    return r->pb->mapping[i]->id;
}

static uint64_t location_id(const struct reader *r, size_t i)
{
    return r->locs[i].id;
}

static uint64_t function_id(const struct reader *r, size_t i)
{
    return r->funcs[i].id;
}

/* --- samples, one at a time --------------------------------------------------- */

static bool get_varint(const unsigned char *d, size_t *off, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        unsigned char b = d[(*off)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* The message whose field's tag is at offset AT (a sample, a location...):
 * where it starts and its length. */
static void field_at(const struct reader *r, size_t at, size_t *payload, size_t *len)
{
    size_t off = at;
    uint64_t tag, n;
    get_varint(r->data, &off, &tag);
    get_varint(r->data, &off, &n); /* pprof_wire_check() vouched for both */
    *payload = off;
    *len = (size_t)n;
}

/* The sample at offset AT decoded (the caller frees it with
 * sample_free()), or NULL after a message when decoding it would pass the
 * budget.  A file of many tiny samples holds most of its bytes in them:
 * decoding them one at a time keeps memory to the profile being built. */
static PbSample *sample_at(const struct reader *r, size_t at)
{
    size_t payload, len;
    field_at(r, at, &payload, &len);
    PbSample *s = perftools__profiles__sample__unpack(r->alloc, len, r->data + payload);
    if (!s)
        pt_err("%s: offset %zu: protobuf-c cannot decode this sample", r->name, at);
    return s;
}

static void sample_free(const struct reader *r, PbSample *s)
{
    if (s)
        perftools__profiles__sample__free_unpacked(s, r->alloc);
}

static int check_sample(const struct reader *r, const PbSample *s, size_t i);

/* Every index into the string table, every id a message refers to. */
static int validate(struct reader *r)
{
    const PbProfile *pb = r->pb;
    for (size_t i = 0; i < pb->n_sample_type; i++)
        if (check_str(r, pb->sample_type[i]->type, PPROF_EL_SAMPLE_TYPE, i, "sample type") ||
            check_str(r, pb->sample_type[i]->unit, PPROF_EL_SAMPLE_TYPE, i, "sample unit"))
            return -1;
    if (pb->period_type &&
        (!str_at(r, pb->period_type->type) || !str_at(r, pb->period_type->unit))) {
        pt_err("%s: offset 0: the period type is not in the string table", r->name);
        return -1;
    }
    if (!str_at(r, pb->default_sample_type) || !str_at(r, pb->drop_frames) ||
        !str_at(r, pb->keep_frames)) {
        pt_err("%s: offset 0: default_sample_type, drop_frames or keep_frames is not in the "
               "string table",
               r->name);
        return -1;
    }
    for (size_t i = 0; i < pb->n_comment; i++)
        if (!str_at(r, pb->comment[i])) {
            pt_err("%s: offset 0: comment %" PRId64 " is not in the string table", r->name,
                   pb->comment[i]);
            return -1;
        }
    if (build_index(r, &r->mappings, PPROF_EL_MAPPING, pb->n_mapping, mapping_id, "mapping") ||
        build_index(r, &r->locations, PPROF_EL_LOCATION, r->nlocs, location_id, "location") ||
        build_index(r, &r->functions, PPROF_EL_FUNCTION, r->nfuncs, function_id, "function"))
        return -1;
    for (size_t i = 0; i < r->nfuncs; i++) {
        const struct rfunc *f = &r->funcs[i];
        if (check_str(r, f->name, PPROF_EL_FUNCTION, i, "function name") ||
            check_str(r, f->system_name, PPROF_EL_FUNCTION, i, "function system name") ||
            check_str(r, f->filename, PPROF_EL_FUNCTION, i, "function file name"))
            return -1;
    }
    for (size_t i = 0; i < pb->n_mapping; i++)
        if (check_str(r, pb->mapping[i]->filename, PPROF_EL_MAPPING, i, "mapping file name") ||
            check_str(r, pb->mapping[i]->build_id, PPROF_EL_MAPPING, i, "mapping build-id"))
            return -1;
    for (size_t i = 0; i < r->nlocs; i++) {
        const struct rloc *l = &r->locs[i];
        size_t at = pprof_offset(&r->off, PPROF_EL_LOCATION, i);
        if (l->mapping_id && id_find(&r->mappings, l->mapping_id) == SIZE_MAX) {
            pt_err("%s: offset %zu: location %" PRIu64 " is in mapping %" PRIu64
                   ", which does not exist",
                   r->name, at, l->id, l->mapping_id);
            return -1;
        }
        for (size_t k = 0; k < l->nlines; k++)
            if (r->lines[l->line + k].function_id &&
                id_find(&r->functions, r->lines[l->line + k].function_id) == SIZE_MAX) {
                pt_err("%s: offset %zu: location %" PRIu64 " names function %" PRIu64
                       ", which does not exist",
                       r->name, at, l->id, r->lines[l->line + k].function_id);
                return -1;
            }
    }
    for (size_t i = 0; i < r->nsamples; i++) {
        PbSample *s = sample_at(r, pprof_offset(&r->off, PPROF_EL_SAMPLE, i));
        if (!s)
            return -1;
        int rc = check_sample(r, s, i);
        sample_free(r, s);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int check_sample(const struct reader *r, const PbSample *s, size_t i)
{
    const PbProfile *pb = r->pb;
    {
        size_t at = pprof_offset(&r->off, PPROF_EL_SAMPLE, i);
        if (s->n_value != pb->n_sample_type) {
            pt_err("%s: offset %zu: sample with %zu values, the profile has %zu sample types",
                   r->name, at, s->n_value, pb->n_sample_type);
            return -1;
        }
        for (size_t k = 0; k < s->n_value; k++)
            if (s->value[k] < 0) {
                pt_err("%s: offset %zu: sample with a negative %s value %" PRId64
                       " (a difference of profiles cannot be read)",
                       r->name, at, str_at(r, pb->sample_type[k]->type), s->value[k]);
                return -1;
            }
        for (size_t k = 0; k < s->n_location_id; k++)
            if (id_find(&r->locations, s->location_id[k]) == SIZE_MAX) {
                pt_err("%s: offset %zu: sample refers to location %" PRIu64
                       ", which does not exist",
                       r->name, at, s->location_id[k]);
                return -1;
            }
        for (size_t k = 0; k < s->n_label; k++)
            if (check_str(r, s->label[k]->key, PPROF_EL_SAMPLE, i, "label key") ||
                check_str(r, s->label[k]->str, PPROF_EL_SAMPLE, i, "label value") ||
                check_str(r, s->label[k]->num_unit, PPROF_EL_SAMPLE, i, "label unit"))
                return -1;
    }
    return 0;
}

/* --- sample types ----------------------------------------------------------- */

static uint64_t time_scale(const char *unit)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"nanoseconds", 1},        {"ns", 1},       {"microseconds", 1000},  {"us", 1000},
        {"milliseconds", 1000000}, {"ms", 1000000}, {"seconds", 1000000000}, {"s", 1000000000}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].ns;
    return 0;
}

static double energy_scale(const char *unit)
{
    static const struct {
        const char *name;
        double j;
    } units[] = {{"joules", 1},         {"J", 1},     {"millijoules", 1e-3}, {"mJ", 1e-3},
                 {"microjoules", 1e-6}, {"uJ", 1e-6}, {"nanojoules", 1e-9},  {"nJ", 1e-9}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].j;
    return 0;
}

/* A value type's name for sample type TYPE/UNIT: its type, unless that is
 * taken (a built-in metric's name, or an earlier type's): TYPE/UNIT. */
static char *value_name(const struct profile *p, const char *type, const char *unit)
{
    static const char *const builtin[] = {"cpu",   "wall",       "samples", "energy",
                                          "power", "executions", "time"};
    if (!*type)
        type = "value";
    bool taken = profile_value_type(p, type) >= 0;
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
        taken |= strcmp(type, builtin[i]) == 0;
    if (!taken)
        return xstrdup(type);
    for (unsigned k = 1;; k++) {
        char *name = k == 1 ? xasprintf("%s/%s", type, unit) : xasprintf("%s/%s#%u", type, unit, k);
        if (profile_value_type(p, name) < 0)
            return name;
        free(name);
    }
}

/* Sample types ptprof measures itself (samples, CPU and wall time in a time
 * unit, energy in joules) become its quantities; every other one a value
 * type of the profile, by its name (pprof.h). */
static int classify_types(struct reader *r)
{
    const PbProfile *pb = r->pb;
    for (int c = 0; c < COL_N; c++)
        r->col[c] = -1;
    if (pb->n_sample_type > PROF_VALUE_TYPES_MAX) {
        pt_err("%s: offset %zu: %zu sample types, more than the %u ptprof keeps", r->name,
               pprof_offset(&r->off, PPROF_EL_SAMPLE_TYPE, 0), pb->n_sample_type,
               PROF_VALUE_TYPES_MAX);
        return -1;
    }
    if (pb->n_sample_type == 0) {
        pt_err("%s: offset 0: the profile has no sample types: its samples measure nothing",
               r->name);
        return -1;
    }
    r->value_of = xcalloc(pb->n_sample_type + 1, sizeof(*r->value_of));
    for (size_t i = 0; i < pb->n_sample_type; i++) {
        const char *type = str_at(r, pb->sample_type[i]->type);
        const char *unit = str_at(r, pb->sample_type[i]->unit);
        int c = -1;
        if (strcmp(type, "samples") == 0)
            c = COL_COUNT;
        else if (strcmp(type, "cpu") == 0 && time_scale(unit))
            c = COL_CPU;
        else if (strcmp(type, "wall") == 0 && time_scale(unit))
            c = COL_WALL;
        else if (strcmp(type, "energy") == 0 && energy_scale(unit) > 0)
            c = COL_ENERGY;
        if (c < 0 || r->col[c] >= 0) {
            char *name = value_name(r->out, type, unit);
            r->value_of[i] = (int)profile_add_value_type(r->out, name, unit, PROF_VALUE_SUM);
            r->nvalues++;
            free(name);
            continue;
        }
        r->value_of[i] = -1;
        r->col[c] = (int)i;
        r->col_scale[c] = time_scale(unit);
        if (c == COL_ENERGY)
            r->energy_scale = energy_scale(unit);
    }
    if (pb->period_type && pb->period > 0) {
        uint64_t scale = time_scale(str_at(r, pb->period_type->unit));
        if (scale && (uint64_t)pb->period <= UINT64_MAX / scale) {
            r->period_ns = (uint64_t)pb->period * scale;
            r->period_is_cpu = strcmp(str_at(r, pb->period_type->type), "cpu") == 0;
        }
    }
    return 0;
}

/* --- threads and values ------------------------------------------------------ */

/* A label's number (or its string, when it is written as one). */
static bool label_number(const struct reader *r, const Perftools__Profiles__Label *l, uint64_t *v)
{
    if (l->num != 0 || l->str == 0) {
        *v = (uint64_t)l->num;
        return l->num >= 0;
    }
    const char *s = str_at(r, l->str);
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long x = strtoull(s, &end, 10);
    *v = x;
    return *end == '\0';
}

static int sample_thread(struct reader *r, const PbSample *s, size_t i, struct addr_table *by_key,
                         size_t *cap, uint32_t *thread)
{
    uint64_t pid = 0, tid = 0;
    bool has_tid = false;
    const char *name = "";
    for (size_t k = 0; k < s->n_label; k++) {
        const Perftools__Profiles__Label *l = s->label[k];
        const char *key = str_at(r, l->key);
        uint64_t *dst = strcmp(key, "pid") == 0 ? &pid : strcmp(key, "tid") == 0 ? &tid : NULL;
        if (dst) {
            uint64_t v;
            if (!label_number(r, l, &v) || v > UINT32_MAX) {
                pt_err("%s: offset %zu: label %s is not a number from 0 to %u", r->name,
                       pprof_offset(&r->off, PPROF_EL_SAMPLE, i), key, UINT32_MAX);
                return -1;
            }
            *dst = v;
            has_tid |= dst == &tid;
        } else if (strcmp(key, "thread_comm") == 0) {
            name = str_at(r, l->str);
        }
    }
    if (!has_tid)
        tid = pid;
    uint64_t v;
    if (addr_table_get(by_key, pid, tid, &v)) {
        *thread = (uint32_t)v;
        if (!*r->threads[v].name)
            r->threads[v].name = name;
        return 0;
    }
    r->threads = xgrow(r->threads, cap, r->nthreads + 1, sizeof(*r->threads));
    r->threads[r->nthreads] =
        (struct rthread){.pid = (uint32_t)pid, .tid = (uint32_t)tid, .name = name};
    addr_table_put(by_key, pid, tid, r->nthreads);
    *thread = (uint32_t)r->nthreads++;
    return 0;
}

/* Whether sample I carries any value type's value. */
static bool has_values(const struct reader *r, const PbSample *s)
{
    for (size_t k = 0; k < s->n_value; k++)
        if (r->value_of[k] >= 0 && s->value[k] != 0)
            return true;
    return false;
}

/* The quantities of sample S, at offset AT, into *Q; its count added to
 * *TOTAL.  -1 after a message when a value is out of range or the counts
 * pass 2^62. */
static int sample_values(const struct reader *r, const PbSample *s, size_t at, struct quantities *q,
                         uint64_t *total)
{
    *q = (struct quantities){0};
    for (int c = COL_CPU; c <= COL_WALL; c++) {
        if (r->col[c] < 0)
            continue;
        uint64_t v = (uint64_t)s->value[r->col[c]];
        if (v > UINT64_MAX / r->col_scale[c] / 4) {
            pt_err("%s: offset %zu: %s value %" PRIu64 " is out of range", r->name, at,
                   col_names[c], v);
            return -1;
        }
        *(c == COL_CPU ? &q->cpu_ns : &q->wall_ns) = v * r->col_scale[c];
    }
    if (r->col[COL_ENERGY] >= 0)
        q->energy_j = (double)s->value[r->col[COL_ENERGY]] * r->energy_scale;
    /* The samples it stands for: its count, else one when it measured
     * anything; a sample of energy alone is energy no thread used. */
    bool measured = q->cpu_ns > 0 || q->wall_ns > 0 || has_values(r, s);
    uint64_t count = r->col[COL_COUNT] >= 0 ? (uint64_t)s->value[r->col[COL_COUNT]] : 0;
    if (count == 0 && measured)
        count = 1;
    q->n = count;
    if (count > UINT64_MAX / 4 - *total) {
        pt_err("%s: offset %zu: a count of %" PRIu64 " makes more than 2^62 samples in all",
               r->name, at, count);
        return -1;
    }
    *total += count;
    return 0;
}

/* The sample at offset AT decoded again (the caller frees it with
 * sample_free()) and its quantities, which the pass that read it first
 * found in range. */
static PbSample *measured_at(const struct reader *r, size_t at, struct quantities *q)
{
    uint64_t total = 0; /* its count alone passed 2^62 in no pass before */
    PbSample *s = sample_at(r, at);
    if (s && sample_values(r, s, at, q, &total) != 0) {
        sample_free(r, s);
        return NULL;
    }
    return s;
}

/* --- stacks and PCs ------------------------------------------------------------ */

/* A PC per location: its address, unless another location took it first
 * (with frames of their own, both must stay apart) or it has none. */
static void assign_pcs(struct reader *r)
{
    size_t n = r->nlocs;
    r->loc_pc = xcalloc(n ? n : 1, sizeof(*r->loc_pc));
    r->loc_named = xcalloc(n ? n : 1, sizeof(*r->loc_named));
    bool table = false;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < r->locs[i].nlines; k++)
            r->loc_named[i] |= r->lines[r->locs[i].line + k].function_id != 0;
        table |= r->loc_named[i];
    }
    struct addr_table owner = {0};
    uint64_t v, next = SYNTHETIC_PC_BASE;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = r->locs[i].address;
        if (a != 0 && (!addr_table_get(&owner, 0, a, &v) || !table)) {
            addr_table_put(&owner, 0, a, i);
            r->loc_pc[i] = a;
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t a = r->locs[i].address;
        if (a != 0 && addr_table_get(&owner, 0, a, &v) && (v == i || !table))
            continue;
        while (addr_table_get(&owner, 0, next, &v))
            next += 16;
        addr_table_put(&owner, 0, next, i);
        r->loc_pc[i] = next;
        next += 16;
    }
    addr_table_free(&owner);
}

/* --- what the profile holds ------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static const PbMapping *mapping_of(const struct reader *r, const struct rloc *l)
{
    size_t m = l->mapping_id ? id_find(&r->mappings, l->mapping_id) : SIZE_MAX;
    return m == SIZE_MAX ? NULL : r->pb->mapping[m];
}

/* String I of the table in OUT's arena: one copy however many frames name
 * it (a file of many locations names few functions and files). */
static char *kept_at(struct reader *r, int64_t i)
{
    if (!r->kept)
        r->kept = xcalloc(r->pb->n_string_table + 1, sizeof(*r->kept));
    if (!r->kept[i])
        r->kept[i] = profile_arena_strdup(r->out, r->strings[i]);
    return r->kept[i];
}

static char *kept_literal(struct reader *r, char **copy, const char *s)
{
    if (!*copy)
        *copy = profile_arena_strdup(r->out, s);
    return *copy;
}

/* Two table entries (as a leaf, as a return address) for location LOC in
 * process PID, with one frame per line that names a function. */
static void add_location(struct reader *r, size_t *cap, uint32_t pid, size_t loc)
{
    const struct rloc *l = &r->locs[loc];
    const PbMapping *m = mapping_of(r, l);
    int64_t path_i = m ? m->filename : 0; /* string 0 is "" */
    const char *path = str_at(r, path_i);
    uint32_t nframes = 0;
    for (size_t k = 0; k < l->nlines; k++)
        nframes += r->lines[l->line + k].function_id != 0;
    if (nframes == 0)
        return;
    uint64_t offset =
        m && l->address >= m->memory_start ? l->address - m->memory_start + m->file_offset : 0;
    struct profile *p = r->out;
    struct prof_sym_frame *f = profile_arena_alloc(p, nframes * sizeof(*f));
    uint32_t j = 0;
    for (size_t k = 0; k < l->nlines; k++) {
        const struct rline *ln = &r->lines[l->line + k];
        if (!ln->function_id)
            continue;
        const struct rfunc *fn = &r->funcs[id_find(&r->functions, ln->function_id)];
        char *name = kept_at(r, fn->name), *sys = kept_at(r, fn->system_name);
        if (!*name)
            name = *sys ? sys : kept_literal(r, &r->kept_unknown, "[unknown]");
        /* Without a mapping, the function's own file is its module
         * (a Python frame's .py file, as ptprof's recording names it). */
        bool syscall = strncmp(name, "[syscall ", 9) == 0;
        char *module = kept_at(r, *path ? path_i : syscall ? 0 : fn->filename);
        char *binary = *module   ? module + (base_name(module) - module)
                       : syscall ? kept_literal(r, &r->kept_kernel, "[kernel]")
                                 : kept_literal(r, &r->kept_unknown, "[unknown]");
        f[j] = (struct prof_sym_frame){
            .binary = binary,
            .path = module,
            .function = name,
            .mangled = sys,
            .file = kept_at(r, fn->filename),
            .line = ln->line > 0 && ln->line <= UINT32_MAX ? (uint32_t)ln->line : 0,
            .inlined = j + 1 < nframes,
        };
        j++;
    }
    /* Both entries share the frames: they are the same names. */
    p->locations_in_arena = true; /* every location is made here */
    for (int ra = 0; ra <= 1; ra++) {
        p->locations = xgrow(p->locations, cap, p->nlocations + 1, sizeof(*p->locations));
        p->locations[p->nlocations++] = (struct prof_location){
            .pid = pid,
            .pc = r->loc_pc[loc],
            .return_address = ra,
            .offset = offset,
            .nframes = nframes,
            .frames = f,
        };
    }
}

/* Location ids to stacks, as the samples are read: a stack table, and the
 * (process, location) pairs whose table entries are made. */
struct stack_builder {
    struct stack_table *table;
    uint64_t *first;        /* per location: 1 + the pid of the first process using it, 0: none */
    struct addr_table used; /* (pid, location) for the other processes */
    uint64_t *pcs;          /* PPROF_MAX_DEPTH */
    size_t loc_cap;
};

static void stacks_start(struct reader *r, struct stack_builder *b)
{
    struct profile *p = r->out;
    p->stacks = xcalloc(1, sizeof(*p->stacks)); /* id 0: none */
    p->nstacks = 1;
    size_t n = r->nlocs;
    *b = (struct stack_builder){.table = stack_table_new(),
                                .first = xcalloc(n ? n : 1, sizeof(*b->first)),
                                .pcs = xmalloc(PPROF_MAX_DEPTH * sizeof(*b->pcs))};
}

/* The stack of sample S of process PID, and the table entries of its
 * named locations in PID. */
static uint32_t sample_stack(struct reader *r, struct stack_builder *b, const PbSample *s,
                             uint32_t pid)
{
    uint32_t depth =
        s->n_location_id > PPROF_MAX_DEPTH ? PPROF_MAX_DEPTH : (uint32_t)s->n_location_id;
    r->deep += depth < s->n_location_id;
    uint64_t v;
    for (uint32_t k = 0; k < depth; k++) {
        size_t loc = id_find(&r->locations, s->location_id[k]);
        b->pcs[k] = r->loc_pc[loc];
        if (!r->loc_named[loc] || b->first[loc] == (uint64_t)pid + 1)
            continue;
        if (!b->first[loc]) {
            b->first[loc] = (uint64_t)pid + 1;
        } else {
            if (addr_table_get(&b->used, pid, loc, &v))
                continue;
            addr_table_put(&b->used, pid, loc, 1);
        }
        add_location(r, &b->loc_cap, pid, loc);
    }
    return stack_table_id(b->table, r->out, b->pcs, depth);
}

static void stacks_end(struct stack_builder *b)
{
    free(b->first);
    free(b->pcs);
    stack_table_free(b->table);
    addr_table_free(&b->used);
}

static void parse_build_id(const char *hex, struct prof_map *m)
{
    size_t n = strlen(hex);
    if (n == 0 || n % 2 || n / 2 > PROF_BUILD_ID_MAX)
        return;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * i + (size_t)k];
            unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 16u;
            if (d > 15)
                return; /* Go's build ids are not hex: no ELF build-id */
            v = v << 4 | d;
        }
        m->build_id[i] = (uint8_t)v;
    }
    m->build_id_len = (uint8_t)(n / 2);
}

static int fill_processes(struct reader *r, uint64_t t0)
{
    const PbProfile *pb = r->pb;
    struct profile *p = r->out;
    size_t cap = 0;
    struct addr_table seen = {0};
    uint64_t v;
    for (size_t t = 0; t < r->nthreads; t++) {
        if (addr_table_get(&seen, 0, r->threads[t].pid, &v))
            continue;
        addr_table_put(&seen, 0, r->threads[t].pid, 1);
        const char *exe = pb->n_mapping ? str_at(r, pb->mapping[0]->filename) : "";
        p->processes = xgrow(p->processes, &cap, p->nprocesses + 1, sizeof(*p->processes));
        p->processes[p->nprocesses++] =
            (struct prof_process){.pid = r->threads[t].pid, .start_ns = t0, .exe = xstrdup(exe)};
    }
    addr_table_free(&seen);
    if (pb->n_mapping && (uint64_t)p->nprocesses * pb->n_mapping > MAX_MAPS) {
        pt_err("%s: offset %zu: %zu mappings in %zu processes make more than %" PRIu64 " maps",
               r->name, pprof_offset(&r->off, PPROF_EL_MAPPING, 0), pb->n_mapping, p->nprocesses,
               MAX_MAPS);
        return -1;
    }
    p->maps = xcalloc(p->nprocesses * pb->n_mapping + 1, sizeof(*p->maps));
    for (size_t i = 0; i < p->nprocesses; i++)
        for (size_t k = 0; k < pb->n_mapping; k++) {
            const PbMapping *m = pb->mapping[k];
            struct prof_map *pm = &p->maps[p->nmaps++];
            *pm = (struct prof_map){
                .pid = p->processes[i].pid,
                .time_ns = t0,
                .start = m->memory_start,
                .end = m->memory_limit,
                .offset = m->file_offset,
                .perms = MAP_PERM_READ | MAP_PERM_EXEC,
                .path = xstrdup(str_at(r, m->filename)),
            };
            parse_build_id(str_at(r, m->build_id), pm);
        }
    p->threads = xcalloc(r->nthreads + 1, sizeof(*p->threads));
    for (size_t t = 0; t < r->nthreads; t++)
        p->threads[p->nthreads++] = (struct prof_thread){.pid = r->threads[t].pid,
                                                         .tid = r->threads[t].tid,
                                                         .start_ns = t0,
                                                         .name = xstrdup(r->threads[t].name)};
    return 0;
}

/* --- the timeline ----------------------------------------------------------------- */

/* Parts [A, B) of N equal integer parts of V (parts add up to V). */
static uint64_t part(uint64_t v, uint64_t n, uint64_t a, uint64_t b)
{
    if (n == 0)
        return 0;
    return (uint64_t)((unsigned __int128)v * b / n - (unsigned __int128)v * a / n);
}

struct timeline {
    struct profile *p;
    size_t cap;
    bool energy;
    double energy_j; /* the counter so far */
    uint64_t t;
};

/* A sample at TIME_NS of NTHREADS thread samples, with weights and
 * thread values when asked (profile_sample_alloc()). */
static struct prof_sample *push_sample(struct timeline *tl, uint64_t time_ns, uint32_t nthreads,
                                       bool weights, bool thread_values)
{
    struct profile *p = tl->p;
    p->samples = xgrow(p->samples, &tl->cap, p->nsamples + 1, sizeof(*p->samples));
    struct prof_sample *s = &p->samples[p->nsamples++];
    *s = (struct prof_sample){.time_ns = time_ns};
    /* A thread-less sample still gets memory: no NULL goes to memcpy. */
    profile_sample_alloc(p, s, nthreads, weights, thread_values);
    if (tl->energy) {
        s->values = xmalloc(sizeof(*s->values));
        s->values[0] = tl->energy_j;
    }
    return s;
}

/* The samples as the timeline takes them: each thread's together (struct
 * rthread.begin), then those of no thread (from NTHREADED on), each by its
 * offset in the file (4 bytes under 4 GiB) and its stack.  While samples
 * are laid out, the reader keeps nothing else of them. */
struct order {
    void *at; /* pprof_offset_get() */
    uint32_t *stack;
    bool narrow;
    size_t nthreaded, n;
};

static size_t order_at(const struct order *o, size_t k)
{
    return pprof_offset_get(o->at, o->narrow, k);
}

static void order_set(struct order *o, size_t k, size_t at, uint32_t stack)
{
    pprof_offset_put(o->at, o->narrow, k, at);
    o->stack[k] = stack;
}

/* The thread's samples, its first one chosen so that as little wall time
 * as possible is lost: ptprof counts none at a thread's first appearance,
 * and a sample counted twice or more can give it to the others. */
static int order_thread(const struct reader *r, struct order *order, const struct rthread *t)
{
    size_t best = 0;
    uint64_t best_loss = UINT64_MAX;
    for (size_t k = 0; k < t->nsamples; k++) {
        struct quantities q;
        PbSample *s = measured_at(r, order_at(order, t->begin + k), &q);
        if (!s)
            return -1;
        sample_free(r, s);
        uint64_t loss = q.n == 1 ? q.wall_ns : 0;
        if (loss < best_loss) {
            best_loss = loss;
            best = k;
        }
        if (loss == 0)
            break;
    }
    size_t at = order_at(order, t->begin + best);
    uint32_t stack = order->stack[t->begin + best];
    for (size_t k = t->begin + best; k > t->begin; k--)
        order_set(order, k, order_at(order, k - 1), order->stack[k - 1]);
    order_set(order, t->begin, at, stack);
    return 0;
}

/* What one thread sample of the timeline stands for: units [A, B) of the
 * N a pprof sample is counted. */
struct unit {
    uint64_t a, b;
    uint64_t cpu_ns, wall_ns;
    double energy_j;
};

/* Units [A, B) of S, the first of its thread's samples or not (pprof.h:
 * CPU, wall time and energy split evenly; the first unit of a thread has
 * no wall time, which the others then hold).  -1 when they overflow. */
static int measure_unit(const struct reader *r, const struct quantities *s, bool first_sample,
                        struct unit *u)
{
    uint64_t k = u->b - u->a;
    bool has_wall = r->col[COL_WALL] >= 0, cpu_col = r->col[COL_CPU] >= 0;
    if (!cpu_col && r->period_ns && k > UINT64_MAX / r->period_ns)
        return -1;
    u->cpu_ns = cpu_col            ? part(s->cpu_ns, s->n, u->a, u->b)
                : r->period_is_cpu ? r->period_ns * k
                                   : 0;
    if (!has_wall)
        u->wall_ns = cpu_col || r->period_is_cpu ? u->cpu_ns : r->period_ns * k;
    else if (first_sample)
        u->wall_ns = u->a == 0 ? 0 : part(s->wall_ns, s->n - 1, u->a - 1, u->b - 1);
    else
        u->wall_ns = part(s->wall_ns, s->n, u->a, u->b);
    u->energy_j = s->cpu_ns ? s->energy_j * (double)u->cpu_ns / (double)s->cpu_ns
                            : s->energy_j * (double)k / (double)s->n;
    return 0;
}

/* Units [A, B) of pprof sample I's values into OUT's thread values. */
static void unit_values(const struct reader *r, const PbSample *pb, const struct quantities *s,
                        const struct unit *u, struct prof_sample *out)
{
    uint64_t *values = prof_all_thread_values(out);
    if (!values)
        return;
    for (size_t k = 0; k < pb->n_value; k++)
        if (r->value_of[k] >= 0)
            values[r->value_of[k]] = part((uint64_t)pb->value[k], s->n, u->a, u->b);
}

static int lay_out(struct reader *r, const struct order *order, uint64_t t0)
{
    struct profile *p = r->out;
    struct timeline tl = {.p = p, .energy = r->col[COL_ENERGY] >= 0, .t = t0};
    if (tl.energy)
        push_sample(&tl, tl.t, 0, false, false); /* the counter's start: energy is a difference */
    for (size_t ti = 0; ti < r->nthreads; ti++) {
        const struct rthread *th = &r->threads[ti];
        uint64_t cpu = 0;
        bool first_unit = true;
        for (size_t k = 0; k < th->nsamples; k++) {
            size_t at = order_at(order, th->begin + k);
            uint32_t stack = order->stack[th->begin + k];
            /* Its quantities and values: decoded once more. */
            struct quantities q;
            PbSample *pbs = measured_at(r, at, &q);
            if (!pbs)
                return -1;
            bool cut = pbs->n_location_id > PPROF_MAX_DEPTH; /* outer frames lost */
            bool first_sample = k == 0;
            uint64_t pc = p->stacks[stack].depth ? p->stacks[stack].pcs[0] : 0;
            /* One thread sample standing for all its counts; a thread's
             * first: one for its first count, which has no wall time. */
            struct unit units[2] = {{0, q.n, 0, 0, 0}, {1, q.n, 0, 0, 0}};
            size_t nunits = 1;
            if (first_sample && q.n > 1) {
                units[0].b = 1;
                nunits = 2;
            }
            for (size_t n = 0; n < nunits; n++) {
                struct unit *u = &units[n];
                uint64_t advance = 0;
                bool overflow = measure_unit(r, &q, first_sample, u) != 0;
                advance = first_unit ? 0 : u->wall_ns;
                if (overflow || advance > UINT64_MAX - tl.t || u->cpu_ns > UINT64_MAX - cpu) {
                    pt_err("%s: offset %zu: the samples' times add up past 2^64 ns", r->name, at);
                    sample_free(r, pbs);
                    return -1;
                }
                /* The energy of an interval goes to its threads by CPU time
                 * over the interval: make the interval this sample's CPU. */
                if (u->energy_j > 0 && u->cpu_ns > 0 && advance > u->cpu_ns)
                    push_sample(&tl, tl.t + advance - u->cpu_ns, 0, false, false);
                tl.t += advance;
                cpu += u->cpu_ns;
                tl.energy_j += u->energy_j;
                struct prof_sample *ps =
                    push_sample(&tl, tl.t, 1, u->b - u->a != 1, r->nvalues > 0);
                ps->threads[0] = (struct prof_thread_sample){
                    .pid = th->pid,
                    .tid = th->tid,
                    .pc = pc,
                    .cpu_ns = cpu,
                    .stack = stack,
                    .syscall = -1,
                    .flags = cut ? PROF_THREAD_STACK_TRUNCATED : 0,
                };
                if (ps->has_weights)
                    prof_weights(ps)[0] = u->b - u->a;
                unit_values(r, pbs, &q, u, ps);
                if (first_unit)
                    p->threads[ti].start_ns = tl.t;
                first_unit = false;
            }
            sample_free(r, pbs);
        }
    }
    /* Energy no thread used: intervals without threads. */
    for (size_t k = order->nthreaded; tl.energy && k < order->n; k++) {
        struct quantities q;
        PbSample *s = measured_at(r, order_at(order, k), &q);
        if (!s)
            return -1;
        sample_free(r, s);
        if (q.energy_j <= 0)
            continue;
        tl.energy_j += q.energy_j;
        push_sample(&tl, tl.t, 0, false, false);
    }
    return 0;
}

static void fill_meta(struct reader *r)
{
    const PbProfile *pb = r->pb;
    struct profile *p = r->out;
    size_t cap = 0, len = 1;
    for (size_t i = 0; i < pb->n_sample_type; i++)
        len += strlen(str_at(r, pb->sample_type[i]->type)) +
               strlen(str_at(r, pb->sample_type[i]->unit)) + 2;
    char *types = xmalloc(len);
    types[0] = '\0';
    for (size_t i = 0; i < pb->n_sample_type; i++) {
        if (i)
            strcat(types, " ");
        strcat(types, str_at(r, pb->sample_type[i]->type));
        strcat(types, "/");
        strcat(types, str_at(r, pb->sample_type[i]->unit));
    }
    p->meta = xgrow(p->meta, &cap, p->nmeta + 3 + pb->n_comment, sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){xstrdup("pprof_sample_types"), types};
    /* What info calls the program: pprof's main binary. */
    if (pb->n_mapping && *str_at(r, pb->mapping[0]->filename))
        p->meta[p->nmeta++] =
            (struct prof_meta){xstrdup("command"), xstrdup(str_at(r, pb->mapping[0]->filename))};
    if (*str_at(r, pb->default_sample_type))
        p->meta[p->nmeta++] = (struct prof_meta){xstrdup("pprof_default_sample_type"),
                                                 xstrdup(str_at(r, pb->default_sample_type))};
    for (size_t i = 0; i < pb->n_comment; i++)
        p->meta[p->nmeta++] =
            (struct prof_meta){xstrdup("comment"), xstrdup(str_at(r, pb->comment[i]))};
}

/* What ptprof's writer said of the totals (PPROF_TOTALS_COMMENT): the
 * samples recorded and ideal, and whether the profile's CPU time was
 * sampled (its rate per CPU second, as the perf engine's). */
static void restore_totals(struct reader *r)
{
    struct profile *p = r->out;
    bool per_cpu = false;
    for (size_t i = 0; i < p->nmeta; i++) {
        uint64_t recorded, ideal;
        char per[5];
        int end = 0;
        if (strcmp(p->meta[i].key, "comment") != 0 ||
            sscanf(p->meta[i].value, PPROF_TOTALS_SCAN, &recorded, &ideal, per, &end) != 3 ||
            p->meta[i].value[end] != '\0') /* END stays 0 unless the whole line matched */
            continue;
        p->totals.samples = recorded;
        p->totals.ideal_samples = ideal;
        per_cpu = strcmp(per, "CPU") == 0;
    }
    if (per_cpu) {
        p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
        p->meta[p->nmeta++] = (struct prof_meta){xstrdup("cpu_time"), xstrdup("sampled")};
    }
}

/* The metric analyses show unless told, as `go tool pprof` chooses its
 * sample index: the default sample type, else the last one. */
static void set_default_metric(struct reader *r)
{
    const PbProfile *pb = r->pb;
    static const char *const col_metric[COL_N] = {"samples", "cpu", "wall", "energy"};
    const char *want = str_at(r, pb->default_sample_type);
    size_t chosen = pb->n_sample_type - 1;
    for (size_t i = 0; *want && i < pb->n_sample_type; i++)
        if (strcmp(str_at(r, pb->sample_type[i]->type), want) == 0) {
            chosen = i;
            break;
        }
    const char *name = NULL;
    if (r->value_of[chosen] >= 0)
        name = r->out->value_types[r->value_of[chosen]].name;
    for (int c = 0; !name && c < COL_N; c++)
        if (r->col[c] == (int)chosen)
            name = col_metric[c];
    if (name)
        r->out->default_metric = xstrdup(name);
}

static int convert(struct reader *r)
{
    const PbProfile *pb = r->pb;
    struct profile *p = r->out;
    if (validate(r) != 0 || classify_types(r) != 0)
        return -1;
    r->samples = xmalloc((r->nsamples ? r->nsamples : 1) * sizeof(*r->samples));
    struct addr_table by_key = {0};
    size_t threads_cap = 0;
    uint64_t total = 0;
    int rc = 0;
    /* One pass decodes each sample once for its quantities, its thread and
     * its stack.  Samples that carry no thread sample (energy no thread
     * used) make no thread of their own, nor a stack. */
    assign_pcs(r);
    struct stack_builder stacks;
    stacks_start(r, &stacks);
    for (size_t i = 0; i < r->nsamples && rc == 0; i++) {
        struct rsample *rs = &r->samples[i];
        *rs = (struct rsample){.thread = UINT32_MAX, .stack = 0};
        struct quantities q;
        size_t at = pprof_offset(&r->off, PPROF_EL_SAMPLE, i);
        PbSample *s = sample_at(r, at);
        rc = s ? sample_values(r, s, at, &q, &total) : -1;
        if (rc == 0 && q.n)
            rc = sample_thread(r, s, i, &by_key, &threads_cap, &rs->thread);
        if (rc == 0 && q.n)
            rs->stack = sample_stack(r, &stacks, s, r->threads[rs->thread].pid);
        sample_free(r, s);
    }
    stacks_end(&stacks);
    addr_table_free(&by_key);
    /* What only the samples' stacks needed. */
    free(r->mappings.e);
    free(r->locations.e);
    free(r->functions.e);
    free(r->loc_pc);
    free(r->loc_named);
    r->mappings.e = r->locations.e = r->functions.e = NULL;
    free(r->kept);
    free(r->locs);
    free(r->lines);
    free(r->funcs);
    r->loc_pc = NULL;
    r->loc_named = NULL;
    r->kept = NULL;
    r->locs = NULL;
    r->lines = NULL;
    r->funcs = NULL;
    if (rc != 0)
        return -1;
    uint64_t t0 = pb->time_nanos > 0 ? (uint64_t)pb->time_nanos : 0;
    if (fill_processes(r, t0) != 0)
        return -1;

    /* Each thread's samples together, threads in order of appearance. */
    struct order order = {.narrow = r->len <= UINT32_MAX, .n = r->nsamples};
    for (size_t i = 0; i < r->nsamples; i++)
        if (r->samples[i].thread != UINT32_MAX) {
            r->threads[r->samples[i].thread].nsamples++;
            order.nthreaded++;
        }
    for (size_t t = 0, at = 0; t < r->nthreads; t++) {
        r->threads[t].begin = at;
        at += r->threads[t].nsamples;
        r->threads[t].nsamples = 0;
    }
    order.at = xmalloc((order.n ? order.n : 1) * pprof_offset_width(order.narrow));
    order.stack = xmalloc((order.n ? order.n : 1) * sizeof(*order.stack));
    for (size_t i = 0, k = order.nthreaded; i < r->nsamples; i++) {
        uint32_t t = r->samples[i].thread;
        size_t at = pprof_offset(&r->off, PPROF_EL_SAMPLE, i);
        if (t == UINT32_MAX)
            order_set(&order, k++, at, 0);
        else
            order_set(&order, r->threads[t].begin + r->threads[t].nsamples++, at,
                      r->samples[i].stack);
    }
    /* From here on, the order is all the reader holds of the samples. */
    free(r->samples);
    r->samples = NULL;
    pprof_offsets_drop(&r->off, PPROF_EL_SAMPLE);
    for (size_t t = 0; t < r->nthreads && rc == 0; t++)
        if (r->threads[t].nsamples)
            rc = order_thread(r, &order, &r->threads[t]);
    if (rc != 0) {
        free(order.at);
        free(order.stack);
        return -1;
    }

    if (r->col[COL_ENERGY] >= 0) {
        p->channels = xcalloc(1, sizeof(*p->channels));
        p->channels[0] = (struct prof_channel){xstrdup("energy"), xstrdup("J"), PMU_KIND_ENERGY};
        p->nchannels = 1;
    }
    rc = lay_out(r, &order, t0);
    free(order.at);
    free(order.stack);
    if (rc != 0)
        return -1;
    uint64_t end = p->nsamples ? p->samples[p->nsamples - 1].time_ns : t0;
    p->totals = (struct prof_totals){
        .wall_ns = pb->duration_nanos > 0 ? (uint64_t)pb->duration_nanos : end - t0,
        .samples = total,
        .ideal_samples = total,
    };
    p->has_totals = true;
    p->frequency = r->period_ns ? 1e9 / (double)r->period_ns : 0;
    set_default_metric(r);
    fill_meta(r);
    restore_totals(r);
    if (r->deep)
        pt_warn("%s: %zu sample%s deeper than %u frames kept only %s innermost %u", r->name,
                r->deep, r->deep == 1 ? "" : "s", PPROF_MAX_DEPTH, r->deep == 1 ? "its" : "their",
                PPROF_MAX_DEPTH);
    p->format = xstrdup("pprof");
    return 0;
}

/* The fields of the kinds in mask KINDS (1 << enum pprof_element) copied
 * from the file in file order when INCLUDE, else the file without them,
 * into DST (NULL: only counted); returns their length. */
static size_t copy_fields(const struct reader *r, unsigned kinds, bool include, unsigned char *dst)
{
    size_t next[PPROF_EL_COUNT] = {0}, from = 0, n = 0;
    for (;;) {
        int k = -1;
        size_t at = r->len, payload, len;
        for (int e = 0; e < PPROF_EL_COUNT; e++)
            if ((kinds >> e & 1) && next[e] < r->off.n[e] &&
                pprof_offset(&r->off, (enum pprof_element)e, next[e]) < at) {
                k = e;
                at = pprof_offset(&r->off, (enum pprof_element)e, next[e]);
            }
        if (!include) { /* what lies before the next field */
            if (dst)
                memcpy(dst + n, r->data + from, at - from);
            n += at - from;
        }
        if (k < 0)
            return n;
        next[k]++;
        field_at(r, at, &payload, &len);
        if (include) {
            if (dst)
                memcpy(dst + n, r->data + at, payload + len - at);
            n += payload + len - at;
        }
        from = payload + len;
    }
}

/* The decoded locations and functions of LF into the reader's tables. */
static void take_locations(struct reader *r, const PbProfile *lf)
{
    size_t nlines = 0;
    for (size_t i = 0; i < lf->n_location; i++)
        nlines += lf->location[i]->n_line;
    r->nlocs = lf->n_location;
    r->nfuncs = lf->n_function;
    r->locs = xmalloc((r->nlocs ? r->nlocs : 1) * sizeof(*r->locs));
    r->lines = xmalloc((nlines ? nlines : 1) * sizeof(*r->lines));
    r->funcs = xmalloc((r->nfuncs ? r->nfuncs : 1) * sizeof(*r->funcs));
    for (size_t i = 0, at = 0; i < lf->n_location; i++) {
        const PbLocation *l = lf->location[i];
        r->locs[i] = (struct rloc){.id = l->id,
                                   .mapping_id = l->mapping_id,
                                   .address = l->address,
                                   .line = at,
                                   .nlines = l->n_line};
        for (size_t k = 0; k < l->n_line; k++)
            r->lines[at++] = (struct rline){l->line[k]->function_id, l->line[k]->line};
    }
    for (size_t i = 0; i < lf->n_function; i++) {
        const PbFunction *f = lf->function[i];
        r->funcs[i] = (struct rfunc){f->id, f->name, f->system_name, f->filename};
    }
}

bool pprof_detect(const void *data, size_t len)
{
    return pprof_wire_starts_like(data, len) || pprof_wire_check(NULL, data, len, NULL) == 0;
}

int pprof_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    profile_init(out);
    struct reader r = {.name = name, .out = out};
    if (pprof_wire_check(name, data, len, &r.off) != 0)
        return -1;
    size_t cap = len > (SIZE_MAX - (1u << 20)) / PPROF_DECODE_FACTOR
                     ? SIZE_MAX
                     : len * PPROF_DECODE_FACTOR + (1u << 20);
    struct budget b = {.left = cap};
    ProtobufCAllocator alloc;
    alloc.alloc = budget_alloc;
    alloc.free = budget_free;
    alloc.allocator_data = &b;
    /* The samples are decoded one at a time from the file (sample_at()),
     * the locations and functions at once into tables of the reader's
     * (take_locations()), everything else at once. */
    r.data = data;
    r.len = len;
    r.nsamples = r.off.n[PPROF_EL_SAMPLE];
    r.alloc = &alloc;
    unsigned lf = 1u << PPROF_EL_LOCATION | 1u << PPROF_EL_FUNCTION;
    size_t rest_len = copy_fields(&r, lf | 1u << PPROF_EL_SAMPLE, false, NULL);
    size_t lf_len = copy_fields(&r, lf, true, NULL);
    unsigned char *buf = xmalloc(rest_len > lf_len ? rest_len : lf_len ? lf_len : 1);
    copy_fields(&r, lf | 1u << PPROF_EL_SAMPLE, false, buf);
    PbProfile *pb = perftools__profiles__profile__unpack(&alloc, rest_len, buf);
    PbProfile *locs = NULL;
    if (pb) {
        copy_fields(&r, lf, true, buf);
        locs = perftools__profiles__profile__unpack(&alloc, lf_len, buf);
    }
    free(buf);
    if (!pb || !locs) {
        if (b.exceeded)
            pt_err("%s: offset 0: decoding it would take more than %zu MiB", name, cap >> 20);
        else
            pt_err("%s: offset 0: protobuf-c cannot decode it as a pprof Profile", name);
        perftools__profiles__profile__free_unpacked(pb, &alloc);
        pprof_offsets_free(&r.off);
        return -1;
    }
    take_locations(&r, locs);
    perftools__profiles__profile__free_unpacked(locs, &alloc);
    r.pb = pb;
    /* Bytes on the wire (pprof.proto): C strings here, cut at a NUL, in one
     * block (no allocation each: a file may hold many short names). */
    size_t bytes = 1;
    for (size_t i = 0; i < pb->n_string_table; i++)
        bytes += pb->string_table[i].len + 1; /* each is within the input */
    r.strings = xcalloc(pb->n_string_table + 1, sizeof(*r.strings));
    char *block = r.string_block = xmalloc(bytes);
    for (size_t i = 0; i < pb->n_string_table; i++) {
        const ProtobufCBinaryData *bin = &pb->string_table[i];
        r.strings[i] = block;
        if (bin->len)
            memcpy(block, bin->data, bin->len);
        block[bin->len] = '\0';
        block += bin->len + 1;
    }
    int rc = convert(&r);
    free(r.string_block);
    free(r.strings);
    free(r.kept);
    perftools__profiles__profile__free_unpacked(pb, &alloc);
    pprof_offsets_free(&r.off);
    free(r.mappings.e);
    free(r.locations.e);
    free(r.functions.e);
    free(r.loc_pc);
    free(r.loc_named);
    free(r.locs);
    free(r.lines);
    free(r.funcs);
    free(r.threads);
    free(r.samples);
    free(r.value_of);
    if (rc != 0)
        profile_free(out);
    return rc;
}
