/* binary_finder.c - see binary_finder.h */
#include "symbol/binary_finder.h"
#include "model/profile.h"
#include "symbol/build_id.h"
#include "model/maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

struct dirs {
    char **v;
    size_t n, cap;
};

struct binary_finder {
    struct dirs search;
    struct dirs given;  /* --binary files standing for the binaries of their base name */
    char *program;      /* the --binary file standing for the profile's program, or NULL */
    char *program_path; /* ...recorded as this path */
    struct dirs system; /* standard library directories, filled on first use */
    bool system_done;
    struct dirs debug_roots;
    char *debuginfo_path;
};

static void dirs_add(struct dirs *d, const char *dir, size_t len, bool must_exist)
{
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len == 0)
        return;
    char *s = xasprintf("%.*s", (int)len, dir);
    for (size_t i = 0; i < d->n; i++) {
        if (strcmp(d->v[i], s) == 0) {
            free(s);
            return;
        }
    }
    struct stat st;
    if (must_exist && (stat(s, &st) != 0 || !S_ISDIR(st.st_mode))) {
        free(s);
        return;
    }
    d->v = xgrow(d->v, &d->cap, d->n + 1, sizeof(*d->v));
    d->v[d->n++] = s;
}

static void dirs_add_list(struct dirs *d, const char *list, bool must_exist)
{
    while (list && *list) {
        size_t n = strcspn(list, ":");
        dirs_add(d, list, n, must_exist);
        list += n + (list[n] == ':');
    }
}

static void dirs_free(struct dirs *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
}

/* The dynamic linker's configuration lists the library directories of
 * this system (multiarch ones included); ldconfig is not run. */
static void add_ld_so_conf(struct dirs *d, const char *path, int depth)
{
    if (depth > 4)
        return;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[PATH_MAX + 16];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        char *p = line + strspn(line, " \t");
        size_t n = strlen(p);
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = '\0';
        if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
            const char *pat = p + 8 + strspn(p + 8, " \t");
            char *full = pat[0] == '/' ? xstrdup(pat) : xasprintf("/etc/%s", pat);
            glob_t g;
            if (glob(full, 0, NULL, &g) == 0)
                for (size_t i = 0; i < g.gl_pathc; i++)
                    add_ld_so_conf(d, g.gl_pathv[i], depth + 1);
            globfree(&g);
            free(full);
        } else if (p[0] == '/') {
            dirs_add(d, p, strcspn(p, "= \t"), true);
        }
    }
    fclose(f);
}

static void add_multiarch(struct dirs *d)
{
    struct utsname u;
    if (uname(&u) != 0)
        return;
    const char *m = u.machine;
    char *triplet;
    if (m[0] == 'i' && strcmp(m + 2, "86") == 0)
        triplet = xstrdup("i386-linux-gnu");
    else if (strncmp(m, "armv7", 5) == 0)
        triplet = xstrdup("arm-linux-gnueabihf");
    else
        triplet = xasprintf("%s-linux-gnu", m);
    static const char *const roots[] = {"/lib", "/usr/lib", "/usr/local/lib"};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        char *dir = xasprintf("%s/%s", roots[i], triplet);
        dirs_add(d, dir, strlen(dir), true);
        free(dir);
    }
    free(triplet);
}

static const struct dirs *system_dirs(struct binary_finder *bf)
{
    if (!bf->system_done) {
        bf->system_done = true;
        add_ld_so_conf(&bf->system, "/etc/ld.so.conf", 0);
        add_multiarch(&bf->system);
        dirs_add_list(&bf->system, "/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib", true);
    }
    return &bf->system;
}

struct binary_finder *binary_finder_new(const char *const *dirs, size_t ndirs)
{
    struct binary_finder *bf = xcalloc(1, sizeof(*bf));
    for (size_t i = 0; i < ndirs; i++)
        if (dirs[i])
            dirs_add(&bf->search, dirs[i], strlen(dirs[i]), false);
    const char *roots = getenv("PTPROF_DEBUG_ROOT");
    dirs_add_list(&bf->debug_roots, roots && *roots ? roots : DEFAULT_DEBUG_ROOT, false);
    /* Absolute roots are also where libdwfl looks build-ids up. */
    size_t len = strlen(":.debug");
    for (size_t i = 0; i < bf->debug_roots.n; i++)
        len += 1 + strlen(bf->debug_roots.v[i]);
    bf->debuginfo_path = xmalloc(len + 1);
    strcpy(bf->debuginfo_path, ":.debug");
    for (size_t i = 0; i < bf->debug_roots.n; i++) {
        strcat(bf->debuginfo_path, ":");
        strcat(bf->debuginfo_path, bf->debug_roots.v[i]);
    }
    return bf;
}

char **binary_finder_debuginfo_path(struct binary_finder *bf)
{
    return &bf->debuginfo_path;
}

void binary_finder_free(struct binary_finder *bf)
{
    if (!bf)
        return;
    dirs_free(&bf->search);
    dirs_free(&bf->given);
    free(bf->program);
    free(bf->program_path);
    dirs_free(&bf->system);
    dirs_free(&bf->debug_roots);
    free(bf->debuginfo_path);
    free(bf);
}

char *binary_finder_debug_file(const struct binary_finder *bf, const uint8_t *id, size_t len)
{
    if (len < 2)
        return NULL;
    char hex[2 * PROF_BUILD_ID_MAX + 1];
    build_id_hex(id, len > PROF_BUILD_ID_MAX ? PROF_BUILD_ID_MAX : len, hex);
    for (size_t i = 0; i < bf->debug_roots.n; i++) {
        char *p = xasprintf("%s/.build-id/%.2s/%s.debug", bf->debug_roots.v[i], hex, hex + 2);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            return p;
        free(p);
    }
    return NULL;
}

