/*
 * fde_index.h - where each function of an ELF file starts and ends, from
 * its call frame information, for code that has no symbol.
 *
 * A static function of a stripped library has no name left, but the
 * compiler described it for the unwinder in one FDE (Frame Description
 * Entry) of .eh_frame, which strip keeps: the FDE's range is the
 * function's.  So a PC that no symbol covers can still be grouped with the
 * rest of its function, by the start of its FDE.
 *
 * Contract: fde_index_build() reads every FDE of the file's .eh_frame (or,
 * without one, .debug_frame) with libdw's dwarf_next_cfi(), decodes its
 * initial location and range by its CIE's pointer encoding (absolute or
 * PC-relative; signed or unsigned 2, 4 or 8 bytes, or LEB128) and keeps
 * the ranges sorted, as link-time addresses.  An FDE it
 * cannot decode, or an empty one, is left out.  fde_index_find() returns
 * the start of the range holding ADDR.  Nothing in the file is trusted:
 * damaged CFI gives fewer ranges, never a crash.
 */
#ifndef PTPROF_SYMBOL_FDE_INDEX_H
#define PTPROF_SYMBOL_FDE_INDEX_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_range {
    uint64_t start, end; /* [start, end) */
};

struct fde_index {
    struct fde_range *ranges; /* by start */
    size_t count;
};

void fde_index_build(Elf *elf, struct fde_index *out);
bool fde_index_find(const struct fde_index *ix, uint64_t addr, uint64_t *start);
void fde_index_free(struct fde_index *ix);

#endif
