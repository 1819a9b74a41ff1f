/*
 * profile_query.h - the questions end-to-end tests ask of a native profile
 * (format/profile.h): which process, thread, map or image something is,
 * and which function a sampled PC or stack frame is in.
 *
 * Symbolization here is deliberately independent of ptprof's own
 * symbolizer: a PC of process PID at time T is looked up in the map of PID
 * that was valid at T (mapped at or before T and not unmapped by then), the
 * map's file offset (pc - start + map offset) is turned into an ELF virtual
 * address through the file's PT_LOAD headers (elf_symtab_vaddr), and the
 * function comes from elf_symtab_lookup.  A map
 * without a file (the [vdso]) is symbolized from the IMAGE the profile
 * holds for it.  Frames after the first are return addresses and are looked
 * up at pc - 1 (docs/stacks.md).
 *
 * Everything that fails to resolve is NULL (or "?" in frame lists), never a
 * test failure: the tests decide what fraction must resolve.
 */
#ifndef PTPROF_TESTS_E2E_PROFILE_QUERY_H
#define PTPROF_TESTS_E2E_PROFILE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct pq_binary;

struct profile_query {
    const struct profile *prof;
    struct pq_binary *bins; /* ELF files and images opened so far */
    size_t nbins;
    char *tmpdir; /* images written out for libelf, created on demand */
};

/* One frame of a thread sample's stack. */
struct pq_frame {
    uint64_t pc;
    const struct prof_map *map; /* NULL: in no map valid at the sample's time */
    const char *name;           /* function, or "?" */
};

void pq_init(struct profile_query *q, const struct profile *prof);
void pq_free(struct profile_query *q);

const struct prof_process *pq_process(const struct profile *p, uint32_t pid);
/* The last THREAD record of TID, or NULL. */
const struct prof_thread *pq_thread(const struct profile *p, uint32_t tid);
/* The first process: META "pid". */
uint32_t pq_first_pid(const struct profile *p);

/* The map of PID containing PC that was valid at TIME_NS, or NULL. */
const struct prof_map *pq_map_at(const struct profile *p, uint32_t pid, uint64_t pc,
                                 uint64_t time_ns);
/* Any map of PID that ever contained PC (whatever the time), or NULL. */
const struct prof_map *pq_map_ever(const struct profile *p, uint32_t pid, uint64_t pc);
/* The IMAGE of PID named NAME, or NULL. */
const struct prof_image *pq_image(const struct profile *p, uint32_t pid, const char *name);

/* The function holding ADDR inside MAP (ADDR is looked up as given), or
 * NULL. */
const char *pq_function_in(struct profile_query *q, const struct prof_map *map, uint64_t addr);
/* The function holding PC of PID at TIME_NS, or NULL. */
const char *pq_function(struct profile_query *q, uint32_t pid, uint64_t pc, uint64_t time_ns);

/* The frames of thread sample TS of sample S, leaf first, at most MAX;
 * returns how many were filled.  Without a stack the sampled PC is the only
 * frame. */
size_t pq_frames(struct profile_query *q, const struct prof_sample *s,
                 const struct prof_thread_sample *ts, struct pq_frame *out, size_t max);
/* Index of the first frame at or after FROM named NAME, or -1. */
int pq_find_frame(const struct pq_frame *frames, size_t n, size_t from, const char *name);
/* "hot <- via_a <- main <- ..." into BUF, for assertion messages. */
const char *pq_describe(const struct pq_frame *frames, size_t n, char *buf, size_t size);

/* The file's last path component ("libc.so.6"), or "" for NULL. */
const char *pq_basename(const char *path);

/* Each thread entry's CPU time since its thread's previous entry, for a
 * walk over the samples in order: 0 for a thread's first entry (and where
 * its CPU time went back).  Zero-initialize, free with pq_cpu_free(). */
struct pq_cpu_deltas {
    uint32_t *tids;
    uint64_t *last;
    size_t count, cap;
};
uint64_t pq_cpu_delta(struct pq_cpu_deltas *d, const struct prof_thread_sample *ts);
void pq_cpu_free(struct pq_cpu_deltas *d);

#endif
