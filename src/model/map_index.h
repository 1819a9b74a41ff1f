/*
 * map_index.h - which map of a profile holds an address at a given time,
 * and when a process's set of maps changed.
 *
 * Every reader of addresses needs these two answers (the symbolizer, the
 * call paths' memo, the pprof writer); they come from one index.
 *
 * Contract:
 *  - map_index_new() indexes the maps of P (entries with end <= start are
 *    left out).  P must outlive the index.
 *  - map_index_find() returns the index into P->maps of the map of PID
 *    valid at TIME (time_ns <= TIME, and TIME < unmap_ns when unmapped)
 *    that holds PC, the latest recorded when several do; MAP_INDEX_NONE
 *    when none does.  O(log n) plus the overlapping entries.
 *  - map_index_epoch() numbers the state of PID's maps at TIME: two times
 *    with the same number saw the same maps of PID (none was mapped or
 *    unmapped between them).  Numbers of different pids are unrelated.
 */
#ifndef PTPROF_MODEL_MAP_INDEX_H
#define PTPROF_MODEL_MAP_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

#define MAP_INDEX_NONE ((size_t)-1)

struct map_index;

struct map_index *map_index_new(const struct profile *p);
size_t map_index_find(const struct map_index *ix, uint32_t pid, uint64_t pc, uint64_t time);
uint64_t map_index_epoch(const struct map_index *ix, uint32_t pid, uint64_t time);
void map_index_free(struct map_index *ix);

#endif
