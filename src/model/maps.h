/*
 * maps.h - a process's memory maps: the model every part shares.
 *
 * Contract: a map_list holds entries with the range, permissions, file
 * offset, device, inode and path ("" for anonymous memory, "[vdso]",
 * "[stack]"... as the kernel names them), in ascending start address.
 * maps_parse() reads the kernel's /proc/PID/maps text from a buffer (the
 * recorder reads the live file with record/proc_maps.h; a gperftools
 * profile embeds the same text), so the parser can be tested and fuzzed
 * without a process.
 */
#ifndef PTPROF_MODEL_MAPS_H
#define PTPROF_MODEL_MAPS_H

#include <stddef.h>
#include <stdint.h>

enum map_perm {
    MAP_PERM_READ = 1,
    MAP_PERM_WRITE = 2,
    MAP_PERM_EXEC = 4,
    MAP_PERM_SHARED = 8,
};

struct map_entry {
    uint64_t start, end; /* [start, end) in the process */
    uint64_t offset;     /* file offset of start */
    uint64_t inode;
    uint32_t dev_major, dev_minor;
    uint32_t perms; /* enum map_perm bits */
    char *path;     /* never NULL */
};

struct map_list {
    struct map_entry *entries;
    size_t count, capacity;
};

/* Returns 0, or -1 when a line is malformed (out keeps the lines before). */
int maps_parse(const char *text, size_t len, struct map_list *out);
void maps_clear(struct map_list *maps);
/* Append a copy of E to MAPS unless an identical range+path is present. */
void maps_add_unique(struct map_list *maps, const struct map_entry *e);
/* A new mapping E, as mmap makes it: every entry of MAPS (sorted by start)
 * that E overlaps is dropped whole (as a native profile's MAP record ends
 * them, docs/format.md) and a copy of E takes its place in order. */
void maps_replace(struct map_list *maps, const struct map_entry *e);

#endif
