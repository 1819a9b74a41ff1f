/* timeline_svg.c - see timeline_svg.h */
#include "render/timeline_svg.h"
#include "render/svg.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Layout, in pixels. */
#define LEFT 180 /* lane labels and value axes */
#define RIGHT 24
#define TITLE_H 58 /* title and subtitle */
#define CHART_LABEL_H 20
#define CHART_H 90
#define AXIS_H 24 /* time tick labels under a block */
#define LANE_H 13
#define LANE_PITCH 16
#define BLOCK_GAP 10
#define LEGEND_ROW 18
#define LEGEND_COL_W 420
#define NOTE_H 24

#define DEFAULT_LEGEND_KEYS 20
/* Characters of a name in a label, in a lane's tooltip, in the legend's. */
#define LABEL_CHARS 26
#define TIP_CHARS 300
#define LEGEND_TIP_CHARS 4096

#define BAND_FILL "#9ecae1"
#define MEAN_STROKE "#08519c"
#define GRID "#e4e4e4"
#define OTHER_FILL "#c8c8c8"

struct ticks {
    double first, step;
    int n;
    int decimals;
};

struct ctx {
    FILE *out;
    const struct timeline *t;
    unsigned width, columns;
    size_t legend_keys;
    char (*colour)[8];
    struct ticks time;
    int time_decimals; /* for times in tooltips: a column's precision */
};

unsigned timeline_svg_columns(unsigned width)
{
    if (width < TIMELINE_SVG_MIN_WIDTH)
        width = TIMELINE_SVG_MIN_WIDTH;
    return width - LEFT - RIGHT;
}

/* --- numbers --------------------------------------------------------------- */

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Round ticks (1, 2 or 5 times a power of ten) over [LO, HI], about N of them. */
static struct ticks nice_ticks(double lo, double hi, int n)
{
    struct ticks k = {lo, 1, 1, 0};
    double range = hi - lo;
    if (!(range > 0) || !isfinite(range) || n < 1)
        return k;
    double raw = range / n, mag = pow(10, floor(log10(raw))), norm = raw / mag;
    k.step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
    k.first = ceil(lo / k.step - 1e-9) * k.step;
    k.n = (int)floor((hi - k.first) / k.step + 1e-9) + 1;
    k.n = clampi(k.n, 0, 1000);
    k.decimals = clampi((int)ceil(-log10(k.step) - 1e-9), 0, 9);
    return k;
}

static void put_number(FILE *out, double v, int decimals)
{
    if (fabs(v) >= 1e7 || (v != 0 && fabs(v) < 1e-6))
        fprintf(out, "%.3g", v);
    else
        fprintf(out, "%.*f", decimals, fabs(v) < 0.5 * pow(10, -decimals) ? 0.0 : v);
}

/* S with up to DECIMALS decimals, trailing zeros dropped. */
static void put_seconds(FILE *out, double s, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*f", decimals, s);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf);
        while (end > dot + 1 && end[-1] == '0')
            *--end = '\0';
        if (end == dot + 1)
            *dot = '\0';
    }
    fputs(buf, out);
}

static void put_duration(FILE *out, double s)
{
    if (s >= 1)
        fprintf(out, "%.3g s", s);
    else if (s >= 1e-3)
        fprintf(out, "%.3g ms", s * 1e3);
    else
        fprintf(out, "%.3g µs", s * 1e6);
}

static double x_of_time(const struct ctx *c, double t)
{
    return LEFT + (t - c->t->t0_s) / (c->t->t1_s - c->t->t0_s) * c->columns;
}

/* --- colours ------------------------------------------------------------------- */

static double hue_part(double p, double q, double h)
{
    if (h < 0)
        h += 1;
    if (h > 1)
        h -= 1;
    if (h < 1.0 / 6)
        return p + (q - p) * 6 * h;
    if (h < 0.5)
        return q;
    if (h < 2.0 / 3)
        return p + (q - p) * (2.0 / 3 - h) * 6;
    return p;
}

/* A key's colour from svg_hash of its name (the flame graph's hash): a hue
 * of its own, greys for the bracketed pseudo-frames ([unknown], [syscall
 * read]...). */
