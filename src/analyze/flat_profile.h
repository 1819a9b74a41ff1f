/*
 * flat_profile.h - CPU time and samples per function (binary + symbol).
 *
 * Contract: flat_profile_compute() walks the samples in order.  For every
 * thread, the CPU time it consumed since the previous sample in which it
 * appeared (the delta of its cumulative cpu_ns) is attributed to its PC in
 * the later sample; a thread's first appearance contributes no time, and a
 * delta that goes backwards (a reused TID) counts as 0.  Every appearance
 * of a thread counts one sample for the row its PC resolves to.
 *
 * A PC resolves through the map whose [address, address + size) contains
 * it: the map's label names the binary, found as an absolute path or as
 * DIR/LABEL in OPTS->search_dirs (in order), whose function symbols are
 * loaded once per label (symbol/elf_symtab.h) and searched at
 *     pc - address + load_vaddr.
 * Rows are keyed by (binary label, function name).  What cannot be named
 * is still counted, so the rows always add up to the totals:
 *   - a PC inside a map whose binary is missing, not ELF, a pseudo file
 *     such as "[vdso]", or that falls outside every symbol, goes to the
 *     row (LABEL, "[unknown]"), one per binary;
 *   - a PC that no map contains goes to ("[unmapped]", "[unmapped]").
 * A binary that cannot be found or read is reported once with pt_warn().
 *
 * The input is arrays of samples and maps, not a file, so other formats
 * can feed the same aggregation.  Rows come out in no particular order.
 */
#ifndef PTPROF_ANALYZE_FLAT_PROFILE_H
#define PTPROF_ANALYZE_FLAT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/pperf.h"

#define FLAT_UNKNOWN "[unknown]"
#define FLAT_UNMAPPED "[unmapped]"

struct flat_options {
    const char *const *search_dirs;
    size_t nsearch_dirs;
};

struct flat_row {
    char *binary;   /* map label, or FLAT_UNMAPPED */
    char *function; /* raw symbol name, FLAT_UNKNOWN or FLAT_UNMAPPED */
    uint64_t samples;
    uint64_t cpu_ns;
};

struct flat_profile {
    struct flat_row *rows;
    size_t count;
    /* Totals: rows add up to thread_samples and cpu_ns. */
    uint64_t samples;        /* samples taken (each stops all threads) */
    uint64_t thread_samples; /* thread appearances over all samples */
    uint64_t cpu_ns;
    /* From the profile's header when known, else 0. */
    uint64_t wall_us;
    uint64_t latency_us;
};

/* Returns 0; missing binaries only lower the detail, never fail. */
int flat_profile_compute(const struct pperf_sample *samples, size_t nsamples,
                         const struct pperf_map *maps, size_t nmaps,
                         const struct flat_options *opts, struct flat_profile *out);

/* The same over a loaded raw profile, taking wall time and latency from
 * its header (wall time from the samples' time stamps if the header has
 * none). */
int flat_profile_from_pperf(const struct pperf_profile *p, const struct flat_options *opts,
                            struct flat_profile *out);

void flat_profile_free(struct flat_profile *fp);

#endif
