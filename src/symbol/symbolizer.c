/* symbolizer.c - see symbolizer.h */
#include "symbol/symbolizer.h"
#include "model/map_index.h"
#include "symbol/addr_table.h"
#include "symbol/binary_finder.h"
#include "symbol/build_id.h"
#include "symbol/debug_server.h"
#include "symbol/dwfl_reader.h"
#include "symbol/jit_symbols.h"
#include "symbol/kallsyms.h"
#include "symbol/progress.h"
#include "symbol/strpool.h"
#include "symbol/symcache.h"
#include "model/maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NONE SIZE_MAX
#define MAX_FRAMES 64
#define UNMAPPED "[unmapped]"
#define ANON "[anon]"

/* One per distinct file (recorded path + build-id) or captured image. */
struct binary {
    const char *path; /* as recorded, without " (deleted)" */
    const char *name; /* base name, what frames call it */
    uint8_t id[PROF_BUILD_ID_MAX];
    size_t idlen;
    const struct prof_image *image;
    bool pseudo;        /* nothing to read: "[stack]", anonymous memory... */
    const char *given;  /* the file the user named for it (--binary), or NULL */
    bool given_differs; /* ...whose build-id is not the recorded one */
    bool open_tried;
    const char *used; /* the file that answers, "" until opened */
    struct dwfl_reader *reader;
    struct symcache *cache; /* frames by file offset; NULL until first use */
};

struct symbolizer {
    const struct profile *p;
    bool progress;
    struct strpool *pool;
    struct binary_finder *finder;
    char *cache_dir; /* NULL: no persistent cache */
    struct binary *bins;
    size_t nbins, bins_cap;
    size_t *bin_of_map;         /* per map, NONE until first used */
    size_t *id_of_map;          /* per map, the map whose build-id names its file */
    struct map_index *maps;     /* which map holds a PC, when maps changed */
    struct addr_table locs;     /* (binary << 1 | return address, offset) -> location */
    bool has_table;             /* the profile has symbol tables: they answer first */
    bool from_table;            /* ...and name every address (no binaries are read) */
    struct addr_table table;    /* (pid << 1 | return address, pc) -> location */
    struct jit_symbols *jit;    /* names of JIT code the recorder copied */
    struct addr_table jit_locs; /* (pid << 1 | return address, pc) -> location */
    struct sym_frame unmapped_frame;
    struct sym_location unmapped;
    struct kallsyms *kallsyms; /* this kernel's symbols, read when first needed */
    bool kallsyms_tried;
};

/* --- maps ------------------------------------------------------------------ */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The recorder stores the build-id with the executable mapping only; the
 * other mappings of the same file (same pid, path and inode) share it. */
static void inherit_build_ids(struct symbolizer *s)
{
    const struct profile *p = s->p;
    struct addr_table with_id = {0};
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        s->id_of_map[i] = i;
        uint64_t k = str_hash(m->path) ^ m->inode * 0x9e3779b97f4a7c15ull;
        uint64_t v;
        if (m->build_id_len > 0 && !addr_table_get(&with_id, m->pid, k, &v))
            addr_table_put(&with_id, m->pid, k, i);
    }
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        uint64_t k = str_hash(m->path) ^ m->inode * 0x9e3779b97f4a7c15ull, v;
        if (m->build_id_len > 0 || m->path[0] == '\0' || !addr_table_get(&with_id, m->pid, k, &v))
            continue;
        const struct prof_map *o = &p->maps[v];
        if (o->inode == m->inode && o->dev_major == m->dev_major && o->dev_minor == m->dev_minor &&
            strcmp(o->path, m->path) == 0)
            s->id_of_map[i] = (size_t)v;
    }
    addr_table_free(&with_id);
}

static void index_maps(struct symbolizer *s)
{
    const struct profile *p = s->p;
    size_t n = p->nmaps ? p->nmaps : 1;
    s->maps = map_index_new(p);
    s->bin_of_map = xmalloc(n * sizeof(*s->bin_of_map));
    s->id_of_map = xmalloc(n * sizeof(*s->id_of_map));
    for (size_t i = 0; i < p->nmaps; i++)
        s->bin_of_map[i] = NONE;
    inherit_build_ids(s);
}

/* --- binaries ---------------------------------------------------------------- */