static void key_colour(const char *name, char out[8])
{
    uint32_t h = svg_hash(name);
    double hue = (h % 360) / 360.0;
    double sat = 0.50 + (double)((h >> 9) % 25) / 100;
    double light = 0.52 + (double)((h >> 17) % 14) / 100;
    if (name[0] == '[') {
        sat = 0.10;
        light = 0.58 + (double)((h >> 17) % 14) / 100;
    }
    double q = light < 0.5 ? light * (1 + sat) : light + sat - light * sat, p = 2 * light - q;
    int r = (int)lround(255 * hue_part(p, q, hue + 1.0 / 3));
    int g = (int)lround(255 * hue_part(p, q, hue));
    int b = (int)lround(255 * hue_part(p, q, hue - 1.0 / 3));
    snprintf(out, 8, "#%02x%02x%02x", clampi(r, 0, 255), clampi(g, 0, 255), clampi(b, 0, 255));
}

/* --- layout ---------------------------------------------------------------------- */

static double charts_height(const struct timeline *t)
{
    if (t->nseries == 0)
        return NOTE_H + BLOCK_GAP;
    return (double)t->nseries * (CHART_LABEL_H + CHART_H + AXIS_H + BLOCK_GAP);
}

static double lanes_height(const struct timeline *t)
{
    double h = CHART_LABEL_H + AXIS_H + 16 + BLOCK_GAP;
    return h + (t->nlanes ? (double)t->nlanes * LANE_PITCH : NOTE_H);
}

static size_t legend_items(const struct ctx *c)
{
    size_t n = c->t->nkeys < c->legend_keys ? c->t->nkeys : c->legend_keys;
    return n + (c->t->nkeys > n);
}

static size_t legend_cols(const struct ctx *c)
{
    size_t n = (c->width - 40) / LEGEND_COL_W;
    return n ? n : 1;
}

static double legend_height(const struct ctx *c)
{
    size_t rows = (legend_items(c) + legend_cols(c) - 1) / legend_cols(c);
    return CHART_LABEL_H + 8 + (double)rows * LEGEND_ROW + BLOCK_GAP;
}

/* --- pieces ------------------------------------------------------------------------- */

static void time_grid(const struct ctx *c, double y0, double y1)
{
    fprintf(c->out, "<g stroke=\"%s\" stroke-width=\"1\">", GRID);
    for (int i = 0; i < c->time.n; i++) {
        double x = x_of_time(c, c->time.first + i * c->time.step);
        fprintf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, y0, x, y1);
    }
    fputs("</g>\n", c->out);
}

static void time_axis(const struct ctx *c, double y)
{
    fprintf(c->out, "<g text-anchor=\"middle\" fill=\"#555\">");
    for (int i = 0; i < c->time.n; i++) {
        double v = c->time.first + i * c->time.step, x = x_of_time(c, v);
        fprintf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>",
                x, y, x, y + 4);
        fprintf(c->out, "<text x=\"%.1f\" y=\"%.1f\">", x, y + 15);
        put_number(c->out, v, c->time.decimals);
        fputs("</text>", c->out);
    }
    /* Under the last label's end, which may reach the margin. */
    fprintf(c->out, "<text x=\"%u\" y=\"%.1f\" text-anchor=\"end\">s</text></g>\n",
            LEFT + c->columns + RIGHT - 2, y + 27);
}

/* The value axis of series S: nice ticks over its range (from 0 when its
 * values are all positive and span more than half of it). */
static struct ticks value_ticks(const struct timeline_series *s, double *lo, double *hi)
{
    double a = s->min, b = s->max;
    if (!isfinite(a) || !isfinite(b)) {
        a = 0;
        b = 1;
    }
    if (a >= 0 && a <= b / 2)
        a = 0;
    if (b - a <= fabs(b) * 1e-9) {
        double pad = fabs(b) > 0 ? fabs(b) * 0.1 : 1;
        a -= pad;
        b += pad;
    }
    struct ticks k = nice_ticks(a, b, 4);
    *lo = floor(a / k.step + 1e-9) * k.step;
    *hi = ceil(b / k.step - 1e-9) * k.step;
    if (!(*hi > *lo)) {
        *lo = a;
        *hi = b;
    }
    k = nice_ticks(*lo, *hi, 4);
    return k;
}

