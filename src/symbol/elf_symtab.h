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
 * elf_symtab_vaddr() is the general form, for a map that records the file
 * offset it starts at (as /proc/PID/maps and the native format do): it
 * turns a file offset into the virtual address the file was linked for,
 * through the PT_LOAD program header whose [p_offset, p_offset + p_filesz)
 * holds it (an executable one when two share a page):
 *     addr = file_offset - p_offset + p_vaddr,  file_offset = pc - start + offset
 * With offset 0 at the load base this agrees with the rule above for code
 * laid out as the usual linkers do (the same distance between file offset
 * and address as the first segment).
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

/* A PT_LOAD program header: where its file bytes go in the link-time
 * address space. */
struct elf_segment {
    uint64_t offset;
    uint64_t filesz;
    uint64_t vaddr;
    uint32_t flags; /* PF_X, PF_W, PF_R */
};

struct elf_symtab {
    char *path;
    uint64_t load_vaddr;
    struct elf_symbol *syms;
    size_t count;
    char *strings;                /* owns every name */
    struct elf_segment *segments; /* the PT_LOAD headers, in file order */
    size_t nsegments;
};

/* Returns 0, or -1 after printing why (missing file, not ELF...). */
int elf_symtab_load(const char *path, struct elf_symtab *out);
/* Returns 0 with *VADDR set, or -1 when no PT_LOAD holds FILE_OFFSET. */
int elf_symtab_vaddr(const struct elf_symtab *tab, uint64_t file_offset, uint64_t *vaddr);
const struct elf_symbol *elf_symtab_lookup(const struct elf_symtab *tab, uint64_t addr);
void elf_symtab_free(struct elf_symtab *tab);

#endif
