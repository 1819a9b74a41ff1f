/*
 * strpool.h - memory that lives as long as a symbolizer: interned strings
 * and frame arrays.
 *
 * Contract: strpool_intern() returns a copy of S that stays valid, at the
 * same address, until strpool_free(); equal strings get the same pointer,
 * so the thousands of frames that name one function or source file share
 * one copy.  strpool_copy() returns a copy of S of the same lifetime that
 * is not interned (for strings known to be new: they cost no entry in the
 * pool's index).  strpool_alloc() returns zeroed memory of the same lifetime
 * (aligned for any object), which is never freed individually.
 */
#ifndef PTPROF_SYMBOL_STRPOOL_H
#define PTPROF_SYMBOL_STRPOOL_H

#include <stddef.h>

struct strpool;

struct strpool *strpool_new(void);
const char *strpool_intern(struct strpool *pool, const char *s);
const char *strpool_intern_len(struct strpool *pool, const char *s, size_t len);
const char *strpool_copy(struct strpool *pool, const char *s);
void *strpool_alloc(struct strpool *pool, size_t size);
void strpool_free(struct strpool *pool);

#endif
