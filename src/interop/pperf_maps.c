/*
 * pperf_maps.c - pperf_maps_from_proc() of pperf.h: /proc/PID/maps entries
 * turned into the raw format's one-entry-per-loaded-file map table.
 *
 * A reader of the format subtracts Address from a PC to get an offset in
 * the ELF file, so Address must be where the file's offset 0 is mapped, not
 * where its code starts; one entry covers the file up to its last code byte.
 */
#include "interop/pperf.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <string.h>

static const char deleted_suffix[] = " (deleted)";

/* The kernel names pseudo mappings in brackets: [heap], [stack], [vvar],
 * [vsyscall], [anon:NAME]...  Of those only the vDSO holds code we can
 * symbolize later (from its captured image). */
static bool is_pseudo(const char *path)
{
    return path[0] == '[';
}

static void set_label(struct pperf_map *m, const char *path)
{
    size_t len = strlen(path);
    const size_t slen = sizeof(deleted_suffix) - 1;
    if (len > slen && strcmp(path + len - slen, deleted_suffix) == 0)
        len -= slen;
    const char *base = path;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            base = path + i + 1;
    size_t n = len - (size_t)(base - path);
    if (n > PPERF_LABEL_SIZE - 1)
        n = PPERF_LABEL_SIZE - 1;
    memset(m->label, 0, sizeof(m->label));
    memcpy(m->label, base, n);
}

static bool same_file(const struct map_entry *a, const struct map_entry *b)
{
    return a->inode == b->inode && strcmp(a->path, b->path) == 0;
}

size_t pperf_maps_from_proc(const struct map_list *maps, struct pperf_map **out)
{
    struct pperf_map *res = NULL;
    size_t count = 0, cap = 0;
    const struct map_entry *e = maps->entries;

    for (size_t i = 0; i < maps->count; i++) {
        struct pperf_map m;
        if (strcmp(e[i].path, "[vdso]") == 0) {
            m.address = e[i].start;
            m.size = e[i].end - e[i].start;
            set_label(&m, e[i].path);
        } else if (e[i].path[0] == '\0' || is_pseudo(e[i].path) || e[i].offset != 0) {
            /* Anonymous memory, pseudo mappings, and file pieces whose
             * offset-0 mapping we never saw: nothing a PC can resolve to. */
            continue;
        } else {
            /* One load of a file: its offset-0 mapping and the following
             * mappings of the same file, up to a new load (offset 0 again). */
            uint64_t exec_end = 0;
            size_t j = i;
            do {
                if (e[j].perms & MAP_PERM_EXEC)
                    exec_end = e[j].end;
                j++;
            } while (j < maps->count && e[j].offset != 0 && same_file(&e[j], &e[i]));
            size_t first = i;
            i = j - 1;
            if (exec_end == 0)
                continue; /* data files, fonts, locale archives */
            m.address = e[first].start;
            m.size = exec_end - e[first].start;
            set_label(&m, e[first].path);
        }
        res = xgrow(res, &cap, count + 1, sizeof(*res));
        res[count++] = m;
    }
    *out = res;
    return count;
}
