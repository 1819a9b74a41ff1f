/*
 * pperf_legacy.h - the raw format's map table as ptprof 0.2.0 and earlier
 * wrote it, so tests can make the files users keep from those versions out
 * of a real run's /proc/PID/maps.
 *
 * That writer listed one entry per load of an ELF file with code: its
 * address was the load base (the start of the file's mapping at offset 0),
 * its size ran to the end of the load's last executable mapping, its label
 * was the file's base name (without " (deleted)"), and [vdso] had an entry
 * of its own.  Anonymous memory, other bracketed names, data files and code
 * whose offset-0 mapping was absent were left out.
 */
#ifndef PTPROF_TESTS_LIB_PPERF_LEGACY_H
#define PTPROF_TESTS_LIB_PPERF_LEGACY_H

#include <stddef.h>

#include "interop/pperf.h"
#include "model/maps.h"

/* The entries (allocated into *OUT, NULL when none) and their count. */
size_t legacy_pperf_maps(const struct map_list *maps, struct pperf_map **out);

#endif
