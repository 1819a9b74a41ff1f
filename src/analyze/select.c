/* select.c - see select.h */
#include "analyze/select.h"

#include <stdlib.h>
#include <string.h>

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct report_row *a = pa, *b = pb;
    const struct metric *sort_metric = ctx;
    double x = report_value(a, sort_metric, false), y = report_value(b, sort_metric, false);
    if (x != y)
        return x > y ? -1 : 1;
    x = report_value(a, sort_metric, true);
    y = report_value(b, sort_metric, true);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(a->id, b->id);
}

void report_sort(struct report *r)
{
    /* No rows may mean no array: qsort's base must not be NULL. */
    if (r->nrows > 1)
        qsort_r(r->rows, r->nrows, sizeof(*r->rows), row_cmp, &r->metric);
}

/* Rounding in a sum of shares is far below this; a share is not. */
#define LIMIT_SLACK_PCT 1e-9

bool report_limit_reached(double cumulative_pct, double limit_pct)
{
    if (limit_pct < 0 || limit_pct >= 100)
        return false; /* off, or every row: the rows after 100 % have no self share */
    return cumulative_pct >= limit_pct - LIMIT_SLACK_PCT;
}

void report_select(struct report *r, double limit_pct, double threshold_pct)
{
    report_sort(r);
    size_t kept = 0;
    double cumulative = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        struct report_row *row = &r->rows[i];
        double self = report_pct(r, row, &r->metric, false);
        double total = report_pct(r, row, &r->metric, true);
        bool keep = true;
        if (threshold_pct >= 0 && self < threshold_pct && total < threshold_pct)
            keep = false;
        if (keep && report_limit_reached(cumulative, limit_pct))
            keep = false;
        if (keep) {
            cumulative += self;
            r->rows[kept++] = *row;
        } else {
            free(row->id);
            free(row->vself);
        }
    }
    r->hidden += r->nrows - kept;
    r->nrows = kept;
}
