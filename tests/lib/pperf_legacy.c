/* pperf_legacy.c - see pperf_legacy.h. */
#include "pperf_legacy.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void set_base_name(struct pperf_map *m, const char *path)
{
    static const char deleted[] = " (deleted)";
    size_t len = strlen(path), dlen = sizeof(deleted) - 1;
    if (len > dlen && strcmp(path + len - dlen, deleted) == 0)
        len -= dlen;
    size_t base = len;
    while (base > 0 && path[base - 1] != '/')
        base--;
    size_t n = len - base < PPERF_LABEL_SIZE - 1 ? len - base : PPERF_LABEL_SIZE - 1;
    memset(m->label, 0, sizeof(m->label));
    memcpy(m->label, path + base, n);
}

static bool same_file(const struct map_entry *a, const struct map_entry *b)
{
    return a->inode == b->inode && strcmp(a->path, b->path) == 0;
}

static void append(struct pperf_map **out, size_t *count, const struct pperf_map *m)
{
    struct pperf_map *grown = realloc(*out, (*count + 1) * sizeof(**out));
    if (!grown)
        abort();
    *out = grown;
    grown[(*count)++] = *m;
}

size_t legacy_pperf_maps(const struct map_list *maps, struct pperf_map **out)
{
    const struct map_entry *e = maps->entries;
    size_t count = 0;
    *out = NULL;
    for (size_t i = 0; i < maps->count; i++) {
        struct pperf_map m;
        if (strcmp(e[i].path, "[vdso]") == 0) {
            m.address = e[i].start;
            m.size = e[i].end - e[i].start;
            set_base_name(&m, e[i].path);
            append(out, &count, &m);
            continue;
        }
        if (e[i].path[0] == '\0' || e[i].path[0] == '[' || e[i].offset != 0)
            continue;
        /* One load: the offset-0 mapping and the following mappings of the
         * same file, up to the next one at offset 0. */
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
            continue;
        m.address = e[first].start;
        m.size = exec_end - e[first].start;
        set_base_name(&m, e[first].path);
        append(out, &count, &m);
    }
    return count;
}
