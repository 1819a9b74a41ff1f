/*
 * folded_names.h - addresses for formats that name their frames instead
 * (folded stacks, perf script): the readers' shared tables.
 *
 * The analysis resolves addresses, so a reader of names makes some up: each
 * distinct location (a process, the address the file printed if any, and
 * its frames: an inline chain, innermost first, then the function that
 * holds it) gets a synthetic PC of its own, and name_table_locations()
 * writes profile.locations so that the symbolizer answers every one of them
 * from the table (symbol/symbolizer.c), as a leaf and as a caller's frame.
 *
 * Contract:
 *  - name_table_pc() returns the same PC for the same location (every
 *    field equal; NULL strings are ""), a new one otherwise: nonzero,
 *    distinct, multiples of 16 from 16 up.  Strings are copied once,
 *    into the arena of the profile given to name_table_new() (a file of
 *    distinct names is mostly names).
 *  - name_table_locations() gives that profile (without locations so
 *    far: it marks them all as in the arena) two entries per
 *    location (return_address false and true), with OFFSET as given (what
 *    the pc key shows), sharing one array of frames in the arena.
 *  Their stacks go through format/stack_table.h.
 */
#ifndef PTPROF_INTEROP_FOLDED_NAMES_H
#define PTPROF_INTEROP_FOLDED_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* Frames of one location: inlined functions first, the real one last. */
#define NAME_MAX_INLINE 64

struct name_frame {
    const char *function;
    const char *binary; /* base name of the object, or "[unknown]" */
    const char *path;   /* the object as the file names it, may be "" */
    const char *file;   /* source file, may be "" */
    uint32_t line;
    bool inlined;
};

struct name_table;

struct name_table *name_table_new(struct profile *p);
uint64_t name_table_pc(struct name_table *t, uint32_t pid, uint64_t offset,
                       const struct name_frame *frames, uint32_t nframes);
size_t name_table_count(const struct name_table *t);
void name_table_locations(struct name_table *t);
void name_table_free(struct name_table *t);

#endif
