/*
 * text_table.h - aligned text tables that fit a width.
 *
 * Contract: a table has columns (title, alignment, whether it may be
 * shortened) and rows of cells (copied).  text_table_print() pads every
 * column to its widest cell or title, two spaces apart, with no trailing
 * blanks.  With WIDTH > 0 and lines wider than that, shrinkable columns
 * give up room, the widest first, down to a minimum of 6 columns (or
 * their title), and their cut cells end in "..." (or start with it, for
 * columns that keep the end, such as paths); if the line is still
 * too wide every line is cut at WIDTH.  Widths count UTF-8 characters.
 * Returns 0, or -1 when writing failed.
 */
#ifndef PTPROF_RENDER_TEXT_TABLE_H
#define PTPROF_RENDER_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum table_align {
    ALIGN_LEFT,
    ALIGN_RIGHT,
};

struct text_table;

struct text_table *text_table_new(void);
void text_table_column(struct text_table *t, const char *title, enum table_align align,
                       bool shrinkable);
/* The last column added keeps the end of what it cuts ("...dir/file.c"). */
void text_table_keep_end(struct text_table *t);
/* Starts a new row; cells are then added left to right. */
void text_table_row(struct text_table *t);
void text_table_cell(struct text_table *t, const char *text);
void text_table_cellf(struct text_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int text_table_print(const struct text_table *t, FILE *out, int width);
void text_table_free(struct text_table *t);

/* Print ITEMS separated by "  ", starting a new line where the next item
 * would pass WIDTH (> 0); one line when WIDTH is 0. */
void print_wrapped(FILE *out, const char *const *items, size_t n, int width);

#endif
