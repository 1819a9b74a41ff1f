/*
 * python.c - the CPython module behind interp.h: probe (find the runtime,
 * its version, its layout), describe, read a thread, tell the eval loop's
 * frames.  The parts are in python.h.
 */
#include "record/interp/python.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *python_probe(pid_t pid, const struct map_list *maps, char *why, size_t whylen)
{
    struct python_runtime *rt = xcalloc(1, sizeof(*rt));
    rt->pid = pid;
    if (!python_find(pid, maps, &rt->img, why, whylen))
        goto fail;
    if (!remote_read(pid, rt->img.version_addr, &rt->version, sizeof(rt->version))) {
        snprintf(why, whylen, "%s: cannot read Py_Version from the process", rt->img.path);
        goto fail;
    }
    if (!python_layout_for(pid, rt->version, rt->img.runtime, &rt->layout, why, whylen)) {
        size_t n = strlen(why);
        snprintf(why + n, whylen - n, " (%s)", rt->img.path);
        goto fail;
    }
    snprintf(rt->description, sizeof(rt->description), "CPython %u.%u.%u",
             PYTHON_MAJOR(rt->version), PYTHON_MINOR(rt->version), PYTHON_MICRO(rt->version));
    rt->codes = python_code_cache_new();
    return rt;
fail:
    free(rt);
    return NULL;
}

static bool python_still_mapped(const void *runtime, const struct map_list *maps)
{
    const struct python_runtime *rt = runtime;
    for (size_t i = 0; i < maps->count; i++) {
        const struct map_entry *e = &maps->entries[i];
        if (e->start == rt->img.map_start && e->inode == rt->img.inode &&
            e->offset == rt->img.map_offset)
            return true;
    }
    return false;
}

static const char *python_describe(const void *runtime)
{
    return ((const struct python_runtime *)runtime)->description;
}

static bool python_is_eval_pc(const void *runtime, uint64_t pc, bool ra)
{
    const struct python_image *img = &((const struct python_runtime *)runtime)->img;
    /* A return address is looked up at the call, the byte before it. */
    uint64_t at = ra && pc > 0 ? pc - 1 : pc;
    return (at >= img->eval_lo && at < img->eval_hi) ||
           (at >= img->eval_cold_lo && at < img->eval_cold_hi);
}

static void python_release(void *runtime)
{
    struct python_runtime *rt = runtime;
    python_code_cache_free(rt->codes);
    free(rt->walk);
    free(rt);
}

const struct interp_ops python_interp_ops = {
    .name = "python",
    .probe = python_probe,
    .still_mapped = python_still_mapped,
    .describe = python_describe,
    .read_thread = python_read_thread,
    .finish_thread = python_finish_thread,
    .is_eval_pc = python_is_eval_pc,
    .release = python_release,
};
