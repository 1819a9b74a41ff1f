/*
 * binary_finder.h - which file on this machine is the binary a profile's
 * map names.
 *
 * Contract: binary_finder_new() takes the caller's search directories
 * (-s DIR, in order; copied).  binary_finder_find() looks for the file of
 * PATH (as a map records it: absolute for native profiles, a base name for
 * the original raw format; a " (deleted)" suffix is ignored) with the
 * recorded build-id ID (LEN 0: none recorded).  Candidates, in order:
 *   1. PATH itself when absolute;
 *   2. DIR/BASENAME for every search directory;
 *   3. DIR/BASENAME for the standard library directories: those of
 *      /etc/ld.so.conf (and what it includes), the multiarch directories of
 *      this machine, /lib64, /usr/lib64, /lib, /usr/lib, /usr/local/lib.
 * (A separate debug file cannot stand in for a binary that is gone:
 * objcopy --only-keep-debug zeroes the file offsets and sizes of its
 * PT_LOAD headers, so file offsets no longer lead to addresses.)
 * Only regular ELF files count.  With a recorded build-id the first
 * candidate whose build-id equals it is the answer; without one, the first
 * ELF candidate.  The result says why nothing was found: no ELF candidate
 * at all (BF_MISSING, and BF_NOT_ELF when some candidate exists but is not
 * ELF), or only other builds (BF_MISMATCH, with the first such file).
 *
 * The debug roots are $PTPROF_DEBUG_ROOT (a colon-separated list of
 * directories) or /usr/lib/debug, read when the finder is made;
 * binary_finder_debuginfo_path() is the matching libdwfl debuginfo_path
 * (":.debug:ROOTS": next to the binary, its .debug subdirectory, then the
 * roots, where libdwfl also looks up .build-id/xx/rest.debug).
 * binary_finder_debug_file() is the separate debug file of a build-id, or
 * NULL.
 */
#ifndef PTPROF_SYMBOL_BINARY_FINDER_H
#define PTPROF_SYMBOL_BINARY_FINDER_H

#include <stddef.h>
#include <stdint.h>

#include "format/profile.h"

enum bf_status {
    BF_FOUND,
    BF_MISSING,
    BF_NOT_ELF,
    BF_MISMATCH,
};

struct bf_result {
    enum bf_status status;
    char *path;    /* BF_FOUND: the file; BF_MISMATCH / BF_NOT_ELF: the first
                      such candidate; else NULL.  Allocated. */
    size_t id_len; /* BF_FOUND: the file's build-id (length 0: none) */
    uint8_t id[PROF_BUILD_ID_MAX];
};

struct binary_finder;

struct binary_finder *binary_finder_new(const char *const *dirs, size_t ndirs);
void binary_finder_find(struct binary_finder *bf, const char *path, const uint8_t *id, size_t len,
                        struct bf_result *out);
char *binary_finder_debug_file(const struct binary_finder *bf, const uint8_t *id, size_t len);
char **binary_finder_debuginfo_path(struct binary_finder *bf);
void binary_finder_free(struct binary_finder *bf);

#endif
