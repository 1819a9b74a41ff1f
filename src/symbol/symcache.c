/* symcache.c - see symcache.h */
#include "symbol/symcache.h"
#include "model/profile.h"
#include "symbol/addr_table.h"
#include "symbol/build_id.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "PTSYMC\0\0"
/* 2: one choice among aliases for both symbol readers; 3: PLT stubs and
 * unnamed functions (by their FDE) are named */
#define CACHE_VERSION 3u
#define FLAG_DWARF 1u
/* A cache file larger than this is not ours to read in one piece. */
#define CACHE_MAX_BYTES (1ull << 30)
#define ENTRY_MIN_BYTES 12 /* offset + nframes */
#define FRAME_MIN_BYTES 17 /* three empty strings, line, inlined */

struct entry {
    uint64_t offset;
    uint32_t nframes;
    const struct sym_frame *frames;
};

struct symcache {
    struct strpool *pool;
    const char *name;
    const char *path;
    struct entry *entries;
    size_t count, cap;
    struct addr_table index; /* offset -> entry index */
    char *dir, *file;        /* persistent file, NULL when not attached */
    uint8_t id[PROF_BUILD_ID_MAX];
    size_t idlen;
    bool has_dwarf, quality_known;
    bool dirty;   /* entries the file lacks */
    bool persist; /* false: this run's entries are worse than the file's */
    bool loaded;
};

struct symcache *symcache_new(struct strpool *pool, const char *name, const char *path)
{
    struct symcache *c = xcalloc(1, sizeof(*c));
    c->pool = pool;
    c->name = strpool_intern(pool, name);
    c->path = strpool_intern(pool, path ? path : "");
    c->persist = true;
    return c;
}

void symcache_free(struct symcache *c)
{
    if (!c)
        return;
    free(c->entries);
    addr_table_free(&c->index);
    free(c->dir);
    free(c->file);
    free(c);
}

const struct sym_frame *symcache_lookup(const struct symcache *c, uint64_t offset,
                                        uint32_t *nframes)
{
    uint64_t i;
    if (!addr_table_get(&c->index, offset, 0, &i))
        return NULL;
    *nframes = c->entries[i].nframes;
    /* A known offset that nothing names still needs a non-NULL answer. */
    static const struct sym_frame none[1];
    return c->entries[i].frames ? c->entries[i].frames : none;
}

static struct sym_frame *new_frames(struct symcache *c, uint64_t offset, uint32_t nframes)
{
    c->entries = xgrow(c->entries, &c->cap, c->count + 1, sizeof(*c->entries));
    struct sym_frame *f = nframes ? strpool_alloc(c->pool, (size_t)nframes * sizeof(*f)) : NULL;
    c->entries[c->count] = (struct entry){offset, nframes, f};
    addr_table_put(&c->index, offset, 0, c->count);
    c->count++;
    return f;
}

void symcache_add(struct symcache *c, uint64_t offset, const struct sym_frame *frames,
                  uint32_t nframes)
{
    uint32_t known;
    if (symcache_lookup(c, offset, &known))
        return;
    struct sym_frame *f = new_frames(c, offset, nframes);
    for (uint32_t i = 0; i < nframes; i++) {
        f[i] = frames[i];
        f[i].binary = c->name;
        f[i].path = c->path;
    }
    c->dirty = true;
}

void symcache_set_path(struct symcache *c, const char *path)
{
    c->path = strpool_intern(c->pool, path);
}

bool symcache_loaded(const struct symcache *c)
{
    return c->loaded;
}

bool symcache_has_dwarf(const struct symcache *c)
{
    return c->has_dwarf;
}

void symcache_set_quality(struct symcache *c, bool has_dwarf)
{
    if (!c->quality_known) {
        c->quality_known = true;
        c->has_dwarf = has_dwarf;
    } else if (has_dwarf && !c->has_dwarf) {
        /* Debug info appeared: what the file said without it is worse.
         * The frames stay in the pool for whoever already holds them. */
        c->count = 0;
        addr_table_clear(&c->index);
        c->has_dwarf = true;
        c->dirty = true;
    } else if (!has_dwarf && c->has_dwarf) {
        c->persist = false;
    }
}

/* --- reading ------------------------------------------------------------- */

struct reader {
    const uint8_t *p;
    size_t len, pos;
    const char *bad; /* what is wrong, at pos */
};

static bool need(struct reader *r, size_t n, const char *what)
{
    if (r->bad)
        return false;
    if (r->len - r->pos < n) {
        r->bad = what;
        return false;
    }
    return true;
}