static const struct prof_image *find_image(const struct profile *p, const struct prof_map *m)
{
    const struct prof_image *any = NULL;
    for (size_t i = 0; i < p->nimages; i++) {
        const struct prof_image *img = &p->images[i];
        if (!img->name || strcmp(img->name, m->path) != 0 || !img->data)
            continue;
        if (img->pid == m->pid && img->start == m->start)
            return img;
        /* Every process of one kernel gets the same vDSO. */
        if (!any)
            any = img;
    }
    return any;
}

static size_t image_build_id(const struct prof_image *img, uint8_t *out)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)img->data, img->size);
    size_t n = 0;
    const void *id = NULL;
    if (elf && elf_kind(elf) == ELF_K_ELF) {
        ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
        if (len > 0 && id) {
            n = (size_t)len < PROF_BUILD_ID_MAX ? (size_t)len : PROF_BUILD_ID_MAX;
            memcpy(out, id, n);
        }
    }
    if (elf)
        elf_end(elf);
    return n;
}

static void use_given(struct binary *b, const char *given)
{
    b->given = given;
    uint8_t id[PROF_BUILD_ID_MAX];
    int n = build_id_read(given, id, sizeof(id));
    b->given_differs = b->idlen > 0 && (n != (int)b->idlen || memcmp(id, b->id, b->idlen) != 0);
}

static size_t binary_of_map(struct symbolizer *s, size_t mi)
{
    if (s->bin_of_map[mi] != NONE)
        return s->bin_of_map[mi];
    const struct prof_map *m = &s->p->maps[mi];
    const struct prof_map *idm = &s->p->maps[s->id_of_map[mi]];
    static const char deleted[] = " (deleted)";
    size_t len = strlen(m->path), dlen = sizeof(deleted) - 1;
    if (len > dlen && strcmp(m->path + len - dlen, deleted) == 0)
        len -= dlen;
    const char *path = strpool_intern_len(s->pool, m->path, len);
    const struct prof_image *image = path[0] == '[' ? find_image(s->p, m) : NULL;
    size_t b = 0;
    for (; b < s->nbins; b++) {
        const struct binary *bin = &s->bins[b];
        if (bin->path == path && bin->image == image && bin->idlen == idm->build_id_len &&
            memcmp(bin->id, idm->build_id, bin->idlen) == 0)
            break;
    }
    if (b == s->nbins) {
        s->bins = xgrow(s->bins, &s->bins_cap, s->nbins + 1, sizeof(*s->bins));
        struct binary *bin = &s->bins[s->nbins++];
        *bin = (struct binary){.path = path, .image = image, .used = ""};
        bin->idlen = idm->build_id_len <= PROF_BUILD_ID_MAX ? idm->build_id_len : 0;
        memcpy(bin->id, idm->build_id, bin->idlen);
        const char *slash = strrchr(path, '/');
        bin->name = len == 0 ? ANON : slash ? strpool_intern(s->pool, slash + 1) : path;
        if (image && bin->idlen == 0)
            bin->idlen = image_build_id(image, bin->id);
        /* Pseudo files other than a captured image, and anonymous
         * memory, have no file: nothing to read or warn about ([vdso]
         * without an image is a binary we cannot read). */
        bin->pseudo = len == 0 || (path[0] == '[' && !image && strcmp(path, "[vdso]") != 0);
        const char *given = bin->pseudo || image ? NULL : binary_finder_given(s->finder, path);
        if (given)
            use_given(bin, strpool_intern(s->pool, given));
    }
    s->bin_of_map[mi] = b;
    return b;
}

static void warn_unreadable(const struct binary *b, const char *what)
{
    pt_warn("%s: %s; its addresses are shown as %s+0xOFFSET", b->path, what, b->name);
}

/* The captured bytes reach libdwfl as a memory file, so nothing is left
 * in the file system. */
static struct dwfl_reader *open_image(struct symbolizer *s, struct binary *b)
{
    const struct prof_image *img = b->image;
    if (img->size < SELFMAG || memcmp(img->data, ELFMAG, SELFMAG) != 0) {
        warn_unreadable(b, "the captured image is not ELF");
        return NULL;
    }
    int fd = memfd_create("ptprof-image", MFD_CLOEXEC);
    if (fd < 0) {
        warn_unreadable(b, strerror(errno));
        return NULL;
    }
    size_t done = 0;
    while (done < img->size) {
        ssize_t n = write(fd, img->data + done, img->size - done);
        if (n <= 0) {
            warn_unreadable(b, "cannot copy the captured image");
            close(fd);
            return NULL;
        }
        done += (size_t)n;
    }
    const char *why;
    struct dwfl_reader *r =
        dwfl_reader_open(b->path, fd, binary_finder_debuginfo_path(s->finder), &why);
    if (!r)
        warn_unreadable(b, why);
    return r;
}

