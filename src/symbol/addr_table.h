/*
 * addr_table.h - a hash table from a pair of 64-bit keys to a 64-bit
 * value: the memo tables of the symbolizer ((binary, offset) -> location,
 * (pid, pc) -> symbol table entry, file offset -> cached frames).
 *
 * Contract: addr_table_get() returns true and sets *VALUE when (A, B) was
 * put; addr_table_put() inserts or replaces.  Lookups cost O(1) on
 * average; the table grows as needed and frees everything in
 * addr_table_free() (values are the caller's: indices or pointers).
 */
#ifndef PTPROF_SYMBOL_ADDR_TABLE_H
#define PTPROF_SYMBOL_ADDR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_slot;

struct addr_table {
    struct addr_slot *slots;
    size_t nslots, count;
};

bool addr_table_get(const struct addr_table *t, uint64_t a, uint64_t b, uint64_t *value);
void addr_table_put(struct addr_table *t, uint64_t a, uint64_t b, uint64_t value);
void addr_table_clear(struct addr_table *t);
void addr_table_free(struct addr_table *t);

#endif
