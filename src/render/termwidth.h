/*
 * termwidth.h - how wide the output may be.
 *
 * Contract: term_width() returns the number of columns of the terminal FD
 * is, or 0 (no limit) when FD is not a terminal.  On a terminal, a valid
 * $COLUMNS wins (the user's or the shell's choice), then the size the
 * terminal reports (TIOCGWINSZ), then 80.  term_width_choose() is the
 * decision alone, for tests.  text_width() counts the columns of a UTF-8
 * string (one per character; control bytes count too).
 */
#ifndef PTPROF_RENDER_TERMWIDTH_H
#define PTPROF_RENDER_TERMWIDTH_H

#include <stdbool.h>
#include <stddef.h>

int term_width(int fd);
int term_width_choose(bool is_tty, const char *columns_env, int winsize_cols);
size_t text_width(const char *s);

#endif
