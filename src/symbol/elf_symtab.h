/*
 * elf_symtab.h - function symbols of one ELF file, by file address.
 *
 * Contract: elf_symtab_load() reads the function symbols (STT_FUNC and
 * STT_GNU_IFUNC with a non-zero value) of PATH with elfutils' libelf,
 * from .symtab, or from .dynsym when the file is stripped, and sorts them.
 * It also notes the virtual address of the first PT_LOAD segment with file
 * offset 0 ("load_vaddr"): a sampled PC becomes a file address as
 *     addr = pc - load_base + load_vaddr
 * where load_base is the start of the file's mapping at offset 0 (what the
 * original raw format stores as a map's Address).  This holds for PIE and
 * non-PIE executables and shared libraries alike.
 *
 * elf_symtab_lookup() returns the symbol containing ADDR, or the nearest
 * one below it when sizes are missing (size 0), or NULL.  Names are the
 * raw (mangled) names; demangling belongs to the symbolizer.
 *
 * This is the seed of src/symbol/: the DWARF-aware symbolizer (libdwfl,
 * inline chains, lines) builds on it.
 */
#ifndef PTPROF_SYMBOL_ELF_SYMTAB_H
#define PTPROF_SYMBOL_ELF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct elf_symbol {
    uint64_t addr;
    uint64_t size;
    const char *name;
};

struct elf_symtab {
    char *path;
    uint64_t load_vaddr;
    struct elf_symbol *syms;
    size_t count;
    char *strings; /* owns every name */
};

/* Returns 0, or -1 after printing why (missing file, not ELF...). */
int elf_symtab_load(const char *path, struct elf_symtab *out);
const struct elf_symbol *elf_symtab_lookup(const struct elf_symtab *tab, uint64_t addr);
void elf_symtab_free(struct elf_symtab *tab);

#endif
