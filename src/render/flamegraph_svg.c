/* flamegraph_svg.c - see flamegraph_svg.h: the interactive SVG flame graph. */
#include "render/flamegraph_svg.h"
#include "analyze/flame.h"
#include "analyze/keys.h"
#include "render/svg.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WIDTH 1200.0
#define DEFAULT_MIN_PX 0.1
#define PAD 10.0     /* left and right margins */
#define FRAME_H 16.0 /* one stack level */
#define RECT_H 15    /* the frame's box, a pixel of gap above */
#define TOP 56.0     /* title, subtitle, buttons */
#define BOTTOM 30.0  /* the details line */
/* Labels are 11 px monospace (DejaVu Sans Mono advances 0.602 em), so the
 * characters that fit a width are known here and in the script alike. */
#define CHAR_W 6.6
#define TEXT_DY 11.5 /* label baseline below the frame's top */

/* Our script: it reads every frame from the DOM it is in (names from the
 * titles' text), so nothing from the profile is ever part of its source. */
static const char script[] =
    "(function(){\"use strict\";\n"
    "var NS=\"http://www.w3.org/2000/svg\",CW=6.6,d=document,F=d.getElementById(\"f\"),"
    "det=d.getElementById(\"dt\"),mt=d.getElementById(\"mt\"),un=d.getElementById(\"un\"),"
    "sb=d.getElementById(\"sb\"),fr=[],P=0,FW=1,term=null;\n"
    "function first(g,n){return g.getElementsByTagName(n)[0]||null;}\n"
    "function label(f){var n=Math.floor((f.cw-6)/CW),s=f.name;\n"
    " if(n<3){if(f.t){f.t.parentNode.removeChild(f.t);f.t=null;}return;}\n"
    " if(s.length>n)s=s.substring(0,n-3)+\"...\";\n"
    " if(!f.t){f.t=d.createElementNS(NS,\"text\");f.t.setAttribute(\"y\",(f.y+11.5).toFixed(1));"
    "f.g.appendChild(f.t);}\n"
    " f.t.setAttribute(\"x\",(f.cx+3).toFixed(1));f.t.textContent=s;}\n"
    "function place(f,x,w){if(f.cx===x&&f.cw===w)return;f.cx=x;f.cw=w;"
    "f.r.setAttribute(\"x\",x.toFixed(1));f.r.setAttribute(\"width\",w.toFixed(1));label(f);}\n"
    "function zoom(k){var z=fr[k],ratio=FW/z.w,anc={},i;\n"
    " for(i=z.p;i>=0;i=fr[i].p)anc[i]=1;\n"
    " for(i=0;i<fr.length;i++){var f=fr[i],c=f.g.classList;\n"
    "  if(i>=k&&i<z.e){c.remove(\"h\",\"a\");place(f,P+(f.x-z.x)*ratio,f.w*ratio);}\n"
    "  else if(anc[i]){c.remove(\"h\");c.add(\"a\");place(f,P,FW);}\n"
    "  else c.add(\"h\");}\n"
    " un.style.display=k>0?\"inline\":\"\";}\n"
    "function unzoom(){for(var i=0;i<fr.length;i++){var f=fr[i];f.g.classList.remove(\"h\",\"a\");"
    "place(f,f.x,f.w);}un.style.display=\"\";}\n"
    "function search(s){var re=null,tot=0,end=0,i;try{re=new RegExp(s);}catch(e){re=null;}\n"
    " term=s;\n"
    " for(i=1;i<fr.length;i++){var f=fr[i],hit=re?re.test(f.name):f.name.indexOf(s)>=0;\n"
    "  f.g.classList.toggle(\"m\",hit);\n"
    "  if(hit&&i>=end){tot+=f.v;end=f.e;}}\n"
    " mt.textContent=\"Matched: \"+(100*tot/fr[0].v).toFixed(2)+\"%\";sb.textContent=\"Reset "
    "Search\";}\n"
    "function unsearch(){for(var i=0;i<fr.length;i++)fr[i].g.classList.remove(\"m\");\n"
    " term=null;mt.textContent=\"\";sb.textContent=\"Search\";}\n"
    "function ask(){var s=window.prompt(\"Search (regular expression)\",term||\"\");"
    "if(s)search(s);}\n"
    "function frameOf(e){var g=e.target;while(g&&g.parentNode!==F)g=g.parentNode;"
    "return g&&typeof g.fi===\"number\"?g.fi:-1;}\n"
    "var gs=F.children,i,st=[];\n"
    "for(i=0;i<gs.length;i++){var g=gs[i],r=first(g,\"rect\"),ti=first(g,\"title\");\n"
    " if(!r||!ti)continue;g.fi=fr.length;\n"
    " var x=+r.getAttribute(\"x\"),w=+r.getAttribute(\"width\");\n"
    " fr.push({g:g,r:r,t:first(g,\"text\"),x:x,w:w,cx:x,cw:w,y:+r.getAttribute(\"y\"),"
    "v:g.hasAttribute(\"data-v\")?+g.getAttribute(\"data-v\"):w,"
    "name:ti.textContent.split(\"\\n\")[0],dp:0,p:-1,e:0});}\n"
    "if(!fr.length)return;\n"
    "P=fr[0].x;FW=fr[0].w;\n"
    "for(i=0;i<fr.length;i++){var f=fr[i];f.dp=Math.round(Math.abs(f.y-fr[0].y)/16);\n"
    " while(st.length&&fr[st[st.length-1]].dp>=f.dp)fr[st.pop()].e=i;\n"
    " f.p=st.length?st[st.length-1]:-1;st.push(i);}\n"
    "while(st.length)fr[st.pop()].e=fr.length;\n"
    "F.addEventListener(\"click\",function(e){var k=frameOf(e);if(k>=0)zoom(k);});\n"
    "F.addEventListener(\"mouseover\",function(e){var k=frameOf(e);if(k>=0)"
    "det.textContent=first(fr[k].g,\"title\").textContent.replace(/\\n/g,\" \\u2014 \");});\n"
    "F.addEventListener(\"mouseout\",function(){det.textContent=\" \";});\n"
    "un.addEventListener(\"click\",unzoom);\n"
    "sb.addEventListener(\"click\",function(){if(term!==null)unsearch();else ask();});\n"
    "d.addEventListener(\"keydown\",function(e){\n"
    " if((e.ctrlKey||e.metaKey)&&e.key===\"f\"){e.preventDefault();ask();}\n"
    " else if(e.key===\"Escape\"){unzoom();unsearch();}});\n"
    "var q=new URLSearchParams(window.location.search),z=q.get(\"z\"),s=q.get(\"s\");\n"
    "if(z!==null&&/^[0-9]+$/.test(z)&&+z<fr.length)zoom(+z);\n"
    "if(s)search(s);\n"
    "})();";

