/*
 * tree_render.h - a call tree (analyze/calltree.h) as indented text, CSV
 * or JSON (docs/report.md).
 *
 * Contract: nodes are printed depth first, children in the tree's order
 * (calltree_finish()), each with its total and self share of the chosen
 * metric and its total value; a node whose total share is below THRESHOLD
 * percent is left out with everything under it, and counted as hidden
 * with the children a tree kept wide left out (calltree_left_out(): a tree
 * built for THRESHOLD need not hold the nodes it hides).  Text: the totals line,
 * then one line per node indented two spaces per level, fitted to WIDTH.
 * CSV: "path,depth,self,self_pct,total,total_pct", the path being the
 * keys from the outermost frame joined by ';'.  JSON: nested objects with
 * "key", "self", "self_pct", "total", "total_pct", "children".
 * Returns 0, or -1 when writing failed.
 */
#ifndef PTPROF_RENDER_TREE_RENDER_H
#define PTPROF_RENDER_TREE_RENDER_H

#include <stdio.h>

#include "analyze/calltree.h"
#include "render/report_render.h"

int render_tree(FILE *out, const struct calltree *t, const struct metric *m, double threshold_pct,
                enum render_format format, int width);

#endif
