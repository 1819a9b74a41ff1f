/*
 * strtab.h - interned strings: each distinct string gets one small id.
 *
 * Contract: strtab_intern() returns the id of the LEN bytes at S (which
 * need not be NUL-terminated), adding a copy the first time.  Ids are
 * dense, starting at 0, in order of first appearance.  strtab_get()
 * returns the NUL-terminated copy, valid until strtab_free().
 */
#ifndef PTPROF_ANALYZE_STRTAB_H
#define PTPROF_ANALYZE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

struct strtab *strtab_new(void);
void strtab_free(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
uint32_t strtab_intern_str(struct strtab *t, const char *s);
const char *strtab_get(const struct strtab *t, uint32_t id);
size_t strtab_count(const struct strtab *t);

#endif