static const char style[] =
    "<style type=\"text/css\">\n"
    "text{font:11px \"DejaVu Sans Mono\",monospace;fill:#000}\n"
    "#tl{font:17px sans-serif;text-anchor:middle}\n"
    "#st{font:12px sans-serif;text-anchor:middle;fill:#444}\n"
    "#un,#sb{font:12px sans-serif;cursor:pointer}\n"
    "#un{display:none}#sb,#mt{text-anchor:end}\n"
    "#f g{cursor:pointer}#f text{pointer-events:none}\n"
    "#f rect{rx:2px;ry:2px}#f g:hover rect{stroke:#000;stroke-width:.5}\n"
    ".i rect{stroke:#555;stroke-width:.6;stroke-dasharray:3 2}.i text{font-style:italic}\n"
    ".rm rect{stroke:#2030c0;stroke-width:.8;stroke-dasharray:1 1.5;fill-opacity:.6}\n"
    ".m rect{fill:#e040e0}.a{opacity:.5}.h{display:none}\n"
    "</style>\n";

/* Names per key id, cut out once: the label (the procedure component, or
 * the whole key) and the other components. */
struct names {
    const struct calltree *t;
    char **label, **extra;
    size_t n;
    int proc; /* index of the procedure component; -1: none */
    int bin;  /* index of the binary component; -1: none */
    char **binary;
};

static void names_init(struct names *nm, const struct calltree *t)
{
    nm->t = t;
    nm->n = strtab_count(t->keys);
    nm->label = xcalloc(nm->n, sizeof(*nm->label));
    nm->extra = xcalloc(nm->n, sizeof(*nm->extra));
    nm->binary = xcalloc(nm->n, sizeof(*nm->binary));
    nm->proc = -1;
    nm->bin = -1;
    for (size_t i = 0; i < t->spec.count; i++)
        if (t->spec.kinds[i] == KEY_PROCEDURE ||
            ((t->spec.kinds[i] == KEY_PROCEDURE_MANGLED || t->spec.kinds[i] == KEY_SYMBOL) &&
             nm->proc < 0))
            nm->proc = (int)i;
    for (size_t i = 0; i < t->spec.count; i++)
        if (t->spec.kinds[i] == KEY_BINARY)
            nm->bin = (int)i;
}