static uint64_t rd_le(struct reader *r, size_t n, const char *what)
{
    if (!need(r, n, what))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += n;
    return v;
}

static const char *rd_str(struct reader *r, size_t *len, const char *what)
{
    uint64_t n = rd_le(r, 4, what);
    if (!need(r, (size_t)n, what))
        return NULL;
    const char *s = (const char *)r->p + r->pos;
    if (memchr(s, '\0', (size_t)n)) {
        r->bad = "NUL byte inside a string";
        return NULL;
    }
    r->pos += (size_t)n;
    *len = (size_t)n;
    return s;
}

/* Validates BUF (ADD false) or adds its entries that the table lacks (ADD
 * true, after a validating pass).  Returns false at the first damage, with
 * R->bad and R->pos saying what and where. */
static bool parse(struct symcache *c, struct reader *r, bool add, uint32_t *flags)
{
    if (!need(r, 8, "file too short for its magic"))
        return false;
    if (memcmp(r->p, CACHE_MAGIC, 8) != 0) {
        r->bad = "not a ptprof symbol cache";
        return false;
    }
    r->pos = 8;
    uint32_t version = (uint32_t)rd_le(r, 4, "truncated header");
    *flags = (uint32_t)rd_le(r, 4, "truncated header");
    if (!r->bad && version != CACHE_VERSION) {
        r->bad = "another cache version";
        return false;
    }
    size_t idlen = (size_t)rd_le(r, 1, "truncated build-id");
    if (!need(r, idlen, "truncated build-id"))
        return false;
    if (idlen != c->idlen || memcmp(r->p + r->pos, c->id, idlen) != 0) {
        r->bad = "another build-id";
        return false;
    }
    r->pos += idlen;
    size_t plen;
    const char *path = rd_str(r, &plen, "truncated path");
    uint64_t count = rd_le(r, 8, "truncated entry count");
    if (r->bad)
        return false;
    if (count > (r->len - r->pos) / ENTRY_MIN_BYTES) {
        r->bad = "entry count larger than the file";
        return false;
    }
    if (add && plen > 0 && c->path[0] == '\0')
        c->path = strpool_intern_len(c->pool, path, plen);
    for (uint64_t e = 0; e < count; e++) {
        uint64_t offset = rd_le(r, 8, "truncated entry");
        uint32_t nframes = (uint32_t)rd_le(r, 4, "truncated entry");
        if (r->bad)
            return false;
        if (nframes > (r->len - r->pos) / FRAME_MIN_BYTES) {
            r->bad = "frame count larger than the file";
            return false;
        }
        uint32_t known;
        bool skip = !add || symcache_lookup(c, offset, &known) != NULL;
        struct sym_frame *f = skip ? NULL : new_frames(c, offset, nframes);
        for (uint32_t i = 0; i < nframes; i++) {
            size_t lf, lm, ls;
            const char *fn = rd_str(r, &lf, "truncated frame");
            const char *mangled = rd_str(r, &lm, "truncated frame");
            const char *file = rd_str(r, &ls, "truncated frame");
            uint32_t line = (uint32_t)rd_le(r, 4, "truncated frame");
            uint8_t inlined = (uint8_t)rd_le(r, 1, "truncated frame");
            if (r->bad)
                return false;
            if (lf == 0) {
                r->bad = "frame without a function name";
                return false;
            }
            if (f)
                f[i] = (struct sym_frame){
                    .binary = c->name,
                    .path = c->path,
                    .function = strpool_intern_len(c->pool, fn, lf),
                    .mangled = strpool_intern_len(c->pool, mangled, lm),
                    .file = strpool_intern_len(c->pool, file, ls),
                    .line = line,
                    .inlined = inlined != 0,
                };
        }
    }
    if (r->pos != r->len) {
        r->bad = "data after the last entry";
        return false;
    }
    return true;
}

/* The whole file, or NULL (missing: quietly; unreadable: with a debug
 * message). */
