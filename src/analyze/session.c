/* session.c - see session.h */
#include "analyze/session.h"
#include "analyze/aggregate.h"
#include "analyze/calltree.h"
#include "format/load.h"
#include "interop/gmon.h"
#include "symbol/binary_finder.h"
#include "symbol/symbolizer.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const char *display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static const struct sym_location *resolve(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t pc,
                                          bool return_address)
{
    return symbolizer_resolve(ctx, pid, time_ns, pc, return_address);
}

struct symbolizer *session_symbolizer(const char *path, const struct profile *prof,
                                      const struct session_options *opts)
{
    char **dirs;
    size_t ndirs = binary_search_dirs(opts->search_dirs, opts->nsearch_dirs, path, &dirs);
    struct symbolizer_options so = {
        .search_dirs = (const char *const *)dirs,
        .nsearch_dirs = ndirs,
        .binaries = opts->binaries,
        .nbinaries = opts->nbinaries,
        .cache = opts->cache,
        .progress = opts->progress,
    };
    /* The symbolizer copies the directory list it keeps. */
    struct symbolizer *sym = symbolizer_new(prof, &so);
    symbolizer_prepare(sym);
    binary_search_dirs_free(dirs, ndirs);
    return sym;
}

/* Above this share of cut stacks (in percent), analyses warn. */
#define CUT_STACKS_WARN_PERCENT 1.0

/* What would have kept the whole stack, by what recorded the profile.  The
 * kernel copies a perf sample's stack, under 64 KiB whatever is asked, and
 * its frame-pointer chains stop at kernel.perf_event_max_stack; the ptrace
 * engine reads the stopped thread's whole stack. */
static const char *cut_advice(const struct profile *prof)
{
    const char *engine = profile_meta(prof, "engine");
    bool perf = (engine && strcmp(engine, "perf") == 0) ||
                (prof->format && strcmp(prof->format, "perf-data") == 0);
    if (perf)
        return ": the kernel copies under 64 KiB of stack per sample; record with ptprof record "
               "--engine ptrace, which reads the whole stack (with -g fp where the program keeps "
               "frame pointers, at less cost)";
    if (profile_meta(prof, "stack_size"))
        return ": record with a larger --stack-size, or -g fp where the program keeps frame "
               "pointers";
    return "";
}

/* Stacks that lost their outer frames (cut at the end of the recorder's
 * copy, a depth limit) charge their callers to nobody: say so, once per
 * file (some commands walk a file several times). */
static void warn_cut_stacks(const char *path, const struct profile *prof)
{
    static char *warned[16];
    static size_t nwarned;
    uint64_t cut = profile_truncated_stacks(prof), all = 0;
    for (size_t i = 0; cut && i < prof->nsamples; i++)
        all += prof->samples[i].nthreads;
    double pct = all ? 100.0 * (double)cut / (double)all : 0.0;
    if (pct <= CUT_STACKS_WARN_PERCENT)
        return;
    for (size_t i = 0; i < nwarned; i++)
        if (strcmp(warned[i], path) == 0)
            return;
    if (nwarned < sizeof(warned) / sizeof(warned[0]))
        warned[nwarned++] = xstrdup(path);
    pt_warn("%s: %.1f%% of the thread samples (%llu of %llu) have stacks cut short: their outer "
            "callers are missing (the call tree shows them under [stack cut])%s",
            strcmp(path, "-") == 0 ? "<stdin>" : path, pct, (unsigned long long)cut,
            (unsigned long long)all, cut_advice(prof));
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
        pt_err("%s: %s", display_name(path), error ? error : "failed");
    free(error);
    symbolizer_free(sym);
    return rc;
}

int session_walk_arcs(const char *path, const struct profile *prof,
                      const struct session_options *opts, struct strtab *keys, struct strtab *names,
                      void (*fn)(void *ctx, const struct walk_arc *a), void *ctx)
{
    if (prof->narcs == 0)
        return 0;
    struct symbolizer *sym = session_symbolizer(path, prof, opts);
    struct frame_resolver r = {resolve, sym};
    int rc = walk_arcs(prof, &r, &opts->walk, keys, names, fn, ctx);
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

struct binary_search session_binary_search(const struct session_options *opts)
{
    return (struct binary_search){
        .dirs = opts->search_dirs,
        .ndirs = opts->nsearch_dirs,
        .binaries = opts->binaries,
        .nbinaries = opts->nbinaries,
    };
}

int session_load(const char *path, const struct session_options *opts, struct profile *out)
{
    /* Arrays that grow by doubling (a profile's samples, the walk's paths)
     * from 1 MB on are mapped, so a realloc remaps them instead of leaving
     * the old copy as a hole in the heap: glibc's moving threshold let
     * such holes hold 60 MB on a 34 MB pprof of tiny samples (issue 19). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* A reader that lays the profile out by its binaries (the original
     * raw format's maps) finds them as the symbolizer will. */
    struct binary_search search = session_binary_search(opts);
    if (profile_load_with(path, &search, out) != 0)
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

int session_metric(const char *path, const char *name, const struct walk_totals *t,
                   const struct value_columns *columns, struct metric *out)
{
    if (!name) {
        if (t->default_metric[0] && metric_resolve(t->default_metric, columns, out) == 0)
            return 0;
        name = "cpu";
    }
    if (metric_resolve(name, columns, out) == 0)
        return 0;
    char list[1024];
    metric_list(columns, list, sizeof(list));
    pt_err("%s: no metric '%s' in the profile (it has %s)", display_name(path), name, list);
    return -1;
}

int session_report_file(const char *path, const struct session_options *opts, const char *metric,
                        struct report *out)
{
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct aggregate *a = aggregate_new(keys, &opts->walk.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct walk_totals t;
    struct metric m;
    int rc = session_walk_file(path, opts, keys, names, &v, &t);
    if (rc == 0)
        rc = session_metric(path, metric, &t, aggregate_columns(a), &m);
    if (rc == 0)
        aggregate_report(a, &t, &m, out);
    else
        memset(out, 0, sizeof(*out));
    aggregate_free(a);
    strtab_free(names);
    strtab_free(keys);
    return rc;
}

struct calltree *session_calltree(char *const *files, size_t nfiles,
                                  const struct session_options *opts, const char *metric,
                                  double cut, struct strtab *keys, struct strtab *names)
{
    struct calltree *t = calltree_new(keys, &opts->walk.keys);
    calltree_keep_wide(t, cut);
    struct walk_visitor v = calltree_visitor(t);
    struct walk_totals first;
    memset(&first, 0, sizeof(first));
    for (size_t i = 0; i < nfiles; i++) {
        struct walk_totals wt;
        if (session_walk_file(files[i], opts, keys, names, &v, &wt) != 0) {
            calltree_free(t);
            return NULL;
        }
        if (i == 0)
            first = wt;
        calltree_add_run(t, &wt);
    }
    struct metric m;
    if (session_metric(nfiles ? files[0] : "-", metric, &first, &t->columns, &m) != 0) {
        calltree_free(t);
        return NULL;
    }
    calltree_finish(t, &m);
    return t;
}
