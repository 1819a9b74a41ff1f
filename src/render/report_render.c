/* report_render.c - see report_render.h */
#include "render/report_render.h"
#include "render/csv.h"
#include "render/json.h"
#include "render/text_table.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int render_format_parse(const char *name, enum render_format *out)
{
    static const char *const names[] = {"table", "csv", "json"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum render_format)i;
            return 0;
        }
    }
    return -1;
}

const char *metric_title(enum metric m)
{
    switch (m) {
    case METRIC_CPU:
        return "cpu s";
    case METRIC_WALL:
        return "wall s";
    case METRIC_SAMPLES:
        return "samples";
    case METRIC_ENERGY:
        return "energy J";
    case METRIC_POWER:
        return "power W";
    case METRIC_EXECUTIONS:
        return "executions";
    case METRIC_COUNT:
        break;
    }
    return "?";
}

static void format_count(char *buf, size_t len, double v)
{
    if (v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.1f", v);
}

void format_metric(char *buf, size_t len, enum metric m, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    else if (m == METRIC_SAMPLES || m == METRIC_EXECUTIONS)
        format_count(buf, len, v);
    else
        snprintf(buf, len, "%.3f", v);
}

/* --- columns shared by CSV and JSON ---------------------------------------- */

struct column {
    const char *name;
    enum metric metric;
    enum {
        VALUE,
        PCT,
        CHOSEN_VALUE,
        CHOSEN_PCT,
    } kind;
    bool total;
};

static const struct column columns[] = {
    {"samples", METRIC_SAMPLES, VALUE, false},
    {"cpu_time", METRIC_CPU, VALUE, false},
    {"cpu_time_pct", METRIC_CPU, PCT, false},
    {"wall_time", METRIC_WALL, VALUE, false},
    {"wall_time_pct", METRIC_WALL, PCT, false},
    {"energy", METRIC_ENERGY, VALUE, false},
    {"energy_pct", METRIC_ENERGY, PCT, false},
    {"power", METRIC_POWER, VALUE, false},
    {"executions", METRIC_EXECUTIONS, VALUE, false},
    {"self", METRIC_COUNT, CHOSEN_VALUE, false},
    {"self_pct", METRIC_COUNT, CHOSEN_PCT, false},
    {"total", METRIC_COUNT, CHOSEN_VALUE, true},
    {"total_pct", METRIC_COUNT, CHOSEN_PCT, true},
    {"total_samples", METRIC_SAMPLES, VALUE, true},
    {"total_cpu_time", METRIC_CPU, VALUE, true},
    {"total_wall_time", METRIC_WALL, VALUE, true},
    {"total_energy", METRIC_ENERGY, VALUE, true},
    {"total_power", METRIC_POWER, VALUE, true},
    {"total_executions", METRIC_EXECUTIONS, VALUE, true},
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Energy and power of a profile without a measurement are unknown (NaN:
 * an empty CSV field, JSON null), not 0; so are executions where they are
 * not counted. */
static double column_value(const struct report *r, const struct report_row *row,
                           const struct column *c)
{
    enum metric m = c->kind == CHOSEN_VALUE || c->kind == CHOSEN_PCT ? r->metric : c->metric;
    if ((m == METRIC_ENERGY || m == METRIC_POWER) && !r->totals.has_energy)
        return NAN;
    if (m == METRIC_EXECUTIONS && r->focus != FOCUS_NONE)
        return NAN; /* not counted for callers and callees */
    if (c->kind == PCT || c->kind == CHOSEN_PCT)
        return report_pct(r, row, m, c->total);
    return report_value(row, m, c->total);
}

static int render_csv(FILE *out, const struct report *r)
{
    char *header = key_spec_header(&r->keys);
    csv_field(out, header);
    free(header);
    fputs("," REPORT_CSV_COLUMNS "\n", out);
    for (size_t i = 0; i < r->nrows; i++) {
        char *key = key_display(r->rows[i].id);
        csv_field(out, key);
        free(key);
        for (size_t c = 0; c < NCOLUMNS; c++) {
            double v = column_value(r, &r->rows[i], &columns[c]);
            fputc(',', out);
            if (!isnan(v))
                csv_number(out, v);
        }
        fputc('\n', out);
    }
    return 0;
}

/* --- JSON ------------------------------------------------------------------ */

static void json_field(FILE *out, const char *name, double v, bool comma)
{
    json_string(out, name);
    fputc(':', out);
    json_number(out, v);
    if (comma)
        fputc(',', out);
}

static void json_totals(FILE *out, const struct report_totals *t)
{
    fputs("{", out);
    json_field(out, "runs", t->runs, true);
    json_field(out, "samples", t->samples, true);
    json_field(out, "thread_samples", t->thread_samples, true);
    json_field(out, "recorded_samples", t->recorded_samples, true);
    json_field(out, "duration", t->duration_s, true);
    json_field(out, "frequency", report_achieved_hz(t), true);
    json_field(out, "requested_frequency", t->requested_hz > 0 ? t->requested_hz : NAN, true);
    json_field(out, "latency", t->has_latency ? t->latency_s : NAN, true);
    json_field(out, "cpu_time", t->cpu_s, true);
    json_field(out, "wall_time", t->wall_s, true);
    json_field(out, "energy", t->has_energy ? t->energy_j : NAN, true);
    json_field(out, "unattributed_energy", t->has_energy ? t->unattributed_j : NAN, true);
    json_field(out, "power", t->has_energy ? report_mean_power(t) : NAN, true);
    json_field(out, "executions", t->executions, true);
    fputs("\"energy_source\":", out);
    json_string(out, t->energy_source);
    fputs(",\"has_stacks\":", out);
    json_bool(out, t->has_stacks);
    fputs(",\"truncated\":", out);
    json_bool(out, t->truncated);
    fputs("}", out);
}

static void json_key_fields(FILE *out, const struct key_spec *keys, const char *id)
{
    fputc('{', out);
    for (size_t k = 0; k < keys->count; k++) {
        char *part = key_part(id, k);
        if (k)
            fputc(',', out);
        json_string(out, key_kind_name(keys->kinds[k]));
        fputc(':', out);
        json_string(out, part);
        free(part);
    }
    fputc('}', out);
}

static void json_focus(FILE *out, const struct report *r)
{
    if (r->focus == FOCUS_NONE) {
        fputs("null", out);
        return;
    }
    fputs("{\"function\":", out);
    json_string(out, r->focus_function ? r->focus_function : "");
    fputs(",\"direction\":", out);
    json_string(out, r->focus == FOCUS_CALLERS ? "callers" : "callees");
    fputs(",\"found\":", out);
    json_bool(out, r->focus_found);
    fputs(",", out);
    json_field(out, "total", report_base(r, r->metric), false);
    fputs("}", out);
}

static int render_json(FILE *out, const struct report *r, const char *const *files, size_t nfiles)
{
    fputs("{\"schema\":\"ptprof-report/1\",\"keys\":[", out);
    for (size_t k = 0; k < r->keys.count; k++) {
        if (k)
            fputc(',', out);
        json_string(out, key_kind_name(r->keys.kinds[k]));
    }
    fputs("],\"metric\":", out);
    json_string(out, metric_name(r->metric));
    fputs(",\"focus\":", out);
    json_focus(out, r);
    fputs(",\"files\":[", out);
    for (size_t i = 0; i < nfiles; i++) {
        if (i)
            fputc(',', out);
        json_string(out, files[i]);
    }
    fputs("],\"totals\":", out);
    json_totals(out, &r->totals);
    fprintf(out, ",\"hidden_rows\":%zu,\"rows\":[", r->hidden);
    for (size_t i = 0; i < r->nrows; i++) {
        const struct report_row *row = &r->rows[i];
        fputs(i ? ",\n{" : "\n{", out);
        char *key = key_display(row->id);
        fputs("\"key\":", out);
        json_string(out, key);
        free(key);
        fputs(",\"fields\":", out);
        json_key_fields(out, &r->keys, row->id);
        for (size_t c = 0; c < NCOLUMNS; c++) {
            fputc(',', out);
            json_field(out, columns[c].name, column_value(r, row, &columns[c]), false);
        }
        fputs("}", out);
    }
    fputs("]}\n", out);
    return 0;
}

/* --- table ----------------------------------------------------------------- */

size_t report_totals_items(const struct report_totals *t, char items[][REPORT_TOTALS_ITEM_LEN])
{
    size_t n = 0;
    char count[32];
    format_count(count, sizeof(count), t->samples);
    snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "samples %s", count);
    format_count(count, sizeof(count), t->thread_samples);
    snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "thread samples %s", count);
    snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "duration %.3f s", t->duration_s);
    if (!isnan(report_achieved_hz(t))) {
        int k = snprintf(items[n], REPORT_TOTALS_ITEM_LEN, "frequency %.1f Hz%s",
                         report_achieved_hz(t), t->per_cpu_second ? " per CPU s" : "");
        if (t->requested_hz > 0 && k > 0)
            snprintf(items[n] + k, REPORT_TOTALS_ITEM_LEN - (size_t)k, " (requested %g)",
                     t->requested_hz);
        n++;
    }
    if (t->has_latency) {
        int k = snprintf(items[n], REPORT_TOTALS_ITEM_LEN, "latency %.1f ms", t->latency_s * 1e3);
        if (t->recorded_samples > 0 && k > 0)
            snprintf(items[n] + k, REPORT_TOTALS_ITEM_LEN - (size_t)k, " (%.1f us/sample)",
                     t->latency_s * 1e6 / t->recorded_samples);
        n++;
    }
    snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "cpu %.3f s", t->cpu_s);
    if (t->has_energy)
        snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "energy %.3f J (%.2f W)", t->energy_j,
                 report_mean_power(t));
    if (t->runs > 1)
        snprintf(items[n++], REPORT_TOTALS_ITEM_LEN, "mean of %.0f runs", t->runs);
    return n;
}

