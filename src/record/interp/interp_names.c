/*
 * interp_names.c - the names of interpreter frames: each distinct (process,
 * function, file, line) gets a synthetic PC from INTERP_PC_BASE up, and two
 * LOCATION records name it (as a leaf and as a caller's frame), written
 * before the first stack that uses it.  The symbolizer answers these PCs
 * from the profile's table as it does a .pbin's (docs/python.md).
 */
#include "record/interp/interp_names.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct name_entry {
    uint32_t pid;
    uint32_t line;
    char *function;
    char *file;
    uint64_t hash;
};

struct interp_names {
    struct output *out;
    struct name_entry *entries;
    size_t count, cap;
    uint32_t *slots; /* index + 1, 0 = empty; a power of two, at most half full */
    size_t nslots;
    uint64_t overflow_pc; /* the one PC of every name past INTERP_NAMES_MAX, 0 until used */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h * 1099511628211ULL;
}

static uint64_t hash_name(uint32_t pid, const struct interp_frame_name *f)
{
    uint64_t h = 1469598103934665603ULL ^ ((uint64_t)pid << 32 | f->line);
    h = hash_str(h, f->function);
    return hash_str(h, f->file);
}

static uint64_t pc_of(size_t index)
{
    return INTERP_PC_BASE + 16 * (uint64_t)(index + 1);
}

static void rehash(struct interp_names *n)
{
    size_t size = n->nslots ? n->nslots * 2 : 1024;
    free(n->slots);
    n->slots = xcalloc(size, sizeof(*n->slots));
    n->nslots = size;
    for (size_t i = 0; i < n->count; i++) {
        size_t s = (size_t)n->entries[i].hash & (size - 1);
        while (n->slots[s])
            s = (s + 1) & (size - 1);
        n->slots[s] = (uint32_t)(i + 1);
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static void write_locations(struct interp_names *n, uint32_t pid, uint64_t pc,
                            const struct interp_frame_name *f)
{
    struct prof_sym_frame frame = {
        .binary = (char *)base_name(f->file),
        .path = (char *)f->file,
        .function = (char *)f->function,
        .mangled = (char *)f->function,
        .file = (char *)f->file,
        .line = f->line,
        .inlined = false,
    };
    for (int ra = 0; ra <= 1; ra++) {
        struct prof_location loc = {.pid = pid,
                                    .pc = pc,
                                    .return_address = ra,
                                    .offset = pc,
                                    .nframes = 1,
                                    .frames = &frame};
        output_location(n->out, &loc);
    }
}

struct interp_names *interp_names_new(struct output *out)
{
    struct interp_names *n = xcalloc(1, sizeof(*n));
    n->out = out;
    rehash(n);
    return n;
}

uint64_t interp_names_pc(struct interp_names *n, uint32_t pid, const struct interp_frame_name *f)
{
    uint64_t h = hash_name(pid, f);
    size_t s = (size_t)h & (n->nslots - 1);
    for (; n->slots[s]; s = (s + 1) & (n->nslots - 1)) {
        const struct name_entry *e = &n->entries[n->slots[s] - 1];
        if (e->hash == h && e->pid == pid && e->line == f->line &&
            strcmp(e->function, f->function) == 0 && strcmp(e->file, f->file) == 0)
            return pc_of(n->slots[s] - 1);
    }
    if (n->count >= INTERP_NAMES_MAX) {
        /* A program that makes code without end (exec in a loop): the
         * names past the cap share one frame rather than growing the
         * profile without bound. */
        if (!n->overflow_pc) {
            n->overflow_pc = INTERP_PC_END - 16;
            struct interp_frame_name many = {"[more interpreter functions]", "", 0};
            write_locations(n, pid, n->overflow_pc, &many);
        }
        return n->overflow_pc;
    }
    n->entries = xgrow(n->entries, &n->cap, n->count + 1, sizeof(*n->entries));
    n->entries[n->count] = (struct name_entry){.pid = pid,
                                               .line = f->line,
                                               .function = xstrdup(f->function),
                                               .file = xstrdup(f->file),
                                               .hash = h};
    n->slots[s] = (uint32_t)(n->count + 1);
    uint64_t pc = pc_of(n->count);
    n->count++;
    write_locations(n, pid, pc, f);
    if (n->count * 2 > n->nslots)
        rehash(n);
    return pc;
}

size_t interp_names_count(const struct interp_names *n)
{
    return n ? n->count : 0;
}

bool interp_names_find(const struct interp_names *n, uint64_t pc, struct interp_frame_name *out)
{
    if (!n || pc <= INTERP_PC_BASE || (pc - INTERP_PC_BASE) % 16 != 0)
        return false;
    size_t index = (size_t)((pc - INTERP_PC_BASE) / 16 - 1);
    if (index >= n->count)
        return false;
    const struct name_entry *e = &n->entries[index];
    *out = (struct interp_frame_name){e->function, e->file, e->line};
    return true;
}

void interp_names_free(struct interp_names *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->count; i++) {
        free(n->entries[i].function);
        free(n->entries[i].file);
    }
    free(n->entries);
    free(n->slots);
    free(n);
}
