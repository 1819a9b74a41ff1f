/*
 * test_compare.c - analyze/compare.h: every error function and aggregate
 * against values computed by hand, and comparisons of small reports
 * (union of keys, weights, order, threshold, limit, shares).
 */
#include "analyze/compare.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b) + 1);
}

struct error_case {
    enum error_fn fn;
    double b, v, w, expected;
};

Test(compare, error_functions)
{
    static const struct error_case cases[] = {
        /* b = 4, v = 5, weight 0.25 */
        {ERR_ERROR, 4, 5, 0.25, 1},
        {ERR_ABSOLUTE, 4, 5, 0.25, 1},
        {ERR_RELATIVE, 4, 5, 0.25, 0.25},
        {ERR_ABSOLUTE_RELATIVE, 4, 5, 0.25, 0.25},
        {ERR_WEIGHTED, 4, 5, 0.25, 0.25},
        {ERR_ABSOLUTE_WEIGHTED, 4, 5, 0.25, 0.25},
        {ERR_WEIGHTED_RELATIVE, 4, 5, 0.25, 0.0625},
        {ERR_ABSOLUTE_WEIGHTED_RELATIVE, 4, 5, 0.25, 0.0625},
        /* b = 4, v = 2, weight 0.5: the signs show */
        {ERR_ERROR, 4, 2, 0.5, -2},
        {ERR_ABSOLUTE, 4, 2, 0.5, 2},
        {ERR_RELATIVE, 4, 2, 0.5, -0.5},
        {ERR_ABSOLUTE_RELATIVE, 4, 2, 0.5, 0.5},
        {ERR_WEIGHTED, 4, 2, 0.5, -1},
        {ERR_ABSOLUTE_WEIGHTED, 4, 2, 0.5, 1},
        {ERR_WEIGHTED_RELATIVE, 4, 2, 0.5, -0.25},
        {ERR_ABSOLUTE_WEIGHTED_RELATIVE, 4, 2, 0.5, 0.25},
        /* a key the baseline does not have: no weight */
        {ERR_ERROR, 0, 3, 0, 3},
        {ERR_RELATIVE, 0, 3, 0, INFINITY},
        {ERR_RELATIVE, 0, -3, 0, -INFINITY},
        {ERR_ABSOLUTE_RELATIVE, 0, -3, 0, INFINITY},
        {ERR_WEIGHTED, 0, 3, 0, 0},
        {ERR_WEIGHTED_RELATIVE, 0, 3, 0, 0},
        {ERR_ABSOLUTE_WEIGHTED_RELATIVE, 0, 3, 0, 0},
        /* nothing on either side */
        {ERR_RELATIVE, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct error_case *c = &cases[i];
        double e = compare_error(c->fn, c->b, c->v, c->w);
        cr_expect(isinf(c->expected) ? e == c->expected : close_to(e, c->expected),
                  "%s(b=%g, v=%g, w=%g) = %g, expected %g", error_fn_name(c->fn), c->b, c->v, c->w,
                  e, c->expected);
    }
}

Test(compare, aggregates)
{
    const double e[] = {1, -2, 4}, w[] = {0.5, 0.3, 0.2};
    struct {
        enum aggregate_fn fn;
        double expected;
    } cases[] = {
        {AGG_SUM, 3},
        {AGG_MIN, -2},
        {AGG_MAX, 4},
        {AGG_MEAN, 1},
        {AGG_WMEAN, 0.5 * 1 + 0.3 * -2 + 0.2 * 4},
        {AGG_RMSE, sqrt((1.0 + 4 + 16) / 3)},
        {AGG_WRMSE, sqrt(0.5 * 1 + 0.3 * 4 + 0.2 * 16)},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double a = compare_aggregate(cases[i].fn, e, w, 3);
        cr_expect(close_to(a, cases[i].expected), "%s = %g, expected %g",
                  aggregate_fn_name(cases[i].fn), a, cases[i].expected);
    }
    /* Weights that do not add up to 1 are normalised. */
    const double w2[] = {1, 0.6, 0.4};
    cr_expect(close_to(compare_aggregate(AGG_WMEAN, e, w2, 3), 0.7 / 1.0));
    /* An unweighted key (absent from the baseline) with an infinite
     * error leaves the weighted aggregates alone, not the others. */
    const double e3[] = {1, INFINITY}, w3[] = {1, 0};
    cr_expect(close_to(compare_aggregate(AGG_WMEAN, e3, w3, 2), 1));
    cr_expect(close_to(compare_aggregate(AGG_WRMSE, e3, w3, 2), 1));
    cr_expect(isinf(compare_aggregate(AGG_MEAN, e3, w3, 2)));
    cr_expect(isinf(compare_aggregate(AGG_MAX, e3, w3, 2)));
    /* Nothing to aggregate. */
    cr_expect_eq(compare_aggregate(AGG_SUM, e, w, 0), 0);
    cr_expect(isnan(compare_aggregate(AGG_MEAN, e, w, 0)));
    cr_expect(isnan(compare_aggregate(AGG_MIN, e, w, 0)));
    const double zero[] = {0, 0};
    cr_expect(isnan(compare_aggregate(AGG_WMEAN, e, zero, 2)));
}

Test(compare, names_parse_both_ways)
{
    for (int i = 0; i < ERR_COUNT; i++) {
        enum error_fn fn;
        cr_assert_eq(error_fn_parse(error_fn_name((enum error_fn)i), &fn), 0);
        cr_expect_eq(fn, (enum error_fn)i);
    }
    for (int i = 0; i < AGG_COUNT; i++) {
        enum aggregate_fn fn;
        cr_assert_eq(aggregate_fn_parse(aggregate_fn_name((enum aggregate_fn)i), &fn), 0);
        cr_expect_eq(fn, (enum aggregate_fn)i);
    }
    enum error_fn fn;
    cr_expect_eq(error_fn_parse("squared_error", &fn), -1);
}

static void add_row(struct report *r, const char *id, double cpu)
{
    r->rows = xrealloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));
    struct report_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof(*row));
    row->id = xstrdup(id);
    row->self[Q_CPU] = row->total[Q_CPU] = cpu;
    r->base[Q_CPU] += cpu;
}

