/* text_table.c - see text_table.h */
#include "render/text_table.h"
#include "render/termwidth.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define GAP 2
#define MIN_SHRUNK 6

struct column {
    char *title;
    enum table_align align;
    bool shrinkable;
    bool keep_end;
};

struct text_table {
    struct column *cols;
    size_t ncols, cols_cap;
    char **cells; /* row-major, ncols per row, NULL for missing cells */
    size_t nrows, cells_cap;
    size_t next_col;
};

struct text_table *text_table_new(void)
{
    return xcalloc(1, sizeof(struct text_table));
}

void text_table_column(struct text_table *t, const char *title, enum table_align align,
                       bool shrinkable)
{
    t->cols = xgrow(t->cols, &t->cols_cap, t->ncols + 1, sizeof(*t->cols));
    t->cols[t->ncols++] = (struct column){xstrdup(title), align, shrinkable, false};
}

void text_table_keep_end(struct text_table *t)
{
    if (t->ncols)
        t->cols[t->ncols - 1].keep_end = true;
}

void text_table_row(struct text_table *t)
{
    size_t need = (t->nrows + 1) * t->ncols;
    size_t old = t->cells_cap;
    t->cells = xgrow(t->cells, &t->cells_cap, need, sizeof(*t->cells));
    memset(t->cells + old, 0, (t->cells_cap - old) * sizeof(*t->cells));
    t->nrows++;
    t->next_col = 0;
}

void text_table_cell(struct text_table *t, const char *text)
{
    if (t->nrows == 0 || t->next_col >= t->ncols)
        return;
    t->cells[(t->nrows - 1) * t->ncols + t->next_col++] = xstrdup(text);
}

void text_table_cellf(struct text_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    text_table_cell(t, s ? s : "");
    free(s);
}

void text_table_free(struct text_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->cols[i].title);
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cols);
    free(t->cells);
    free(t);
}

static const char *cell(const struct text_table *t, size_t r, size_t c)
{
    const char *s = t->cells[r * t->ncols + c];
    return s ? s : "";
}

/* The first N characters of S into OUT (UTF-8 aware). */
static size_t prefix_bytes(const char *s, size_t n)
{
    size_t i = 0, chars = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) {
            if (chars == n)
                break;
            chars++;
        }
        i++;
    }
    return i;
}

/* Append S, shortened or padded to W characters, to LINE. */
static void put_cell(char **line, size_t *len, size_t *cap, const char *s, size_t w,
                     const struct column *col, bool pad)
{
    size_t sw = text_width(s);
    const char *head = "", *tail = "";
    size_t keep_bytes = strlen(s);
    if (sw > w) {
        size_t keep = w > 3 ? w - 3 : w;
        const char *mark = w > 3 ? "..." : "";
        if (col->keep_end) {
            head = mark;
            s += prefix_bytes(s, sw - keep);
            keep_bytes = strlen(s);
        } else {
            tail = mark;
            keep_bytes = prefix_bytes(s, keep);
        }
        sw = keep + strlen(mark);
    }
    size_t padding = w > sw ? w - sw : 0;
    *line = xgrow(*line, cap, *len + keep_bytes + 4 + padding + 1, 1);
    if (col->align == ALIGN_RIGHT) {
        memset(*line + *len, ' ', padding);
        *len += padding;
    }
    memcpy(*line + *len, head, strlen(head));
    *len += strlen(head);
    memcpy(*line + *len, s, keep_bytes);
    *len += keep_bytes;
    memcpy(*line + *len, tail, strlen(tail));
    *len += strlen(tail);
    if (col->align == ALIGN_LEFT && pad) {
        memset(*line + *len, ' ', padding);
        *len += padding;
    }
    (*line)[*len] = '\0';
}

static int print_line(FILE *out, char *line, size_t len, int width)
{
    while (len > 0 && line[len - 1] == ' ')
        len--;
    if (width > 0)
        len = len < prefix_bytes(line, (size_t)width) ? len : prefix_bytes(line, (size_t)width);
    return fprintf(out, "%.*s\n", (int)len, line) < 0 ? -1 : 0;
}

int text_table_print(const struct text_table *t, FILE *out, int width)
{
    if (t->ncols == 0)
        return 0;
    size_t *w = xcalloc(t->ncols, sizeof(*w)), *minw = xcalloc(t->ncols, sizeof(*minw));
    size_t total = GAP * (t->ncols - 1);
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = text_width(t->cols[c].title);
        minw[c] = w[c] > MIN_SHRUNK ? w[c] : MIN_SHRUNK;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = text_width(cell(t, r, c));
            w[c] = cw > w[c] ? cw : w[c];
        }
        total += w[c];
    }
    while (width > 0 && total > (size_t)width) {
        size_t widest = t->ncols;
        for (size_t c = 0; c < t->ncols; c++)
            if (t->cols[c].shrinkable && w[c] > minw[c] && (widest == t->ncols || w[c] > w[widest]))
                widest = c;
        if (widest == t->ncols)
            break;
        w[widest]--;
        total--;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t r = 0; r <= t->nrows && rc == 0; r++) {
        size_t len = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->cols[c].title : cell(t, r - 1, c);
            if (c) {
                line = xgrow(line, &cap, len + GAP + 1, 1);
                memset(line + len, ' ', GAP);
                len += GAP;
            }
            put_cell(&line, &len, &cap, s, w[c], &t->cols[c], c + 1 < t->ncols);
        }
        rc = print_line(out, line, len, width);
    }
    free(line);
    free(w);
    free(minw);
    return rc;
}

void print_wrapped(FILE *out, const char *const *items, size_t n, int width)
{
    size_t col = 0;
    for (size_t i = 0; i < n; i++) {
        size_t iw = text_width(items[i]);
        if (col > 0 && width > 0 && col + GAP + iw > (size_t)width) {
            fputc('\n', out);
            col = 0;
        }
        if (col > 0) {
            fputs("  ", out);
            col += GAP;
        }
        fputs(items[i], out);
        col += iw;
    }
    if (n)
        fputc('\n', out);
}
