/* symbol_alias.c - see symbol_alias.h */
#include "symbol/symbol_alias.h"

#include <stddef.h>
#include <string.h>

int symbol_alias_rank(const GElf_Sym *sym)
{
    int bind = GELF_ST_BIND(sym->st_info);
    int rank = bind == STB_GLOBAL || bind == STB_GNU_UNIQUE ? 0 : bind == STB_WEAK ? 1 : 2;
    /* A typed function beats an assembly label at the same address. */
    return GELF_ST_TYPE(sym->st_info) == STT_NOTYPE ? rank + 3 : rank;
}

static size_t leading_underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

int symbol_alias_cmp(const void *pa, const void *pb)
{
    const struct symbol_alias *a = pa, *b = pb;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if ((a->size == 0) != (b->size == 0))
        return a->size == 0 ? 1 : -1;
    size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ua != ub)
        return ua < ub ? -1 : 1;
    return strcmp(a->name, b->name);
}
