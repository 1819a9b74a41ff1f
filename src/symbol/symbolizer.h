/*
 * symbolizer.h - from a sampled address to binary, function, source line
 * and inline chain.
 *
 * Contract:
 *  - symbolizer_new() prepares to resolve the PCs of profile P.  When P
 *    carries symbol tables (a .pbin: P->locations), those answer and no
 *    binary is opened.  Otherwise binaries are found as the profile's maps
 *    name them, through OPTS->search_dirs, the recorded paths and the
 *    standard library directories (symbol/binary_finder.h says in which
 *    order), unless OPTS->binaries names the file (see symbolizer_options),
 *    checked against the recorded build-id (a mismatch is reported once
 *    per binary and the file is not used), and read with elfutils' libdwfl
 *    (ELF symbols, .symtab or .dynsym for stripped files, DWARF lines and
 *    inlines, separate debug info under /usr/lib/debug/.build-id/).  The
 *    [vdso] is read from the profile's captured image.
 *  - symbolizer_resolve() returns what PC of process PID at TIME_NS
 *    resolves to: one frame per function, innermost (inlined) first, the
 *    last frame being the function the code was compiled into.  With
 *    RETURN_ADDRESS (a caller's frame from a stack) PC - 1 is looked up so
 *    the call instruction, not the one after it, is named.  It never fails:
 *    what cannot be named becomes one frame "BINARY+0xOFFSET" (function
 *    set to that, file "" and line 0), and a PC outside every map becomes
 *    "[unmapped]".  One warning per binary that cannot be read.  A return
 *    address in a mapping that holds no code is marked not_code (its
 *    frames are those of the mapping, BINARY+0xOFFSET).
 *  - Only unique addresses are resolved (results are memoized), and with
 *    OPTS->cache the results per build-id persist under the XDG cache
 *    directory ($XDG_CACHE_HOME/ptprof or ~/.cache/ptprof), written
 *    atomically so concurrent runs are safe.
 *  - symbolizer_prepare() resolves every address the profile uses (leaf
 *    PCs and stack frames) up front, with a progress bar on stderr when it
 *    is a terminal and OPTS->progress is set; later resolves are lookups.
 *  - Strings and frames stay valid until symbolizer_free().
 */
#ifndef PTPROF_SYMBOL_SYMBOLIZER_H
#define PTPROF_SYMBOL_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct sym_frame {
    const char *binary;   /* base name: "libc.so.6", "[vdso]", "[unmapped]" */
    const char *path;     /* the file that answered, "" if none */
    const char *function; /* demangled, or "BINARY+0xOFFSET" */
    const char *mangled;  /* the symbol as in the binary, "" if none */
    const char *file;     /* source file, "" if unknown */
    uint32_t line;        /* 0 if unknown */
    bool inlined;         /* inlined into the frame after it */
};

struct sym_location {
    uint64_t offset; /* PC's offset in its binary (file offset), 0 if unmapped */
    uint32_t nframes;
    const struct sym_frame *frames;
    /* A return address in memory that holds no code (the [heap], the
     * [stack], a mapping without execute permission): the unwinder read a
     * frame that is not one, and this frame and those after it are
     * garbage. */
    bool not_code;
};

struct symbolizer_options {
    const char *const *search_dirs;
    size_t nsearch_dirs;
    /* Files the user named as the profiled binaries (--binary): one stands
     * for every recorded binary of its base name; one whose name matches
     * none is the program (the first process's executable).  Used even
     * when its build-id differs from the recorded one, with a warning. */
    const char *const *binaries;
    size_t nbinaries;
    bool cache;    /* use the persistent cache */
    bool progress; /* progress bar on a terminal */
};

struct symbolizer;

struct symbolizer *symbolizer_new(const struct profile *p, const struct symbolizer_options *opts);
void symbolizer_prepare(struct symbolizer *s);
const struct sym_location *symbolizer_resolve(struct symbolizer *s, uint32_t pid, uint64_t time_ns,
                                              uint64_t pc, bool return_address);
void symbolizer_free(struct symbolizer *s);

#endif
