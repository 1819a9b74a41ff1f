/*
 * test_spells.c - where a thread's interval between two entries is cut
 * (record/ptrace/spells.h): at the end of a run before a wait, at the
 * start of a run after one, with the time queued for a CPU given to the
 * run or the wait by what the kernel counted, and in the middle when the
 * run moved to another call.
 */
#include "record/ptrace/spells.h"

#include <criterion/criterion.h>

#define MS 1000000ull

static struct spell_mark mark(uint64_t t_ms, bool blocked, uint64_t cpu_ms, uint64_t wait_ms,
                              uint64_t runs, uint64_t callers)
{
    struct spell_mark m = {
        .valid = true,
        .time_ns = t_ms * MS,
        .seen_ns = t_ms * MS,
        .from_ns = t_ms * MS,
        .cpu_ns = cpu_ms * MS,
        .wait_ns = wait_ms * MS,
        .runs = runs,
        .callers = callers,
    };
    m.entry.pc = blocked ? 0x1000 : 0x2000;
    m.entry.syscall = blocked ? 230 : -1;
    m.entry.flags = blocked ? PROF_THREAD_IN_SYSCALL : 0;
    return m;
}

/* Where spell_cut() cuts between PREV and NOW (which it must cut), in ns;
 * *FIRST the earlier place's entry. */
static uint64_t cut_at(const struct spell_mark *prev, const struct spell_mark *now,
                       struct prof_thread_sample *first)
{
    uint64_t at = 0;
    cr_assert(spell_cut(prev, now, &at, first), "the interval is not cut");
    return at;
}

/* 10 ms: ran 3, queued 2 (preempted), blocked 5: the wait is the last 5. */
Test(spells, a_run_then_a_wait_is_cut_where_the_wait_began)
{
    struct spell_mark prev = mark(100, false, 50, 10, 7, 1), now = mark(110, true, 53, 12, 8, 1);
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 105 * MS);
    cr_expect_eq(first.pc, 0x2000u, "the earlier place is the run's");
    cr_expect_eq(first.cpu_ns, 53 * MS, "the run takes all the CPU time");
}

/* Woken once and run 3 ms after 2 ms in the queue: the queue was the
 * wake-up's, the wait's (the program's clock says its call lasted so). */
Test(spells, the_queue_of_a_thread_woken_once_is_the_waits)
{
    struct spell_mark prev = mark(100, true, 50, 10, 7, 1), now = mark(110, false, 53, 12, 8, 1);
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 107 * MS, "the run is the last 3 ms");
    cr_expect_eq(first.cpu_ns, 50 * MS);
}

/* Put on a CPU four times: one queue was the wake-up's, three came from
 * preemption while running: three quarters of the queue is the run's. */
Test(spells, the_queue_of_a_preempted_run_is_the_runs)
{
    struct spell_mark prev = mark(100, true, 50, 10, 7, 1), now = mark(110, false, 53, 14, 11, 1);
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 104 * MS,
                 "3 ms run and 3 of the 4 ms queued end the interval");
}

/* Running in one call, then in another: half the interval to each. */
Test(spells, a_run_that_moved_to_another_call_is_cut_in_the_middle)
{
    struct spell_mark prev = mark(100, false, 50, 10, 7, 1), now = mark(110, false, 58, 10, 7, 2);
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 105 * MS);
    cr_expect_eq(first.cpu_ns, 54 * MS);
    now.callers = 1;
    uint64_t at;
    cr_expect_not(spell_cut(&prev, &now, &at, &first), "within one call the interval is whole");
}

/* A copy comes after its round's tick (the interrupt's way to the thread,
 * the CPU it waited for): what the schedstat says is measured from the
 * copies, so the cut is placed from them.  Ticks at 100 and 110 ms, the
 * later copy at 110.4: ran 3 ms, queued 2, blocked the remaining 5.4 ms
 * of the 10.4 since the earlier copy: the wait began at 105. */
Test(spells, a_wait_is_placed_from_the_copy_not_the_tick)
{
    struct spell_mark prev = mark(100, false, 50, 10, 7, 1), now = mark(110, true, 53, 12, 8, 1);
    now.seen_ns = now.from_ns = 110 * MS + 400000;
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 105 * MS);
}

/* Woken, then run 3 ms up to a copy half a millisecond after the tick:
 * the run began at 107.5, not 107. */
Test(spells, a_run_after_a_wait_is_placed_from_the_copy_not_the_tick)
{
    struct spell_mark prev = mark(100, true, 50, 10, 7, 1), now = mark(110, false, 53, 12, 8, 1);
    now.seen_ns = now.from_ns = 110 * MS + 500000;
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 107 * MS + 500000);
}

/* From a sleep to a read: the earlier copy was resumed 0.6 ms after its
 * tick and the thread ran 1 ms between the waits: of the 8.4 ms blocked
 * since the resume, the sleep's expected part is the first half. */
Test(spells, two_waits_are_cut_in_the_middle_of_the_time_blocked_since_the_resume)
{
    struct spell_mark prev = mark(100, true, 50, 10, 7, 1), now = mark(110, true, 51, 10, 8, 1);
    prev.from_ns = 100 * MS + 600000;
    now.entry.syscall = 0;
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 104 * MS + 800000);
    cr_expect_eq(first.syscall, 230, "the earlier part is the first wait's");
}

/* A run after a wait that the copy found only just begun (woken after the
 * tick) is not placed before the interval's end: the interval is the
 * wait's, up to the tick. */
Test(spells, a_run_begun_after_the_tick_leaves_the_interval_to_the_wait)
{
    struct spell_mark prev = mark(100, true, 50, 10, 7, 1), now = mark(110, false, 50, 10, 8, 1);
    now.seen_ns = now.from_ns = 110 * MS + 300000;
    now.cpu_ns = 50 * MS + 100000;
    struct prof_thread_sample first;
    cr_expect_eq(cut_at(&prev, &now, &first), 110 * MS - 1);
}
