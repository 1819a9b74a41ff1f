/* tick_clock.c - see tick_clock.h */
#include "record/tick_clock.h"
#include "util/log.h"
#include "util/timeutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* xorshift64*: plenty for jitter, and no system call. */
static uint64_t next_random(struct tick_clock *c)
{
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 2685821657736338717ULL;
}

/* How far a tick may move from its grid point, either way. */
static uint64_t spread(const struct tick_clock *c)
{
    return c->period * c->spread_pct / 100;
}

/* Tick K's time: its grid point moved by up to spread() either way. */
static uint64_t due_time(struct tick_clock *c, uint64_t k)
{
    uint64_t half = spread(c);
    uint64_t jitter = half ? next_random(c) % (2 * half) : 0;
    return c->start + k * c->period + jitter - half;
}

static int arm(struct tick_clock *c, uint64_t k, uint64_t due)
{
    struct itimerspec spec = {.it_value = ns_timespec(due)};
    c->k = k;
    c->due = due;
    return timerfd_settime(c->fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

int tick_clock_start(struct tick_clock *c, double hz, unsigned min_gap_pct, unsigned spread_pct)
{
    memset(c, 0, sizeof(*c));
    c->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (c->fd < 0) {
        pt_err("timerfd_create: %s", strerror(errno));
        return -1;
    }
    c->period = (uint64_t)llround(1e9 / hz);
    if (c->period == 0)
        c->period = 1;
    c->min_gap = c->period * (min_gap_pct > 100 ? 100 : min_gap_pct) / 100;
    c->spread_pct = spread_pct > 50 ? 50 : spread_pct;
    c->stride = 1;
    c->start = monotonic_ns();
    c->rng = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
    if (arm(c, 1, due_time(c, 1)) != 0) {
        pt_err("timerfd_settime: %s", strerror(errno));
        return -1;
    }
    c->running = true;
    return 0;
}

bool tick_clock_due(struct tick_clock *c)
{
    uint64_t expirations;
    if (read(c->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
        return false;
    return c->running;
}

void tick_clock_next(struct tick_clock *c, uint64_t now)
{
    if (!c->running)
        return;
    uint64_t k = (now - c->start) / c->period + 1;
    if (k < c->k + c->stride)
        k = c->k + c->stride;
    uint64_t due = due_time(c, k), earliest = now + c->min_gap;
    while (due < earliest) {
        /* Still within this tick's own window: late, not dropped. */
        if (earliest <= c->start + k * c->period + spread(c)) {
            due = earliest;
            break;
        }
        k++;
        due = due_time(c, k);
    }
    c->dropped += k - c->k - c->stride;
    arm(c, k, due);
}

void tick_clock_set_stride(struct tick_clock *c, uint64_t stride)
{
    c->stride = stride ? stride : 1;
}

uint64_t tick_clock_grid_after(const struct tick_clock *c, uint64_t now)
{
    if (c->period == 0) /* never started */
        return UINT64_MAX;
    if (now < c->start)
        return c->start;
    return c->start + ((now - c->start) / c->period + 1) * c->period;
}

void tick_clock_stop(struct tick_clock *c)
{
    struct itimerspec off = {0};
    if (c->running)
        timerfd_settime(c->fd, 0, &off, NULL);
    c->running = false;
}

void tick_clock_close(struct tick_clock *c)
{
    tick_clock_stop(c);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