void render_totals(FILE *out, const struct report_totals *t, int width)
{
    char items[REPORT_TOTALS_ITEMS_MAX][REPORT_TOTALS_ITEM_LEN];
    const char *ptrs[REPORT_TOTALS_ITEMS_MAX];
    size_t n = report_totals_items(t, items);
    for (size_t i = 0; i < n; i++)
        ptrs[i] = items[i];
    print_wrapped(out, ptrs, n, width);
    if (t->truncated)
        fputs(REPORT_TRUNCATED_NOTE "\n", out);
}

static bool any_inclusive(const struct report *r)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (report_value(&r->rows[i], r->metric, true) !=
            report_value(&r->rows[i], r->metric, false))
            return true;
    return false;
}

static int render_table(FILE *out, const struct report *r, int width)
{
    render_totals(out, &r->totals, width);
    if (r->focus != FOCUS_NONE) {
        char v[64];
        format_metric(v, sizeof(v), r->metric, report_base(r, r->metric));
        fprintf(out, "%s of %s (%s %s in all)\n", r->focus == FOCUS_CALLERS ? "callers" : "callees",
                r->focus_function, v, metric_title(r->metric));
        /* The command says so on stderr, once. */
        if (!r->focus_found)
            return 0;
    }
    fputc('\n', out);
    /* With stacks, self and total are both shown even where they agree
     * (-k thread: a thread is on every frame of its own stacks). */
    bool inclusive = r->focus == FOCUS_NONE && (r->totals.has_stacks || any_inclusive(r));
    bool samples = r->metric != METRIC_SAMPLES;
    bool energy = r->totals.has_energy && r->metric != METRIC_ENERGY && r->metric != METRIC_POWER;
    struct text_table *t = text_table_new();
    text_table_column(t, inclusive ? "self %" : "%", ALIGN_RIGHT, false);
    if (inclusive)
        text_table_column(t, "total %", ALIGN_RIGHT, false);
    text_table_column(t, metric_title(r->metric), ALIGN_RIGHT, false);
    if (samples)
        text_table_column(t, "samples", ALIGN_RIGHT, false);
    if (energy)
        text_table_column(t, "energy J", ALIGN_RIGHT, false);
    for (size_t k = 0; k < r->keys.count; k++) {
        text_table_column(t, key_kind_name(r->keys.kinds[k]), ALIGN_LEFT, true);
        if (r->keys.kinds[k] == KEY_FILE)
            text_table_keep_end(t);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct report_row *row = &r->rows[i];
        char v[64];
        text_table_row(t);
        text_table_cellf(t, "%.2f", report_pct(r, row, r->metric, false));
        if (inclusive)
            text_table_cellf(t, "%.2f", report_pct(r, row, r->metric, true));
        format_metric(v, sizeof(v), r->metric, report_value(row, r->metric, false));
        text_table_cell(t, v);
        if (samples) {
            format_count(v, sizeof(v), row->self[Q_SAMPLES]);
            text_table_cell(t, v);
        }
        if (energy)
            text_table_cellf(t, "%.3f", row->self[Q_ENERGY]);
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
    return rc;
}

int render_report(FILE *out, const struct report *r, enum render_format format, int width,
                  const char *const *files, size_t nfiles)
{
    int rc;
    if (format == RENDER_CSV)
        rc = render_csv(out, r);
    else if (format == RENDER_JSON)
        rc = render_json(out, r, files, nfiles);
    else
        rc = render_table(out, r, width);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    return rc;
}
