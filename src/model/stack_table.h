/*
 * stack_table.h - the distinct call stacks of a profile being read.
 *
 * Readers of formats that repeat whole call chains (gperftools, pprof,
 * folded stacks, perf script) keep each distinct chain once in
 * profile.stacks; this table finds a chain seen before by hashing it.
 *
 * Contract: stack_table_id() returns the id in P->stacks of the stack
 * PCS[0..DEPTH) (leaf first), appending a copy when it is new (in P's
 * arena: P->stacks_in_arena); DEPTH 0 is id 0, the empty stack, which
 * P->stacks[0] must already be.  Every stack P gains must come through
 * the same table.  Memory grows with the
 * distinct stacks only.
 */
#ifndef PTPROF_MODEL_STACK_TABLE_H
#define PTPROF_MODEL_STACK_TABLE_H

#include <stdint.h>

#include "model/profile.h"

struct stack_table;

struct stack_table *stack_table_new(void);
uint32_t stack_table_id(struct stack_table *t, struct profile *p, const uint64_t *pcs,
                        uint32_t depth);
void stack_table_free(struct stack_table *t);

#endif
