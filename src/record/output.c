/* output.c - see output.h */
#include "record/output.h"
#include "format/native.h"
#include "interop/pperf.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>

struct output {
    enum output_format format;
    struct native_writer *native; /* one of these two, or neither: discard */
    struct pperf_writer *pperf;
    const struct pmu_source *pmu;
    struct pperf_thread *scratch;
    size_t scratch_cap;
    uint32_t nvalue_types;
    bool sampled;
};

struct output *output_open(const char *path, enum output_format format,
                           const struct pmu_source *pmu)
{
    struct output *out = xcalloc(1, sizeof(*out));
    out->format = format;
    out->pmu = pmu;
    if (!path)
        return out;
    if (format == OUTPUT_PPERF) {
        /* Without a measurement, what the original's default build writes. */
        bool measured = pmu && pmu->nchannels > 0;
        uint32_t magic = measured ? pmu_pperf_magic(pmu) : PPERF_DUMMY_MAGIC;
        uint32_t size =
            measured ? (uint32_t)(pmu->nchannels * sizeof(double)) : PPERF_DUMMY_PMU_SIZE;
        out->pperf = pperf_writer_open(path, magic, size);
    } else {
        out->native = native_writer_open(path);
    }
    if (!out->pperf && !out->native) {
        free(out);
        return NULL;
    }
    if (out->native && pmu)
        for (unsigned i = 0; i < pmu->nchannels; i++)
            native_write_channel(out->native, i, &pmu->channels[i]);
    return out;
}

int output_started(struct output *out)
{
    if (!out)
        return 0;
    return out->native ? native_writer_publish(out->native) : 0;
}

void output_meta(struct output *out, const char *key, const char *value)
{
    if (out && out->native)
        native_write_meta(out->native, key, value);
}

void output_process(struct output *out, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
    if (out && out->native)
        native_write_process(out->native, pid, ppid, time_ns);
}

void output_exec(struct output *out, uint32_t pid, uint64_t time_ns, const char *path)
{
    if (out && out->native)
        native_write_exec(out->native, pid, time_ns, path);
}

void output_exit(struct output *out, uint32_t pid, uint64_t time_ns, int32_t status)
{
    if (out && out->native)
        native_write_exit(out->native, pid, time_ns, status);
}

void output_thread(struct output *out, uint32_t pid, uint32_t tid, uint64_t time_ns,
                   const char *name)
{
    if (out && out->native)
        native_write_thread(out->native, pid, tid, time_ns, name);
}

void output_thread_exit(struct output *out, uint32_t tid, uint64_t time_ns)
{
    if (out && out->native)
        native_write_thread_exit(out->native, tid, time_ns);
}

void output_map(struct output *out, const struct prof_map *m)
{
    if (out && out->native)
        native_write_map(out->native, m);
}

void output_unmap(struct output *out, uint32_t pid, uint64_t time_ns, uint64_t start, uint64_t end)
{
    if (out && out->native)
        native_write_unmap(out->native, pid, time_ns, start, end);
}

void output_image(struct output *out, uint32_t pid, uint64_t start, const char *name,
                  const void *data, size_t size)
{
    if (out && out->native)
        native_write_image(out->native, pid, start, name, data, size);
}

void output_location(struct output *out, const struct prof_location *loc)
{
    if (out && out->native)
        native_write_location(out->native, loc);
}

uint32_t output_stack(struct output *out, const uint64_t *pcs, uint32_t depth)
{
    if (!out || !out->native || depth == 0)
        return 0;
    return native_stack_id(out->native, pcs, depth);
}

int output_value_types(struct output *out, const struct prof_value_type *types, uint32_t n)
{
    if (!out)
        return 0;
    if (out->sampled || out->nvalue_types || n > PROF_VALUE_TYPES_MAX) {
        pt_err("record: value types are declared once, before the first sample (at most %u)",
               PROF_VALUE_TYPES_MAX);
        return -1;
    }
    out->nvalue_types = n;
    for (uint32_t i = 0; out->native && i < n; i++)
        if (native_write_value_type(out->native, i, types[i].name, types[i].unit, types[i].agg) !=
            0)
            return -1;
    return 0;
}

int output_sample(struct output *out, uint64_t time_ns, const double *values,
                  const struct prof_thread_sample *threads, uint32_t nthreads)
{
    return output_sample_values(out, time_ns, values, threads, nthreads, NULL);
}

int output_sample_values(struct output *out, uint64_t time_ns, const double *values,
                         const struct prof_thread_sample *threads, uint32_t nthreads,
                         const uint64_t *thread_values)
{
    if (!out)
        return 0;
    out->sampled = true;
    unsigned nvalues = out->pmu ? out->pmu->nchannels : 0;
    if (out->native)
        return native_write_sample_values(out->native, time_ns, values, nvalues, threads, nthreads,
                                          NULL, out->nvalue_types ? thread_values : NULL);
    if (!out->pperf)
        return 0;
    out->scratch = xgrow(out->scratch, &out->scratch_cap, nthreads, sizeof(*out->scratch));
    for (uint32_t i = 0; i < nthreads; i++) {
        out->scratch[i].tid = threads[i].tid;
        out->scratch[i].pc = threads[i].pc;
        out->scratch[i].cpu_ns = threads[i].cpu_ns;
    }
    /* No values: the writer fills the dummy PMU's bytes with 0.0. */
    return pperf_writer_sample(out->pperf, time_ns / 1000, nvalues ? values : NULL, nthreads,
                               out->scratch);
}

int output_finish(struct output *out, const struct prof_totals *totals,
                  const struct map_list *pperf_maps)
{
    int rc = 0;
    if (out->native) {
        rc = native_writer_finish(out->native, totals);
    } else if (out->pperf) {
        struct pperf_map *pm = NULL;
        size_t n = pperf_maps_from_proc(pperf_maps, &pm);
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
    if (out->native)
        native_writer_abort(out->native);
    if (out->pperf)
        pperf_writer_abort(out->pperf);
    free(out->scratch);
    free(out);
}
