/* keys.c - see keys.h */
#include "analyze/keys.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const names[KEY_KIND_COUNT] = {
    [KEY_PC] = "pc",
    [KEY_BINARY] = "binary",
    [KEY_FILE] = "file",
    [KEY_PROCEDURE] = "procedure",
    [KEY_PROCEDURE_MANGLED] = "procedure_mangled",
    [KEY_SYMBOL] = "symbol",
    [KEY_LINE] = "line",
    [KEY_THREAD] = "thread",
};

const char *key_kind_name(enum key_kind kind)
{
    return kind < KEY_KIND_COUNT ? names[kind] : "?";
}

void key_spec_default(struct key_spec *spec)
{
    spec->kinds[0] = KEY_BINARY;
    spec->kinds[1] = KEY_PROCEDURE;
    spec->count = 2;
}

bool key_spec_has(const struct key_spec *spec, enum key_kind kind)
{
    for (size_t i = 0; i < spec->count; i++)
        if (spec->kinds[i] == kind)
            return true;
    return false;
}

int key_spec_parse(const char *list, struct key_spec *spec, char *err, size_t errlen)
{
    struct key_spec s = {.count = 0};
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < KEY_KIND_COUNT && !(strlen(names[k]) == n && strncmp(names[k], p, n) == 0))
            k++;
        if (k == KEY_KIND_COUNT) {
            snprintf(err, errlen,
                     "unknown key '%.*s' (pc, binary, file, procedure, "
                     "procedure_mangled, symbol, line, thread)",
                     (int)n, p);
            return -1;
        }
        if (key_spec_has(&s, (enum key_kind)k)) {
            snprintf(err, errlen, "key '%s' given twice", names[k]);
            return -1;
        }
        s.kinds[s.count++] = (enum key_kind)k;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    *spec = s;
    return 0;
}

char *key_spec_header(const struct key_spec *spec)
{
    size_t len = 1;
    for (size_t i = 0; i < spec->count; i++)
        len += strlen(names[spec->kinds[i]]) + 1;
    char *h = xmalloc(len);
    h[0] = '\0';
    for (size_t i = 0; i < spec->count; i++) {
        if (i)
            strcat(h, ":");
        strcat(h, names[spec->kinds[i]]);
    }
    return h;
}

static void put(char **buf, size_t *cap, size_t *len, const char *s, size_t n)
{
    *buf = xgrow(*buf, cap, *len + n + 1, 1);
    for (size_t i = 0; i < n; i++)
        (*buf)[*len + i] = s[i] == KEY_SEP ? '?' : s[i];
    *len += n;
    (*buf)[*len] = '\0';
}

static void put_str(char **buf, size_t *cap, size_t *len, const char *s)
{
    put(buf, cap, len, s, strlen(s));
}

size_t key_compose(const struct key_spec *spec, const struct key_frame *f, char **buf, size_t *cap)
{
    size_t len = 0;
    char num[32];
    *buf = xgrow(*buf, cap, 1, 1);
    (*buf)[0] = '\0';
    for (size_t i = 0; i < spec->count; i++) {
        if (i) {
            *buf = xgrow(*buf, cap, len + 2, 1);
            (*buf)[len++] = KEY_SEP;
            (*buf)[len] = '\0';
        }
        switch (spec->kinds[i]) {
        case KEY_PC:
            put_str(buf, cap, &len, f->pc);
            break;
        case KEY_BINARY:
            put_str(buf, cap, &len, f->binary);
            break;
        case KEY_FILE:
            put_str(buf, cap, &len, f->file && f->file[0] ? f->file : KEY_UNKNOWN);
            break;
        case KEY_PROCEDURE:
            put_str(buf, cap, &len, f->function);
            break;
        case KEY_PROCEDURE_MANGLED:
            put_str(buf, cap, &len, f->mangled && f->mangled[0] ? f->mangled : f->function);
            break;
        case KEY_SYMBOL:
            put_str(buf, cap, &len, f->symbol && f->symbol[0] ? f->symbol : f->function);
            break;
        case KEY_LINE:
            /* A line number alone names no place: without the file key it
             * is FILE:LINE, so line 12 of a.c and of b.c stay apart. */
            if (!key_spec_has(spec, KEY_FILE)) {
                put_str(buf, cap, &len, f->file && f->file[0] ? f->file : KEY_UNKNOWN);
                put_str(buf, cap, &len, ":");
            }
            snprintf(num, sizeof(num), "%" PRIu32, f->line);
            put_str(buf, cap, &len, num);
            break;
        case KEY_THREAD:
            put_str(buf, cap, &len, f->thread ? f->thread : KEY_UNKNOWN);
            break;
        case KEY_KIND_COUNT:
            break;
        }
    }
    return len;
}

char *key_compose_all(const struct key_spec *spec, const char *value)
{
    size_t n = strlen(value), len = spec->count * (n + 1);
    char *id = xmalloc(len + 1);
    char *p = id;
    for (size_t i = 0; i < spec->count; i++) {
        if (i)
            *p++ = KEY_SEP;
        memcpy(p, value, n);
        p += n;
    }
    *p = '\0';
    return id;
}

char *key_display(const char *id)
{
    char *d = xstrdup(id);
    for (char *p = d; *p; p++)
        if (*p == KEY_SEP)
            *p = ':';
    return d;
}

char *key_part(const char *id, size_t i)
{
    const char *p = id;
    for (; i > 0; i--) {
        p = strchr(p, KEY_SEP);
        if (!p)
            return xstrdup("");
        p++;
    }
    size_t n = strcspn(p, "\x1f");
    return xasprintf("%.*s", (int)n, p);
}