/* The file the user named for B, even of another build (they said so). */
static void open_given(struct symbolizer *s, struct binary *b)
{
    if (b->given_differs)
        pt_warn("%s: --binary %s is another build than the one profiled (its build-id "
                "differs); its names may be wrong",
                b->path, b->given);
    const char *why;
    b->reader = dwfl_reader_open(b->given, -1, binary_finder_debuginfo_path(s->finder), &why);
    if (b->reader)
        b->used = b->given;
    else
        pt_warn("%s: %s; its addresses are shown as %s+0xOFFSET", b->given, why, b->name);
}

static void open_binary(struct symbolizer *s, struct binary *b)
{
    b->open_tried = true;
    if (b->given) {
        open_given(s, b);
    } else if (b->image) {
        b->reader = open_image(s, b);
        b->used = b->path;
    } else if (b->path[0] == '[') {
        warn_unreadable(b, "the profile has no captured image of it");
    } else {
        struct bf_result res;
        binary_finder_find(s->finder, b->path, b->id, b->idlen, &res);
        bool same = res.path && strcmp(res.path, b->path) == 0;
        char *msg = NULL;
        switch (res.status) {
        case BF_FOUND: {
            const char *why;
            b->reader =
                dwfl_reader_open(res.path, -1, binary_finder_debuginfo_path(s->finder), &why);
            if (b->reader) {
                b->used = strpool_intern(s->pool, res.path);
                pt_debug("%s: read from %s", b->path, res.path);
                /* Profiles without build-ids (the original format) still
                 * get a persistent cache, keyed by the file found. */
                if (b->idlen == 0 && res.id_len > 0 && s->cache_dir)
                    symcache_load(b->cache, s->cache_dir, res.id, res.id_len, false);
            } else {
                msg = xasprintf("%s: %s", res.path, why);
            }
            break;
        }
        case BF_MISMATCH:
            msg = xasprintf("%s%sanother build than the one profiled (its build-id differs)",
                            same ? "" : res.path, same ? "" : " is ");
            break;
        case BF_NOT_ELF:
            msg = xasprintf("%s%snot an ELF file", same ? "" : res.path, same ? "" : " is ");
            break;
        case BF_MISSING:
            msg = xasprintf("binary not found%s (add -s DIR)",
                            b->path[0] == '/' ? "" : " in the search path");
            break;
        }
        if (msg)
            warn_unreadable(b, msg);
        free(msg);
        free(res.path);
    }
    if (b->reader) {
        symcache_set_path(b->cache, b->used);
        symcache_set_quality(b->cache, dwfl_reader_has_dwarf(b->reader));
        debug_server_failed(b->path, dwfl_reader_fetch_error(b->reader));
    }
}

static struct symcache *cache_of(struct symbolizer *s, struct binary *b)
{
    if (!b->cache) {
        b->cache = symcache_new(s->pool, b->name, b->image ? b->path : "");
        /* Another build's answers are not the recorded build's. */
        if (s->cache_dir && b->idlen > 0 && !b->given_differs) {
            char *debug = binary_finder_debug_file(s->finder, b->id, b->idlen);
            symcache_load(b->cache, s->cache_dir, b->id, b->idlen, debug != NULL);
            free(debug);
            /* Answers made without debug info: a server may have it now.
             * Opening the binary asks; what it brings replaces them. */
            if (symcache_loaded(b->cache) && !symcache_has_dwarf(b->cache) &&
                debug_server_enabled() && !b->open_tried)
                open_binary(s, b);
        }
    }
    return b->cache;
}

/* "BINARY+0xOFFSET": what names an address, or a function, without a
 * symbol. */
/* The frame "BINARY+0xOFFSET" of B's offset OFF: its name interned when
 * SHARED (the start of a function, which many addresses are named by),
 * else copied without an entry in the pool's index (an address of its own:
 * a dense histogram names millions, and the index cost more than the
 * names; issue 19). */
static struct sym_frame unnamed_frame(struct symbolizer *s, const struct binary *b, uint64_t off,
                                      bool shared)
{
    char *name = xasprintf("%s+0x%llx", b->name, (unsigned long long)off);
    struct sym_frame f = {.binary = b->name,
                          .path = b->reader ? b->used : "",
                          .function =
                              shared ? strpool_intern(s->pool, name) : strpool_copy(s->pool, name),
                          .mangled = "",
                          .file = ""};
    free(name);
    return f;
}

