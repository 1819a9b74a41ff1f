/* jit_maps.c - see jit_maps.h */
#include "record/jit_maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* jitdump (perf's tools/perf/util/jitdump.h): a header, then records. */
#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JITDUMP_HEADER_SIZE 40
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1
/* Longer names are cut there (C++ templates and JS closures can be long). */
#define NAME_MAX_BYTES 4096
/* A perf-map line longer than this is no JIT's: it is skipped unread. */
#define PERF_MAP_LINE_MAX (NAME_MAX_BYTES + 64)
/* What a refusal says, for -d and the profile's META. */
#define REFUSAL_MAX 256

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

bool jit_owner_read(uint32_t pid, struct jit_owner *o)
{
    *o = (struct jit_owner){.known = false};
    char path[64];
    snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        unsigned r, e, s, fs;
        if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4) {
            *o = (struct jit_owner){.uid = {r, e, s, fs}, .known = true};
            break;
        }
    }
    fclose(f);
    return o->known;
}

/* Whose files the process's JIT may have written: root, and the users it
 * runs as now (if it is still there) or ran as when last seen. */
struct owners {
    struct jit_owner now, seen;
};

static bool owned_by(const struct owners *o, uid_t uid)
{
    if (uid == 0)
        return true;
    for (int i = 0; i < 4; i++)
        if ((o->now.known && o->now.uid[i] == uid) || (o->seen.known && o->seen.uid[i] == uid))
            return true;
    return false;
}

/*
 * Open PATH, a file the process's JIT named (by its pid, or by mapping
 * it), only if it is what it claims: a regular file of the process's user
 * or root, reached without following a symbolic link at its end, and
 * opened without blocking (a FIFO would hang the recorder).  Anything else
 * is refused and WHY says so; a file that does not exist is neither.
 * Returns the descriptor or -1.
 */
static int open_jit_file(const char *path, const struct owners *o, char *why, size_t why_size)
{
    why[0] = '\0';
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(why, why_size, "%s: a symbolic link, not read", path);
        else if (errno != ENOENT)
            snprintf(why, why_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        snprintf(why, why_size, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, why_size, "%s: not a regular file, not read", path);
    else if (!owned_by(o, st.st_uid) && (o->now.known || o->seen.known))
        snprintf(why, why_size, "%s: owned by uid %u, not by the process's user (uid %u), not read",
                 path, (unsigned)st.st_uid,
                 (unsigned)(o->now.known ? o->now.uid[1] : o->seen.uid[1]));
    else if (!owned_by(o, st.st_uid))
        snprintf(why, why_size, "%s: owned by uid %u, and the process's user is unknown, not read",
                 path, (unsigned)st.st_uid);
    if (why[0]) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One "START SIZE name" line (hex, hex, text; perf also takes a 0x prefix). */
static void parse_perf_map_line(struct jit_text *t, char *line, size_t len)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    line[len] = '\0';
    char *end;
    errno = 0;
    uint64_t start = strtoull(line, &end, 16);
    if (end == line || *end != ' ' || errno)
        return;
    char *size_at = end + 1;
    uint64_t size = strtoull(size_at, &end, 16);
    if (end == size_at || *end != ' ' || errno)
        return;
    add(t, start, size, end + 1, strlen(end + 1));
}

/* /tmp/perf-PID.map, read from FD: at most JIT_MAP_MAX_BYTES, a line at a
 * time in a fixed buffer (a line past PERF_MAP_LINE_MAX is skipped). */
static void read_perf_map(struct jit_text *t, int fd)
{
    char *buf = xmalloc(PERF_MAP_LINE_MAX + 1);
    size_t have = 0, total = 0;
    bool skipping = false; /* inside a line too long to keep */
    for (;;) {
        if (total >= JIT_MAP_MAX_BYTES) {
            t->cut = true;
            break;
        }
        size_t room = PERF_MAP_LINE_MAX - have;
        if (room > JIT_MAP_MAX_BYTES - total)
            room = JIT_MAP_MAX_BYTES - total;
        ssize_t n = read(fd, buf + have, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        total += (size_t)n;
        have += (size_t)n;
        size_t from = 0;
        for (char *nl; (nl = memchr(buf + from, '\n', have - from)) != NULL;) {
            size_t len = (size_t)(nl - (buf + from));
            if (!skipping)
                parse_perf_map_line(t, buf + from, len);
            skipping = false;
            from += len + 1;
        }
        memmove(buf, buf + from, have - from);
        have -= from;
        if (have == PERF_MAP_LINE_MAX) {
            skipping = true;
            have = 0;
        }
    }
    if (have > 0 && !skipping)
        parse_perf_map_line(t, buf, have); /* a last line without '\n' */
    free(buf);
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
static void read_jitdump(struct jit_text *t, int fd)
{
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return;
    }
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

/* A file refused: -d says why, and so does the profile (META
 * "jit_refused.PID", which info shows). */
static void refuse(struct output *out, uint32_t pid, const char *why)
{
    pt_debug("JIT symbols of process %" PRIu32 ": %s", pid, why);
    char key[48];
    snprintf(key, sizeof(key), "jit_refused.%" PRIu32, pid);
    output_meta(out, key, why);
}

void jit_maps_capture(struct output *out, uint32_t pid, const struct map_list *maps,
                      const struct jit_owner *seen)
{
    struct jit_text t = {.maps = maps};
    struct owners owners = {.seen = seen ? *seen : (struct jit_owner){.known = false}};
    jit_owner_read(pid, &owners.now);
    char *cut_source = NULL;
    char why[REFUSAL_MAX];
    for (size_t i = 0; maps && i < maps->count; i++) {
        const char *path = maps->entries[i].path;
        bool read_before = false;
        for (size_t k = 0; k < i && !read_before; k++)
            read_before = strcmp(maps->entries[k].path, path) == 0;
        if (read_before || !is_jitdump(path))
            continue;
        int fd = open_jit_file(path, &owners, why, sizeof(why));
        if (fd < 0) {
            if (why[0])
                refuse(out, pid, why);
            continue;
        }
        read_jitdump(&t, fd);
        if (t.cut && !cut_source)
            cut_source = xstrdup(path);
    }
    char map_path[64];
    snprintf(map_path, sizeof(map_path), "/tmp/perf-%" PRIu32 ".map", pid);
    int fd = open_jit_file(map_path, &owners, why, sizeof(why));
    if (fd >= 0) {
        read_perf_map(&t, fd);
        close(fd);
    } else if (why[0]) {
        refuse(out, pid, why);
    }
    if (t.cut && !cut_source)
        cut_source = xstrdup(map_path);
    if (cut_source)
        pt_warn("%s: more JIT symbols than the profile keeps (%u MiB); the rest are left out",
                cut_source, JIT_MAP_MAX_BYTES >> 20);
    if (t.len > 0)
        output_image(out, pid, 0, JIT_MAP_IMAGE, t.buf, t.len);
    free(cut_source);
    free(t.buf);
}
