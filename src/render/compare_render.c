/* compare_render.c - see compare_render.h */
#include "render/compare_render.h"
#include "analyze/significance.h"
#include "render/csv.h"
#include "render/json.h"
#include "render/text_table.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void format_value(const struct compare_result *r, char *buf, size_t len, double v)
{
    if (r->opts.share)
        snprintf(buf, len, "%.2f", v);
    else
        format_metric(buf, len, &r->opts.metric, v);
}

static void format_error(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "nan");
    else if (isinf(v))
        snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, len, "%.4g", v == 0 ? 0.0 : v);
}

static void format_p(char *buf, size_t len, double p)
{
    if (isnan(p))
        snprintf(buf, len, "-");
    else if (p < 1e-4)
        snprintf(buf, len, "<1e-4");
    else
        snprintf(buf, len, "%.4f", p);
}

static int render_csv(FILE *out, const struct compare_result *r, const char *const *names)
{
    if (r->opts.aggregate != AGG_NONE) {
        fprintf(out, "profile,%s\n", aggregate_fn_name(r->opts.aggregate));
        for (size_t p = 0; p < r->nprofiles; p++) {
            csv_field(out, names[p + 1]);
            fputc(',', out);
            csv_number(out, r->aggregates[p]);
            fputc('\n', out);
        }
        return 0;
    }
    char *header = key_spec_header(&r->keys);
    csv_field(out, header);
    free(header);
    fputs(",baseline", out);
    for (size_t p = 0; p < r->nprofiles; p++) {
        char *err = xasprintf("%s_error", names[p + 1]);
        fputc(',', out);
        csv_field(out, names[p + 1]);
        fputc(',', out);
        csv_field(out, err);
        free(err);
    }
    if (r->sides)
        fputs(",p,significant", out);
    fputc('\n', out);
    for (size_t i = 0; i < r->nrows; i++) {
        const struct compare_row *row = &r->rows[i];
        char *key = key_display(row->id);
        csv_field(out, key);
        free(key);
        fputc(',', out);
        csv_number(out, row->baseline);
        for (size_t p = 0; p < r->nprofiles; p++) {
            fputc(',', out);
            csv_number(out, row->values[p]);
            fputc(',', out);
            csv_number(out, row->errors[p]);
        }
        if (r->sides) {
            fputc(',', out);
            if (!isnan(row->p_value))
                csv_number(out, row->p_value);
            fprintf(out, ",%d", compare_significant(row));
        }
        fputc('\n', out);
    }
    return 0;
}

static void json_settings(FILE *out, const struct compare_result *r)
{
    fputs("\"metric\":", out);
    json_string(out, r->opts.metric.name);
    fputs(",\"error\":", out);
    json_string(out, error_fn_name(r->opts.error));
    fputs(",\"aggregate\":", out);
    if (r->opts.aggregate == AGG_NONE)
        fputs("null", out);
    else
        json_string(out, aggregate_fn_name(r->opts.aggregate));
    fputs(",\"inclusive\":", out);
    json_bool(out, r->opts.inclusive);
    fputs(",\"share\":", out);
    json_bool(out, r->opts.share);
    fputs(",\"sides\":", out);
    if (r->sides)
        fprintf(out, "{\"runs\":[%zu,%zu],\"test\":\"%s\",\"alpha\":%g}", r->runs[0], r->runs[1],
                compare_test_name(r), SIGNIFICANCE_ALPHA);
    else
        fputs("null", out);
}

static int render_json(FILE *out, const struct compare_result *r, const char *const *names)
{
    fputs("{\"schema\":\"ptprof-compare/1\",\"keys\":[", out);
    for (size_t k = 0; k < r->keys.count; k++) {
        if (k)
            fputc(',', out);
        json_string(out, key_kind_name(r->keys.kinds[k]));
    }
    fputs("],", out);
    json_settings(out, r);
    fputs(",\"baseline\":{\"name\":", out);
    json_string(out, names[0]);
    fputs(",\"total\":", out);
    json_number(out, r->baseline_total);
    fputs("},\"profiles\":[", out);
    for (size_t p = 0; p < r->nprofiles; p++) {
        fputs(p ? ",{\"name\":" : "{\"name\":", out);
        json_string(out, names[p + 1]);
        fputs(",\"total\":", out);
        json_number(out, r->totals[p]);
        fputs(",\"aggregate\":", out);
        json_number(out, r->aggregates ? r->aggregates[p] : NAN);
        fputs("}", out);
    }
    fprintf(out, "],\"hidden_rows\":%zu,\"rows\":[", r->hidden);
    for (size_t i = 0; i < r->nrows; i++) {
        const struct compare_row *row = &r->rows[i];
        char *key = key_display(row->id);
        fputs(i ? ",\n{\"key\":" : "\n{\"key\":", out);
        json_string(out, key);
        free(key);
        fputs(",\"fields\":{", out);
        for (size_t k = 0; k < r->keys.count; k++) {
            char *part = key_part(row->id, k);
            if (k)
                fputc(',', out);
            json_string(out, key_kind_name(r->keys.kinds[k]));
            fputc(':', out);
            json_string(out, part);
            free(part);
        }
        fputs("},\"baseline\":", out);
        json_number(out, row->baseline);
        fputs(",\"weight\":", out);
        json_number(out, row->weight);
        fputs(",\"values\":[", out);
        for (size_t p = 0; p < r->nprofiles; p++) {
            if (p)
                fputc(',', out);
            json_number(out, row->values[p]);
        }
        fputs("],\"errors\":[", out);
        for (size_t p = 0; p < r->nprofiles; p++) {
            if (p)
                fputc(',', out);
            json_number(out, row->errors[p]);
        }
        fputs("]", out);
        if (r->sides) {
            fputs(",\"p\":", out);
            json_number(out, row->p_value);
            fputs(",\"significant\":", out);
            json_bool(out, compare_significant(row));
        }
        fputs("}", out);
    }
    fputs("]}\n", out);
    return 0;
}

