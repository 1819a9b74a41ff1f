/*
 * interp_names.h - synthetic PCs for interpreter frames, and the LOCATION
 * records that name them (interp.h).
 *
 * Contract: interp_names_pc() (declared in interp.h, for the modules)
 * returns the same PC for the same (pid, function, file, line) and a new
 * one otherwise, in [INTERP_PC_BASE, INTERP_PC_END), multiples of 16; a new
 * one is named at once by two LOCATION records on the output (return
 * address false and true), so the names precede every stack that uses
 * them.  Strings are copied.  Past INTERP_NAMES_MAX names, every new name
 * gets one shared PC named "[more interpreter functions]": the table never
 * grows without bound.
 */
#ifndef PTPROF_RECORD_INTERP_INTERP_NAMES_H
#define PTPROF_RECORD_INTERP_INTERP_NAMES_H

#include <stddef.h>

#include "record/interp/interp.h"

#define INTERP_NAMES_MAX (1u << 20)

struct interp_names *interp_names_new(struct output *out);
size_t interp_names_count(const struct interp_names *n);
/* The name PC was given, or false (strings valid until the table is freed). */
bool interp_names_find(const struct interp_names *n, uint64_t pc, struct interp_frame_name *out);
void interp_names_free(struct interp_names *n);

#endif