static double y_of_value(double v, double lo, double hi, double top)
{
    double f = (v - lo) / (hi - lo);
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return top + CHART_H - f * CHART_H;
}

/* Points along the columns [A, B) of S, the band's top (MAX) or the mean,
 * left edge to right edge; REVERSE walks back along the minimum. */
static void band_points(const struct ctx *c, const struct timeline_series *s, unsigned a,
                        unsigned b, int which, double lo, double hi, double top)
{
    FILE *out = c->out;
    for (unsigned k = 0; k < b - a; k++) {
        unsigned col = which == 1 ? b - 1 - k : a + k; /* 1: the minimum, right to left */
        const struct timeline_point *p = &s->px[col];
        double v = which == 0 ? p->max : which == 1 ? p->min : p->mean;
        double y = y_of_value(v, lo, hi, top);
        double x = LEFT + col + 0.5;
        if (k == 0)
            fprintf(out, "%.1f,%.1f ", which == 1 ? x + 0.5 : x - 0.5, y);
        fprintf(out, "%.1f,%.1f ", x, y);
        if (k + 1 == b - a)
            fprintf(out, "%.1f,%.1f ", which == 1 ? x - 0.5 : x + 0.5, y);
    }
}

static bool has_point(const struct timeline_point *p)
{
    return isfinite(p->min) && isfinite(p->max) && isfinite(p->mean);
}

static void put_series_label(FILE *out, const struct timeline_series *s, const char *sep)
{
    svg_text_max(out, s->name, 80);
    fprintf(out, "%s%s", sep, s->quantity);
    if (*s->unit) {
        fputs(" (", out);
        svg_text_max(out, s->unit, 16);
        fputs(")", out);
    }
    if (s->source_kind == PMU_KIND_ENERGY)
        fputs(", the energy counter's rate", out);
    else if (s->derived)
        fputs(", current \u00d7 voltage", out);
}

static void put_stat(FILE *out, const char *what, double v, const struct timeline_series *s)
{
    fprintf(out, "%s ", what);
    if (isfinite(v)) {
        fprintf(out, "%.4g", v);
        if (*s->unit) {
            fputc(' ', out);
            svg_text_max(out, s->unit, 16);
        }
    } else {
        fputs("none", out);
    }
}

static void chart(const struct ctx *c, const struct timeline_series *s, double y)
{
    FILE *out = c->out;
    double top = y + CHART_LABEL_H, lo, hi;
    struct ticks k = value_ticks(s, &lo, &hi);
    fprintf(out, "<g>\n<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">", LEFT, y + 14);
    put_series_label(out, s, " \u2014 ");
    fputs("<tspan font-weight=\"normal\" fill=\"#555\">: ", out);
    put_stat(out, "min", s->min, s);
    put_stat(out, ", mean", s->mean, s);
    put_stat(out, ", max", s->max, s);
    fputs("</tspan></text>\n", out);
    fprintf(out,
            "<rect x=\"%d\" y=\"%.1f\" width=\"%u\" height=\"%d\" fill=\"#fbfbfb\" "
            "stroke=\"#bbb\"/>\n",
            LEFT, top, c->columns, CHART_H);
    time_grid(c, top, top + CHART_H);
    fprintf(out, "<g text-anchor=\"end\" fill=\"#555\">");
    for (int i = 0; i < k.n; i++) {
        double v = k.first + i * k.step, yy = y_of_value(v, lo, hi, top);
        fprintf(out,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%u\" y2=\"%.1f\" stroke=\"%s\"/>"
                "<text x=\"%d\" y=\"%.1f\">",
                LEFT, yy, LEFT + c->columns, yy, GRID, LEFT - 6, yy + 4);
        put_number(out, v, k.decimals);
        fputs("</text>", out);
    }
    fprintf(out, "<text x=\"%d\" y=\"%.1f\">", LEFT - 6, y + 14);
    svg_text_max(out, *s->unit ? s->unit : s->quantity, 12);
    fputs("</text></g>\n", out);

    /* Runs of columns with readings: a band from min to max, the mean on it. */
    for (unsigned a = 0; a < c->columns;) {
        if (!has_point(&s->px[a])) {
            a++;
            continue;
        }
        unsigned b = a + 1;
        while (b < c->columns && has_point(&s->px[b]))
            b++;
        fprintf(out,
                "<polygon fill=\"%s\" stroke=\"%s\" stroke-width=\"1\" "
                "stroke-linejoin=\"round\" points=\"",
                BAND_FILL, BAND_FILL);
        band_points(c, s, a, b, 0, lo, hi, top);
        band_points(c, s, a, b, 1, lo, hi, top);
        fprintf(out, "\"/>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"",
                MEAN_STROKE);
        band_points(c, s, a, b, 2, lo, hi, top);
        fputs("\"/>\n", out);
        a = b;
    }
    fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%u\" height=\"%d\" fill=\"none\"><title>", LEFT,
            top, c->columns, CHART_H);
    put_series_label(out, s, ": ");
    fputs("\n", out);
    put_stat(out, "min", s->min, s);
    put_stat(out, ", mean", s->mean, s);
    put_stat(out, ", max", s->max, s);
    fputs("\nband: min to max in each pixel column; line: time-weighted mean</title></rect>\n",
          out);
    time_axis(c, top + CHART_H);
    fputs("</g>\n", out);
}

