/* test_gmon_cycles.c - analyze/call_cycles.h: gprof's call-graph totals
 * with cycles, on a graph worked out by hand. */
#include "analyze/call_cycles.h"

#include <criterion/criterion.h>
#include <stdlib.h>

enum { MAIN, A, B, C, LEAF, ALONE, D, E, N };

/* main calls a (10) and b (5); a -> b -> c -> a is a cycle; b calls leaf;
 * main calls alone, which calls itself; d and e call each other and
 * nobody calls them. */
Test(gmon_cycles, a_cycle_passes_its_whole_time_to_its_callers_and_none_inside)
{
    const double self[N] = {
        [MAIN] = 0, [A] = 1, [B] = 2, [C] = 3, [LEAF] = 4, [ALONE] = 5, [D] = 6, [E] = 7};
    const struct call_arc arcs[] = {
        {MAIN, A, 10}, {A, B, 20},       {B, C, 20},        {C, A, 10}, {B, LEAF, 5},
        {MAIN, B, 5},  {MAIN, ALONE, 1}, {ALONE, ALONE, 7}, {D, E, 3},  {E, D, 2},
    };
    struct call_totals t;
    call_totals_compute(N, 1, self, arcs, sizeof(arcs) / sizeof(arcs[0]), &t);
    /* Members: their own and their children outside the cycle. */
    cr_expect_float_eq(t.member[A], 1, 1e-12);
    cr_expect_float_eq(t.member[B], 2 + 4, 1e-12);
    cr_expect_float_eq(t.member[C], 3, 1e-12);
    /* The cycle as a whole: 1 + 2 + 3 + leaf's 4, called 15 times from
     * outside (its 50 calls inside do not count). */
    for (int v = A; v <= C; v++) {
        cr_expect_float_eq(t.group[v], 10, 1e-12);
        cr_expect_float_eq(t.group_calls[v], 15, 1e-12);
        cr_expect_eq(t.cycle[v], 1);
    }
    /* main gets the cycle's 10 by its 15 calls, and alone's 5 (a call to
     * itself is no cycle and no call in). */
    cr_expect_float_eq(t.member[MAIN], 10 + 5, 1e-12);
    cr_expect_float_eq(t.member[ALONE], 5, 1e-12);
    cr_expect_float_eq(t.group_calls[ALONE], 1, 1e-12);
    cr_expect_eq(t.cycle[ALONE], 0);
    cr_expect_eq(t.cycle[MAIN], 0);
    cr_expect_eq(t.cycle[LEAF], 0);
    /* A second cycle, numbered after the first; nobody calls it. */
    cr_expect_eq(t.cycle[D], 2);
    cr_expect_eq(t.cycle[E], 2);
    cr_expect_float_eq(t.group[D], 13, 1e-12);
    cr_expect_float_eq(t.member[D], 6, 1e-12);
    cr_expect_float_eq(t.group_calls[E], 0, 1e-12);
    cr_expect_eq(t.ncycles, 2);
    call_totals_free(&t);
}

/* A chain longer than any stack would take recursively. */
Test(gmon_cycles, a_long_chain_and_a_long_cycle_need_no_recursion)
{
    enum { LONG = 200000 };
    double *self = calloc(LONG, sizeof(*self));
    struct call_arc *arcs = calloc(LONG, sizeof(*arcs));
    cr_assert(self && arcs);
    for (uint32_t i = 0; i < LONG; i++)
        self[i] = 1;
    for (uint32_t i = 0; i + 1 < LONG; i++)
        arcs[i] = (struct call_arc){i, i + 1, 1};
    struct call_totals t;
    call_totals_compute(LONG, 1, self, arcs, LONG - 1, &t);
    cr_expect_float_eq(t.member[0], LONG, 1e-6);
    cr_expect_eq(t.ncycles, 0);
    call_totals_free(&t);
    /* Closed into one cycle: one group of everything, no time passed. */
    arcs[LONG - 1] = (struct call_arc){LONG - 1, 0, 1};
    call_totals_compute(LONG, 1, self, arcs, LONG, &t);
    cr_expect_eq(t.ncycles, 1);
    cr_expect_float_eq(t.member[0], 1, 1e-12);
    cr_expect_float_eq(t.group[LONG / 2], LONG, 1e-6);
    call_totals_free(&t);
    free(arcs);
    free(self);
}
