/* maps.c - see maps.h */
#include "model/maps.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *parse_hex(const char *p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = p;
    while (p < end) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            break;
        if (v >> 60)
            return NULL; /* more than 64 bits */
        v = v << 4 | (uint64_t)d;
        p++;
    }
    if (p == start)
        return NULL;
    *out = v;
    return p;
}

static const char *parse_dec(const char *p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = p;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return NULL;
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p == start)
        return NULL;
    *out = v;
    return p;
}

static const char *expect(const char *p, const char *end, char c)
{
    return (p && p < end && *p == c) ? p + 1 : NULL;
}

/* One line: "start-end perms offset major:minor inode   path" */
static int parse_line(const char *p, const char *end, struct map_entry *e)
{
    uint64_t major, minor;
    p = parse_hex(p, end, &e->start);
    p = expect(p, end, '-');
    p = p ? parse_hex(p, end, &e->end) : NULL;
    p = expect(p, end, ' ');
    if (!p || end - p < 4)
        return -1;
    e->perms = (p[0] == 'r' ? MAP_PERM_READ : 0) | (p[1] == 'w' ? MAP_PERM_WRITE : 0) |
               (p[2] == 'x' ? MAP_PERM_EXEC : 0) | (p[3] == 's' ? MAP_PERM_SHARED : 0);
    p = expect(p + 4, end, ' ');
    p = p ? parse_hex(p, end, &e->offset) : NULL;
    p = expect(p, end, ' ');
    p = p ? parse_hex(p, end, &major) : NULL;
    p = expect(p, end, ':');
    p = p ? parse_hex(p, end, &minor) : NULL;
    p = expect(p, end, ' ');
    p = p ? parse_dec(p, end, &e->inode) : NULL;
    if (!p || e->end < e->start)
        return -1;
    e->dev_major = (uint32_t)major;
    e->dev_minor = (uint32_t)minor;
    while (p < end && *p == ' ')
        p++;
    size_t n = (size_t)(end - p);
    e->path = xmalloc(n + 1);
    memcpy(e->path, p, n);
    e->path[n] = '\0';
    return 0;
}

int maps_parse(const char *text, size_t len, struct map_list *out)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if (line_end > p) {
            struct map_entry e = {0};
            if (parse_line(p, line_end, &e) != 0)
                return -1;
            out->entries = xgrow(out->entries, &out->capacity, out->count + 1, sizeof(e));
            out->entries[out->count++] = e;
        }
        p = line_end + 1;
    }
    return 0;
}

void maps_clear(struct map_list *maps)
{
    for (size_t i = 0; i < maps->count; i++)
        free(maps->entries[i].path);
    free(maps->entries);
    maps->entries = NULL;
    maps->count = maps->capacity = 0;
}

void maps_add_unique(struct map_list *maps, const struct map_entry *e)
{
    for (size_t i = 0; i < maps->count; i++) {
        const struct map_entry *m = &maps->entries[i];
        if (m->start == e->start && m->end == e->end && m->offset == e->offset &&
            strcmp(m->path, e->path) == 0)
            return;
    }
    maps->entries = xgrow(maps->entries, &maps->capacity, maps->count + 1, sizeof(*e));
    struct map_entry copy = *e;
    copy.path = xstrdup(e->path);
    maps->entries[maps->count++] = copy;
}

void maps_replace(struct map_list *maps, const struct map_entry *e)
{
    size_t kept = 0, at = 0;
    for (size_t i = 0; i < maps->count; i++) {
        struct map_entry *m = &maps->entries[i];
        if (m->start < e->end && e->start < m->end) {
            free(m->path);
            continue;
        }
        if (m->start < e->start)
            at = kept + 1;
        maps->entries[kept++] = *m;
    }
    maps->count = kept;
    maps->entries = xgrow(maps->entries, &maps->capacity, maps->count + 1, sizeof(*e));
    memmove(&maps->entries[at + 1], &maps->entries[at], (maps->count - at) * sizeof(*e));
    maps->entries[at] = *e;
    maps->entries[at].path = xstrdup(e->path);
    maps->count++;
}
