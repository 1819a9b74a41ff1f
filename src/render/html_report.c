/* html_report.c - see html_report.h */
#include "render/html_report.h"
#include "render/report_render.h"
#include "render/svg.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Longest key text shown in a cell; the whole key is in its tooltip. */
#define KEY_SHOWN_CHARS 160

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 2em 3em;color:#222;background:#fff}"
    "h1{font-size:1.5em;margin:.8em 0 .2em}h2{font-size:1.2em;margin:1.5em 0 .5em}"
    "ul.totals{list-style:none;padding:0;margin:.3em 0}"
    "ul.totals li{display:inline-block;margin:0 1.2em .2em 0;padding:.1em .5em;"
    "background:#eef2f7;border-radius:4px}"
    "nav a{margin-right:1em}p.files{color:#555;margin:.2em 0}"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "th,td{padding:.15em .6em;border-bottom:1px solid #e3e3e3;text-align:right}"
    "th{background:#f4f4f4;cursor:pointer;user-select:none;position:sticky;top:0}"
    "th[aria-sort=descending]::after{content:' \\25BE'}"
    "th[aria-sort=ascending]::after{content:' \\25B4'}"
    "td.k,th.k{text-align:left;max-width:60ch;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}"
    "tr:hover td{background:#fafae0}td.up{color:#b00}td.down{color:#06a}"
    "div.fig{overflow-x:auto}object{width:100%;border:1px solid #ddd}p.note{color:#a50}";

/* Sorting the tables: our own code, no input in it. */
static const char script[] =
    "(function(){\n"
    "function val(td,num){if(!num)return td.textContent;"
    "var v=parseFloat(td.getAttribute('data-v'));return isNaN(v)?-Infinity:v;}\n"
    "function setup(t){var ths=t.tHead.rows[0].cells;\n"
    "Array.prototype.forEach.call(ths,function(th,c){th.addEventListener('click',function(){\n"
    "var num=th.getAttribute('data-t')==='n';var desc=th.getAttribute('aria-sort')!=="
    "'descending';\n"
    "var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);\n"
    "rows.sort(function(a,b){var x=val(a.cells[c],num),y=val(b.cells[c],num);"
    "var r=x<y?-1:x>y?1:0;return desc?-r:r;});\n"
    "Array.prototype.forEach.call(ths,function(h){h.removeAttribute('aria-sort');});\n"
    "th.setAttribute('aria-sort',desc?'descending':'ascending');\n"
    "rows.forEach(function(r){body.appendChild(r);});});});}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),setup);\n"
    /* #sort=N links to the top table sorted by its column N. */
    "var m=/^#sort=(\\d+)$/.exec(location.hash);var top=document.querySelector('#top table');\n"
    "if(m&&top&&top.tHead.rows[0].cells[+m[1]])top.tHead.rows[0].cells[+m[1]].click();\n"
    "})();\n";

static void base64(FILE *out, const unsigned char *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        fputc(digits[v >> 18], out);
        fputc(digits[v >> 12 & 63], out);
        fputc(digits[v >> 6 & 63], out);
        fputc(digits[v & 63], out);
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        fputc(digits[v >> 18], out);
        fputc(digits[v >> 12 & 63], out);
        fputc(i + 1 < n ? digits[v >> 6 & 63] : '=', out);
        fputc('=', out);
    }
}

/* A number cell: the sort value exact, the text as the tables show it. */
static void number_cell(FILE *out, double v, const char *text, const char *cls)
{
    fputs("<td", out);
    if (cls)
        fprintf(out, " class=\"%s\"", cls);
    if (isfinite(v))
        fprintf(out, " data-v=\"%.17g\"", v);
    fputs(">", out);
    svg_text(out, text);
    fputs("</td>", out);
}

static void metric_cell(FILE *out, const struct metric *m, double v)
{
    char text[64];
    if (isnan(v))
        text[0] = '\0';
    else
        format_metric(text, sizeof(text), m, v);
    number_cell(out, v, text, NULL);
}

static void pct_cell(FILE *out, double v)
{
    char text[32];
    snprintf(text, sizeof(text), "%.2f", v);
    number_cell(out, v, text, NULL);
}

/* report --ci: an interval's half-width, "±0.56" (empty when unknown). */
static void ci_cell(FILE *out, double half, int decimals)
{
    char text[48] = "";
    if (isfinite(half))
        snprintf(text, sizeof(text), "±%.*f", decimals, half);
    number_cell(out, half, text, NULL);
}

