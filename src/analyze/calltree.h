/*
 * calltree.h - the call tree: every distinct path from the outermost
 * frame inwards, with self and total per node, as a walk visitor.
 *
 * Contract: node 0 is the root (all thread samples); a thread sample adds
 * its quantities to the total of every node along its path, outermost
 * first, and to the self of the node of its innermost frame; a stack cut
 * short (walk_event.stack_cut) hangs under a child of the root keyed
 * "[stack cut]" in every component, as its outer frames are unknown.  Recursion
 * gives nested nodes of the same key.  Energy no thread used is one child
 * of the root keyed "[unattributed]" in every component.  Several profiles
 * may be walked into one tree (calltree_add_run() after each);
 * calltree_finish() then divides by their number (the mean of the runs),
 * gives the mean totals, adds up every node's totals (calltree_total(),
 * none before), and orders every node's children by their total of M,
 * descending (ties by key); no sample may be walked into it after.
 * Executions are not counted.  Values (walk.h) add up per node as the
 * quantities do, in T->columns: calltree_values() gives a node's, self
 * then total (NULL without columns).  calltree_metric() resolves a metric
 * name against them.
 *
 * A tree for a picture that leaves out the nodes under a share CUT of the
 * whole (a flame graph, a tree report's threshold) may keep only the ones
 * it can show: calltree_keep_wide(T, CUT) before the walk.  The walk then
 * keeps each distinct path once (path_sums.h), not a node per prefix, and
 * calltree_finish() builds the nodes whose total is positive and at least
 * half CUT of the root's, by metric_share(M), each under its parent (a
 * node left out takes its subtree with it).  Half: the tree adds up its
 * totals in another order than the whole tree would, so no rounding of a
 * sum may lose a node the picture's own cut keeps.  Every node kept has its
 * exact total and self; the totals of the children left out stay in their
 * parent's total, so a node's self and its children's totals may add up
 * to less than its total.  calltree_left_out() counts a node's children
 * left out so (not those under them).
 */
#ifndef PTPROF_ANALYZE_CALLTREE_H
#define PTPROF_ANALYZE_CALLTREE_H

#include "analyze/report.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"

struct path_sums;

#define CALLTREE_NONE UINT32_MAX
/* The root under which stacks that lost their outer frames hang. */
#define CALLTREE_STACK_CUT "[stack cut]"

/* The quantities a node holds: those before Q_EXECUTIONS (executions are
 * not counted here).  A large tree is mostly nodes, so a node holds only
 * what every node needs (issue 19): the idle time of the two nodes that
 * have one and the inlined marks live in the tree. */
#define CALLTREE_Q Q_EXECUTIONS

/* A node's totals are not kept while the tree grows: each is the sum of
 * its subtree's selves, added up once by calltree_finish() into an array of
 * the tree's exact size (a large tree is 48 bytes a node while it grows,
 * not 80; issue 19). */
struct calltree_node {
    uint32_t key; /* id in the key table; CALLTREE_NONE for the root */
    uint32_t parent, first_child, next_sibling; /* a child's id is above its parent's */
    double self[CALLTREE_Q];
};

struct calltree {
    struct strtab *keys;
    struct key_spec spec;
    struct calltree_node *nodes;
    size_t nnodes, cap;
    struct report_totals totals; /* after calltree_finish() */
    double *node_totals;         /* after calltree_finish(): CALLTREE_Q per node */
    /* internal */
    void *index;
    size_t index_cap;
    struct report *runs;
    size_t nruns;
    uint32_t unattributed;
    uint32_t stack_cut;         /* the key of CALLTREE_STACK_CUT */
    uint32_t unattributed_node; /* its node, CALLTREE_NONE until energy no thread used */
    double idle_s;              /* the idle time of the root and of that node */
    uint8_t *inlined;           /* per node: 1 where a frame of its key was inlined */
    size_t inlined_cap;
    struct value_columns columns;
    double *values; /* per node: self then total per column (stride 2 x nvalues) */
    size_t nvalues, values_cap;
    struct metric metric; /* after calltree_finish() */
    /* calltree_keep_wide(): the paths walked, until calltree_finish() */
    double keep_fraction; /* half the cut */
    struct path_sums *paths;
    uint32_t *left_out;   /* after calltree_finish(): per node, NULL if none */
    uint32_t *path_elems; /* one path's elements, reused */
    size_t path_elems_cap;
    bool unattributed_seen;
};

struct calltree *calltree_new(struct strtab *keys, const struct key_spec *spec);
/* Keep only the nodes a cut at CUT of the root's total may show (above);
 * before any walk. */
void calltree_keep_wide(struct calltree *t, double cut);
struct walk_visitor calltree_visitor(struct calltree *t);
void calltree_add_run(struct calltree *t, const struct walk_totals *wt);
void calltree_finish(struct calltree *t, const struct metric *m);
/* Node ID's totals, CALLTREE_Q quantities (after calltree_finish()). */
const double *calltree_total(const struct calltree *t, uint32_t id);
/* Node ID's values, self (then total at + T->columns.n); NULL: none. */
const double *calltree_values(const struct calltree *t, uint32_t id);
/* How many children of node ID calltree_keep_wide() left out. */
uint32_t calltree_left_out(const struct calltree *t, uint32_t id);
/* Whether node ID stands for an inlined frame. */
bool calltree_inlined(const struct calltree *t, uint32_t id);
/* Node N's value of M, exclusive or inclusive. */
double calltree_value(const struct calltree *t, uint32_t id, const struct metric *m, bool total);
void calltree_free(struct calltree *t);

#endif