static uint8_t *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            pt_debug("%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > CACHE_MAX_BYTES) {
        pt_debug("%s: not a cache file of a usable size; ignored", path);
        goto out;
    }
    size_t size = (size_t)st.st_size, done = 0;
    buf = xmalloc(size ? size : 1);
    while (done < size) {
        ssize_t n = read(fd, buf + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    *len = done;
out:
    close(fd);
    return buf;
}

/* Adds the entries of the file (if any, valid and as good as ours);
 * returns false when the file should not be replaced by ours (it was made
 * with DWARF and we have none). */
static bool merge_file(struct symcache *c, bool debug_available, bool loading)
{
    size_t len = 0;
    uint8_t *buf = read_file(c->file, &len);
    if (!buf)
        return true;
    struct reader r = {.p = buf, .len = len};
    uint32_t flags = 0;
    bool ok = parse(c, &r, false, &flags), replace = true;
    if (!ok) {
        pt_debug("%s: offset %zu: %s; the cache file is ignored and will be rewritten", c->file,
                 r.pos, r.bad);
        c->dirty = true;
    } else {
        bool file_dwarf = flags & FLAG_DWARF;
        bool take = true;
        if (loading) {
            if (!file_dwarf && debug_available) {
                pt_debug("%s: made without debug info, which is there now; ignored", c->file);
                take = false;
                c->dirty = true;
            } else {
                c->has_dwarf = file_dwarf;
                c->quality_known = true;
            }
        } else if (file_dwarf != c->has_dwarf) {
            /* Only the better of the two survives. */
            take = false;
            replace = !file_dwarf;
        }
        if (take) {
            struct reader again = {.p = buf, .len = len};
            parse(c, &again, true, &flags);
            if (loading)
                c->loaded = true;
        }
    }
    free(buf);
    return replace;
}

void symcache_load(struct symcache *c, const char *dir, const uint8_t *id, size_t len,
                   bool debug_available)
{
    if (!dir || len == 0 || len > PROF_BUILD_ID_MAX || c->file)
        return;
    char hex[2 * PROF_BUILD_ID_MAX + 1];
    build_id_hex(id, len, hex);
    memcpy(c->id, id, len);
    c->idlen = len;
    c->dir = xstrdup(dir);
    c->file = xasprintf("%s/%s.sym", dir, hex);
    merge_file(c, debug_available, true);
}

/* --- writing ------------------------------------------------------------- */

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put_le(struct buf *b, uint64_t v, size_t n)
{
    b->p = xgrow(b->p, &b->cap, b->len + n, 1);
    for (size_t i = 0; i < n; i++)
        b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static void put_str(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    put_le(b, n, 4);
    b->p = xgrow(b->p, &b->cap, b->len + n, 1);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void serialize(const struct symcache *c, struct buf *b)
{
    b->p = xgrow(b->p, &b->cap, 8, 1);
    memcpy(b->p, CACHE_MAGIC, 8);
    b->len = 8;
    put_le(b, CACHE_VERSION, 4);
    put_le(b, c->has_dwarf ? FLAG_DWARF : 0, 4);
    put_le(b, c->idlen, 1);
    for (size_t i = 0; i < c->idlen; i++)
        put_le(b, c->id[i], 1);
    put_str(b, c->path);
    put_le(b, c->count, 8);
    for (size_t e = 0; e < c->count; e++) {
        const struct entry *en = &c->entries[e];
        put_le(b, en->offset, 8);
        put_le(b, en->nframes, 4);
        for (uint32_t i = 0; i < en->nframes; i++) {
            const struct sym_frame *f = &en->frames[i];
            put_str(b, f->function);
            put_str(b, f->mangled);
            put_str(b, f->file);
            put_le(b, f->line, 4);
            put_le(b, f->inlined ? 1 : 0, 1);
        }
    }
}

static int mkdir_parents(const char *dir)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void symcache_save(struct symcache *c)
{
    if (!c || !c->file || !c->dirty || !c->persist)
        return;
    if (mkdir_parents(c->dir) != 0) {
        pt_debug("%s: cannot create the cache directory: %s", c->dir, strerror(errno));
        return;
    }
    char *lock = xasprintf("%s/.lock", c->dir);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(lock);
    /* Without a lock (a file system that refuses flock) the rename still
     * keeps the file whole; only a concurrent run's additions may be lost. */
    if (lfd >= 0)
        while (flock(lfd, LOCK_EX) != 0 && errno == EINTR)
            ;
    if (!merge_file(c, false, false)) {
        if (lfd >= 0)
            close(lfd);
        return;
    }

    struct buf b = {0};
    serialize(c, &b);
    char *tmp = xasprintf("%s.tmp.%ld", c->file, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : write_all(fd, b.p, b.len);
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc != 0) {
        pt_debug("%s: cannot write the symbol cache: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, c->file) != 0) {
        pt_debug("%s: cannot replace the symbol cache: %s", c->file, strerror(errno));
        unlink(tmp);
    } else {
        c->dirty = false;
    }
    free(tmp);
    free(b.p);
    if (lfd >= 0)
        close(lfd); /* releases the lock */
}

char *symcache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')
        return xasprintf("%s/ptprof", xdg);
    const char *home = getenv("HOME");
    if (home && home[0] == '/')
        return xasprintf("%s/.cache/ptprof", home);
    return NULL;
}
