/*
 * jit_symbols.h - names of JIT-compiled code, from what the recorder
 * copied of each process's perf map and jitdump (record/jit_maps.h).
 *
 * Contract: jit_symbols_new() reads every IMAGE of P named JIT_MAP_IMAGE
 * (perf-map lines "START SIZE name", hex) into one table per process;
 * lines it cannot read are skipped (a profile is input from elsewhere).
 * jit_symbols_find() returns the name of the code of process PID that
 * holds ADDR, or NULL: where pieces overlap (a JIT reused the memory),
 * the one published last.  Names stay valid until jit_symbols_free().
 * The symbolizer asks it only for addresses that no file holds (anonymous
 * memory, or memory mapped after the recorder last read the maps), so
 * JIT code never reaches the ELF symbolizer and ELF code is never named by
 * a JIT's list.
 */
#ifndef PTPROF_SYMBOL_JIT_SYMBOLS_H
#define PTPROF_SYMBOL_JIT_SYMBOLS_H

#include <stdint.h>

#include "model/profile.h"

/* What frames of JIT code are in, as a binary. */
#define JIT_BINARY "[jit]"

struct jit_symbols;

struct jit_symbols *jit_symbols_new(const struct profile *p);
const char *jit_symbols_find(const struct jit_symbols *j, uint32_t pid, uint64_t addr);
void jit_symbols_free(struct jit_symbols *j);

#endif
