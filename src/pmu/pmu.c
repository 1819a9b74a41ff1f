/*
 * pmu.c - see pmu.h: the source registry, "-p" parsing and the calls the
 * recorder makes.
 *
 * Ownership between this file and the sources: a source's init() allocates
 * src->channels (xcalloc) and src->priv; release() frees priv and must cope
 * with a partially initialised source (priv may be NULL), because pmu_open()
 * calls it when init() fails.  src->channels and src itself are freed here.
 */
#include "pmu/pmu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/log.h"
#include "util/xalloc.h"

/* Defined one per file: pmu_none.c, pmu_rapl.c, pmu_file.c. */
extern const struct pmu_ops pmu_none_ops;
extern const struct pmu_ops pmu_rapl_ops;
extern const struct pmu_ops pmu_file_ops;

static const struct pmu_ops *const registry[] = {
    &pmu_none_ops,
    &pmu_rapl_ops,
    &pmu_file_ops,
    NULL,
};

const struct pmu_ops *const *pmu_sources(void)
{
    return registry;
}

const char *pmu_sysfs_root(void)
{
    /* Looked up on every call so tests can point it elsewhere at run time. */
    const char *root = getenv("PTPROF_SYSFS_ROOT");
    return root && *root ? root : "/sys";
}

static const struct pmu_ops *find_source(const char *name, size_t len)
{
    for (const struct pmu_ops *const *ops = registry; *ops; ops++) {
        if (strlen((*ops)->name) == len && memcmp((*ops)->name, name, len) == 0)
            return *ops;
    }
    return NULL;
}

static struct pmu_source *start(const struct pmu_ops *ops, const char *arg)
{
    struct pmu_source *src = xcalloc(1, sizeof(*src));
    src->ops = ops;
    if (ops->init(src, arg) != 0) {
        pmu_close(src);
        return NULL;
    }
    return src;
}

struct pmu_source *pmu_open(const char *spec)
{
    if (!spec || !*spec)
        return start(&pmu_none_ops, NULL);

    /* The name ends at the first colon; the rest (colons and all) is ARG. */
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    const struct pmu_ops *ops = find_source(spec, len);
    if (ops)
        return start(ops, colon && colon[1] ? colon + 1 : NULL);

    /*
     * The original sampler's -p took a powercap domain directory (or a file
     * to read).  Paths may contain colons ("intel-rapl:0"), so the whole
     * spec is the path.
     */
    struct stat st;
    if (stat(spec, &st) == 0)
        return start(S_ISDIR(st.st_mode) ? &pmu_rapl_ops : &pmu_file_ops, spec);

    if (strchr(spec, '/'))
        pt_err("-p '%s': not a PMU source, and cannot use it as a path: %s", spec, strerror(errno));
    else if (strncmp(spec, "intel-rapl", 10) == 0)
        pt_err("unknown PMU source '%.*s' in -p '%s' (did you mean -p rapl:%s?)", (int)len, spec,
               spec, spec);
    else
        pt_err("unknown PMU source '%.*s' in -p '%s' (sources: none, rapl, file; or an "
               "existing file or powercap domain directory)",
               (int)len, spec, spec);
    return NULL;
}

int pmu_read(struct pmu_source *src, double *values)
{
    return src->ops->read(src, values);
}

void pmu_close(struct pmu_source *src)
{
    if (!src)
        return;
    if (src->ops && src->ops->release)
        src->ops->release(src);
    free(src->channels);
    free(src);
}

uint32_t pmu_pperf_magic(const struct pmu_source *src)
{
    if (!src || src->nchannels == 0)
        return PMU_KIND_CUSTOM;
    enum pmu_kind kind = src->channels[0].kind;
    for (unsigned i = 1; i < src->nchannels; i++) {
        if (src->channels[i].kind != kind)
            return PMU_KIND_CUSTOM;
    }
    /* The original format knows only 0..3; an energy counter is "custom" there. */
    switch (kind) {
    case PMU_KIND_CURRENT:
    case PMU_KIND_VOLTAGE:
    case PMU_KIND_POWER:
        return (uint32_t)kind;
    default:
        return PMU_KIND_CUSTOM;
    }
}
