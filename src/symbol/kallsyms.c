/* kallsyms.c - see kallsyms.h */
#include "symbol/kallsyms.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far more than any kernel's symbol list (about 10 MB). */
#define KALLSYMS_MAX_BYTES (256u << 20)

struct ksym {
    uint64_t addr;
    uint32_t name; /* offset into names */
};

struct kallsyms {
    struct ksym *syms;
    size_t n;
    char *names;
    uint64_t text; /* _text (or _stext), 0 if absent */
};

static int by_addr(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* "ADDR TYPE NAME [MODULE]" lines; only text symbols (t, T) name code. */
static void parse(struct kallsyms *k, char *text, size_t len)
{
    size_t cap = 0, names_len = 0, names_cap = 0;
    for (char *line = text; line < text + len;) {
        char *eol = memchr(line, '\n', (size_t)(text + len - line));
        if (!eol)
            eol = text + len;
        *eol = '\0';
        char *end;
        uint64_t addr = strtoull(line, &end, 16);
        if (end != line && end[0] == ' ' && (end[1] == 't' || end[1] == 'T') && end[2] == ' ') {
            const char *name = end + 3;
            size_t nlen = strcspn(name, " \t");
            if (strncmp(name, "_text", nlen) == 0 && nlen == 5)
                k->text = addr;
            else if (!k->text && strncmp(name, "_stext", nlen) == 0 && nlen == 6)
                k->text = addr;
            k->syms = xgrow(k->syms, &cap, k->n + 1, sizeof(*k->syms));
            k->names = xgrow(k->names, &names_cap, names_len + nlen + 1, 1);
            memcpy(k->names + names_len, name, nlen);
            k->names[names_len + nlen] = '\0';
            k->syms[k->n++] = (struct ksym){addr, (uint32_t)names_len};
            names_len += nlen + 1;
        }
        line = eol + 1;
    }
}

struct kallsyms *kallsyms_load(void)
{
    const char *path = getenv("PTPROF_KALLSYMS");
    FILE *f = fopen(path && *path ? path : "/proc/kallsyms", "re");
    if (!f)
        return NULL;
    /* A proc file has no size: read it to its end (tens of MB at most). */
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        text = xgrow(text, &cap, len + 65536, 1);
        got = fread(text + len, 1, cap - len, f);
        len += got;
    } while (got > 0 && len < KALLSYMS_MAX_BYTES);
    fclose(f);
    struct kallsyms *k = xcalloc(1, sizeof(*k));
    parse(k, text, len);
    free(text);
    qsort(k->syms, k->n, sizeof(*k->syms), by_addr);
    /* Hidden addresses read as zeros: nothing can be named. */
    if (k->n == 0 || k->syms[k->n - 1].addr == 0) {
        kallsyms_free(k);
        return NULL;
    }
    return k;
}

bool kallsyms_same_kernel(const struct kallsyms *k, uint64_t start)
{
    return k && k->text != 0 && k->text == start;
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *start)
{
    if (!k || k->n == 0 || addr < k->syms[0].addr)
        return NULL;
    size_t lo = 0, hi = k->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    if (lo + 1 == k->n && addr - k->syms[lo].addr > (1u << 20))
        return NULL; /* far past the last symbol: not the kernel's text */
    *start = k->syms[lo].addr;
    return k->names + k->syms[lo].name;
}

void kallsyms_free(struct kallsyms *k)
{
    if (!k)
        return;
    free(k->syms);
    free(k->names);
    free(k);
}