struct search {
    const uint8_t *id;
    size_t len;
    struct bf_result *out;
    bool seen_non_elf;
};

/* True when CAND settles the search (found). */
static bool try_candidate(struct search *s, char *cand)
{
    struct stat st;
    if (stat(cand, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(cand);
        return false;
    }
    uint8_t id[PROF_BUILD_ID_MAX];
    int n = build_id_read(cand, id, sizeof(id));
    if (n < 0) {
        /* Not ELF (or unreadable): remember it for the message. */
        if (!s->seen_non_elf && s->out->status == BF_MISSING) {
            s->seen_non_elf = true;
            s->out->status = BF_NOT_ELF;
            s->out->path = cand;
        } else {
            free(cand);
        }
        return false;
    }
    if (s->len == 0 || ((size_t)n == s->len && memcmp(id, s->id, s->len) == 0)) {
        free(s->out->path);
        s->out->status = BF_FOUND;
        s->out->path = cand;
        s->out->id_len = (size_t)n;
        memcpy(s->out->id, id, (size_t)n);
        return true;
    }
    if (s->out->status != BF_MISMATCH) {
        free(s->out->path);
        s->out->status = BF_MISMATCH;
        s->out->path = cand;
    } else {
        free(cand);
    }
    return false;
}

void binary_finder_find(struct binary_finder *bf, const char *path, const uint8_t *id, size_t len,
                        struct bf_result *out)
{
    *out = (struct bf_result){.status = BF_MISSING};
    struct search s = {.id = id, .len = len, .out = out};
    static const char deleted[] = " (deleted)";
    size_t plen = strlen(path), dlen = sizeof(deleted) - 1;
    if (plen > dlen && strcmp(path + plen - dlen, deleted) == 0)
        plen -= dlen;
    char *clean = xasprintf("%.*s", (int)plen, path);
    const char *slash = strrchr(clean, '/');
    const char *base = slash ? slash + 1 : clean;

    /* A build-id proves the recorded path right; without one, the file
     * at that path on this machine may be another machine's build, and a
     * directory the user points at knows better. */
    bool recorded_first = len > 0;
    bool done = recorded_first && clean[0] == '/' && try_candidate(&s, xstrdup(clean));
    for (size_t i = 0; !done && base[0] && i < bf->search.n; i++)
        done = try_candidate(&s, xasprintf("%s/%s", bf->search.v[i], base));
    if (!done && !recorded_first && clean[0] == '/')
        done = try_candidate(&s, xstrdup(clean));
    const struct dirs *sys = done || !base[0] ? NULL : system_dirs(bf);
    for (size_t i = 0; !done && sys && i < sys->n; i++)
        done = try_candidate(&s, xasprintf("%s/%s", sys->v[i], base));
    free(clean);
}

/* --- the files the user named ---------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The path of the first process's executable, as its maps record it. */
static const char *program_path(const struct profile *p)
{
    if (p->nprocesses && p->processes[0].exe && p->processes[0].exe[0])
        return p->processes[0].exe;
    uint32_t pid = p->nprocesses ? p->processes[0].pid : 0;
    for (size_t i = 0; i < p->nmaps; i++)
        if (p->maps[i].pid == pid && (p->maps[i].perms & MAP_PERM_EXEC) && p->maps[i].path[0] &&
            p->maps[i].path[0] != '[')
            return p->maps[i].path;
    return NULL;
}

void binary_finder_give(struct binary_finder *bf, const struct profile *p, const char *const *files,
                        size_t n, bool warn)
{
    for (size_t g = 0; g < n; g++) {
        const char *file = files[g];
        bool named = false;
        for (size_t i = 0; i < p->nmaps && !named; i++)
            named = strcmp(base_name(p->maps[i].path), base_name(file)) == 0;
        const char *prog = named || bf->program ? NULL : program_path(p);
        if (named) {
            bf->given.v = xgrow(bf->given.v, &bf->given.cap, bf->given.n + 1, sizeof(char *));
            bf->given.v[bf->given.n++] = xstrdup(file);
        } else if (prog) {
            bf->program = xstrdup(file);
            bf->program_path = xstrdup(prog);
        } else if (warn) {
            pt_warn("--binary %s: the profile has no binary of that name%s", file,
                    bf->program ? " (another one is already the program)" : "");
        }
    }
}

const char *binary_finder_given(const struct binary_finder *bf, const char *path)
{
    for (size_t g = 0; g < bf->given.n; g++)
        if (strcmp(base_name(bf->given.v[g]), base_name(path)) == 0)
            return bf->given.v[g];
    const char *prog = bf->program_path;
    if (prog && (strcmp(prog, path) == 0 || strcmp(base_name(prog), base_name(path)) == 0))
        return bf->program;
    return NULL;
}

size_t binary_search_dirs(const char *const *dirs, size_t ndirs, const char *profile, char ***out)
{
    char **v = xcalloc(ndirs + 2, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < ndirs; i++)
        v[n++] = xstrdup(dirs[i]);
    const char *slash = profile && strcmp(profile, "-") != 0 ? strrchr(profile, '/') : NULL;
    if (slash)
        v[n++] =
            slash == profile ? xstrdup("/") : xasprintf("%.*s", (int)(slash - profile), profile);
    v[n++] = xstrdup(".");
    *out = v;
    return n;
}

void binary_search_dirs_free(char **dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}
