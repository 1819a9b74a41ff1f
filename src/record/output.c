/* output.c - see output.h */
#include "record/output.h"
#include "record/output_state.h"
#include "format/native.h"
#include "interop/pperf.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct output {
    enum output_format format;
    struct native_writer *native; /* one of these two, or neither: discard */
    struct pperf_writer *pperf;
    const struct pmu_source *pmu;
    struct pperf_thread *scratch;
    size_t scratch_cap;
    uint32_t nvalue_types;
    bool sampled;
    /* --switch-output: what the next file repeats; stack ids are the
     * state's, each file's own by STACK_IDS (0: not written to it yet). */
    struct output_state *state;
    uint32_t *stack_ids;
    size_t stack_ids_cap;
    struct prof_thread_sample *threads;
    size_t threads_cap;
    uint64_t *values;
    size_t values_cap;
    uint64_t opened_ns, samples; /* this file's part of the run (monotonic), its samples */
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
    /* A file of a series appears when complete (output_switch()). */
    if (!out || out->state)
        return 0;
    return out->native ? native_writer_publish(out->native) : 0;
}

void output_meta(struct output *out, const char *key, const char *value)
{
    if (out && out->state)
        output_state_note_meta(out->state, key, value);
    if (out && out->native)
        native_write_meta(out->native, key, value);
}

void output_process(struct output *out, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
    if (out && out->state)
        output_state_note_process(out->state, pid, ppid, time_ns);
    if (out && out->native)
        native_write_process(out->native, pid, ppid, time_ns);
}

void output_exec(struct output *out, uint32_t pid, uint64_t time_ns, const char *path)
{
    if (out && out->state)
        output_state_note_exec(out->state, pid, time_ns, path);
    if (out && out->native)
        native_write_exec(out->native, pid, time_ns, path);
}

void output_exit(struct output *out, uint32_t pid, uint64_t time_ns, int32_t status)
{
    if (out && out->state)
        output_state_note_exit(out->state, pid);
    if (out && out->native)
        native_write_exit(out->native, pid, time_ns, status);
}

void output_thread(struct output *out, uint32_t pid, uint32_t tid, uint64_t time_ns,
                   const char *name)
{
    if (out && out->state)
        output_state_note_thread(out->state, pid, tid, time_ns, name);
    if (out && out->native)
        native_write_thread(out->native, pid, tid, time_ns, name);
}

void output_thread_exit(struct output *out, uint32_t tid, uint64_t time_ns)
{
    if (out && out->state)
        output_state_note_thread_exit(out->state, tid);
    if (out && out->native)
        native_write_thread_exit(out->native, tid, time_ns);
}

void output_map(struct output *out, const struct prof_map *m)
{
    if (out && out->state)
        output_state_note_map(out->state, m);
    if (out && out->native)
        native_write_map(out->native, m);
}

void output_unmap(struct output *out, uint32_t pid, uint64_t time_ns, uint64_t start, uint64_t end)
{
    if (out && out->state)
        output_state_note_unmap(out->state, pid, start, end);
    if (out && out->native)
        native_write_unmap(out->native, pid, time_ns, start, end);
}

void output_image(struct output *out, uint32_t pid, uint64_t start, const char *name,
                  const void *data, size_t size)
{
    if (out && out->state)
        output_state_note_image(out->state, pid, start, name, data, size);
    if (out && out->native)
        native_write_image(out->native, pid, start, name, data, size);
}

void output_location(struct output *out, const struct prof_location *loc)
{
    if (out && out->native)
        native_write_location(out->native, loc);
    if (out && out->state)
        output_state_note_location(out->state, loc);
}

/* The current file's id of a stack. */
static uint32_t file_stack(struct output *out, const uint64_t *pcs, uint32_t depth)
{
    if (!out || !out->native || depth == 0)
        return 0;
    return native_stack_id(out->native, pcs, depth);
}

uint32_t output_stack(struct output *out, const uint64_t *pcs, uint32_t depth)
{
    if (out && out->state && depth > 0 && (out->native || out->pperf))
        return output_state_stack(out->state, pcs, depth);
    return file_stack(out, pcs, depth);
}

