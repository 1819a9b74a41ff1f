/*
 * binary_finder.h - which file on this machine is the binary a profile's
 * map names.
 *
 * Contract: binary_finder_new() takes the caller's search directories
 * (in order; copied): binary_search_dirs() makes the list every analysis
 * uses, -s DIR in the order given, then the profile's own directory, then
 * the current directory.  binary_finder_find() looks for the file of PATH
 * (as a map records it: absolute for native profiles and the original raw
 * format, a base name in files ptprof 0.2.0 wrote; a " (deleted)" suffix
 * is ignored) with the recorded build-id ID (LEN 0: none recorded).
 * Candidates, in order:
 *   1. PATH itself when absolute, if a build-id was recorded (it proves
 *      the file right);
 *   2. DIR/BASENAME for every search directory;
 *   3. PATH itself when absolute, if no build-id was recorded: a profile
 *      moved from another machine names that machine's files, and a file
 *      at the same path here may be another build, so the directories the
 *      user points at (and the profile's own) come first;
 *   4. DIR/BASENAME for the standard library directories: those of
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
 * Files the user names (--binary) come before any search:
 * binary_finder_give() takes them for profile P (copied): each stands for
 * every recorded binary of its base name, and one whose base name no map of
 * P has stands for P's program (its first process's executable, or that
 * process's first executable file mapping), one such file only; the others
 * are reported when WARN.  binary_finder_given() is the named file that
 * stands for the binary recorded as PATH, or NULL; the caller decides what
 * a build-id that differs means (the user said so: it is used, with a
 * warning).
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

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

/* Where the user said the profiled binaries are, for whatever reads them:
 * the symbolizer, and readers that lay a profile out by its binaries (the
 * original raw format's map entries, interop/pperf.h). */
struct binary_search {
    const char *const *dirs; /* -s DIR, in order */
    size_t ndirs;
    const char *const *binaries; /* --binary */
    size_t nbinaries;
};

struct binary_finder *binary_finder_new(const char *const *dirs, size_t ndirs);
/* DIRS, then the directory of the profile PROFILE (NULL or "-": none),
 * then "."; *OUT is allocated, freed by binary_search_dirs_free(). */
size_t binary_search_dirs(const char *const *dirs, size_t ndirs, const char *profile, char ***out);
void binary_search_dirs_free(char **dirs, size_t n);
void binary_finder_give(struct binary_finder *bf, const struct profile *p, const char *const *files,
                        size_t n, bool warn);
const char *binary_finder_given(const struct binary_finder *bf, const char *path);
void binary_finder_find(struct binary_finder *bf, const char *path, const uint8_t *id, size_t len,
                        struct bf_result *out);
char *binary_finder_debug_file(const struct binary_finder *bf, const uint8_t *id, size_t len);
char **binary_finder_debuginfo_path(struct binary_finder *bf);
void binary_finder_free(struct binary_finder *bf);

#endif