static int render_table(FILE *out, const struct compare_result *r, const char *const *names,
                        int width)
{
    char v[64];
    format_value(r, v, sizeof(v), r->baseline_total);
    if (r->sides) {
        fprintf(out, "%s (%zu run%s) against %s (%zu run%s): %s%s share %% per key, %s\n", names[1],
                r->runs[1], r->runs[1] == 1 ? "" : "s", names[0], r->runs[0],
                r->runs[0] == 1 ? "" : "s", r->opts.inclusive ? "inclusive " : "",
                r->opts.metric.name, error_fn_name(r->opts.error));
        fprintf(out, "p: %s; * marks p < %g; the most significant first\n",
                r->runs[0] > 1 && r->runs[1] > 1 ? "Welch's t-test over the runs' shares"
                                                 : "a test on the sample counts",
                SIGNIFICANCE_ALPHA);
    } else {
        fprintf(out, "%s of %s%s per key, against the baseline %s (%s %s in all)\n",
                error_fn_name(r->opts.error), r->opts.inclusive ? "inclusive " : "",
                r->opts.share ? "share %" : r->opts.metric.title, names[0], v,
                r->opts.share ? "%" : r->opts.metric.title);
    }
    fputc('\n', out);
    struct text_table *t = text_table_new();
    text_table_column(t, r->sides ? names[0] : "baseline", ALIGN_RIGHT, false);
    for (size_t p = 0; p < r->nprofiles; p++) {
        char *err =
            r->sides ? xstrdup(error_fn_name(r->opts.error)) : xasprintf("%s err", names[p + 1]);
        text_table_column(t, names[p + 1], ALIGN_RIGHT, false);
        text_table_column(t, err, ALIGN_RIGHT, false);
        free(err);
    }
    if (r->sides) {
        text_table_column(t, "p", ALIGN_RIGHT, false);
        text_table_column(t, "", ALIGN_LEFT, false);
    }
    for (size_t k = 0; k < r->keys.count; k++) {
        text_table_column(t, key_kind_name(r->keys.kinds[k]), ALIGN_LEFT, true);
        if (r->keys.kinds[k] == KEY_FILE)
            text_table_keep_end(t);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct compare_row *row = &r->rows[i];
        text_table_row(t);
        format_value(r, v, sizeof(v), row->baseline);
        text_table_cell(t, v);
        for (size_t p = 0; p < r->nprofiles; p++) {
            format_value(r, v, sizeof(v), row->values[p]);
            text_table_cell(t, v);
            format_error(v, sizeof(v), row->errors[p]);
            text_table_cell(t, v);
        }
        if (r->sides) {
            format_p(v, sizeof(v), row->p_value);
            text_table_cell(t, v);
            text_table_cell(t, compare_significant(row) ? "*" : "");
        }
        for (size_t k = 0; k < r->keys.count; k++) {
            char *part = key_part(row->id, k);
            text_table_cell(t, part);
            free(part);
        }
    }
    int rc = text_table_print(t, out, width);
    text_table_free(t);
    if (r->hidden)
        fprintf(out, "(%zu more row%s not shown)\n", r->hidden, r->hidden == 1 ? "" : "s");
    if (r->aggregates) {
        fprintf(out, "\n%s of the errors:\n", aggregate_fn_name(r->opts.aggregate));
        for (size_t p = 0; p < r->nprofiles; p++) {
            format_error(v, sizeof(v), r->aggregates[p]);
            fprintf(out, "  %s  %s\n", v, names[p + 1]);
        }
    }
    return rc;
}

int render_compare(FILE *out, const struct compare_result *r, const char *const *names,
                   enum render_format format, int width)
{
    int rc;
    if (format == RENDER_CSV)
        rc = render_csv(out, r, names);
    else if (format == RENDER_JSON)
        rc = render_json(out, r, names);
    else
        rc = render_table(out, r, names, width);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    return rc;
}