/* The frames of file offset OFF of B, or NULL when nothing names it. */
static const struct sym_frame *binary_frames(struct symbolizer *s, struct binary *b, uint64_t off,
                                             uint32_t *n)
{
    struct symcache *c = cache_of(s, b);
    const struct sym_frame *f = symcache_lookup(c, off, n);
    if (f)
        return *n ? f : NULL;
    if (!b->open_tried)
        open_binary(s, b);
    if (!b->reader)
        return NULL;
    struct sym_frame buf[MAX_FRAMES];
    uint32_t got = (uint32_t)dwfl_reader_frames(b->reader, off, s->pool, buf, MAX_FRAMES);
    uint64_t start;
    if (got == 0 && dwfl_reader_function_start(b->reader, off, &start)) {
        /* No name, but its function's bounds: every address of it gets the
         * same name, that of its first byte, so its samples add up. */
        buf[0] = unnamed_frame(s, b, start, true);
        got = 1;
    }
    symcache_add(c, off, buf, got);
    f = symcache_lookup(c, off, n);
    return f && *n ? f : NULL;
}

/* --- locations --------------------------------------------------------------- */

static struct sym_location *unnamed(struct symbolizer *s, const struct binary *b, uint64_t off)
{
    struct sym_location *loc = strpool_alloc(s->pool, sizeof(*loc));
    struct sym_frame *f = strpool_alloc(s->pool, sizeof(*f));
    *f = unnamed_frame(s, b, off, false);
    *loc = (struct sym_location){.offset = off, .nframes = 1, .frames = f};
    return loc;
}

/* Memory that holds no code: a return address there came from a frame
 * that is not one.  Maps whose permissions are unknown (0) may hold code. */
static bool holds_no_code(const struct prof_map *m)
{
    if (m->perms != 0 && !(m->perms & MAP_PERM_EXEC))
        return true;
    return strcmp(m->path, "[heap]") == 0 || strncmp(m->path, "[stack", 6) == 0;
}

/* The code at PC of process PID by its JIT's name, or NULL.  A return
 * address is looked up at the call, the byte before it. */
static const struct sym_location *from_jit(struct symbolizer *s, uint32_t pid, uint64_t pc, bool ra)
{
    uint64_t key = (uint64_t)pid << 1 | ra, v;
    if (addr_table_get(&s->jit_locs, key, pc, &v))
        return (const struct sym_location *)(uintptr_t)v;
    const char *name = jit_symbols_find(s->jit, pid, ra && pc > 0 ? pc - 1 : pc);
    struct sym_location *loc = NULL;
    if (name) {
        struct sym_frame *f = strpool_alloc(s->pool, sizeof(*f));
        const char *n = strpool_intern(s->pool, name);
        *f = (struct sym_frame){
            .binary = JIT_BINARY, .path = "", .function = n, .mangled = n, .file = ""};
        loc = strpool_alloc(s->pool, sizeof(*loc));
        *loc = (struct sym_location){.offset = pc, .nframes = 1, .frames = f};
    }
    addr_table_put(&s->jit_locs, key, pc, (uint64_t)(uintptr_t)loc);
    return loc;
}

/* Memory without a file to read, where a JIT may have put code: anonymous
 * memory, and memory files (memfd), which some JITs map twice. */
static bool may_hold_jit_code(const struct binary *b)
{
    return b->pseudo || strncmp(b->path, "/memfd:", 7) == 0;
}

/* A kernel address of a perf profile, named as perf names it, from this
 * kernel's /proc/kallsyms when the profile's kernel map is this kernel's
 * text (the same boot), else NULL. */
static struct sym_location *from_kallsyms(struct symbolizer *s, const struct binary *b,
                                          const struct prof_map *m, uint64_t pc, uint64_t off,
                                          bool ra)
{
    if (!s->kallsyms_tried) {
        s->kallsyms_tried = true;
        s->kallsyms = kallsyms_load();
    }
    if (!kallsyms_same_kernel(s->kallsyms, m->start))
        return NULL;
    uint64_t start;
    const char *name = kallsyms_lookup(s->kallsyms, ra && pc > 0 ? pc - 1 : pc, &start);
    if (!name)
        return NULL;
    struct sym_frame *f = strpool_alloc(s->pool, sizeof(*f));
    const char *n = strpool_intern(s->pool, name);
    *f = (struct sym_frame){.binary = b->name, .path = "", .function = n, .mangled = n, .file = ""};
    struct sym_location *loc = strpool_alloc(s->pool, sizeof(*loc));
    *loc = (struct sym_location){.offset = off, .nframes = 1, .frames = f};
    return loc;
}

