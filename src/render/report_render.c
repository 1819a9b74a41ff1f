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

static void format_count(char *buf, size_t len, double v)
{
    if (v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.1f", v);
}

void format_metric(char *buf, size_t len, const struct metric *m, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    else if (m->integral)
        format_count(buf, len, v);
    else if (m->kind >= METRIC_BUILTINS && v != 0 && fabs(v) < 1)
        snprintf(buf, len, "%.3g", v); /* a delay of 120 us is not 0.000 s */
    else
        snprintf(buf, len, "%.3f", v);
}

/* --- columns shared by CSV and JSON ---------------------------------------- */

enum column_kind {
    VALUE,
    PCT,
    CHOSEN_VALUE,
    CHOSEN_PCT,
    CI_LO, /* --ci: the 95 % interval's bounds (uncertainty.h) */
    CI_HI,
};

struct fixed_column {
    const char *name;
    enum metric_kind metric;
    enum column_kind kind;
    bool total;
};

static const struct fixed_column fixed_columns[] = {
    {"samples", METRIC_SAMPLES, VALUE, false},
    {"cpu_time", METRIC_CPU, VALUE, false},
    {"cpu_time_pct", METRIC_CPU, PCT, false},
    {"wall_time", METRIC_WALL, VALUE, false},
    {"wall_time_pct", METRIC_WALL, PCT, false},
    {"energy", METRIC_ENERGY, VALUE, false},
    {"energy_pct", METRIC_ENERGY, PCT, false},
    {"power", METRIC_POWER, VALUE, false},
    {"executions", METRIC_EXECUTIONS, VALUE, false},
    {"self", METRIC_CPU, CHOSEN_VALUE, false},
    {"self_pct", METRIC_CPU, CHOSEN_PCT, false},
    {"total", METRIC_CPU, CHOSEN_VALUE, true},
    {"total_pct", METRIC_CPU, CHOSEN_PCT, true},
    {"total_samples", METRIC_SAMPLES, VALUE, true},
    {"total_cpu_time", METRIC_CPU, VALUE, true},
    {"total_wall_time", METRIC_WALL, VALUE, true},
    {"total_energy", METRIC_ENERGY, VALUE, true},
    {"total_power", METRIC_POWER, VALUE, true},
    {"total_executions", METRIC_EXECUTIONS, VALUE, true},
};
#define NFIXED (sizeof(fixed_columns) / sizeof(fixed_columns[0]))

struct column {
    char name[METRIC_NAME_MAX + 16];
    struct metric metric;
    enum column_kind kind;
    bool total;
};

static void add_column(struct column **cols, size_t *n, const char *prefix, const char *name,
                       const char *suffix, const struct metric *m, enum column_kind kind,
                       bool total)
{
    *cols = xrealloc(*cols, (*n + 1) * sizeof(**cols));
    struct column *c = &(*cols)[(*n)++];
    snprintf(c->name, sizeof(c->name), "%s%s%s", prefix, name, suffix);
    c->metric = *m;
    c->kind = kind;
    c->total = total;
}

/* The fixed columns (REPORT_CSV_COLUMNS), then those of the metrics R's
 * value columns give (metric_all(): each column, the derived ones). */
static struct column *report_columns(const struct report *r, size_t *n)
{
    struct column *cols = NULL;
    *n = 0;
    for (size_t i = 0; i < NFIXED; i++) {
        const struct fixed_column *f = &fixed_columns[i];
        add_column(&cols, n, "", f->name, "", metric_builtin(f->metric), f->kind, f->total);
    }
    size_t nall;
    struct metric *all = metric_all(&r->values, &nall);
    for (size_t i = 0; i < nall; i++) {
        const struct metric *m = &all[i];
        if (m->kind < METRIC_BUILTINS)
            continue;
        add_column(&cols, n, "", m->name, "", m, VALUE, false);
        if (metric_additive(m))
            add_column(&cols, n, "", m->name, "_pct", m, PCT, false);
        add_column(&cols, n, "total_", m->name, "", m, VALUE, true);
    }
    free(all);
    if (r->has_ci) {
        const struct metric *cpu = metric_builtin(METRIC_CPU);
        const struct metric *energy = metric_builtin(METRIC_ENERGY);
        add_column(&cols, n, "", "self_pct", "_lo", cpu, CI_LO, false);
        add_column(&cols, n, "", "self_pct", "_hi", cpu, CI_HI, false);
        add_column(&cols, n, "", "total_pct", "_lo", cpu, CI_LO, true);
        add_column(&cols, n, "", "total_pct", "_hi", cpu, CI_HI, true);
        add_column(&cols, n, "", "energy", "_lo", energy, CI_LO, false);
        add_column(&cols, n, "", "energy", "_hi", energy, CI_HI, false);
    }
    return cols;
}

/* The interval a CI column's bound is of: the energy's, or the chosen
 * metric's self or total share. */
static const struct report_interval *column_interval(const struct report_row *row,
                                                     const struct column *c)
{
    if (c->metric.kind == METRIC_ENERGY)
        return &row->ci.energy;
    return c->total ? &row->ci.total : &row->ci.self;
}

/* Energy and power of a profile without a measurement are unknown (NaN:
 * an empty CSV field, JSON null), not 0; so are executions where they are
 * not counted. */
static double column_value(const struct report *r, const struct report_row *row,
                           const struct column *c)
{
    if (c->kind == CI_LO || c->kind == CI_HI) {
        const struct report_interval *iv = column_interval(row, c);
        return c->kind == CI_LO ? iv->lo : iv->hi;
    }
    const struct metric *m =
        c->kind == CHOSEN_VALUE || c->kind == CHOSEN_PCT ? &r->metric : &c->metric;
    if ((m->kind == METRIC_ENERGY || m->kind == METRIC_POWER) && !r->totals.has_energy)
        return NAN;
    if (m->kind == METRIC_EXECUTIONS && r->focus != FOCUS_NONE)
        return NAN; /* not counted for callers and callees */
    if (c->kind == PCT || c->kind == CHOSEN_PCT)
        return report_pct(r, row, m, c->total);
    return report_value(row, m, c->total);
}

static int render_csv(FILE *out, const struct report *r)
{
    size_t ncols;
    struct column *cols = report_columns(r, &ncols);
    char *header = key_spec_header(&r->keys);
    csv_field(out, header);
    free(header);
    for (size_t c = 0; c < ncols; c++) {
        fputc(',', out);
        csv_field(out, cols[c].name);
    }
    fputc('\n', out);
    for (size_t i = 0; i < r->nrows; i++) {
        char *key = key_display(r->rows[i].id);
        csv_field(out, key);
        free(key);
        for (size_t c = 0; c < ncols; c++) {
            double v = column_value(r, &r->rows[i], &cols[c]);
            fputc(',', out);
            if (!isnan(v))
                csv_number(out, v);
        }
        fputc('\n', out);
    }
    free(cols);
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

/* The whole's value of every value column and derived metric (as shown). */
static void json_value_totals(FILE *out, const struct report *r)
{
    size_t ncols;
    struct column *cols = report_columns(r, &ncols);
    fputs("{", out);
    bool first = true;
    for (size_t c = NFIXED; c < ncols; c++) {
        if (cols[c].kind != VALUE || cols[c].total)
            continue;
        if (!first)
            fputc(',', out);
        first = false;
        json_field(out, cols[c].name, report_base(r, &cols[c].metric), false);
    }
    fputs("}", out);
    free(cols);
}

static void json_totals(FILE *out, const struct report *r)
{
    const struct report_totals *t = &r->totals;
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
    if (r->focus == FOCUS_NONE) {
        fputs(",\"values\":", out);
        json_value_totals(out, r);
    }
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
    json_field(out, "total", report_base(r, &r->metric), false);
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
    json_string(out, r->metric.name);
    fputs(",\"unit\":", out);
    json_string(out, r->metric.unit);
    fputs(",\"focus\":", out);
    json_focus(out, r);
    fputs(",\"files\":[", out);
    for (size_t i = 0; i < nfiles; i++) {
        if (i)
            fputc(',', out);
        json_string(out, files[i]);
    }
    fputs("],\"totals\":", out);
    json_totals(out, r);
    fprintf(out, ",\"hidden_rows\":%zu,\"rows\":[", r->hidden);
    size_t ncols;
    struct column *cols = report_columns(r, &ncols);
    for (size_t i = 0; i < r->nrows; i++) {
        const struct report_row *row = &r->rows[i];
        fputs(i ? ",\n{" : "\n{", out);
        char *key = key_display(row->id);
        fputs("\"key\":", out);
        json_string(out, key);
        free(key);
        fputs(",\"fields\":", out);
        json_key_fields(out, &r->keys, row->id);
        for (size_t c = 0; c < ncols; c++) {
            fputc(',', out);
            json_field(out, cols[c].name, column_value(r, row, &cols[c]), false);
        }
        fputs("}", out);
    }
    fputs("]}\n", out);
    free(cols);
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
        int k =
            snprintf(items[n], REPORT_TOTALS_ITEM_LEN, "frequency %.1f Hz%s", report_achieved_hz(t),
                     t->per_cpu_second         ? " per CPU s"
                     : t->requested_per_thread ? " per wall s, all threads"
                                               : "");
        if (t->requested_hz > 0 && k > 0)
            snprintf(items[n] + k, REPORT_TOTALS_ITEM_LEN - (size_t)k, " (requested %g%s)",
                     t->requested_hz, t->requested_per_thread ? " per thread" : "");
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
        if (report_value(&r->rows[i], &r->metric, true) !=
            report_value(&r->rows[i], &r->metric, false))
            return true;
    return false;
}

/* An interval's half-width as "±0.56"; "-" where it is unknown. */
static void ci_cell(struct text_table *t, double half, const char *fmt)
{
    char num[48];
    if (isnan(half)) {
        text_table_cell(t, "-");
        return;
    }
    snprintf(num, sizeof(num), fmt, half);
    text_table_cellf(t, "±%s", num);
}

static int render_table(FILE *out, const struct report *r, int width)
{
    const struct metric *m = &r->metric;
    render_totals(out, &r->totals, width);
    if (r->focus == FOCUS_NONE && m->kind >= METRIC_BUILTINS) {
        char v[64];
        format_metric(v, sizeof(v), m, report_base(r, m));
        fprintf(out, "%s %s%s%s in all\n", m->name, v, *m->unit ? " " : "", m->unit);
    }
    if (r->focus != FOCUS_NONE) {
        char v[64];
        format_metric(v, sizeof(v), m, report_base(r, m));
        fprintf(out, "%s of %s (%s %s in all)\n", r->focus == FOCUS_CALLERS ? "callers" : "callees",
                r->focus_function, v, m->title);
        /* The command says so on stderr, once. */
        if (!r->focus_found)
            return 0;
    }
    fputc('\n', out);
    /* With stacks, self and total are both shown even where they agree
     * (-k thread: a thread is on every frame of its own stacks). */
    bool inclusive = r->focus == FOCUS_NONE && (r->totals.has_stacks || any_inclusive(r));
    bool samples = m->kind != METRIC_SAMPLES;
    bool energy = r->totals.has_energy && m->kind != METRIC_ENERGY && m->kind != METRIC_POWER;
    struct text_table *t = text_table_new();
    bool ci = r->has_ci;
    text_table_column(t, inclusive ? "self %" : "%", ALIGN_RIGHT, false);
    if (ci)
        text_table_column(t, "±95%", ALIGN_RIGHT, false);
    if (inclusive)
        text_table_column(t, "total %", ALIGN_RIGHT, false);
    if (inclusive && ci)
        text_table_column(t, "±95%", ALIGN_RIGHT, false);
    text_table_column(t, m->title, ALIGN_RIGHT, false);
    if (samples)
        text_table_column(t, "samples", ALIGN_RIGHT, false);
    if (energy)
        text_table_column(t, "energy J", ALIGN_RIGHT, false);
    if (energy && ci)
        text_table_column(t, "±95% J", ALIGN_RIGHT, false);
    for (size_t k = 0; k < r->keys.count; k++) {
        text_table_column(t, key_kind_name(r->keys.kinds[k]), ALIGN_LEFT, true);
        if (r->keys.kinds[k] == KEY_FILE)
            text_table_keep_end(t);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct report_row *row = &r->rows[i];
        char v[64];
        text_table_row(t);
        text_table_cellf(t, "%.2f", report_pct(r, row, m, false));
        if (ci)
            ci_cell(t, row->ci.self.half, "%.2f");
        if (inclusive)
            text_table_cellf(t, "%.2f", report_pct(r, row, m, true));
        if (inclusive && ci)
            ci_cell(t, row->ci.total.half, "%.2f");
        format_metric(v, sizeof(v), m, report_value(row, m, false));
        text_table_cell(t, v);
        if (samples) {
            format_count(v, sizeof(v), row->self[Q_SAMPLES]);
            text_table_cell(t, v);
        }
        if (energy)
            text_table_cellf(t, "%.3f", row->self[Q_ENERGY]);
        if (energy && ci)
            ci_cell(t, row->ci.energy.half, "%.3f");
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
