/*
 * path_sums.h - the distinct call paths of a walk, each with the sum of
 * what its thread samples were worth: what a call tree that keeps only
 * its wide nodes (calltree_keep_wide()) holds while the walk goes on,
 * instead of a node for every prefix of every path (issue 19).
 *
 * Contract: path_sums_add() adds Q[0..NQ) and VALUES[0..NVALUES) to the
 * path ELEMS[0..N), outermost element first; an element is a key id, with
 * PATH_SUMS_INLINED set where the frame was inlined.  Two paths are the
 * same when their elements are.  NQ is fixed at path_sums_new(); the
 * values' columns may grow from one call to the next (a later profile
 * brought more): a path's columns it never had are 0.  path_sums_order()
 * returns every path's id sorted by its keys (the inlined marks aside),
 * each path before the paths it is a prefix of: the order a depth-first
 * walk of the tree they make meets them.  Memory: per distinct path, its
 * elements (a varint each: 2 bytes for keys under 8,192), 8 bytes per
 * column some path has a nonzero amount in (all columns once
 * path_sums_of() was called) and about 16 bytes of bookkeeping.
 */
#ifndef PTPROF_ANALYZE_PATH_SUMS_H
#define PTPROF_ANALYZE_PATH_SUMS_H

#include <stddef.h>
#include <stdint.h>

#define PATH_SUMS_INLINED 0x80000000u
#define PATH_SUMS_KEY(elem) ((elem) & ~PATH_SUMS_INLINED)

struct path_sums;

struct path_sums *path_sums_new(size_t nq);
void path_sums_add(struct path_sums *s, const uint32_t *elems, uint32_t n, const double *q,
                   const double *values, size_t nvalues);
size_t path_sums_count(const struct path_sums *s);
/* Path ID's elements (*N of them), valid until the next call of
 * path_sums_elems() or path_sums_add(). */
const uint32_t *path_sums_elems(struct path_sums *s, uint32_t id, uint32_t *n);
/* Path ID's sums: NQ quantities, then path_sums_columns() values. */
double *path_sums_of(struct path_sums *s, uint32_t id);
size_t path_sums_columns(const struct path_sums *s);
/* Every path's id, in the order above (allocated: the caller frees it). */
uint32_t *path_sums_order(const struct path_sums *s);
void path_sums_free(struct path_sums *s);

#endif
