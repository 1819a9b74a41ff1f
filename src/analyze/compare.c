/* compare.c - see compare.h */
#include "analyze/compare.h"
#include "analyze/multi.h"
#include "analyze/select.h"
#include "analyze/significance.h"
#include "analyze/strtab.h"
#include "analyze/uncertainty.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const error_names[ERR_COUNT] = {
    [ERR_ERROR] = "error",
    [ERR_ABSOLUTE] = "absolute_error",
    [ERR_RELATIVE] = "relative_error",
    [ERR_ABSOLUTE_RELATIVE] = "absolute_relative_error",
    [ERR_WEIGHTED] = "weighted_error",
    [ERR_ABSOLUTE_WEIGHTED] = "absolute_weighted_error",
    [ERR_WEIGHTED_RELATIVE] = "weighted_relative_error",
    [ERR_ABSOLUTE_WEIGHTED_RELATIVE] = "absolute_weighted_relative_error",
};

static const char *const aggregate_names[AGG_COUNT] = {
    [AGG_NONE] = "none", [AGG_SUM] = "sum",     [AGG_MIN] = "min",   [AGG_MAX] = "max",
    [AGG_MEAN] = "mean", [AGG_WMEAN] = "wmean", [AGG_RMSE] = "rmse", [AGG_WRMSE] = "wrmse",
};

int error_fn_parse(const char *name, enum error_fn *out)
{
    for (int i = 0; i < ERR_COUNT; i++) {
        if (strcmp(name, error_names[i]) == 0) {
            *out = (enum error_fn)i;
            return 0;
        }
    }
    return -1;
}

const char *error_fn_name(enum error_fn fn)
{
    return fn < ERR_COUNT ? error_names[fn] : "?";
}

int aggregate_fn_parse(const char *name, enum aggregate_fn *out)
{
    for (int i = 0; i < AGG_COUNT; i++) {
        if (strcmp(name, aggregate_names[i]) == 0) {
            *out = (enum aggregate_fn)i;
            return 0;
        }
    }
    return -1;
}

const char *aggregate_fn_name(enum aggregate_fn fn)
{
    return fn < AGG_COUNT ? aggregate_names[fn] : "?";
}

static double relative(double diff, double baseline)
{
    if (baseline != 0)
        return diff / baseline;
    return diff == 0 ? 0 : copysign(INFINITY, diff);
}

double compare_error(enum error_fn fn, double baseline, double value, double weight)
{
    double d = value - baseline;
    switch (fn) {
    case ERR_ERROR:
        return d;
    case ERR_ABSOLUTE:
        return fabs(d);
    case ERR_RELATIVE:
        return relative(d, baseline);
    case ERR_ABSOLUTE_RELATIVE:
        return fabs(relative(d, baseline));
    case ERR_WEIGHTED:
        return weight * d;
    case ERR_ABSOLUTE_WEIGHTED:
        return weight * fabs(d);
    case ERR_WEIGHTED_RELATIVE:
        return weight == 0 ? 0 : weight * relative(d, baseline);
    case ERR_ABSOLUTE_WEIGHTED_RELATIVE:
        return weight == 0 ? 0 : weight * fabs(relative(d, baseline));
    case ERR_COUNT:
        break;
    }
    return NAN;
}

double compare_aggregate(enum aggregate_fn fn, const double *e, const double *w, size_t n)
{
    double sum = 0, wsum = 0, acc = 0;
    switch (fn) {
    case AGG_SUM:
        for (size_t i = 0; i < n; i++)
            sum += e[i];
        return sum;
    case AGG_MIN:
    case AGG_MAX: {
        if (n == 0)
            return NAN;
        double v = e[0];
        for (size_t i = 1; i < n; i++)
            if (fn == AGG_MIN ? e[i] < v : e[i] > v)
                v = e[i];
        return v;
    }
    case AGG_MEAN:
    case AGG_RMSE:
        if (n == 0)
            return NAN;
        for (size_t i = 0; i < n; i++)
            sum += fn == AGG_MEAN ? e[i] : e[i] * e[i];
        return fn == AGG_MEAN ? sum / (double)n : sqrt(sum / (double)n);
    case AGG_WMEAN:
    case AGG_WRMSE:
        for (size_t i = 0; i < n; i++) {
            if (w[i] == 0)
                continue;
            wsum += w[i];
            acc += w[i] * (fn == AGG_WMEAN ? e[i] : e[i] * e[i]);
        }
        if (wsum == 0)
            return NAN;
        return fn == AGG_WMEAN ? acc / wsum : sqrt(acc / wsum);
    case AGG_NONE:
    case AGG_COUNT:
        break;
    }
    return NAN;
}

/* Each report is measured by its own metric: the options' by name,
 * resolved against that report's value columns. */
static double value_of(const struct report *r, const struct report_row *row,
                       const struct compare_options *o)
{
    if (o->share)
        return report_pct(r, row, &r->metric, o->inclusive);
    return report_value(row, &r->metric, o->inclusive);
}

