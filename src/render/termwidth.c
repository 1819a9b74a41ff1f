/* termwidth.c - see termwidth.h */
#include "render/termwidth.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define DEFAULT_WIDTH 80

int term_width_choose(bool is_tty, const char *columns_env, int winsize_cols)
{
    if (!is_tty)
        return 0;
    if (columns_env && *columns_env) {
        char *end;
        long v = strtol(columns_env, &end, 10);
        if (*end == '\0' && v > 0 && v < 100000)
            return (int)v;
    }
    return winsize_cols > 0 ? winsize_cols : DEFAULT_WIDTH;
}

int term_width(int fd)
{
    bool tty = isatty(fd) == 1;
    int cols = 0;
    struct winsize ws;
    if (tty && ioctl(fd, TIOCGWINSZ, &ws) == 0)
        cols = ws.ws_col;
    return term_width_choose(tty, getenv("COLUMNS"), cols);
}

size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    return n;
}
