/* jit_maps.c - see jit_maps.h */
#include "record/jit_maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jitdump (perf's tools/perf/util/jitdump.h): a header, then records. */
#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JITDUMP_HEADER_SIZE 40
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1
/* Longer names are cut there (C++ templates and JS closures can be long). */
#define NAME_MAX_BYTES 4096

struct jit_text {
    char *buf;
    size_t len, cap;
    bool cut; /* more than JIT_MAP_MAX_BYTES */
    const struct map_list *maps;
};

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static bool is_jitdump(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "jit-", 4) == 0 && ends_with(base, ".dump");
}

/* Code in a file's mapping is named by the file's symbols, not by the JIT:
 * a path that is neither memory pretending to be a file (memfd), nor a
 * deleted file, nor the jitdump itself. */
static bool in_file(const struct map_list *maps, uint64_t start)
{
    for (size_t i = 0; maps && i < maps->count; i++) {
        const struct map_entry *e = &maps->entries[i];
        if (start >= e->start && start < e->end && e->path[0] == '/' &&
            strncmp(e->path, "/memfd:", 7) != 0 && !ends_with(e->path, " (deleted)") &&
            !is_jitdump(e->path))
            return true;
    }
    return false;
}

static void add(struct jit_text *t, uint64_t start, uint64_t size, const char *name, size_t len)
{
    if (size == 0 || start + size < start || len == 0 || in_file(t->maps, start))
        return;
    if (len > NAME_MAX_BYTES)
        len = NAME_MAX_BYTES;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return;
    char head[48];
    int n = snprintf(head, sizeof(head), "%" PRIx64 " %" PRIx64 " ", start, size);
    if (t->len + (size_t)n + len + 1 > JIT_MAP_MAX_BYTES) {
        t->cut = true;
        return;
    }
    t->buf = xgrow(t->buf, &t->cap, t->len + (size_t)n + len + 2, 1);
    memcpy(t->buf + t->len, head, (size_t)n);
    memcpy(t->buf + t->len + n, name, len);
    t->len += (size_t)n + len;
    t->buf[t->len++] = '\n';
}

/* /tmp/perf-PID.map: "START SIZE name" per line, hex without 0x (perf
 * also takes a 0x prefix). */
static void read_perf_map(struct jit_text *t, uint32_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0, read_bytes = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        read_bytes += (size_t)n;
        if (read_bytes > JIT_MAP_MAX_BYTES) {
            t->cut = true;
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        char *end;
        errno = 0;
        uint64_t start = strtoull(line, &end, 16);
        if (end == line || *end != ' ' || errno)
            continue;
        char *size_at = end + 1;
        uint64_t size = strtoull(size_at, &end, 16);
        if (end == size_at || *end != ' ' || errno)
            continue;
        add(t, start, size, end + 1, strlen(end + 1));
    }
    free(line);
    fclose(f);
}

static uint32_t rd32(const unsigned char *p, bool swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const unsigned char *p, bool swap)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return swap ? __builtin_bswap64(v) : v;
}

/* A code-load record's code address, size and name. */
struct load {
    uint64_t addr, size, index;
    char *name;
};

/* The JIT_CODE_LOAD and JIT_CODE_MOVE records of jitdump file PATH. */
static void read_jitdump(struct jit_text *t, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    unsigned char h[JITDUMP_HEADER_SIZE];
    struct load *loads = NULL;
    size_t nloads = 0, cap = 0;
    unsigned char *rec = NULL;
    if (fread(h, 1, sizeof(h), f) != sizeof(h))
        goto out;
    uint32_t magic = rd32(h, false);
    bool swap = magic == JITDUMP_MAGIC_SWAPPED;
    uint32_t header_size = rd32(h + 8, swap);
    if ((magic != JITDUMP_MAGIC && !swap) || header_size < JITDUMP_HEADER_SIZE ||
        fseek(f, header_size, SEEK_SET) != 0)
        goto out;
    uint64_t total = header_size;
    unsigned char rh[16];
    while (fread(rh, 1, sizeof(rh), f) == sizeof(rh)) {
        uint32_t id = rd32(rh, swap), size = rd32(rh + 4, swap);
        if (size < sizeof(rh) || (total += size) > JIT_MAP_MAX_BYTES * (uint64_t)8) {
            t->cut = size >= sizeof(rh);
            break;
        }
        size_t body = size - sizeof(rh);
        /* A load's fixed part (40 bytes) and its name; the code after it
         * is skipped. */
        size_t want = id == JIT_CODE_LOAD
                          ? (body < 40 + NAME_MAX_BYTES ? body : 40 + NAME_MAX_BYTES)
                      : id == JIT_CODE_MOVE ? (body < 48 ? body : 48)
                                            : 0;
        rec = xrealloc(rec, want + 1);
        if (fread(rec, 1, want, f) != want || fseek(f, (long)(body - want), SEEK_CUR) != 0)
            break;
        if (id == JIT_CODE_LOAD && want > 40) {
            rec[want] = '\0';
            size_t len = strnlen((char *)rec + 40, want - 40);
            loads = xgrow(loads, &cap, nloads + 1, sizeof(*loads));
            loads[nloads++] = (struct load){.addr = rd64(rec + 16, swap),
                                            .size = rd64(rec + 24, swap),
                                            .index = rd64(rec + 32, swap),
                                            .name = xasprintf("%.*s", (int)len, rec + 40)};
            add(t, loads[nloads - 1].addr, loads[nloads - 1].size, loads[nloads - 1].name, len);
        } else if (id == JIT_CODE_MOVE && want == 48) {
            /* The code of index N moved: the same name at its new place. */
            uint64_t old = rd64(rec + 16, swap), to = rd64(rec + 24, swap);
            uint64_t size_moved = rd64(rec + 32, swap), index = rd64(rec + 40, swap);
            for (size_t i = nloads; i-- > 0;)
                if (loads[i].index == index && loads[i].addr == old) {
                    add(t, to, size_moved, loads[i].name, strlen(loads[i].name));
                    break;
                }
        }
    }
out:
    for (size_t i = 0; i < nloads; i++)
        free(loads[i].name);
    free(loads);
    free(rec);
    fclose(f);
}

void jit_maps_capture(struct output *out, uint32_t pid, const struct map_list *maps)
{
    struct jit_text t = {.maps = maps};
    char *cut_source = NULL;
    for (size_t i = 0; maps && i < maps->count; i++) {
        const char *path = maps->entries[i].path;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(maps->entries[k].path, path) == 0;
        if (!seen && is_jitdump(path)) {
            read_jitdump(&t, path);
            if (t.cut && !cut_source)
                cut_source = xstrdup(path);
        }
    }
    read_perf_map(&t, pid);
    if (t.cut && !cut_source)
        cut_source = xasprintf("/tmp/perf-%" PRIu32 ".map", pid);
    if (cut_source)
        pt_warn("%s: more JIT symbols than the profile keeps (%u MiB); the rest are left out",
                cut_source, JIT_MAP_MAX_BYTES >> 20);
    if (t.len > 0)
        output_image(out, pid, 0, JIT_MAP_IMAGE, t.buf, t.len);
    free(cut_source);
    free(t.buf);
}
