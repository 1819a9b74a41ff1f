/*
 * calltree.h - the call tree: every distinct path from the outermost
 * frame inwards, with self and total per node, as a walk visitor.
 *
 * Contract: node 0 is the root (all thread samples); a thread sample adds
 * its quantities to the total of every node along its path, outermost
 * first, and to the self of the node of its innermost frame.  Recursion
 * gives nested nodes of the same key.  Energy no thread used is one child
 * of the root keyed "[unattributed]" in every component.  Several profiles
 * may be walked into one tree (calltree_add_run() after each);
 * calltree_finish() then divides by their number (the mean of the runs),
 * gives the mean totals, and orders every node's children by their total
 * of M, descending (ties by key).  Executions are not counted.
 */
#ifndef PTPROF_ANALYZE_CALLTREE_H
#define PTPROF_ANALYZE_CALLTREE_H

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"

#define CALLTREE_NONE UINT32_MAX

struct calltree_node {
    uint32_t key; /* id in the key table; CALLTREE_NONE for the root */
    uint32_t parent, first_child, next_sibling;
    double self[Q_COUNT];
    double total[Q_COUNT];
    double idle_s;
    bool inlined;
};

struct calltree {
    struct strtab *keys;
    struct key_spec spec;
    struct calltree_node *nodes;
    size_t nnodes, cap;
    struct report_totals totals; /* after calltree_finish() */
    /* internal */
    void *index;
    size_t index_cap;
    struct report *runs;
    size_t nruns;
    uint32_t unattributed;
};

struct calltree *calltree_new(struct strtab *keys, const struct key_spec *spec);
struct walk_visitor calltree_visitor(struct calltree *t);
void calltree_add_run(struct calltree *t, const struct walk_totals *wt);
void calltree_finish(struct calltree *t, enum metric m);
void calltree_free(struct calltree *t);

#endif
