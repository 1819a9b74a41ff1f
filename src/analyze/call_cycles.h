/*
 * call_cycles.h - the totals of gprof's call graph, cycles included.
 *
 * Contract: call_totals_compute() takes N functions, each with WIDTH own
 * quantities (SELF, N x WIDTH), and the counted calls between them (ARCS;
 * a function's calls to itself are ignored, as gprof ignores them).  As
 * gprof (binutils cg_arcs.c), functions that call each other round a loop
 * form a cycle (a strongly connected component of two or more), numbered
 * from 1 in the order their first member appears; every other function is
 * its own group.  Time flows up from callee to caller group by group,
 * callees first: an arc into another group passes that group's total
 * times the arc's share of the group's calls from outside it; an arc
 * inside a cycle passes nothing.  A group's total is its members' own plus
 * what its arcs pass to it; a member's total (gprof's "self + children" on
 * its primary line) is its own plus what its own arcs to other groups
 * pass.  Memory is linear in N and the arcs; no recursion.
 */
#ifndef PTPROF_ANALYZE_CALL_CYCLES_H
#define PTPROF_ANALYZE_CALL_CYCLES_H

#include <stddef.h>
#include <stdint.h>

struct call_arc {
    uint32_t caller, callee; /* < N */
    double count;
};

struct call_totals {
    double *member;      /* N x WIDTH: own, plus children outside its cycle */
    double *group;       /* N x WIDTH: its cycle's total (its own when in none) */
    double *group_calls; /* N: calls into its cycle (or into it) from outside */
    uint32_t *cycle;     /* N: 0 when in no cycle, else the cycle's number */
    uint32_t ncycles;
};

void call_totals_compute(size_t n, size_t width, const double *self, const struct call_arc *arcs,
                         size_t narcs, struct call_totals *out);
void call_totals_free(struct call_totals *t);

#endif
