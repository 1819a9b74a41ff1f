/*
 * pperf_maps.c - pperf_maps_from_proc() of pperf.h: /proc/PID/maps entries
 * turned into the raw format's map table, as the original sampler wrote it.
 *
 * The original listed every executable mapping of a file, with its start,
 * its size and the base name of the path /proc/PID/maps gives (its
 * vmmap.h takes basename()).  Its post-processing opens each label as
 * SEARCH_DIR/LABEL and stops on one it cannot find, so nothing bracketed
 * ([vdso], [vsyscall]...) may appear, and it places a PC through the
 * executable segment that mapping holds.
 */
#include "interop/pperf.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <string.h>

/* Anonymous memory (a JIT's code) has no path; the kernel names pseudo
 * mappings in brackets.  Neither is a file the original can open. */
static bool is_file(const char *path)
{
    return path[0] != '\0' && path[0] != '[';
}

size_t pperf_maps_from_proc(const struct map_list *maps, struct pperf_map **out)
{
    struct pperf_map *res = NULL;
    size_t count = 0, cap = 0;
    for (size_t i = 0; i < maps->count; i++) {
        const struct map_entry *e = &maps->entries[i];
        if (!(e->perms & MAP_PERM_EXEC) || !is_file(e->path))
            continue;
        res = xgrow(res, &cap, count + 1, sizeof(*res));
        struct pperf_map *m = &res[count++];
        m->address = e->start;
        m->size = e->end - e->start;
        /* The base name, NUL padded; a longer one keeps its first 255
         * bytes and the terminator. */
        const char *slash = strrchr(e->path, '/');
        const char *base = slash ? slash + 1 : e->path;
        memset(m->label, 0, sizeof(m->label));
        memcpy(m->label, base, strnlen(base, sizeof(m->label) - 1));
    }
    *out = res;
    return count;
}
