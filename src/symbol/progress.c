/* progress.c - see progress.h */
#include "symbol/progress.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define QUIET_NS 500000000ull /* no bar for work shorter than this */
#define REDRAW_NS 100000000ull

struct progress {
    const char *what;
    uint64_t total;
    uint64_t start_ns, drawn_ns;
    bool drawn;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct progress *progress_start(const char *what, uint64_t total, bool enabled)
{
    if (!enabled || !isatty(STDERR_FILENO))
        return NULL;
    struct progress *pb = xcalloc(1, sizeof(*pb));
    pb->what = what;
    pb->total = total;
    pb->start_ns = now_ns();
    return pb;
}

static int terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

void progress_update(struct progress *pb, uint64_t done)
{
    if (!pb)
        return;
    uint64_t t = now_ns();
    if (t - pb->start_ns < QUIET_NS || (pb->drawn && t - pb->drawn_ns < REDRAW_NS))
        return;
    if (done > pb->total)
        done = pb->total;
    double frac = pb->total ? (double)done / (double)pb->total : 1.0;
    /* "what [#####     ]  42%": the bar takes what the terminal leaves. */
    int width = terminal_width() - (int)snprintf(NULL, 0, "%s [] 100%%", pb->what) - 1;
    if (width > 50)
        width = 50;
    if (width < 10)
        width = 10;
    int filled = (int)(frac * width);
    fprintf(stderr, "\r%s [", pb->what);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : ' ', stderr);
    fprintf(stderr, "] %3d%%", (int)(frac * 100.0));
    fflush(stderr);
    pb->drawn = true;
    pb->drawn_ns = t;
}

void progress_end(struct progress *pb)
{
    if (!pb)
        return;
    if (pb->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    free(pb);
}
