/*
 * plt_symbols.h - names for the PLT stubs of an ELF file ("free@plt").
 *
 * A call to a shared library's function goes through a stub in the
 * caller's procedure linkage table; stubs have no symbol, so a sample in
 * one would only be an address.  plt_symbols_read() names each stub after
 * the function it jumps to, as objdump and perf do.
 *
 * Contract: for an x86_64 ELF file (others give no stubs), every entry of
 * .plt, .plt.sec and .plt.got (sh_entsize bytes, 16 when unset) is read:
 * an indirect jump through a GOT slot ("jmp *disp32(%rip)", with or
 * without the bnd prefix) names the entry after the dynamic symbol of the
 * relocation (JUMP_SLOT or GLOB_DAT) that fills that slot; a lazy entry
 * without such a jump (the IBT layout: "endbr64; push $N; bnd jmp .plt")
 * is named by its push, the index of its .rela.plt relocation.  Entries
 * naming no symbol (the PLT header, IRELATIVE slots) are left out.  The
 * addresses are link-time addresses.  Nothing in the file is trusted:
 * indices and offsets are checked against the section sizes, and a
 * damaged table yields fewer stubs, never a crash.
 *
 * The table owns its names; plt_symbols_free() releases it.
 */
#ifndef PTPROF_SYMBOL_PLT_SYMBOLS_H
#define PTPROF_SYMBOL_PLT_SYMBOLS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#define PLT_SUFFIX "@plt"

struct plt_stub {
    uint64_t addr, size;
    char *name; /* "free@plt" */
};

struct plt_symbols {
    struct plt_stub *stubs;
    size_t count;
};

void plt_symbols_read(Elf *elf, struct plt_symbols *out);
void plt_symbols_free(struct plt_symbols *t);

#endif
