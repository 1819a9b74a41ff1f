/* session.c - see session.h */
#include "analyze/session.h"
#include "analyze/aggregate.h"
#include "analyze/calltree.h"
#include "format/load.h"
#include "interop/gmon.h"
#include "symbol/symbolizer.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const struct sym_location *resolve(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t pc,
                                          bool return_address)
{
    return symbolizer_resolve(ctx, pid, time_ns, pc, return_address);
}

struct symbolizer *session_symbolizer(const char *path, const struct profile *prof,
                                      const struct session_options *opts)
{
    const char **dirs = xcalloc(opts->nsearch_dirs + 2, sizeof(*dirs));
    size_t ndirs = 0;
    for (size_t i = 0; i < opts->nsearch_dirs; i++)
        dirs[ndirs++] = opts->search_dirs[i];
    char *own = NULL;
    const char *slash = strrchr(path, '/');
    if (strcmp(path, "-") != 0 && slash)
        own = slash == path ? xstrdup("/") : xasprintf("%.*s", (int)(slash - path), path);
    if (own)
        dirs[ndirs++] = own;
    dirs[ndirs++] = ".";
    struct symbolizer_options so = {
        .search_dirs = dirs,
        .nsearch_dirs = ndirs,
        .binaries = opts->binaries,
        .nbinaries = opts->nbinaries,
        .cache = opts->cache,
        .progress = opts->progress,
    };
    /* The symbolizer copies the directory list it keeps. */
    struct symbolizer *sym = symbolizer_new(prof, &so);
    symbolizer_prepare(sym);
    free(own);
    free(dirs);
    return sym;
}

/* Above this share of cut stacks (in percent), analyses warn. */
#define CUT_STACKS_WARN_PERCENT 1.0

/* Stacks the recorder cut at the end of its copy lack their outer callers:
 * say so, once per file (some commands walk a file several times). */
static void warn_cut_stacks(const char *path, const struct profile *prof)
{
    static char *warned[16];
    static size_t nwarned;
    uint64_t with_stack, cut;
    profile_count_cut_stacks(prof, &with_stack, &cut);
    double pct = with_stack ? 100.0 * (double)cut / (double)with_stack : 0.0;
    if (pct <= CUT_STACKS_WARN_PERCENT)
        return;
    for (size_t i = 0; i < nwarned; i++)
        if (strcmp(warned[i], path) == 0)
            return;
    if (nwarned < sizeof(warned) / sizeof(warned[0]))
        warned[nwarned++] = xstrdup(path);
    pt_warn("%s: %.1f%% of the stacks (%llu of %llu) were cut at the end of the recorder's "
            "stack copy: their outer callers are missing (record with a larger --stack-size)",
            strcmp(path, "-") == 0 ? "<stdin>" : path, pct, (unsigned long long)cut,
            (unsigned long long)with_stack);
}

int session_walk_profile(const char *path, const struct profile *prof,
                         const struct session_options *opts, struct strtab *keys,
                         struct strtab *names, const struct walk_visitor *v,
                         struct walk_totals *totals)
{
    warn_cut_stacks(path, prof);
    struct symbolizer *sym = session_symbolizer(path, prof, opts);
    struct frame_resolver r = {resolve, sym};
    char *error = NULL;
    int rc = walk_profile(prof, &r, &opts->walk, keys, names, v, totals, &error);
    if (rc != 0)
        pt_err("%s: %s", strcmp(path, "-") == 0 ? "<stdin>" : path, error ? error : "failed");
    free(error);
    symbolizer_free(sym);
    return rc;
}

int session_use_binaries(const struct session_options *opts, struct profile *p)
{
    /* A gmon.out holds link-time addresses of one executable, laid out as
     * that executable says (interop/gmon.h). */
    if (opts->nbinaries > 0 && p->format && strcmp(p->format, "gmon") == 0)
        return gmon_set_binary(p, opts->binaries[0]);
    return 0;
}

int session_load(const char *path, const struct session_options *opts, struct profile *out)
{
    if (profile_load(path, out) != 0)
        return -1;
    return session_use_binaries(opts, out);
}

int session_walk_file(const char *path, const struct session_options *opts, struct strtab *keys,
                      struct strtab *names, const struct walk_visitor *v,
                      struct walk_totals *totals)
{
    struct profile prof;
    if (session_load(path, opts, &prof) != 0) {
        profile_free(&prof);
        return -1;
    }
    int rc = session_walk_profile(path, &prof, opts, keys, names, v, totals);
    profile_free(&prof);
    return rc;
}

int session_report_file(const char *path, const struct session_options *opts, enum metric m,
                        struct report *out)
{
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct aggregate *a = aggregate_new(keys, &opts->walk.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct walk_totals t;
    int rc = session_walk_file(path, opts, keys, names, &v, &t);
    if (rc == 0)
        aggregate_report(a, &t, m, out);
    else
        memset(out, 0, sizeof(*out));
    aggregate_free(a);
    strtab_free(names);
    strtab_free(keys);
    return rc;
}

struct calltree *session_calltree(char *const *files, size_t nfiles,
                                  const struct session_options *opts, enum metric m,
                                  struct strtab *keys, struct strtab *names)
{
    struct calltree *t = calltree_new(keys, &opts->walk.keys);
    struct walk_visitor v = calltree_visitor(t);
    for (size_t i = 0; i < nfiles; i++) {
        struct walk_totals wt;
        if (session_walk_file(files[i], opts, keys, names, &v, &wt) != 0) {
            calltree_free(t);
            return NULL;
        }
        calltree_add_run(t, &wt);
    }
    calltree_finish(t, m);
    return t;
}