static double share_of(const struct report *r, const struct report_row *row, bool inclusive)
{
    return report_pct(r, row, &r->metric, inclusive);
}

struct sort_ctx {
    size_t nprofiles;
    bool by_p; /* sides: the most significant first */
};

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct compare_row *a = pa, *b = pb;
    const struct sort_ctx *c = ctx;
    if (c->by_p) {
        /* NaN (no test) last; then the larger difference first. */
        double x = isnan(a->p_value) ? 2 : a->p_value, y = isnan(b->p_value) ? 2 : b->p_value;
        if (x != y)
            return x < y ? -1 : 1;
        x = fabs(a->values[0] - a->baseline);
        y = fabs(b->values[0] - b->baseline);
        if (x != y)
            return x > y ? -1 : 1;
        return strcmp(a->id, b->id);
    }
    if (a->baseline != b->baseline)
        return a->baseline > b->baseline ? -1 : 1;
    double x = 0, y = 0;
    for (size_t i = 0; i < c->nprofiles; i++) {
        x = a->values[i] > x ? a->values[i] : x;
        y = b->values[i] > y ? b->values[i] : y;
    }
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(a->id, b->id);
}

/* One row per key of any input, in order of first appearance; MAXSHARE
 * and BSHARE (allocated) get each key's largest share and its baseline's. */
static void collect_rows(const struct report *baseline, const struct report *const *others,
                         size_t n, const struct compare_options *opts, struct compare_result *out,
                         double **maxshare_out, double **bshare_out)
{
    struct metric wm;
    metric_basis(&baseline->metric, &wm);
    double wbase = report_base(baseline, &wm);
    struct strtab *ids = strtab_new();
    size_t cap = 0;
    double *maxshare = NULL, *bshare = NULL;
    size_t share_cap = 0;
    for (size_t p = 0; p <= n; p++) {
        const struct report *r = p == 0 ? baseline : others[p - 1];
        for (size_t j = 0; j < r->nrows; j++) {
            const struct report_row *row = &r->rows[j];
            uint32_t k = strtab_intern_str(ids, row->id);
            if (k == out->nrows) {
                out->rows = xgrow(out->rows, &cap, k + 1, sizeof(*out->rows));
                maxshare = xgrow(maxshare, &share_cap, k + 1, sizeof(*maxshare));
                bshare = xrealloc(bshare, share_cap * sizeof(*bshare));
                struct compare_row *c = &out->rows[k];
                memset(c, 0, sizeof(*c));
                c->id = xstrdup(row->id);
                c->values = xcalloc(n + 1, sizeof(*c->values));
                c->errors = xcalloc(n + 1, sizeof(*c->errors));
                c->p_value = NAN;
                maxshare[k] = 0;
                bshare[k] = 0;
                out->nrows++;
            }
            struct compare_row *c = &out->rows[k];
            double share = share_of(r, row, opts->inclusive);
            if (share > maxshare[k])
                maxshare[k] = share;
            if (p == 0) {
                c->baseline = value_of(r, row, opts);
                c->weight = wbase > 0 ? report_value(row, &wm, opts->inclusive) / wbase : 0;
                bshare[k] = share;
            } else {
                c->values[p - 1] = value_of(r, row, opts);
            }
        }
    }
    strtab_free(ids);
    *maxshare_out = maxshare;
    *bshare_out = bshare;
}

/* Sort, then keep rows by threshold and limit; frees MAXSHARE and BSHARE. */
static void select_rows(struct compare_result *out, const struct compare_options *opts,
                        const struct sort_ctx *sc, double *maxshare, double *bshare)
{
    /* Selection works on the rows' order; keep shares alongside. */
    struct keyed {
        struct compare_row row;
        double maxshare, bshare;
    };
    struct keyed *k = xcalloc(out->nrows + 1, sizeof(*k));
    for (size_t i = 0; i < out->nrows; i++)
        k[i] = (struct keyed){out->rows[i], maxshare[i], bshare[i]};
    /* The row is the first member, so the row comparator applies. */
    qsort_r(k, out->nrows, sizeof(*k), row_cmp, (void *)sc);
    size_t kept = 0;
    double cumulative = 0;
    for (size_t i = 0; i < out->nrows; i++) {
        bool keep = true;
        if (opts->threshold_pct >= 0 && k[i].maxshare < opts->threshold_pct)
            keep = false;
        if (keep && report_limit_reached(cumulative, opts->limit_pct))
            keep = false;
        if (keep) {
            cumulative += k[i].bshare;
            out->rows[kept++] = k[i].row;
        } else {
            free(k[i].row.id);
            free(k[i].row.values);
            free(k[i].row.errors);
        }
    }
    out->hidden = out->nrows - kept;
    out->nrows = kept;
    free(k);
    free(maxshare);
    free(bshare);
}

