/* multi.c - see multi.h */
#include "analyze/multi.h"
#include "analyze/strtab.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void mean_totals(const struct report *const *in, size_t n, struct report_totals *t)
{
    memset(t, 0, sizeof(*t));
    t->has_latency = true;
    t->per_cpu_second = n > 0;
    for (size_t i = 0; i < n; i++) {
        const struct report_totals *s = &in[i]->totals;
        t->runs += s->runs;
        t->samples += s->samples;
        t->thread_samples += s->thread_samples;
        t->recorded_samples += s->recorded_samples;
        t->duration_s += s->duration_s;
        t->rate_span_s += s->rate_span_s;
        t->latency_s += s->latency_s;
        t->requested_hz += s->requested_hz;
        t->cpu_s += s->cpu_s;
        t->wall_s += s->wall_s;
        t->energy_j += s->energy_j;
        t->unattributed_j += s->unattributed_j;
        t->executions += s->executions;
        t->has_energy |= s->has_energy;
        t->has_stacks |= s->has_stacks;
        t->has_latency &= s->has_latency;
        t->truncated |= s->truncated;
        t->per_cpu_second &= s->per_cpu_second; /* runs of one kind only */
        if (!t->energy_source[0])
            memcpy(t->energy_source, s->energy_source, sizeof(t->energy_source));
    }
    double d = n ? (double)n : 1;
    t->samples /= d;
    t->thread_samples /= d;
    t->recorded_samples /= d;
    t->duration_s /= d;
    t->rate_span_s /= d;
    t->latency_s /= d;
    t->requested_hz /= d;
    t->cpu_s /= d;
    t->wall_s /= d;
    t->energy_j /= d;
    t->unattributed_j /= d;
    t->executions /= d;
}

void report_mean(const struct report *const *in, size_t n, struct report *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return;
    out->keys = in[0]->keys;
    out->metric = in[0]->metric;
    out->focus = in[0]->focus;
    out->focus_function = in[0]->focus_function ? xstrdup(in[0]->focus_function) : NULL;
    mean_totals(in, n, &out->totals);

    struct strtab *ids = strtab_new();
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        out->focus_found |= in[i]->focus_found;
        for (int q = 0; q < Q_COUNT; q++)
            out->base[q] += in[i]->base[q] / (double)n;
        for (size_t j = 0; j < in[i]->nrows; j++) {
            const struct report_row *src = &in[i]->rows[j];
            uint32_t k = strtab_intern_str(ids, src->id);
            if (k == out->nrows) {
                out->rows = xgrow(out->rows, &cap, out->nrows + 1, sizeof(*out->rows));
                memset(&out->rows[k], 0, sizeof(out->rows[k]));
                out->rows[k].id = xstrdup(src->id);
                out->nrows++;
            }
            struct report_row *dst = &out->rows[k];
            for (int q = 0; q < Q_COUNT; q++) {
                dst->self[q] += src->self[q] / (double)n;
                dst->total[q] += src->total[q] / (double)n;
            }
            dst->idle_s += src->idle_s / (double)n;
            dst->unattributed |= src->unattributed;
        }
    }
    strtab_free(ids);
}