static void names_free(struct names *nm)
{
    for (size_t i = 0; i < nm->n; i++) {
        free(nm->label[i]);
        free(nm->extra[i]);
        free(nm->binary[i]);
    }
    free(nm->binary);
    free(nm->label);
    free(nm->extra);
}

static void names_get(struct names *nm, uint32_t key, const char **label, const char **extra)
{
    if (key >= nm->n) { /* the root */
        *label = "all";
        *extra = "";
        return;
    }
    if (!nm->label[key]) {
        const char *id = strtab_get(nm->t->keys, key);
        if (nm->proc < 0 || nm->t->spec.count == 1) {
            nm->label[key] = key_display(id);
            nm->extra[key] = xstrdup("");
        } else {
            nm->label[key] = key_part(id, (size_t)nm->proc);
            size_t cap = strlen(id) + 1, len = 0;
            char *rest = xmalloc(cap);
            rest[0] = '\0';
            for (size_t i = 0; i < nm->t->spec.count; i++) {
                if ((int)i == nm->proc)
                    continue;
                char *part = key_part(id, i);
                if (strcmp(part, nm->label[key]) != 0) {
                    len += (size_t)snprintf(rest + len, cap - len, "%s%s", len ? ":" : "", part);
                }
                free(part);
            }
            nm->extra[key] = rest;
        }
    }
    *label = nm->label[key];
    *extra = nm->extra[key];
}

/* KEY's binary component ("" without one). */
static const char *names_binary(struct names *nm, uint32_t key)
{
    if (key >= nm->n || nm->bin < 0)
        return "";
    if (!nm->binary[key])
        nm->binary[key] = key_part(strtab_get(nm->t->keys, key), (size_t)nm->bin);
    return nm->binary[key];
}

/* Coordinates with one decimal, without a useless ".0". */
static void put_coord(FILE *out, double v)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%.1f", v);
    if (n >= 2 && buf[n - 2] == '.' && buf[n - 1] == '0')
        buf[n - 2] = '\0';
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    fputs(buf, out);
}

/* 1234567 -> "1,234,567"; fractions (means of runs) keep one decimal. */
static void put_count(FILE *out, double v)
{
    char buf[64], res[96];
    if (fabs(v - round(v)) < 1e-9)
        snprintf(buf, sizeof(buf), "%.0f", v);
    else
        snprintf(buf, sizeof(buf), "%.1f", v);
    const char *dot = strchr(buf, '.');
    size_t digits = dot ? (size_t)(dot - buf) : strlen(buf), o = 0;
    for (size_t i = 0; buf[i]; i++) {
        if (i > 0 && i < digits && (digits - i) % 3 == 0)
            res[o++] = ',';
        res[o++] = buf[i];
    }
    res[o] = '\0';
    fputs(res, out);
}

/* A time or energy with a sensible number of digits and prefix. */
static void put_quantity(FILE *out, double v, const char *unit)
{
    double a = fabs(v);
    if (a >= 100)
        fprintf(out, "%.0f %s", v, unit);
    else if (a >= 10)
        fprintf(out, "%.1f %s", v, unit);
    else if (a >= 1 || a == 0)
        fprintf(out, "%.2f %s", v, unit);
    else if (a >= 1e-3)
        fprintf(out, "%.2f m%s", v * 1e3, unit);
    else
        fprintf(out, "%.0f \xc2\xb5%s", v * 1e6, unit);
}

/* Node NODE of T: its samples, its value of M (HAS_VALUE false: T lacks
 * M's value, shown as 0), SHARE. */
static void put_stats(FILE *out, const struct calltree *t, uint32_t node, const struct metric *m,
                      bool has_value, double share)
{
    const double *total = calltree_total(t, node);
    put_count(out, total[Q_SAMPLES]);
    fputs(" samples, ", out);
    switch (m->kind) {
    case METRIC_CPU:
        put_quantity(out, total[Q_CPU], "s");
        fputs(" CPU, ", out);
        break;
    case METRIC_WALL:
        put_quantity(out, total[Q_WALL], "s");
        fputs(" wall, ", out);
        break;
    case METRIC_ENERGY:
        put_quantity(out, total[Q_ENERGY], "J");
        fputs(", ", out);
        break;
    case METRIC_SAMPLES:
        break;
    default: { /* a value: in its unit, and named */
        double v = has_value ? calltree_value(t, node, m, true) : 0;
        if (m->integral) {
            put_count(out, v);
            fprintf(out, "%s%s", *m->unit ? " " : "", m->unit);
        } else {
            put_quantity(out, v, m->unit);
        }
        fprintf(out, " %s, ", m->name);
        break;
    }
    }
    fprintf(out, "%.2f%%", 100 * share);
}