static const struct sym_location *from_maps(struct symbolizer *s, uint32_t pid, uint64_t time,
                                            uint64_t pc, bool ra)
{
    size_t mi = map_index_find(s->maps, pid, pc, time);
    if (mi == MAP_INDEX_NONE) {
        /* JIT code mapped after the recorder last read the maps. */
        const struct sym_location *jit = from_jit(s, pid, pc, ra);
        return jit ? jit : &s->unmapped;
    }
    size_t bi = binary_of_map(s, mi);
    const struct prof_map *m = &s->p->maps[mi];
    struct binary *b = &s->bins[bi];
    /* Anonymous memory is one binary for every process and mapping: a JIT
     * name is per process and address, not per offset. */
    const struct sym_location *jit = may_hold_jit_code(b) ? from_jit(s, pid, pc, ra) : NULL;
    if (jit)
        return jit;
    uint64_t off = pc - m->start + m->offset;
    bool garbage = ra && holds_no_code(m);
    uint64_t key = (uint64_t)bi << 2 | (uint64_t)garbage << 1 | ra, v;
    if (addr_table_get(&s->locs, key, off, &v))
        return (const struct sym_location *)(uintptr_t)v;
    struct sym_location *loc = NULL;
    if (garbage) {
        loc = unnamed(s, b, off);
        loc->not_code = true;
    } else if (!b->pseudo && !s->from_table) {
        /* A return address points after the call: the call is the byte
         * before it. */
        uint32_t n;
        const struct sym_frame *f = binary_frames(s, b, ra && off > 0 ? off - 1 : off, &n);
        if (f) {
            loc = strpool_alloc(s->pool, sizeof(*loc));
            *loc = (struct sym_location){.offset = off, .nframes = n, .frames = f};
        }
    }
    if (!loc && !garbage && strcmp(m->path, "[kernel.kallsyms]") == 0)
        loc = from_kallsyms(s, b, m, pc, off, ra);
    if (!loc)
        loc = unnamed(s, b, off);
    addr_table_put(&s->locs, key, off, (uint64_t)(uintptr_t)loc);
    return loc;
}

/* A .pbin's tables answer by (pid, pc, return address). */
static void load_table(struct symbolizer *s)
{
    const struct profile *p = s->p;
    for (size_t i = 0; i < p->nlocations; i++) {
        const struct prof_location *pl = &p->locations[i];
        if (pl->nframes == 0 || !pl->frames)
            continue;
        struct sym_frame *f = strpool_alloc(s->pool, pl->nframes * sizeof(*f));
        for (uint32_t k = 0; k < pl->nframes; k++) {
            const struct prof_sym_frame *src = &pl->frames[k];
#define STR(x) strpool_intern(s->pool, (x) ? (x) : "")
            f[k] = (struct sym_frame){.binary = STR(src->binary),
                                      .path = STR(src->path),
                                      .function = STR(src->function),
                                      .mangled = STR(src->mangled),
                                      .file = STR(src->file),
                                      .line = src->line,
                                      .inlined = src->inlined};
#undef STR
        }
        struct sym_location *loc = strpool_alloc(s->pool, sizeof(*loc));
        *loc = (struct sym_location){.offset = pl->offset, .nframes = pl->nframes, .frames = f};
        addr_table_put(&s->table, (uint64_t)pl->pid << 1 | pl->return_address, pl->pc,
                       (uint64_t)(uintptr_t)loc);
    }
}

/* --- entry points ------------------------------------------------------------ */

/* A recording whose LOCATION records name only its interpreter frames
 * (record/interp/interp.h): every other address is named from the
 * binaries, until postprocess makes the table whole. */
static bool names_interpreter_frames_only(const struct profile *p)
{
    const char *locations = profile_meta(p, "locations");
    const char *symbolized = profile_meta(p, "symbolized");
    return locations && strcmp(locations, "interpreter") == 0 &&
           !(symbolized && strcmp(symbolized, "1") == 0);
}

