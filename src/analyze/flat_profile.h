/*
 * flat_profile.h - CPU time and samples per function (binary + symbol) of
 * a profile in any format (format/profile.h).
 *
 * Contract: flat_profile_compute() walks the samples in order.  For every
 * thread (by tid), the CPU time it consumed since the previous sample in
 * which it appeared (the delta of its cumulative cpu_ns) is attributed to
 * where it was in the later sample; a thread's first appearance contributes
 * no time, and a delta that goes backwards (a reused TID) counts as 0.
 * Every appearance of a thread counts one sample for its row.  Only the
 * leaf PC is used, not the stack.
 *
 * Where a thread was:
 *   - stopped inside a system call (PROF_THREAD_IN_SYSCALL, syscall >= 0):
 *     the row (FLAT_KERNEL, "[syscall NAME]") (x86_64 names,
 *     symbol/syscall_names.h; "[syscall N]" for a number without one), since
 *     the CPU time it used there is the kernel's;
 *   - otherwise its PC, resolved through the maps of its process (pid) valid
 *     at the sample's time (map.time_ns <= time, and unmap_ns == 0 or time <
 *     unmap_ns); when several hold the PC, the one recorded latest.  The PC
 *     becomes the file offset pc - start + offset, and that a link-time
 *     address through the file's PT_LOAD headers (elf_symtab_vaddr()), which
 *     is searched in the file's function symbols (symbol/elf_symtab.h),
 *     loaded once per binary.
 *
 * Finding the file of a map's path: an absolute path is used as it is when
 * it is an ELF file (and, when the map recorded a build-id, has that
 * build-id); otherwise its base name is looked up as DIR/NAME in
 * OPTS->search_dirs, in order, taking the first ELF file, preferring one
 * whose build-id matches the recorded one.  A " (deleted)" suffix is
 * ignored.  A "[vdso]" map is read from the profile's captured image of it
 * (prof_image: the same pid and start, else any image of that name).
 *
 * Rows are keyed by (binary, function), binary being the base name of the
 * map's path (what the original raw format stores), so the same program
 * gives the same rows from either format.  What cannot be named is still
 * counted, so the rows always add up to the totals:
 *   - a PC inside a map whose file is missing, not ELF, a pseudo file such
 *     as "[stack]" (or "[vdso]" without an image), or that falls outside
 *     every symbol, goes to (NAME, FLAT_UNKNOWN), one row per binary name;
 *     anonymous memory is named FLAT_ANON;
 *   - a PC that no valid map holds goes to (FLAT_UNMAPPED, FLAT_UNMAPPED).
 * A file that cannot be found or read is reported once with pt_warn(), as
 * is one whose build-id differs from the recorded one.
 *
 * Rows come out in no particular order.
 */
#ifndef PTPROF_ANALYZE_FLAT_PROFILE_H
#define PTPROF_ANALYZE_FLAT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/profile.h"

#define FLAT_UNKNOWN "[unknown]"
#define FLAT_UNMAPPED "[unmapped]"
#define FLAT_KERNEL "[kernel]"
#define FLAT_ANON "[anon]"

struct flat_options {
    const char *const *search_dirs;
    size_t nsearch_dirs;
};

struct flat_row {
    char *binary;   /* base name of the file, a pseudo name, or FLAT_* */
    char *function; /* raw symbol name, "[syscall NAME]" or FLAT_* */
    uint64_t samples;
    uint64_t cpu_ns;
};

struct flat_profile {
    struct flat_row *rows;
    size_t count;
    /* Rows add up to thread_samples and cpu_ns. */
    uint64_t samples;        /* samples in the profile (each stops all threads) */
    uint64_t thread_samples; /* thread appearances over all samples */
    uint64_t cpu_ns;
    /* The recorder's own figures (prof_totals) when has_totals, else:
     * wall time spanned by the samples' times, samples as read, latency
     * and ideal samples 0. */
    bool has_totals;
    bool truncated; /* the file was cut short or damaged */
    uint64_t wall_ns;
    uint64_t latency_ns;
    uint64_t recorded_samples;
    uint64_t ideal_samples;
    double frequency; /* requested Hz, 0 if unknown */
};

/* Returns 0; missing binaries only lower the detail, never fail. */
int flat_profile_compute(const struct profile *p, const struct flat_options *opts,
                         struct flat_profile *out);

void flat_profile_free(struct flat_profile *fp);

#endif