/* THREADS (and *VALUES) as the current file has them: the state's stack
 * ids made the file's, running totals counted from the file's start. */
static const struct prof_thread_sample *file_threads(struct output *out,
                                                     const struct prof_thread_sample *threads,
                                                     uint32_t nthreads, const uint64_t **values)
{
    if (!out->state)
        return threads;
    out->threads = xgrow(out->threads, &out->threads_cap, nthreads, sizeof(*out->threads));
    uint64_t *v = NULL;
    if (*values && out->nvalue_types) {
        size_t n = (size_t)nthreads * out->nvalue_types;
        out->values = xgrow(out->values, &out->values_cap, n, sizeof(*out->values));
        memcpy(out->values, *values, n * sizeof(*out->values));
        v = out->values;
        *values = v;
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        struct prof_thread_sample *t = &out->threads[i];
        *t = threads[i];
        output_state_rebase(out->state, t, v ? v + (size_t)i * out->nvalue_types : NULL);
        uint32_t depth, id = t->stack;
        const uint64_t *pcs = output_state_stack_pcs(out->state, id, &depth);
        if (!pcs) {
            t->stack = 0;
            continue;
        }
        if (id >= out->stack_ids_cap) {
            size_t old = out->stack_ids_cap;
            out->stack_ids =
                xgrow(out->stack_ids, &out->stack_ids_cap, (size_t)id + 1, sizeof(uint32_t));
            memset(out->stack_ids + old, 0, (out->stack_ids_cap - old) * sizeof(uint32_t));
        }
        if (!out->stack_ids[id])
            out->stack_ids[id] = file_stack(out, pcs, depth);
        t->stack = out->stack_ids[id];
    }
    return out->threads;
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
    if (out->state)
        output_state_note_value_types(out->state, types, n);
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
    out->samples++;
    unsigned nvalues = out->pmu ? out->pmu->nchannels : 0;
    threads = file_threads(out, threads, nthreads, &thread_values);
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

/* A file of a series: its own part of the run (no latency figures). */
static struct prof_totals own_totals(const struct output *out)
{
    return (struct prof_totals){.wall_ns = monotonic_ns() - out->opened_ns,
                                .samples = out->samples};
}

/* Complete the file OUT writes. */
static int finish_file(struct output *out, const struct prof_totals *totals,
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
    out->native = NULL;
    out->pperf = NULL;
    return rc;
}

int output_finish(struct output *out, const struct prof_totals *totals,
                  const struct map_list *pperf_maps)
{
    struct prof_totals own;
    if (out->state) {
        own = own_totals(out);
        totals = &own;
    }
    int rc = finish_file(out, totals, pperf_maps);
    output_state_free(out->state);
    free(out->stack_ids);
    free(out->threads);
    free(out->values);
    free(out->scratch);
    free(out);
    return rc;
}

uint64_t output_bytes(const struct output *out)
{
    return out && out->native ? native_writer_bytes(out->native) : 0;
}

void output_keep_state(struct output *out)
{
    if (out && !out->state) {
        out->state = output_state_new();
        out->opened_ns = monotonic_ns();
    }
}

int output_switch(struct output *out, const char *path, bool *opened)
{
    *opened = false;
    if (!out || !out->state)
        return -1;
    struct output *next = output_open(path, out->format, out->pmu);
    if (!next)
        return -1;
    /* The new file repeats what is still true, then takes the old one's
     * place in OUT, which its users may hold. */
    if (output_state_replay(out->state, next) != 0) {
        output_abort(next);
        return -1;
    }
    struct prof_totals totals = own_totals(out);
    struct output old = *out;
    int rc = finish_file(&old, &totals, NULL);
    out->native = next->native;
    out->pperf = next->pperf;
    out->samples = 0;
    out->opened_ns = monotonic_ns();
    output_state_new_file(out->state);
    if (out->stack_ids)
        memset(out->stack_ids, 0, out->stack_ids_cap * sizeof(*out->stack_ids));
    free(next->scratch);
    free(next);
    *opened = true;
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
    output_state_free(out->state);
    free(out->stack_ids);
    free(out->threads);
    free(out->values);
    free(out->scratch);
    free(out);
}