static void key_cells(FILE *out, const struct key_spec *keys, const char *id)
{
    for (size_t k = 0; k < keys->count; k++) {
        char *part = key_part(id, k);
        fputs("<td class=\"k\" title=\"", out);
        svg_text(out, part);
        fputs("\">", out);
        svg_text_max(out, part, KEY_SHOWN_CHARS);
        fputs("</td>", out);
        free(part);
    }
}

static void key_headers(FILE *out, const struct key_spec *keys)
{
    for (size_t k = 0; k < keys->count; k++)
        fprintf(out, "<th class=\"k\">%s</th>", key_kind_name(keys->kinds[k]));
}

static void header(FILE *out, const struct html_report *r)
{
    fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\"/>\n<title>ptprof: ",
          out);
    svg_text(out, r->title);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>ptprof report: ", css);
    svg_text(out, r->title);
    fputs("</h1>\n<p class=\"files\">", out);
    for (size_t i = 0; i < r->nfiles; i++) {
        if (i)
            fputs(", ", out);
        svg_text(out, r->files[i]);
    }
    fputs("</p>\n<ul class=\"totals\">", out);
    char items[REPORT_TOTALS_ITEMS_MAX][REPORT_TOTALS_ITEM_LEN];
    size_t n = report_totals_items(&r->report->totals, items);
    for (size_t i = 0; i < n; i++) {
        fputs("<li>", out);
        svg_text(out, items[i]);
        fputs("</li>", out);
    }
    fputs("</ul>\n", out);
    if (r->report->totals.truncated)
        fputs("<p class=\"note\">" REPORT_TRUNCATED_NOTE "</p>\n", out);
    fputs("<nav><a href=\"#top\">top table</a>", out);
    for (size_t i = 0; i < r->nfigures; i++) {
        fprintf(out, "<a href=\"#%s\">", r->figures[i].id);
        svg_text(out, r->figures[i].title);
        fputs("</a>", out);
    }
    if (r->comparison)
        fputs("<a href=\"#comparison\">comparison</a>", out);
    fputs("</nav>\n", out);
}

/* The other metrics' self values, next to the chosen one: samples, CPU
 * and wall time, energy and power when measured, and every value the
 * profiles carry (metric_all()); executions are the CSV's. */
static bool extra_shown(const struct report *rep, const struct metric *m)
{
    if (strcmp(m->name, rep->metric.name) == 0)
        return false;
    return rep->totals.has_energy || (m->kind != METRIC_ENERGY && m->kind != METRIC_POWER);
}

/* A column title: metric titles may hold a profile's value names. */
static void title_cell(FILE *out, const struct metric *m)
{
    fputs("<th data-t=\"n\">", out);
    svg_text(out, m->title);
    fputs("</th>", out);
}

/* The columns beside the chosen metric, in a stable order: the built-ins
 * (samples first), then what the report's value columns give. */
static struct metric *extra_metrics(const struct report *rep, size_t *n)
{
    static const enum metric_kind builtins[] = {METRIC_SAMPLES, METRIC_CPU, METRIC_WALL,
                                                METRIC_ENERGY, METRIC_POWER};
    size_t nall;
    struct metric *all = metric_all(&rep->values, &nall);
    struct metric *extra = xcalloc(nall + 1, sizeof(*extra));
    *n = 0;
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
        extra[(*n)++] = *metric_builtin(builtins[i]);
    for (size_t i = 0; i < nall; i++)
        if (all[i].kind >= METRIC_BUILTINS)
            extra[(*n)++] = all[i];
    free(all);
    return extra;
}

