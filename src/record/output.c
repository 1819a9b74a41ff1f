/* output.c - see output.h */
#include "record/output.h"
#include "format/pperf.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>

struct output {
    struct pperf_writer *pperf; /* NULL: discard */
    struct pperf_thread *scratch;
    size_t scratch_cap;
    const struct pmu_source *pmu;
};

struct output *output_open(const char *path, const struct pmu_source *pmu)
{
    struct output *out = xcalloc(1, sizeof(*out));
    out->pmu = pmu;
    if (!path)
        return out;
    uint32_t magic = pmu ? pmu_pperf_magic(pmu) : 0;
    uint32_t pmu_size = pmu ? (uint32_t)(pmu->nchannels * sizeof(double)) : 0;
    out->pperf = pperf_writer_open(path, magic, pmu_size);
    if (!out->pperf) {
        free(out);
        return NULL;
    }
    return out;
}

int output_sample(struct output *out, uint64_t realtime_ns, const double *pmu_values,
                  uint32_t nthreads, const struct sample_thread *threads)
{
    if (!out->pperf)
        return 0;
    out->scratch = xgrow(out->scratch, &out->scratch_cap, nthreads, sizeof(*out->scratch));
    for (uint32_t i = 0; i < nthreads; i++) {
        out->scratch[i].tid = threads[i].tid;
        out->scratch[i].pc = threads[i].pc;
        out->scratch[i].cpu_ns = threads[i].cpu_ns;
    }
    return pperf_writer_sample(out->pperf, realtime_ns / 1000, pmu_values, nthreads, out->scratch);
}

int output_finish(struct output *out, const struct record_totals *totals,
                  const struct map_list *maps)
{
    int rc = 0;
    if (out->pperf) {
        struct pperf_map *pm = NULL;
        size_t n = pperf_maps_from_proc(maps, &pm);
        rc = pperf_writer_finish(out->pperf, totals->wall_ns / 1000, totals->latency_ns / 1000, pm,
                                 (uint32_t)n);
        free(pm);
    }
    free(out->scratch);
    free(out);
    return rc;
}

void output_abort(struct output *out)
{
    if (!out)
        return;
    if (out->pperf)
        pperf_writer_abort(out->pperf);
    free(out->scratch);
    free(out);
}
