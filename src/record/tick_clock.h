/*
 * tick_clock.h - the sampling schedule: ticks on an absolute grid.
 *
 * Contract: tick k is due at start + k * period, moved by a random offset
 * of up to a quarter period either way (so a program with a period of its
 * own does not stay in one phase with the ticks); the grid keeps the
 * schedule, so ticks never drift however late one is handled, and ticks
 * that passed while one was handled are dropped, not bunched.  The clock
 * is a non-blocking timerfd on CLOCK_MONOTONIC for the caller's poll().
 */
#ifndef PTPROF_RECORD_TICK_CLOCK_H
#define PTPROF_RECORD_TICK_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct tick_clock {
    int fd;
    uint64_t start, period; /* monotonic ns */
    uint64_t k;             /* the tick armed */
    uint64_t rng;
    bool running;
};

/* Returns 0, or -1 after a message. */
int tick_clock_start(struct tick_clock *c, double hz);
/* The fd was readable: consume it; true when a tick is due now. */
bool tick_clock_due(struct tick_clock *c);
/* Arm the next tick that is still ahead. */
void tick_clock_next(struct tick_clock *c);
void tick_clock_stop(struct tick_clock *c);
void tick_clock_close(struct tick_clock *c);

#endif
