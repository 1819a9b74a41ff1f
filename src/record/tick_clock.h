/*
 * tick_clock.h - the sampling schedule: ticks on an absolute grid, never
 * back to back.
 *
 * Contract: tick k is due at start + k * period, moved by a random offset
 * of up to spread_pct percent of a period either way, so that a program
 * with a period of its own does not stay in one phase with the ticks; at
 * 50 (uniform over a whole period) the ticks before and after any instant
 * of the program are as far from it on average, which the ptrace engine
 * needs to cut an interval it cannot place better in the middle
 * (record/ptrace/spells.h); the grid keeps the
 * schedule, so ticks never drift however late one is handled.  After a
 * tick handled until NOW, tick_clock_next() arms the next one on the grid
 * no earlier than min_gap after NOW: one that would come sooner is moved
 * to NOW + min_gap while that stays within its own jitter window (the
 * spread after its grid point), else dropped, together with the
 * ticks that passed meanwhile (counted in `dropped`): late ticks are never
 * made up for, and never cascade into back-to-back ones.  The clock is a
 * non-blocking timerfd on CLOCK_MONOTONIC for the caller's poll();
 * re-arming it clears its expiration count.  A stride of N arms only
 * every Nth grid point (the ticks between are skipped, not dropped), for
 * a caller with nothing to do at the full rate for a while.
 */
#ifndef PTPROF_RECORD_TICK_CLOCK_H
#define PTPROF_RECORD_TICK_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct tick_clock {
    int fd;
    uint64_t start, period; /* monotonic ns */
    uint64_t min_gap;       /* ns a tick leaves the program before the next */
    unsigned spread_pct;    /* how far a tick moves from its grid point, at most 50 */
    uint64_t k;             /* the tick armed */
    uint64_t due;           /* ...and its time (monotonic ns) */
    uint64_t stride;        /* grid points per tick armed, 1 at the full rate */
    uint64_t rng;
    uint64_t dropped; /* ticks skipped: a tick ran into them, or came too soon */
    bool running;
};

/* MIN_GAP_PCT: the gap in percent of the period (at most 100); SPREAD_PCT:
 * the jitter either way, in percent of the period (at most 50).  Returns
 * 0, or -1 after a message. */
int tick_clock_start(struct tick_clock *c, double hz, unsigned min_gap_pct, unsigned spread_pct);
/* The fd was readable: consume it; true when a tick is due now. */
bool tick_clock_due(struct tick_clock *c);
/* Arm the next tick after one handled until NOW (monotonic ns). */
void tick_clock_next(struct tick_clock *c, uint64_t now);
/* Every STRIDE-th grid point from the next tick armed on (1: all). */
void tick_clock_set_stride(struct tick_clock *c, uint64_t stride);
/* The first grid point after NOW, without jitter. */
uint64_t tick_clock_grid_after(const struct tick_clock *c, uint64_t now);
void tick_clock_stop(struct tick_clock *c);
void tick_clock_close(struct tick_clock *c);

#endif
