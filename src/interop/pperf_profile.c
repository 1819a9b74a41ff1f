/*
 * pperf_profile.c - see pperf.h: the original raw format as a struct
 * profile (profile.h), for every analysis.
 *
 * Map entries become maps placed by pperf_place_maps(): a PC's file offset
 * is then pc - start + offset for either form of the table, which is what
 * the symbolizer computes for every format.
 */
#include "interop/pperf.h"
#include "model/maps.h"
#include "symbol/binary_finder.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Microseconds to nanoseconds; a hostile header must not wrap around. */
static uint64_t us_to_ns(uint64_t us)
{
    return us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
}

static void add_meta(struct profile *p, const char *key, const char *value)
{
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){.key = xstrdup(key), .value = xstrdup(value)};
}

/* The original's default build measures nothing and says so as power 0.0 in
 * every sample: a channel that would only report zero energy. */
static bool is_dummy_pmu(const struct pperf_profile *in)
{
    if (in->magic != PPERF_DUMMY_MAGIC || in->pmu_size != PPERF_DUMMY_PMU_SIZE)
        return false;
    for (uint64_t i = 0; i < in->nsamples; i++)
        if (in->samples[i].pmu[0] != 0.0)
            return false;
    return true;
}

static void pperf_channels(const struct pperf_profile *in, struct profile *out)
{
    /* Values exist only when the PMU bytes are whole doubles (pperf.h). */
    size_t n = in->pmu_size % 8 == 0 ? in->pmu_size / 8 : 0;
    if (n == 0)
        return;
    if (is_dummy_pmu(in)) {
        add_meta(out, "pperf.pmu", "dummy");
        return;
    }
    enum pmu_kind kind = PMU_KIND_CUSTOM;
    const char *unit = "";
    switch (in->magic) {
    case 1:
        kind = PMU_KIND_CURRENT;
        unit = "A";
        break;
    case 2:
        kind = PMU_KIND_VOLTAGE;
        unit = "V";
        break;
    case 3:
        kind = PMU_KIND_POWER;
        unit = "W";
        break;
    default:
        break;
    }
    out->channels = xcalloc(n, sizeof(*out->channels));
    out->nchannels = n;
    for (size_t i = 0; i < n; i++) {
        out->channels[i].name = n == 1 ? xstrdup("pmu") : xasprintf("pmu%zu", i);
        out->channels[i].unit = xstrdup(unit);
        out->channels[i].kind = kind;
    }
}

/* One prof_thread per distinct tid, in order of first appearance. */
static void pperf_threads(const struct pperf_profile *in, uint32_t pid, struct profile *out)
{
    size_t cap = 0;
    for (uint64_t i = 0; i < in->nsamples; i++) {
        const struct pperf_sample *s = &in->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            uint32_t tid = s->threads[t].tid;
            bool known = false;
            /* Linear: the original format holds a handful of threads. */
            for (size_t k = out->nthreads; k-- > 0 && !known;)
                known = out->threads[k].tid == tid;
            if (known)
                continue;
            out->threads = xgrow(out->threads, &cap, out->nthreads + 1, sizeof(*out->threads));
            out->threads[out->nthreads++] = (struct prof_thread){
                .pid = pid,
                .tid = tid,
                .start_ns = us_to_ns(s->wall_us),
                .name = xstrdup(""),
            };
        }
    }
}

/* The maps, each placed in its file (found as SEARCH says, as the
 * symbolizer will find it); META "pperf.maps" names their form. */
static void pperf_maps(const struct pperf_profile *in, const char *path,
                       const struct binary_search *search, uint32_t pid, uint64_t start_ns,
                       struct profile *out)
{
    if (in->nmaps == 0)
        return;
    out->maps = xcalloc(in->nmaps, sizeof(*out->maps));
    out->nmaps = in->nmaps;
    for (uint32_t i = 0; i < in->nmaps; i++) {
        const struct pperf_map *m = &in->maps[i];
        uint64_t end = m->address + m->size;
        out->maps[i] = (struct prof_map){
            .pid = pid,
            .time_ns = start_ns,
            .start = m->address,
            .end = end < m->address ? UINT64_MAX : end,
            /* The format keeps only files with code. */
            .perms = MAP_PERM_READ | MAP_PERM_EXEC,
            .path = xstrdup(m->label),
        };
    }

    static const struct binary_search nothing_said;
    if (!search)
        search = &nothing_said;
    char **dirs;
    size_t ndirs = binary_search_dirs(search->dirs, search->ndirs, path, &dirs);
    struct binary_finder *finder = binary_finder_new((const char *const *)dirs, ndirs);
    /* The symbolizer reports a --binary that names nothing. */
    binary_finder_give(finder, out, search->binaries, search->nbinaries, false);
    struct pperf_place *place = xcalloc(in->nmaps, sizeof(*place));
    pperf_place_maps(path && strcmp(path, "-") != 0 ? path : "<stdin>", in, finder, place);
    size_t loads = 0;
    for (uint32_t i = 0; i < in->nmaps; i++) {
        loads += place[i].form == PPERF_ENTRY_LOAD;
        out->maps[i].offset = place[i].offset;
    }
    add_meta(out, "pperf.maps", loads == 0 ? "mapping" : loads == in->nmaps ? "load" : "mixed");
    free(place);
    binary_finder_free(finder);
    binary_search_dirs_free(dirs, ndirs);
}

int profile_from_pperf(const struct pperf_profile *in, const char *path,
                       const struct binary_search *search, struct profile *out)
{
    profile_init(out);
    out->format = xstrdup("pperf");

    uint32_t pid = 0;
    if (in->nsamples > 0 && in->samples[0].nthreads > 0)
        pid = in->samples[0].threads[0].tid;
    uint64_t start_ns = in->nsamples > 0 ? us_to_ns(in->samples[0].wall_us) : 0;

    pperf_channels(in, out);

    out->processes = xcalloc(1, sizeof(*out->processes));
    out->nprocesses = 1;
    out->processes[0] = (struct prof_process){.pid = pid, .start_ns = start_ns, .exe = xstrdup("")};

    pperf_threads(in, pid, out);

    out->stacks = xcalloc(1, sizeof(*out->stacks));
    out->nstacks = 1;

    if (in->nsamples > 0) {
        out->samples = xcalloc((size_t)in->nsamples, sizeof(*out->samples));
        out->nsamples = (size_t)in->nsamples;
    }
    for (size_t i = 0; i < out->nsamples; i++) {
        const struct pperf_sample *s = &in->samples[i];
        struct prof_sample *d = &out->samples[i];
        d->time_ns = us_to_ns(s->wall_us);
        if (out->nchannels) {
            d->values = xmalloc(out->nchannels * sizeof(double));
            memcpy(d->values, s->pmu, out->nchannels * sizeof(double));
        }
        profile_sample_alloc(out, d, s->nthreads, false, false);
        for (uint32_t t = 0; t < s->nthreads; t++)
            d->threads[t] = (struct prof_thread_sample){
                .pid = pid,
                .tid = s->threads[t].tid,
                .pc = s->threads[t].pc,
                .cpu_ns = s->threads[t].cpu_ns,
                .syscall = -1,
            };
    }

    pperf_maps(in, path, search, pid, start_ns, out);

    out->totals = (struct prof_totals){
        .wall_ns = us_to_ns(in->wall_us),
        .latency_ns = us_to_ns(in->latency_us),
        .samples = in->nsamples,
    };
    out->has_totals = true;
    return 0;
}
