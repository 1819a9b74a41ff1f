/*
 * flame.h - a call tree (calltree.h) laid out as a flame graph: where each
 * frame starts and how wide it is along the axis of one metric, what is
 * too narrow to draw, and, against a baseline, how each frame's share of
 * the whole changed.
 *
 * Contract: flame_build() lays out T (after calltree_finish()) by metric M
 * (cpu, wall, samples, energy or a sum or counter value: flame_metric_ok();
 * power, executions, means and ratios do not add up along a stack):
 *  - frame 0 is the root, spanning [0, span); each other frame is one
 *    node of T, its width the node's total of M, its first child starting
 *    where it starts and each next child where the previous one ended, in
 *    the tree's order.  A frame's children never cover more than the frame
 *    itself: the rest is its self value (and children left out).
 *  - frames are in depth-first order, a parent before its children, so the
 *    subtree of frame I is the frames after I until the first one whose
 *    depth is not greater than I's.
 *  - a frame narrower than MIN_FRACTION of the total, or of no width, is
 *    left out with everything under it; its value stays inside its parent's
 *    width (every total stays right).  F->pruned counts the nodes left out
 *    that way (not those under them) and F->pruned_value sums their width.
 *  - with BASELINE (finished, its paths interned in the same key table as
 *    T's, so key ids compare) each frame's node is matched to the baseline
 *    node reached by the same path of keys from the root.  share is the
 *    frame's value over T's total, base_share the matched node's total of
 *    M over the baseline's root total (0 when the path is not in the
 *    baseline, in_base false; a value M the baseline lacks is 0 in it), so
 *    the two profiles compare whatever their lengths.
 *  - the baseline's paths that T lacks are drawn too, as removed time: a
 *    frame (REMOVED, its node a node of BASELINE, value 0) after T's
 *    children of the node where the path leaves T, as wide as its share of
 *    the baseline applied to T's total, with the baseline's frames above
 *    it.  So that they fit, every frame is widened by the removed time
 *    under it: a frame's width is its VALUE (its total of M in T) plus
 *    that time, and the root spans SPAN = TOTAL + REMOVED.  Without a
 *    baseline, width is value and span is total.  F->gone_share is
 *    REMOVED / TOTAL, the baseline's share held by the paths T lacks.
 *  Returns 0, or -1 when T has no positive total of M (nothing to draw).
 */
#ifndef PTPROF_ANALYZE_FLAME_H
#define PTPROF_ANALYZE_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/calltree.h"

struct flame_frame {
    uint32_t node;   /* in the calltree (the baseline's when REMOVED); 0 for the root */
    uint32_t parent; /* frame index; UINT32_MAX for the root */
    uint32_t depth;  /* 0 for the root */
    double start, width;
    double value;      /* the node's total of M in T; 0 when REMOVED */
    double share;      /* value / total */
    double base_share; /* with a baseline; 0 if not in it */
    bool in_base;
    bool removed; /* only in the baseline: its time is gone */
};

struct flame {
    struct flame_frame *frames;
    size_t nframes;
    uint32_t max_depth;
    double total;   /* T's total of M */
    double removed; /* the baseline's time on paths T lacks, in T's units */
    double span;    /* total + removed: the root's width */
    size_t pruned;
    double pruned_value;
    bool has_base;
    double gone_share;
};

bool flame_metric_ok(const struct metric *m);
/* What a flame graph of M measures, in words: "CPU time", "wall time",
 * "samples", "energy", else the metric's name. */
const char *flame_metric_words(const struct metric *m);
int flame_build(struct flame *f, const struct calltree *t, const struct metric *m,
                double min_fraction, const struct calltree *baseline);
void flame_free(struct flame *f);

#endif