static void span_title(const struct ctx *c, const struct timeline_lane *l,
                       const struct timeline_span *s)
{
    FILE *out = c->out;
    fputs("<title>", out);
    svg_text_max(out, c->t->keys[s->key].name, TIP_CHARS);
    fputs("\n", out);
    svg_text_max(out, l->label, 80);
    fputs(" \u00b7 ", out);
    put_number(out, s->t0_s, c->time_decimals);
    fputs("\u2013", out);
    put_number(out, s->t1_s, c->time_decimals);
    fputs(" s (", out);
    put_duration(out, s->t1_s - s->t0_s);
    fputs(")", out);
    if (s->phase)
        fputs("\na short phase, drawn one pixel wide", out);
    else if (s->share < 0.995f)
        fprintf(out, "\n%.0f%% of the thread's samples here", 100.0 * s->share);
    fputs("</title>", out);
}

static void lanes(const struct ctx *c, double y)
{
    FILE *out = c->out;
    const struct timeline *t = c->t;
    fprintf(out, "<g>\n<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Threads", LEFT, y + 14);
    fputs("<tspan font-weight=\"normal\" fill=\"#555\">: where each was, by ", out);
    svg_text_max(out, t->key_names, 80);
    if (t->nlanes < t->threads_in_view)
        fprintf(out, " (the %zu with the most CPU time of %zu)", t->nlanes, t->threads_in_view);
    fputs("</tspan></text>\n", out);
    double top = y + CHART_LABEL_H;
    if (t->nlanes == 0) {
        fprintf(out,
                "<text x=\"%d\" y=\"%.1f\" fill=\"#555\">No thread was sampled in this "
                "time range.</text>\n",
                LEFT, top + 16);
        fputs("</g>\n", out);
        return;
    }
    double bottom = top + (double)t->nlanes * LANE_PITCH;
    time_grid(c, top, bottom);
    for (size_t i = 0; i < t->nlanes; i++) {
        const struct timeline_lane *l = &t->lanes[i];
        double ly = top + (double)i * LANE_PITCH;
        fprintf(out, "<g>\n<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"><title>", LEFT - 6,
                ly + LANE_H - 2);
        svg_text_max(out, l->label, TIP_CHARS);
        fputs(": ", out);
        put_duration(out, l->cpu_s);
        fputs(" CPU, ", out);
        put_duration(out, l->wall_s);
        fputs(" sampled in view</title>", out);
        svg_text_max(out, l->label, LABEL_CHARS);
        fputs("</text>\n", out);
        for (size_t j = 0; j < l->nspans; j++) {
            const struct timeline_span *s = &l->spans[j];
            fprintf(out, "<rect x=\"%u\" y=\"%.1f\" width=\"%u\" height=\"%d\" fill=\"%s\">",
                    LEFT + s->x0, ly, s->x1 - s->x0, LANE_H, c->colour[s->key]);
            span_title(c, l, s);
            fputs("</rect>\n", out);
        }
        fputs("</g>\n", out);
    }
    time_axis(c, bottom);
    fputs("</g>\n", out);
}

