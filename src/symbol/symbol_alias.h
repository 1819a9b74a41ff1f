/*
 * symbol_alias.h - which of the symbols at one address names it.
 *
 * An address often has several symbols: a global and its weak or local
 * aliases, "memcpy" and "__memcpy", a sized function and an assembly
 * label.  Both symbol readers (dwfl_reader.c, elf_symtab.c) sort their
 * candidates with symbol_alias_cmp(), so they name an address alike:
 * by address, then global over weak over local, typed functions over
 * untyped labels, sized over unsized, fewer leading underscores, and the
 * name itself last, so the choice is reproducible.
 */
#ifndef PTPROF_SYMBOL_SYMBOL_ALIAS_H
#define PTPROF_SYMBOL_SYMBOL_ALIAS_H

#include <gelf.h>
#include <stdint.h>

struct symbol_alias {
    uint64_t addr, size;
    const char *name;
    int rank; /* symbol_alias_rank(): lower is a better name */
};

int symbol_alias_rank(const GElf_Sym *sym);
/* A qsort() comparator over struct symbol_alias. */
int symbol_alias_cmp(const void *a, const void *b);

#endif
