/*
 * test_tick_clock.c - the sampling schedule (record/tick_clock.h): ticks on
 * a grid, late ticks dropped and counted, a stride that skips grid points
 * without counting them as dropped, and the grid point after a time.
 */
#include "record/tick_clock.h"

#include <criterion/criterion.h>
#include <stdint.h>

#define PERIOD 1000000ULL /* 1 kHz */

/* A running clock whose grid starts at a known time (far in the future of
 * nothing: the timerfd is armed on absolute times, never read here). */
static void start_at(struct tick_clock *c, uint64_t start)
{
    cr_assert_eq(tick_clock_start(c, 1000.0, 25, 25), 0);
    cr_assert_eq(c->period, PERIOD);
    c->start = start;
    c->k = 1;
}

Test(tick_clock, next_arms_the_following_grid_point)
{
    struct tick_clock c;
    start_at(&c, 1000 * PERIOD);
    tick_clock_next(&c, 1000 * PERIOD + PERIOD + PERIOD / 10);
    cr_expect_eq(c.k, 2);
    cr_expect_eq(c.dropped, 0);
    /* Handled until 3.5 periods in: tick 3 is past, dropped. */
    tick_clock_next(&c, 1000 * PERIOD + 3 * PERIOD + PERIOD / 2);
    cr_expect_eq(c.k, 4);
    cr_expect_eq(c.dropped, 1);
    tick_clock_close(&c);
}

Test(tick_clock, a_stride_skips_grid_points_without_dropping_them)
{
    struct tick_clock c;
    start_at(&c, 1000 * PERIOD);
    tick_clock_set_stride(&c, 10);
    tick_clock_next(&c, 1000 * PERIOD + PERIOD + PERIOD / 10);
    cr_expect_eq(c.k, 11, "armed tick %llu", (unsigned long long)c.k);
    cr_expect_eq(c.dropped, 0);
    /* Late by more than a stride: only what lies beyond it is dropped. */
    tick_clock_next(&c, 1000 * PERIOD + 30 * PERIOD + PERIOD / 2);
    cr_expect_eq(c.k, 31);
    cr_expect_eq(c.dropped, 10);
    /* Back to every grid point. */
    tick_clock_set_stride(&c, 1);
    tick_clock_next(&c, 1000 * PERIOD + 31 * PERIOD + PERIOD / 10);
    cr_expect_eq(c.k, 32);
    cr_expect_eq(c.dropped, 10);
    tick_clock_set_stride(&c, 0);
    cr_expect_eq(c.stride, 1, "a stride of 0 means every grid point");
    tick_clock_close(&c);
}

Test(tick_clock, the_grid_point_after_a_time)
{
    struct tick_clock c;
    start_at(&c, 1000 * PERIOD);
    cr_expect_eq(tick_clock_grid_after(&c, 1000 * PERIOD), 1001 * PERIOD);
    cr_expect_eq(tick_clock_grid_after(&c, 1000 * PERIOD + PERIOD - 1), 1001 * PERIOD);
    cr_expect_eq(tick_clock_grid_after(&c, 1001 * PERIOD), 1002 * PERIOD);
    cr_expect_eq(tick_clock_grid_after(&c, 5), 1000 * PERIOD, "before the start: the start");
    tick_clock_close(&c);

    struct tick_clock never = {.fd = -1};
    cr_expect_eq(tick_clock_grid_after(&never, 12345), UINT64_MAX, "never started");
}

/* Spread at 50%, as the ptrace engine asks: ticks fall anywhere in their
 * period, uniformly: up to half a period before or after their grid point,
 * half of them within a quarter. */
Test(tick_clock, ticks_spread_over_their_whole_period)
{
    struct tick_clock c;
    cr_assert_eq(tick_clock_start(&c, 1000.0, 0, 50), 0);
    c.start = 1000 * PERIOD;
    c.k = 1;
    int64_t lo = 0, hi = 0;
    int within_quarter = 0, n = 4000;
    for (int i = 0; i < n; i++) {
        /* Handled at once, half a period before the next grid point. */
        tick_clock_next(&c, c.start + c.k * PERIOD + PERIOD / 2);
        int64_t off = (int64_t)(c.due - (c.start + c.k * PERIOD));
        cr_assert(off >= -(int64_t)PERIOD / 2 && off < (int64_t)PERIOD / 2,
                  "tick %llu is %lld ns off its grid point", (unsigned long long)c.k,
                  (long long)off);
        lo = off < lo ? off : lo;
        hi = off > hi ? off : hi;
        within_quarter += off >= -(int64_t)PERIOD / 4 && off < (int64_t)PERIOD / 4;
    }
    cr_expect_lt(lo, -(int64_t)PERIOD * 45 / 100, "no tick came early by nearly half a period");
    cr_expect_gt(hi, (int64_t)PERIOD * 45 / 100, "no tick came late by nearly half a period");
    cr_expect(within_quarter > n * 45 / 100 && within_quarter < n * 55 / 100,
              "%d of %d ticks within a quarter period of their grid point", within_quarter, n);
    tick_clock_close(&c);
}
