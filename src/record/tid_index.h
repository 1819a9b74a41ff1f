/*
 * tid_index.h - where a thread sits in a table kept dense by its owner:
 * a hash from tid to a position, for the engines' thread tables.
 *
 * Contract: tid_index_find() returns the position given to TID by the
 * last tid_index_put(), or -1.  tid_index_put() adds TID or moves it to a
 * new position (an owner that fills a hole with its last entry puts that
 * entry again); tid_index_remove() forgets TID.  Open addressing with
 * linear probing, Fibonacci hashing (consecutive tids spread), at most
 * half full; a removal rebuilds the table, since removals are rare next
 * to lookups and this keeps probing free of tombstones.
 */
#ifndef PTPROF_RECORD_TID_INDEX_H
#define PTPROF_RECORD_TID_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tid_slot {
    pid_t tid;
    int32_t pos; /* -1: empty */
};

struct tid_index {
    struct tid_slot *slots;
    size_t size, count; /* size a power of two */
};

void tid_index_init(struct tid_index *x);
void tid_index_free(struct tid_index *x);
int32_t tid_index_find(const struct tid_index *x, pid_t tid);
void tid_index_put(struct tid_index *x, pid_t tid, size_t pos);
void tid_index_remove(struct tid_index *x, pid_t tid);

#endif