static void legend_item(const struct ctx *c, size_t i, const char *fill, double x, double y)
{
    FILE *out = c->out;
    const struct timeline *t = c->t;
    double wall, pct;
    size_t other = 0;
    if (i < t->nkeys && i < c->legend_keys) {
        wall = t->keys[i].wall_s;
    } else {
        wall = 0;
        for (size_t k = i; k < t->nkeys; k++)
            wall += t->keys[k].wall_s;
        other = t->nkeys - i;
    }
    pct = t->thread_wall_s > 0 ? 100 * wall / t->thread_wall_s : 0;
    fputs("<g><title>", out);
    if (other)
        fprintf(out, "%zu other keys", other);
    else
        svg_text_max(out, t->keys[i].name, LEGEND_TIP_CHARS);
    fputs("</title>", out);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y - 10,
            fill);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 18, y);
    if (other)
        fprintf(out, "other (%zu keys)", other);
    else
        svg_text_max(out, t->keys[i].name, (LEGEND_COL_W - 150) / 7);
    fputs(" <tspan fill=\"#555\">", out);
    put_duration(out, wall);
    fprintf(out, " (%.1f%%)</tspan></text></g>\n", pct);
}

static void legend(const struct ctx *c, double y)
{
    FILE *out = c->out;
    const struct timeline *t = c->t;
    fprintf(out, "<g>\n<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Legend", 20, y + 14);
    fputs("<tspan font-weight=\"normal\" fill=\"#555\">: ", out);
    svg_text_max(out, t->key_names, 80);
    fputs(" by thread time in view (colours follow the name)</tspan></text>\n", out);
    size_t n = legend_items(c), cols = legend_cols(c), rows = (n + cols - 1) / cols;
    for (size_t i = 0; i < n; i++) {
        double x = 20 + (double)(i / (rows ? rows : 1)) * LEGEND_COL_W;
        double yy = y + CHART_LABEL_H + 8 + (double)(i % (rows ? rows : 1)) * LEGEND_ROW + 10;
        bool other = i >= c->legend_keys || i >= t->nkeys;
        legend_item(c, i, other ? OTHER_FILL : c->colour[i], x, yy);
    }
    fputs("</g>\n", out);
}

static void title(const struct ctx *c)
{
    FILE *out = c->out;
    const struct timeline *t = c->t;
    /* The program by its base name, so the line fits; whole in the tooltip. */
    const char *prog = t->program;
    size_t cmd_len = strcspn(prog, " ");
    for (size_t i = 0; i < cmd_len; i++)
        if (t->program[i] == '/' && i + 1 < cmd_len)
            prog = t->program + i + 1;
    fputs("<text x=\"20\" y=\"24\" font-size=\"15\" font-weight=\"bold\"><title>", out);
    svg_text(out, t->program);
    fputs("</title>", out);
    svg_text_max(out, prog, 60);
    fprintf(out, " \u2014 %.3f s, %.0f samples (%.0f thread samples), ", t->duration_s,
            t->recorded_samples, t->thread_samples);
    if (t->achieved_hz > 0)
        fprintf(out, "%.1f Hz achieved%s", t->achieved_hz,
                t->achieved_per_cpu_second ? " per CPU s"
                : t->requested_per_thread  ? " per wall s, all threads"
                                           : "");
    else
        fputs("frequency unknown", out);
    if (t->requested_hz > 0)
        fprintf(out, " of %g Hz%s", t->requested_hz,
                t->requested_per_thread ? " requested per thread" : "");
    if (isfinite(t->latency_per_sample_s))
        fprintf(out, ", %.1f µs latency per sample", t->latency_per_sample_s * 1e6);
    else
        fputs(", latency unknown", out);
    fputs("</text>\n<text x=\"20\" y=\"44\" fill=\"#555\">", out);
    fputs("Time ", out);
    put_seconds(out, t->t0_s, c->time_decimals);
    fputs("\u2013", out);
    put_seconds(out, t->t1_s, c->time_decimals);
    fputs(" s of ", out);
    put_seconds(out, t->profile_end_s, c->time_decimals);
    fprintf(out, " s from the start, %zu samples in view; one pixel column is ", t->view_samples);
    put_duration(out, (t->t1_s - t->t0_s) / t->columns);
    if (t->truncated)
        fputs("; the profile is truncated", out);
    fputs("</text>\n", out);
}