/* baseline: a 6, b 3, c 1; other: a 5, b 4, d 1 (10 s each). */
static void make_pair(struct report *base, struct report *other)
{
    memset(base, 0, sizeof(*base));
    memset(other, 0, sizeof(*other));
    key_spec_default(&base->keys);
    other->keys = base->keys;
    base->metric = other->metric = *metric_builtin(METRIC_CPU);
    add_row(base, "a", 6);
    add_row(base, "b", 3);
    add_row(base, "c", 1);
    add_row(other, "d", 1);
    add_row(other, "b", 4);
    add_row(other, "a", 5);
}

static const struct compare_row *row_of(const struct compare_result *r, const char *id)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].id, id) == 0)
            return &r->rows[i];
    cr_assert_fail("no row %s", id);
    return NULL;
}

Test(compare, reports_key_by_key)
{
    struct report base, other;
    make_pair(&base, &other);
    const struct report *others[] = {&other};
    struct compare_options o = {.metric = *metric_builtin(METRIC_CPU),
                                .error = ERR_WEIGHTED,
                                .aggregate = AGG_WMEAN,
                                .limit_pct = -1,
                                .threshold_pct = -1};
    struct compare_result res;
    compare_reports(&base, others, 1, &o, &res);
    cr_assert_eq(res.nrows, 4, "the union of the keys");
    /* Baseline order, the key only the other has last. */
    const char *order[] = {"a", "b", "c", "d"};
    for (size_t i = 0; i < 4; i++)
        cr_expect_str_eq(res.rows[i].id, order[i]);
    cr_expect(close_to(row_of(&res, "a")->weight, 0.6));
    cr_expect(close_to(row_of(&res, "d")->weight, 0));
    cr_expect(close_to(row_of(&res, "c")->values[0], 0), "absent counts 0");
    cr_expect(close_to(row_of(&res, "a")->errors[0], 0.6 * -1));
    cr_expect(close_to(row_of(&res, "b")->errors[0], 0.3 * 1));
    cr_expect(close_to(row_of(&res, "c")->errors[0], 0.1 * -1));
    cr_expect(close_to(row_of(&res, "d")->errors[0], 0));
    /* wmean of w*e with weights w: (0.36*-1 + 0.09*1 + 0.01*-1) / 1. */
    cr_assert_not_null(res.aggregates);
    cr_expect(close_to(res.aggregates[0], -0.6 * 0.6 + 0.3 * 0.3 - 0.1 * 0.1), "%g",
              res.aggregates[0]);
    cr_expect(close_to(res.baseline_total, 10));
    cr_expect(close_to(res.totals[0], 10));
    compare_free(&res);

    /* Threshold: a key stays if it reaches 20 % anywhere (b has 40 % in the
     * other profile); limit: the top of the baseline up to 60 %. */
    o.error = ERR_RELATIVE;
    o.aggregate = AGG_SUM;
    o.threshold_pct = 20;
    compare_reports(&base, others, 1, &o, &res);
    cr_assert_eq(res.nrows, 2);
    cr_expect_str_eq(res.rows[1].id, "b");
    cr_expect(close_to(res.aggregates[0], -1.0 / 6 + 1.0 / 3));
    cr_expect_eq(res.hidden, 2);
    compare_free(&res);
    o.threshold_pct = -1;
    o.limit_pct = 60;
    compare_reports(&base, others, 1, &o, &res);
    cr_assert_eq(res.nrows, 1);
    cr_expect_str_eq(res.rows[0].id, "a");
    compare_free(&res);

    /* Shares instead of values: the other profile is twice as long. */
    for (size_t i = 0; i < other.nrows; i++)
        other.rows[i].self[Q_CPU] *= 2;
    other.base[Q_CPU] *= 2;
    o.limit_pct = -1;
    o.share = true;
    o.error = ERR_ERROR;
    compare_reports(&base, others, 1, &o, &res);
    cr_expect(close_to(row_of(&res, "a")->baseline, 60));
    cr_expect(close_to(row_of(&res, "a")->values[0], 50));
    cr_expect(close_to(row_of(&res, "a")->errors[0], -10));
    compare_free(&res);
    report_free(&base);
    report_free(&other);
}
