/*
 * flamegraph_classic.c - how large the classic flamegraph.pl SVG of a set of
 * stacks would be, for bench/flamegraph.sh (flamegraph.pl is not packaged
 * in Debian, so it cannot simply be run).
 *
 * usage: flamegraph_classic < TREE.csv
 *   TREE.csv is "ptprof report --tree --format csv --threshold 0" (columns
 *   path,depth,self,self_pct,total,total_pct; rows depth first, a parent
 *   before its children): the same merged stacks flamegraph.pl builds from
 *   folded stacks (it merges equal prefixes too).  Prints
 *   "bytes=N frames=F" on stdout.
 *
 * The size is computed, not guessed: flamegraph.pl 1.0 (the current one)
 * writes a fixed part (XML header, CSS, its script, title and buttons:
 * 10,962 bytes up to and including <g id="frames"> in a 1200-pixel graph,
 * measured on a file it generated, plus "</g>\n</svg>\n" at the end) and
 * then, for every frame at least 0.1 pixel wide, exactly:
 *
 *   <g >\n<title>NAME (N samples, P%)</title><rect x="X" y="Y" width="W"
 *   height="15.0" fill="rgb(R,G,B)" rx="2" ry="2" />\n<text  x="TX" y="TY"
 *   >LABEL</text>\n</g>\n
 *
 * with N the count with thousands separators, P "%.2f" (the root: "all (N
 * samples, 100%)"), X and W "%.1f", Y an integer, TX "%.2f", TY Y + 8.5,
 * LABEL the name cut to the characters that fit (12 px Verdana at 0.59 em,
 * "..": at least 3 or nothing), & < > escaped, and a random hot colour (its
 * digits drawn here from a fixed seed).  Sibling order differs (flamegraph.pl
 * sorts by name; this takes the CSV's order), which moves frames but barely
 * changes the digits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 1200.0
#define XPAD 10.0
#define FRAME_H 16
#define MIN_PX 0.1
#define FONT_W (12 * 0.59)
#define FIXED_HEAD 10962
#define FIXED_TAIL 11 /* "</g>\n</svg>\n" */
#define MAX_DEPTH 4096

struct row {
    char *path;
    int depth;
    double total;
};

/* One CSV field (RFC 4180) of *P into a new string; advances *P. */
static char *field(char **p)
{
    char *s = *p, *out = malloc(strlen(s) + 1), *o = out;
    if (*s == '"') {
        for (s++; *s; s++) {
            if (*s == '"') {
                if (s[1] != '"') {
                    s++;
                    break;
                }
                s++;
            }
            *o++ = *s;
        }
    } else {
        while (*s && *s != ',' && *s != '\n')
            *o++ = *s++;
    }
    *o = '\0';
    if (*s == ',')
        s++;
    *p = s;
    return out;
}

/* Reads one CSV record (quoted fields may hold newlines). */
static char *record(FILE *in)
{
    size_t cap = 256, n = 0;
    char *buf = malloc(cap);
    int c, quoted = 0;
    while ((c = fgetc(in)) != EOF) {
        if (n + 2 > cap)
            buf = realloc(buf, cap *= 2);
        if (c == '"')
            quoted = !quoted;
        if (c == '\n' && !quoted)
            break;
        buf[n++] = (char)c;
    }
    if (c == EOF && n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static size_t escaped_len(const char *s, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        len += s[i] == '&' ? 5 : (s[i] == '<' || s[i] == '>') ? 4 : 1;
    return len;
}

static size_t count_len(double v)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.0f", v);
    return (size_t)n + (size_t)(n - 1) / 3; /* thousands separators */
}

static unsigned rng_state = 12345;
static unsigned rng(unsigned mod)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 16) % mod;
}