static void hot_colour(const char *name, char *out, size_t len)
{
    uint32_t h = svg_hash(name);
    if (name[0] == '[') { /* pseudo-frames: not code of the program */
        unsigned v = 175 + (h & 0x1f);
        snprintf(out, len, "#%02x%02x%02x", v - 10, v, v + 25 > 255 ? 255 : v + 25);
        return;
    }
    snprintf(out, len, "#%02x%02x%02x", 205 + h % 51, (h >> 8) % 231, (h >> 16) % 56);
}

/* One hue per binary, so the program's own code and each library stand
 * apart; the function's hash varies the lightness a little, so neighbours
 * of the same binary stay distinguishable. */
static void binary_colour(const char *binary, const char *name, char *out, size_t len)
{
    if (name[0] == '[' || !binary[0]) {
        hot_colour(name, out, len);
        return;
    }
    double h = (double)(svg_hash(binary) % 360) / 60, s = 0.55;
    double l = 0.62 + (double)(svg_hash(name) % 13) / 100;
    double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2) - 1)), m = l - c / 2;
    double rgb[3][6] = {{c, x, 0, 0, x, c}, {x, c, c, x, 0, 0}, {0, 0, x, c, c, x}};
    int sector = (int)h % 6;
    snprintf(out, len, "#%02x%02x%02x", (unsigned)lround(255 * (rgb[0][sector] + m)),
             (unsigned)lround(255 * (rgb[1][sector] + m)),
             (unsigned)lround(255 * (rgb[2][sector] + m)));
}

/* White to red (grew) or blue (shrank), by the change over the largest. */
static void diff_colour(double delta, double max_delta, char *out, size_t len)
{
    double t = max_delta > 0 ? fabs(delta) / max_delta : 0;
    if (t > 1)
        t = 1;
    unsigned fade = (unsigned)lround(240 - 200 * t);
    if (fabs(delta) < 1e-9) /* rounding of shares that are equal */
        snprintf(out, len, "#f0f0f0");
    else if (delta > 0)
        snprintf(out, len, "#ff%02x%02x", fade, fade);
    else
        snprintf(out, len, "#%02x%02xff", fade, fade);
}

/* A frame's <g, up to its attributes: "i" inlined, "rm" only in the
 * baseline. */
static void put_frame_open(FILE *out, bool inlined, bool removed)
{
    fputs("<g", out);
    if (inlined || removed)
        fprintf(out, " class=\"%s%s%s\"", inlined ? "i" : "", inlined && removed ? " " : "",
                removed ? "rm" : "");
}

static void put_diff(FILE *out, const struct flame_frame *fr)
{
    if (!fr->in_base) {
        fputs("; not in the baseline", out);
        return;
    }
    double pts = 100 * (fr->share - fr->base_share);
    fprintf(out, "; baseline %.2f%%, %s%.2f points", 100 * fr->base_share, pts >= 0 ? "+" : "",
            pts);
}

double flamegraph_min_fraction(const struct flamegraph_options *o)
{
    double width = o->width > 0 ? o->width : DEFAULT_WIDTH;
    double min_px = o->min_px > 0 ? o->min_px : DEFAULT_MIN_PX;
    return min_px / (width - 2 * PAD);
}