/* Errors per row and profile, totals, and the aggregates. */
static void finish(const struct report *baseline, const struct report *const *others, size_t n,
                   const struct compare_options *opts, struct compare_result *out)
{
    for (size_t i = 0; i < out->nrows; i++) {
        struct compare_row *c = &out->rows[i];
        for (size_t p = 0; p < n; p++)
            c->errors[p] = compare_error(opts->error, c->baseline, c->values[p], c->weight);
    }
    out->totals = xcalloc(n + 1, sizeof(*out->totals));
    out->baseline_total = opts->share ? 100 : report_base(baseline, &baseline->metric);
    for (size_t p = 0; p < n; p++)
        out->totals[p] = opts->share ? 100 : report_base(others[p], &others[p]->metric);
    if (opts->aggregate != AGG_NONE) {
        out->aggregates = xcalloc(n + 1, sizeof(*out->aggregates));
        double *e = xcalloc(out->nrows + 1, sizeof(*e)), *w = xcalloc(out->nrows + 1, sizeof(*w));
        for (size_t p = 0; p < n; p++) {
            for (size_t i = 0; i < out->nrows; i++) {
                e[i] = out->rows[i].errors[p];
                w[i] = out->rows[i].weight;
            }
            out->aggregates[p] = compare_aggregate(opts->aggregate, e, w, out->nrows);
        }
        free(e);
        free(w);
    }
}

void compare_reports(const struct report *baseline, const struct report *const *others, size_t n,
                     const struct compare_options *opts, struct compare_result *out)
{
    memset(out, 0, sizeof(*out));
    out->keys = baseline->keys;
    out->opts = *opts;
    out->nprofiles = n;
    double *maxshare, *bshare;
    collect_rows(baseline, others, n, opts, out, &maxshare, &bshare);
    struct sort_ctx sc = {n, false};
    select_rows(out, opts, &sc, maxshare, bshare);
    finish(baseline, others, n, opts, out);
}

/* Each run's share of every row's key, in SHARES[row * n + run]. */
static double *run_shares(const struct compare_result *out, const struct report *const *runs,
                          size_t n, bool inclusive, double *single_var)
{
    struct strtab *ids = strtab_new();
    for (size_t i = 0; i < out->nrows; i++)
        strtab_intern_str(ids, out->rows[i].id);
    double *shares = xcalloc(out->nrows * n + 1, sizeof(*shares));
    for (size_t i = 0; i < out->nrows; i++)
        single_var[i] = 0; /* a key the single run lacks: no spread from it */
    for (size_t k = 0; k < n; k++) {
        const struct report *r = runs[k];
        for (size_t j = 0; j < r->nrows; j++) {
            uint32_t at = strtab_intern_str(ids, r->rows[j].id);
            if (at >= out->nrows)
                continue; /* left out by the selection */
            shares[at * n + k] = share_of(r, &r->rows[j], inclusive);
            if (n == 1)
                single_var[at] =
                    1e4 * report_share_var(r, &r->rows[j], &r->metric, inclusive); /* in %^2 */
        }
    }
    strtab_free(ids);
    return shares;
}

void compare_sides(const struct report *const *a, size_t na, const struct report *const *b,
                   size_t nb, const struct compare_options *opts, struct compare_result *out)
{
    struct report mean_a, mean_b;
    report_mean(a, na, &mean_a);
    report_mean(b, nb, &mean_b);
    const struct report *other = &mean_b;
    memset(out, 0, sizeof(*out));
    out->keys = mean_a.keys;
    out->opts = *opts;
    out->nprofiles = 1;
    out->sides = true;
    out->runs[0] = na;
    out->runs[1] = nb;
    double *maxshare, *bshare;
    collect_rows(&mean_a, &other, 1, opts, out, &maxshare, &bshare);

    double *var_a = xcalloc(out->nrows + 1, sizeof(*var_a));
    double *var_b = xcalloc(out->nrows + 1, sizeof(*var_b));
    double *sa = run_shares(out, a, na, opts->inclusive, var_a);
    double *sb = run_shares(out, b, nb, opts->inclusive, var_b);
    for (size_t i = 0; i < out->nrows; i++) {
        struct side_shares x = {sa + i * na, na, var_a[i]}, y = {sb + i * nb, nb, var_b[i]};
        out->rows[i].p_value = side_test(&x, &y);
    }
    free(sa);
    free(sb);
    free(var_a);
    free(var_b);

    struct sort_ctx sc = {1, true};
    select_rows(out, opts, &sc, maxshare, bshare);
    finish(&mean_a, &other, 1, opts, out);
    report_free(&mean_a);
    report_free(&mean_b);
}

bool compare_significant(const struct compare_row *row)
{
    return row->p_value < SIGNIFICANCE_ALPHA;
}

const char *compare_test_name(const struct compare_result *r)
{
    if (!r->sides)
        return "none";
    return r->runs[0] > 1 && r->runs[1] > 1 ? "welch" : "counts";
}

void compare_free(struct compare_result *r)
{
    for (size_t i = 0; i < r->nrows; i++) {
        free(r->rows[i].id);
        free(r->rows[i].values);
        free(r->rows[i].errors);
    }
    free(r->rows);
    free(r->totals);
    free(r->aggregates);
    memset(r, 0, sizeof(*r));
}