static void top_table(FILE *out, const struct report *rep)
{
    size_t nextra;
    struct metric *extra = extra_metrics(rep, &nextra);
    fputs("<section id=\"top\">\n<h2>Top rows by ", out);
    svg_text(out, rep->metric.title);
    fputs("</h2>\n", out);
    bool ci = rep->has_ci, ci_energy = ci && rep->totals.has_energy;
    fputs("<table class=\"sortable\">\n<thead><tr>"
          "<th data-t=\"n\" aria-sort=\"descending\">self %</th>",
          out);
    if (ci)
        fputs("<th data-t=\"n\">self ±95%</th>", out);
    fputs("<th data-t=\"n\">total %</th>", out);
    if (ci)
        fputs("<th data-t=\"n\">total ±95%</th>", out);
    title_cell(out, &rep->metric);
    for (size_t i = 0; i < nextra; i++)
        if (extra_shown(rep, &extra[i]))
            title_cell(out, &extra[i]);
    if (ci_energy)
        fputs("<th data-t=\"n\">energy ±95% J</th>", out);
    key_headers(out, &rep->keys);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct report_row *row = &rep->rows[i];
        fputs("<tr>", out);
        pct_cell(out, report_pct(rep, row, &rep->metric, false));
        if (ci)
            ci_cell(out, row->ci.self.half, 2);
        pct_cell(out, report_pct(rep, row, &rep->metric, true));
        if (ci)
            ci_cell(out, row->ci.total.half, 2);
        metric_cell(out, &rep->metric, report_value(row, &rep->metric, false));
        for (size_t k = 0; k < nextra; k++)
            if (extra_shown(rep, &extra[k]))
                metric_cell(out, &extra[k], report_value(row, &extra[k], false));
        if (ci_energy)
            ci_cell(out, row->ci.energy.half, 3);
        key_cells(out, &rep->keys, row->id);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
    if (rep->hidden)
        fprintf(out, "<p>(%zu more row%s not shown)</p>\n", rep->hidden,
                rep->hidden == 1 ? "" : "s");
    fputs("</section>\n", out);
    free(extra);
}

static void figure(FILE *out, const struct html_figure *f)
{
    fprintf(out, "<section id=\"%s\">\n<h2>", f->id);
    svg_text(out, f->title);
    /* At its own size: an SVG document does not scale to its frame; the
     * figure scrolls when the page is narrower. */
    fputs("</h2>\n<div class=\"fig\"><object type=\"image/svg+xml\" style=\"", out);
    if (f->width > 0)
        fprintf(out, "width:%.0fpx;", f->width);
    fprintf(out, "height:%.0fpx\" data=\"data:image/svg+xml;base64,",
            f->height > 0 ? f->height : 600);
    base64(out, (const unsigned char *)f->svg, f->svg_len);
    fputs("\"></object></div>\n</section>\n", out);
}

static void comparison(FILE *out, const struct compare_result *c, const char *const *names)
{
    const struct metric *m = c->opts.share ? metric_builtin(METRIC_CPU) : &c->opts.metric;
    fputs("<section id=\"comparison\">\n<h2>Comparison with ", out);
    svg_text(out, names[0]);
    fprintf(out, " (%s of %s", error_fn_name(c->opts.error), c->opts.inclusive ? "inclusive " : "");
    svg_text(out, c->opts.share ? "share %" : m->title);
    fputs(")</h2>\n", out);
    fputs("<table class=\"sortable\">\n<thead><tr><th data-t=\"n\" aria-sort=\"descending\">", out);
    svg_text(out, names[0]);
    fputs("</th>", out);
    for (size_t p = 0; p < c->nprofiles; p++) {
        fputs("<th data-t=\"n\">", out);
        svg_text(out, names[p + 1]);
        fputs("</th><th data-t=\"n\">error</th>", out);
    }
    key_headers(out, &c->keys);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i < c->nrows; i++) {
        const struct compare_row *row = &c->rows[i];
        fputs("<tr>", out);
        metric_cell(out, m, row->baseline);
        for (size_t p = 0; p < c->nprofiles; p++) {
            metric_cell(out, m, row->values[p]);
            char text[32];
            snprintf(text, sizeof(text), "%.4g", row->errors[p] == 0 ? 0.0 : row->errors[p]);
            number_cell(out, row->errors[p], text,
                        row->errors[p] > 0   ? "up"
                        : row->errors[p] < 0 ? "down"
                                             : NULL);
        }
        key_cells(out, &c->keys, row->id);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
    if (c->aggregates) {
        fprintf(out, "<p>%s of the errors:", aggregate_fn_name(c->opts.aggregate));
        for (size_t p = 0; p < c->nprofiles; p++) {
            fprintf(out, " %s%.4g (", p ? ", " : "", c->aggregates[p]);
            svg_text(out, names[p + 1]);
            fputs(")", out);
        }
        fputs("</p>\n", out);
    }
    fputs("</section>\n", out);
}

int html_report_write(FILE *out, const struct html_report *r)
{
    header(out, r);
    top_table(out, r->report);
    for (size_t i = 0; i < r->nfigures; i++)
        figure(out, &r->figures[i]);
    if (r->comparison)
        comparison(out, r->comparison, r->names);
    /* CDATA for the XML reading of the page, a comment for HTML's. */
    fprintf(out, "<script>//<![CDATA[\n%s//]]></script>\n</body>\n</html>\n", script);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