int flamegraph_svg(FILE *out, const struct calltree *t, const struct calltree *baseline,
                   const struct flamegraph_options *o)
{
    double width = o->width > 0 ? o->width : DEFAULT_WIDTH;
    double span = width - 2 * PAD;
    struct flame f;
    if (!flame_metric_ok(&o->metric)) {
        pt_err("flamegraph: the %s metric does not add up along a stack", o->metric.name);
        return -1;
    }
    if (flame_build(&f, t, &o->metric, flamegraph_min_fraction(o), baseline) != 0) {
        pt_err("flamegraph: no %s in the profile: nothing to draw%s",
               flame_metric_words(&o->metric),
               o->metric.kind == METRIC_SAMPLES ? "" : " (--metric samples counts samples)");
        return -1;
    }
    double scale = span / f.span;
    double height = TOP + (f.max_depth + 1) * FRAME_H + BOTTOM;
    double max_delta = 0;
    for (size_t i = 1; i < f.nframes; i++) {
        double d = fabs(f.frames[i].share - f.frames[i].base_share);
        if (d > max_delta)
            max_delta = d;
    }

    svg_open(out, width, height, NULL);
    fputs(style, out);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n",
            baseline ? "#fafafa" : "#f6f4ea");
    const char *title = o->title    ? o->title
                        : baseline  ? "Differential Flame Graph"
                        : o->icicle ? "Icicle Graph"
                                    : "Flame Graph";
    fputs("<text id=\"tl\" x=\"", out);
    put_coord(out, width / 2);
    fputs("\" y=\"22\">", out);
    svg_text(out, title);
    fputs("</text>\n<text id=\"st\" x=\"", out);
    put_coord(out, width / 2);
    fputs("\" y=\"40\">", out);
    if (o->subtitle)
        svg_text(out, o->subtitle);
    if (baseline)
        fprintf(out, "%sred: a larger share than in the baseline, blue: a smaller one%s",
                o->subtitle ? " \xe2\x80\x94 " : "",
                f.removed > 0 ? ", dotted: only in the baseline (removed time)" : "");
    fputs("</text>\n<text id=\"un\" x=\"10\" y=\"22\">Reset Zoom</text>\n<text id=\"sb\" x=\"",
          out);
    put_coord(out, width - PAD);
    fputs("\" y=\"22\">Search</text>\n<text id=\"dt\" x=\"10\" y=\"", out);
    put_coord(out, height - 10);
    fputs("\"> </text>\n<text id=\"mt\" x=\"", out);
    put_coord(out, width - PAD);
    fputs("\" y=\"", out);
    put_coord(out, height - 10);
    fputs("\"></text>\n<g id=\"f\">\n", out);

    /* Frames only the baseline has show its value of the metric, by name. */
    struct metric base_resolved;
    const struct metric *base_metric = &o->metric;
    if (baseline && o->metric.kind >= METRIC_BUILTINS)
        base_metric = metric_resolve(o->metric.name, &baseline->columns, &base_resolved) == 0
                          ? &base_resolved
                          : NULL;
    struct names nm;
    names_init(&nm, t);
    char colour[16];
    for (size_t i = 0; i < f.nframes; i++) {
        const struct flame_frame *fr = &f.frames[i];
        const struct calltree *in = fr->removed ? baseline : t;
        const struct calltree_node *n = &in->nodes[fr->node];
        const bool inlined = calltree_inlined(in, fr->node);
        const char *label, *extra;
        names_get(&nm, n->key, &label, &extra);
        double x = PAD + fr->start * scale, w = fr->width * scale;
        double y =
            o->icicle ? TOP + fr->depth * FRAME_H : height - BOTTOM - (fr->depth + 1) * FRAME_H;
        put_frame_open(out, inlined, fr->removed);
        if (f.removed > 0) {
            /* Widths hold removed time too: the script's shares need the
             * frame's own value. */
            fputs(" data-v=\"", out);
            put_coord(out, fr->value * scale);
            fputc('"', out);
        }
        fputs("><title>", out);
        svg_text_line(out, label);
        fputc('\n', out);
        if (extra[0]) {
            svg_text_line(out, extra);
            fputs(", ", out);
        }
        if (inlined)
            fputs("inlined, ", out);
        if (fr->removed) {
            fputs("only in the baseline: ", out);
            put_stats(out, baseline, fr->node, base_metric ? base_metric : &o->metric,
                      base_metric != NULL, fr->base_share);
            fprintf(out, " of the baseline; removed, -%.2f points", 100 * fr->base_share);
        } else {
            put_stats(out, t, fr->node, &o->metric, true, fr->share);
            if (baseline)
                put_diff(out, fr);
        }
        fputs("</title><rect x=\"", out);
        put_coord(out, x);
        fputs("\" y=\"", out);
        put_coord(out, y);
        fputs("\" width=\"", out);
        put_coord(out, w);
        if (baseline)
            diff_colour(fr->in_base ? fr->share - fr->base_share : fr->share, max_delta, colour,
                        sizeof(colour));
        else if (o->colour_by_binary)
            binary_colour(names_binary(&nm, n->key), label, colour, sizeof(colour));
        else
            hot_colour(label, colour, sizeof(colour));
        fprintf(out, "\" height=\"%d\" fill=\"%s\"/>", RECT_H, colour);
        size_t chars = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
        if (chars >= 3) {
            fputs("<text x=\"", out);
            put_coord(out, x + 3);
            fputs("\" y=\"", out);
            put_coord(out, y + TEXT_DY);
            fputs("\">", out);
            svg_text_max(out, label, chars);
            fputs("</text>", out);
        }
        fputs("</g>\n", out);
    }
    fputs("</g>\n", out);
    svg_script(out, script);
    svg_close(out);
    names_free(&nm);
    flame_free(&f);
    return ferror(out) ? -1 : 0;
}
