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
        t->requested_per_thread |= s->requested_per_thread;
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

/* The union of the inputs' value columns, by name; COLUMN[i][c] is where
 * column c of input i goes. */
static uint32_t **merge_columns(const struct report *const *in, size_t n, struct value_columns *out)
{
    uint32_t **column = xcalloc(n, sizeof(*column));
    for (size_t i = 0; i < n; i++) {
        const struct value_columns *c = &in[i]->values;
        column[i] = xcalloc(c->n + 1, sizeof(**column));
        for (size_t k = 0; k < c->n; k++) {
            char *error = NULL;
            int at = value_columns_add(out, &c->types[k], &error);
            /* The same name in another unit stays a column of its own. */
            if (at < 0) {
                struct prof_value_type t = c->types[k];
                char *name = xasprintf("%s (%s)", t.name, t.unit);
                t.name = name;
                at = value_columns_add(out, &t, &error);
                free(name);
            }
            free(error);
            column[i][k] = (uint32_t)(at < 0 ? 0 : at);
        }
    }
    return column;
}

/* SRC's values (in the columns COLUMN maps them to), divided by N, into DST. */
static void add_values(double *dst, const double *src, size_t nsrc, const uint32_t *column,
                       double n)
{
    for (size_t k = 0; src && k < nsrc; k++)
        dst[column[k]] += src[k] / n;
}

/* Whether the one input's rows can become the mean's as they are: its
 * value columns are the merged ones, in the same places. */
static bool rows_can_move(const struct report *in, size_t nv, const uint32_t *column)
{
    if (in->values.n != nv)
        return false;
    for (size_t k = 0; k < nv; k++)
        if (column[k] != k)
            return false;
    return true;
}

/* The mean of one report, whose rows are taken: the division by 1 is
 * exact and the rows are already one per key, so they move as they are. */
static void take_rows(struct report *in, struct report *out)
{
    for (size_t j = 0; j < in->nrows; j++)
        memset(&in->rows[j].ci, 0, sizeof(in->rows[j].ci));
    out->rows = in->rows;
    out->nrows = in->nrows;
    in->rows = NULL;
    in->nrows = 0;
}

/* The mean of IN; TAKE is NULL, or IN itself, whose rows are then used up. */
static void mean(const struct report *const *in, size_t n, struct report *const *take,
                 struct report *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return;
    out->keys = in[0]->keys;
    out->focus = in[0]->focus;
    out->focus_function = in[0]->focus_function ? xstrdup(in[0]->focus_function) : NULL;
    mean_totals(in, n, &out->totals);
    uint32_t **column = merge_columns(in, n, &out->values);
    size_t nv = out->values.n;
    if (metric_resolve(in[0]->metric.name, &out->values, &out->metric) != 0)
        out->metric = in[0]->metric;
    out->vbase = nv ? xcalloc(nv, sizeof(*out->vbase)) : NULL;

    bool move = take && n == 1 && rows_can_move(in[0], nv, column[0]);
    struct strtab *ids = strtab_new();
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nsrc = in[i]->values.n;
        out->focus_found |= in[i]->focus_found;
        for (int q = 0; q < Q_COUNT; q++) {
            out->base[q] += in[i]->base[q] / (double)n;
            out->sq_base[q] += in[i]->sq_base[q] / (double)n;
        }
        if (nv)
            add_values(out->vbase, in[i]->vbase, nsrc, column[i], (double)n);
        if (move) {
            take_rows(take[i], out);
            continue;
        }
        for (size_t j = 0; j < in[i]->nrows; j++) {
            const struct report_row *src = &in[i]->rows[j];
            uint32_t k = strtab_intern_str(ids, src->id);
            if (k == out->nrows) {
                out->rows = xgrow(out->rows, &cap, out->nrows + 1, sizeof(*out->rows));
                memset(&out->rows[k], 0, sizeof(out->rows[k]));
                out->rows[k].id = xstrdup(src->id);
                report_row_values(&out->rows[k], nv);
                out->nrows++;
            }
            struct report_row *dst = &out->rows[k];
            for (int q = 0; q < Q_COUNT; q++) {
                dst->self[q] += src->self[q] / (double)n;
                dst->total[q] += src->total[q] / (double)n;
                dst->sq_self[q] += src->sq_self[q] / (double)n;
                dst->sq_total[q] += src->sq_total[q] / (double)n;
            }
            if (nv) {
                add_values(dst->vself, src->vself, nsrc, column[i], (double)n);
                add_values(dst->vtotal, src->vtotal, nsrc, column[i], (double)n);
            }
            dst->idle_s += src->idle_s / (double)n;
            dst->unattributed |= src->unattributed;
        }
        if (take)
            report_free_rows(take[i]); /* merged */
    }
    strtab_free(ids);
    for (size_t i = 0; i < n; i++)
        free(column[i]);
    free(column);
}

void report_mean(const struct report *const *in, size_t n, struct report *out)
{
    mean(in, n, NULL, out);
}

void report_mean_taking(struct report *const *in, size_t n, struct report *out)
{
    mean((const struct report *const *)in, n, in, out);
}
