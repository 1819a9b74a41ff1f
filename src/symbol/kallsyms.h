/*
 * kallsyms.h - names for kernel addresses, from /proc/kallsyms.
 *
 * A profile made by perf (perf.data, perf script) holds kernel frames as
 * addresses in its "[kernel.kallsyms]" map; perf names them from the
 * running kernel's symbols, and so can we when the kernel is the one the
 * profile was recorded on.
 *
 * Contract: kallsyms_load() reads /proc/kallsyms (PTPROF_KALLSYMS=FILE
 * reads FILE instead, for tests) and returns NULL when it cannot be read
 * or hides its addresses (all zero: kernel.kptr_restrict for this user).
 * kallsyms_same_kernel() says whether a kernel map starting at START is
 * this kernel's text (its _text or _stext there: the same kernel and the
 * same boot, as KASLR moves it).  kallsyms_lookup() names ADDR by the text
 * symbol at or below it (as perf does), NULL below the first one or past
 * the last; *START is that symbol's address.  Memory is proportional to
 * the file; nothing is kept open.
 */
#ifndef PTPROF_SYMBOL_KALLSYMS_H
#define PTPROF_SYMBOL_KALLSYMS_H

#include <stdbool.h>
#include <stdint.h>

struct kallsyms;

struct kallsyms *kallsyms_load(void);
bool kallsyms_same_kernel(const struct kallsyms *k, uint64_t start);
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *start);
void kallsyms_free(struct kallsyms *k);

#endif