static void ctx_init(struct ctx *c, FILE *out, const struct timeline *t,
                     const struct timeline_svg_options *o)
{
    memset(c, 0, sizeof(*c));
    c->out = out;
    c->t = t;
    c->columns = t->columns;
    c->width = LEFT + c->columns + RIGHT;
    c->legend_keys = o->legend_keys ? o->legend_keys : DEFAULT_LEGEND_KEYS;
}

unsigned timeline_svg_width(const struct timeline *t)
{
    return LEFT + t->columns + RIGHT;
}

double timeline_svg_height(const struct timeline *t, const struct timeline_svg_options *o)
{
    struct ctx c;
    ctx_init(&c, NULL, t, o);
    return TITLE_H + charts_height(t) + lanes_height(t) + legend_height(&c);
}

void timeline_svg_element(FILE *out, const struct timeline *t, const struct timeline_svg_options *o)
{
    struct ctx c;
    ctx_init(&c, out, t, o);
    c.colour = xcalloc(t->nkeys + 1, sizeof(*c.colour));
    for (size_t i = 0; i < t->nkeys; i++)
        key_colour(t->keys[i].name, c.colour[i]);
    c.time = nice_ticks(t->t0_s, t->t1_s, clampi((int)c.columns / 110, 2, 40));
    double col_s = (t->t1_s - t->t0_s) / (c.columns ? c.columns : 1);
    c.time_decimals = col_s > 0 ? clampi((int)ceil(-log10(col_s)), 0, 9) : 3;

    double h = timeline_svg_height(t, o);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"%s\" width=\"%u\" "
            "height=\"%.0f\" viewBox=\"0 0 %u %.0f\" font-family=\"DejaVu Sans, Verdana, "
            "sans-serif\" font-size=\"11\" fill=\"#222\">\n",
            o->id ? o->id : "ptprof-timeline", c.width, h, c.width, h);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" fill=\"#fff\"/>\n", c.width,
            h);
    title(&c);
    double y = TITLE_H;
    if (t->nseries == 0) {
        fprintf(out,
                "<text x=\"%d\" y=\"%.1f\" fill=\"#555\">No measurement channel in this profile "
                "(record with -p, for instance -p rapl).</text>\n",
                LEFT, y + 14);
    }
    for (size_t i = 0; i < t->nseries; i++) {
        chart(&c, &t->series[i], y);
        y += CHART_LABEL_H + CHART_H + AXIS_H + BLOCK_GAP;
    }
    if (t->nseries == 0)
        y += NOTE_H + BLOCK_GAP;
    lanes(&c, y);
    y += lanes_height(t);
    legend(&c, y);
    fputs("</svg>\n", out);
    free(c.colour);
}

int timeline_svg_write(FILE *out, const struct timeline *t, const struct timeline_svg_options *o)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    timeline_svg_element(out, t, o);
    return ferror(out) ? -1 : 0;
}

int timeline_html_write(FILE *out, const struct timeline *t, const struct timeline_svg_options *o)
{
    fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\"/>\n<title>ptprof timeline: ",
          out);
    svg_text_max(out, t->program, 100);
    fputs("</title>\n<style>\n"
          "body { margin: 0; padding: 16px; background: #fff; color: #222;\n"
          "       font-family: 'DejaVu Sans', Verdana, sans-serif; font-size: 13px; }\n"
          "svg { display: block; }\n"
          "p.note { color: #555; max-width: 60em; }\n"
          "</style>\n</head>\n<body>\n",
          out);
    timeline_svg_element(out, t, o);
    fputs("<p class=\"note\">Hover over a lane, a chart or a legend entry for details. The charts "
          "show, per pixel column, the lowest and highest reading (band) and the time-weighted "
          "mean (line); a lane shows the key its thread spent most of its sampled time in, and "
          "short phases keep a column of their own. Written by ptprof timeline.</p>\n"
          "</body>\n</html>\n",
          out);
    return ferror(out) ? -1 : 0;
}