/* The bytes of one frame as flamegraph.pl writes it. */
static size_t frame_bytes(const char *name, double value, double total, double x1, double x2,
                          int y1, int root)
{
    char buf[128];
    size_t len = 5; /* "<g >\n" */
    size_t nlen = strlen(name);
    len += 7 + 8; /* <title></title> */
    if (root) {
        len += strlen("all (") + count_len(value) + strlen(" samples, 100%)");
    } else {
        len += escaped_len(name, nlen) + 2 + count_len(value) + strlen(" samples, ");
        len += (size_t)snprintf(buf, sizeof(buf), "%.2f%%)", 100 * value / total);
    }
    char xs[32], x2s[32];
    snprintf(xs, sizeof(xs), "%.1f", x1);
    snprintf(x2s, sizeof(x2s), "%.1f", x2);
    len += strlen("<rect x=\"") + strlen(xs);
    len +=
        (size_t)snprintf(buf, sizeof(buf), "\" y=\"%d\" width=\"%.1f\"", y1, atof(x2s) - atof(xs));
    len += (size_t)snprintf(buf, sizeof(buf), " height=\"15.0\" fill=\"rgb(%u,%u,%u)\"",
                            205 + rng(50), rng(230), rng(55));
    len += strlen(" rx=\"2\" ry=\"2\" />\n");
    len += (size_t)snprintf(buf, sizeof(buf), "<text  x=\"%.2f\" y=\"%.1f\" >", x1 + 3, y1 + 8.5);
    const char *label = root ? "all" : name;
    size_t llen = strlen(label);
    size_t chars = (size_t)((x2 - x1) / FONT_W);
    if (chars >= 3)
        len += chars < llen ? escaped_len(label, chars - 2) + 2 : escaped_len(label, llen);
    len += strlen("</text>\n") + strlen("</g>\n");
    return len;
}

int main(void)
{
    char *line = record(stdin); /* header */
    if (!line || strncmp(line, "path,depth,", 11) != 0) {
        fprintf(stderr, "flamegraph_classic: not a ptprof report --tree CSV\n");
        return 1;
    }
    free(line);
    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    double total = 0;
    int max_depth = 0;
    while ((line = record(stdin))) {
        char *p = line;
        if (n == cap)
            rows = realloc(rows, (cap = cap ? 2 * cap : 1024) * sizeof(*rows));
        rows[n].path = field(&p);
        char *d = field(&p), *self = field(&p), *self_pct = field(&p), *t = field(&p);
        rows[n].depth = atoi(d);
        rows[n].total = atof(t);
        free(d);
        free(self);
        free(self_pct);
        free(t);
        free(line);
        if (rows[n].depth < 0 || rows[n].depth >= MAX_DEPTH)
            continue;
        if (rows[n].depth == 0)
            total += rows[n].total;
        n++;
    }
    if (!(total > 0)) {
        fprintf(stderr, "flamegraph_classic: no samples\n");
        return 1;
    }
    double scale = (WIDTH - 2 * XPAD) / total;
    /* Pass 1: which frames are drawn (at least MIN_PX, and so are their
     * callers), and the depth of the deepest: the image height. */
    static double start[MAX_DEPTH + 1];
    static size_t plen[MAX_DEPTH + 1];
    static int drawn[MAX_DEPTH + 1];
    char *keep = calloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) {
        int d = rows[i].depth;
        int parent_drawn = d == 0 || drawn[d - 1];
        drawn[d] = parent_drawn && rows[i].total * scale >= MIN_PX;
        keep[i] = (char)drawn[d];
        if (keep[i] && d + 1 > max_depth)
            max_depth = d + 1; /* flamegraph.pl's depth: the root "all" is 0 */
    }
    int height = (max_depth + 1) * FRAME_H + 12 * 3 + 12 * 2 + 10;
    size_t bytes = FIXED_HEAD + FIXED_TAIL, frames = 1;
    int ybase = height - (12 * 2 + 10);
    bytes += frame_bytes("all", total, total, XPAD, XPAD + total * scale, ybase - FRAME_H + 1, 1);
    start[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int d = rows[i].depth;
        /* Children start where their parent starts; siblings follow. */
        double x = start[d];
        if (i + 1 < n && rows[i + 1].depth > d)
            start[d + 1] = x;
        start[d] = x + rows[i].total;
        plen[d] = d == 0 ? 0 : plen[d - 1];
        if (!keep[i])
            continue;
        const char *name = rows[i].path + (d == 0 ? 0 : plen[d - 1] + 1);
        if (d > 0 && plen[d - 1] + 1 > strlen(rows[i].path))
            name = rows[i].path;
        plen[d] = strlen(rows[i].path);
        int depth = d + 1;
        int y1 = ybase - (depth + 1) * FRAME_H + 1;
        bytes += frame_bytes(name, rows[i].total, total, XPAD + x * scale,
                             XPAD + (x + rows[i].total) * scale, y1, 0);
        frames++;
    }
    printf("bytes=%zu frames=%zu\n", bytes, frames);
    for (size_t i = 0; i < n; i++)
        free(rows[i].path);
    free(rows);
    free(keep);
    return 0;
}