struct symbolizer *symbolizer_new(const struct profile *p, const struct symbolizer_options *opts)
{
    debug_server_begin();
    struct symbolizer *s = xcalloc(1, sizeof(*s));
    s->p = p;
    s->pool = strpool_new();
    s->progress = opts && opts->progress;
    s->finder = binary_finder_new(opts ? opts->search_dirs : NULL, opts ? opts->nsearch_dirs : 0);
    if (opts && opts->cache)
        s->cache_dir = symcache_dir();
    s->unmapped_frame = (struct sym_frame){
        .binary = UNMAPPED, .path = "", .function = UNMAPPED, .mangled = "", .file = ""};
    s->unmapped = (struct sym_location){.offset = 0, .nframes = 1, .frames = &s->unmapped_frame};
    index_maps(s);
    if (opts)
        binary_finder_give(s->finder, p, opts->binaries, opts->nbinaries, true);
    s->jit = jit_symbols_new(p);
    if (p->nlocations > 0) {
        s->has_table = true;
        s->from_table = !names_interpreter_frames_only(p);
        load_table(s);
    }
    return s;
}

const struct sym_location *symbolizer_resolve(struct symbolizer *s, uint32_t pid, uint64_t time_ns,
                                              uint64_t pc, bool return_address)
{
    if (s->has_table) {
        uint64_t v;
        size_t mi = return_address ? map_index_find(s->maps, pid, pc, time_ns) : MAP_INDEX_NONE;
        bool garbage = mi != MAP_INDEX_NONE && holds_no_code(&s->p->maps[mi]);
        if (!garbage && addr_table_get(&s->table, (uint64_t)pid << 1 | return_address, pc, &v))
            return (const struct sym_location *)(uintptr_t)v;
    }
    return from_maps(s, pid, time_ns, pc, return_address);
}

static void save_caches(struct symbolizer *s)
{
    for (size_t i = 0; i < s->nbins; i++)
        symcache_save(s->bins[i].cache);
}

/* Which (process, stack, maps) a stack was walked in: the first by stack
 * id, 16 bytes a stack, any other (a stack shared by processes, or maps
 * that changed) in a table, whose 32-byte slots for every stack made most
 * of a large profile's report (issue 19). */
struct walked_first {
    uint64_t epoch;
    uint32_t pid;
    bool set;
};

struct walked {
    struct walked_first *first; /* by stack id */
    struct addr_table others;
};

/* Whether STACK was walked in PID with the maps of EPOCH; it is, after. */
static bool walked_before(struct walked *w, uint32_t pid, uint32_t stack, uint64_t epoch)
{
    struct walked_first *f = &w->first[stack];
    if (!f->set) {
        *f = (struct walked_first){epoch, pid, true};
        return false;
    }
    if (f->pid == pid && f->epoch == epoch)
        return true;
    uint64_t key = (uint64_t)pid << 32 | stack, v;
    if (addr_table_get(&w->others, key, epoch, &v))
        return true;
    addr_table_put(&w->others, key, epoch, 1);
    return false;
}

void symbolizer_prepare(struct symbolizer *s)
{
    const struct profile *p = s->p;
    struct progress *pb = progress_start("symbolizing", p->nsamples, s->progress);
    /* A stack seen again in the same process with the same maps names the
     * same frames: walk it once. */
    struct walked walked = {xcalloc(p->nstacks ? p->nstacks : 1, sizeof(*walked.first)), {0}};
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *smp = &p->samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            if (th->stack == 0 || th->stack >= p->nstacks)
                continue;
            uint64_t epoch = s->from_table ? 0 : map_index_epoch(s->maps, th->pid, smp->time_ns);
            if (walked_before(&walked, th->pid, th->stack, epoch))
                continue;
            const struct prof_stack *st = &p->stacks[th->stack];
            for (uint32_t k = 0; k < st->depth; k++)
                symbolizer_resolve(s, th->pid, smp->time_ns, st->pcs[k], k > 0);
        }
        if ((i & 255) == 0)
            progress_update(pb, i);
    }
    free(walked.first);
    addr_table_free(&walked.others);
    progress_end(pb);
    save_caches(s);
}

void symbolizer_free(struct symbolizer *s)
{
    if (!s)
        return;
    save_caches(s);
    for (size_t i = 0; i < s->nbins; i++) {
        dwfl_reader_close(s->bins[i].reader);
        symcache_free(s->bins[i].cache);
    }
    free(s->bins);
    map_index_free(s->maps);
    free(s->bin_of_map);
    free(s->id_of_map);
    addr_table_free(&s->locs);
    addr_table_free(&s->table);
    addr_table_free(&s->jit_locs);
    jit_symbols_free(s->jit);
    kallsyms_free(s->kallsyms);
    binary_finder_free(s->finder);
    free(s->cache_dir);
    strpool_free(s->pool);
    free(s);
}
