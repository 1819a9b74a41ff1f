/*
 * xalloc.h - allocation that cannot fail silently.
 *
 * Contract: these return valid memory or end the process with a message
 * (exit 70 is never reached in practice; a profiler that cannot allocate a
 * few bytes cannot do anything useful).  The message names the input being
 * read when a reader said which (xalloc_reading()), since a file that
 * needs more memory than there is is what the user must hear about.  Sizes are checked for
 * overflow. Readers must not size allocations from untrusted length fields without validating them
 * first; these helpers do not make that check for you.
 */
#ifndef PTPROF_UTIL_XALLOC_H
#define PTPROF_UTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grow an array of COUNT elements of SIZE bytes to hold at least NEED. */
void *xgrow(void *ptr, size_t *capacity, size_t need, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* NAME (kept, not copied; NULL: none) is being read: an allocation that
 * fails says so. */
void xalloc_reading(const char *name);

#endif
