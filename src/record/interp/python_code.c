/*
 * python_code.c - a frame's code object named: qualified name, file, and
 * the line of the instruction executing, from the location table of
 * CPython 3.11+ (Objects/locations.md).  Code objects are cached by
 * address; an entry holds only while the object's header still points at
 * the same strings and table (an address reused by another code object
 * reads differently), so the header is read at every use and the strings
 * and table only when it changed.
 */
#include "record/interp/python.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define CODE_CACHE_SLOTS 1024
/* Bounds on what the target may claim. */
#define FUNCTION_CHARS_MAX 1024
#define FILE_CHARS_MAX 4096
#define LINETABLE_MAX (64u * 1024u)
#define LASTI_MAX (1 << 24)

struct code_entry {
    uint64_t code; /* 0: empty */
    uint64_t qualname, filename, linetable;
    uint32_t firstlineno;
    char *function, *file;
    uint8_t *table;
    size_t table_len;
    int64_t last_lasti; /* the last instruction named, and its PC */
    uint64_t last_pc;
};

struct python_code_cache {
    struct code_entry slots[CODE_CACHE_SLOTS];
};

struct python_code_cache *python_code_cache_new(void)
{
    return xcalloc(1, sizeof(struct python_code_cache));
}

static void clear_entry(struct code_entry *e)
{
    free(e->function);
    free(e->file);
    free(e->table);
    memset(e, 0, sizeof(*e));
}

void python_code_cache_free(struct python_code_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CODE_CACHE_SLOTS; i++)
        clear_entry(&c->slots[i]);
    free(c);
}

/* --- strings ------------------------------------------------------------ */

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp >= 0xd800 && cp < 0xe000)
        cp = '?'; /* a lone surrogate has no UTF-8 */
    if (cp < 0x80) {
        out[0] = (char)(cp < 0x20 || cp == 0x7f ? '?' : cp);
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    if (cp > 0x10ffff)
        cp = 0xfffd;
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The str object at ADDR as UTF-8, at most MAX_CHARS characters (a longer
 * one is cut), or NULL when it is no compact str. */
static char *read_str(const struct python_runtime *rt, uint64_t addr, size_t max_chars)
{
    const struct python_layout *l = &rt->layout;
    uint8_t head[128];
    size_t hsize = l->unicode_compact_size;
    if (!remote_pointer_ok(addr) || hsize > sizeof(head) ||
        !remote_read(rt->pid, addr, head, hsize))
        return NULL;
    uint64_t type, length;
    uint32_t state;
    memcpy(&type, head + 8, 8);
    memcpy(&length, head + l->unicode_length, 8);
    memcpy(&state, head + l->unicode_state, 4);
    /* PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1 */
    unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
    if (type != rt->img.unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4) ||
        (ascii && kind != 1) || (int64_t)length < 0)
        return NULL;
    size_t n = length < max_chars ? (size_t)length : max_chars;
    uint64_t data = addr + (ascii ? l->unicode_ascii_size : l->unicode_compact_size);
    uint8_t *raw = xmalloc(n * kind + 1);
    char *out = NULL;
    if (remote_read(rt->pid, data, raw, n * kind)) {
        out = xmalloc(n * 4 + 1);
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t cp = 0;
            if (kind == 1)
                cp = raw[i];
            else if (kind == 2)
                cp = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
            else
                memcpy(&cp, raw + 4 * i, 4);
            len += put_utf8(out + len, cp);
        }
        out[len] = '\0';
    }
    free(raw);
    return out;
}

/* The bytes object at ADDR (at most LINETABLE_MAX), or false. */
static bool read_bytes(const struct python_runtime *rt, uint64_t addr, uint8_t **data, size_t *len)
{
    const struct python_layout *l = &rt->layout;
    uint8_t head[64];
    if (!remote_pointer_ok(addr) || l->bytes_sval > sizeof(head) ||
        !remote_read(rt->pid, addr, head, l->bytes_sval))
        return false;
    uint64_t type, size;
    memcpy(&type, head + 8, 8);
    memcpy(&size, head + l->bytes_size, 8);
    if (type != rt->img.bytes_type || size > LINETABLE_MAX)
        return false;
    *data = xmalloc(size ? size : 1);
    *len = size;
    if (remote_read(rt->pid, addr + l->bytes_sval, *data, size))
        return true;
    free(*data);
    *data = NULL;
    return false;
}

/* --- the location table ---------------------------------------------------- */

struct table_reader {
    const uint8_t *p, *end;
};

static bool read_varint(struct table_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; r->p < r->end && shift < 64; shift += 6) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 63) << shift;
        if (!(b & 64)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool read_svarint(struct table_reader *r, int64_t *out)
{
    uint64_t u;
    if (!read_varint(r, &u))
        return false;
    *out = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
    return true;
}

uint32_t python_line_of(const uint8_t *table, size_t len, uint32_t firstlineno, int64_t lasti)
{
    struct table_reader r = {table, table + len};
    int64_t line = firstlineno, addr = 0;
    if (lasti < 0)
        return firstlineno;
    while (r.p < r.end) {
        uint8_t first = *r.p++;
        if (!(first & 0x80))
            break; /* not the start of an entry: damage */
        unsigned code = first >> 3 & 15, length = (first & 7) + 1;
        int64_t delta = 0;
        uint64_t skip;
        bool ok = true;
        if (code == 15) {
            /* no location */
        } else if (code == 14) {
            ok = read_svarint(&r, &delta) && read_varint(&r, &skip) && read_varint(&r, &skip) &&
                 read_varint(&r, &skip);
        } else if (code == 13) {
            ok = read_svarint(&r, &delta);
        } else if (code >= 10) {
            delta = code - 10;
            ok = r.end - r.p >= 2;
            r.p += ok ? 2 : 0;
        } else {
            ok = r.p < r.end;
            r.p += ok;
        }
        if (!ok)
            break;
        line += delta;
        if (lasti >= addr && lasti < addr + length)
            return code == 15 || line <= 0 || line > UINT32_MAX ? firstlineno : (uint32_t)line;
        addr += length;
    }
    return firstlineno;
}

/* --- code objects ---------------------------------------------------------- */

static struct code_entry *slot_of(struct python_code_cache *c, uint64_t code)
{
    uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ULL;
    return &c->slots[h >> 54 & (CODE_CACHE_SLOTS - 1)];
}

size_t python_code_header_size(const struct python_layout *l)
{
    uint64_t hsize = l->code_linetable + 8;
    if (l->code_filename + 8 > hsize)
        hsize = l->code_filename + 8;
    if (l->code_qualname + 8 > hsize)
        hsize = l->code_qualname + 8;
    if (l->code_firstlineno + 4 > hsize)
        hsize = l->code_firstlineno + 4;
    return hsize <= PYTHON_CODE_HEADER_MAX ? (size_t)hsize : 0;
}

uint64_t python_code_pc(struct python_runtime *rt, uint64_t code, uint64_t instr,
                        struct interp_names *names, uint32_t pid, enum interp_failure *failure)
{
    uint8_t head[PYTHON_CODE_HEADER_MAX];
    size_t hsize = python_code_header_size(&rt->layout);
    *failure = INTERP_BAD_OBJECT;
    if (!remote_pointer_ok(code) || hsize == 0)
        return 0;
    if (!remote_read(rt->pid, code, head, hsize)) {
        *failure = INTERP_BAD_READ;
        return 0;
    }
    return python_code_name(rt, code, head, instr, names, pid, failure);
}

/* The fields of a code object's header that say which code it is. */
static void header_fields(const struct python_layout *l, const uint8_t *head, uint64_t *type,
                          uint64_t fields[4])
{
    uint32_t firstlineno;
    memcpy(type, head + 8, 8);
    memcpy(&fields[0], head + l->code_qualname, 8);
    memcpy(&fields[1], head + l->code_filename, 8);
    memcpy(&fields[2], head + l->code_linetable, 8);
    memcpy(&firstlineno, head + l->code_firstlineno, 4);
    fields[3] = firstlineno;
}

bool python_code_cached(const struct python_runtime *rt, uint64_t code, uint64_t expect[4])
{
    const struct code_entry *e = slot_of(rt->codes, code);
    if (e->code != code || !e->function)
        return false;
    expect[0] = e->qualname;
    expect[1] = e->filename;
    expect[2] = e->linetable;
    expect[3] = e->firstlineno;
    return true;
}

bool python_code_unchanged(struct python_runtime *rt, uint64_t code, const uint8_t *head,
                           const uint64_t expect[4])
{
    uint64_t type, now[4];
    header_fields(&rt->layout, head, &type, now);
    if (type == rt->img.code_type && memcmp(now, expect, sizeof(now)) == 0)
        return true;
    struct code_entry *e = slot_of(rt->codes, code);
    if (e->code == code)
        clear_entry(e);
    return false;
}

uint64_t python_code_name(struct python_runtime *rt, uint64_t code, const uint8_t *head,
                          uint64_t instr, struct interp_names *names, uint32_t pid,
                          enum interp_failure *failure)
{
    const struct python_layout *l = &rt->layout;
    *failure = INTERP_BAD_OBJECT;
    uint64_t type, fields[4];
    header_fields(l, head, &type, fields);
    uint64_t qualname = fields[0], filename = fields[1], linetable = fields[2];
    uint32_t firstlineno = (uint32_t)fields[3];
    if (type != rt->img.code_type)
        return 0;
    struct code_entry *e = slot_of(rt->codes, code);
    if (e->code != code || e->qualname != qualname || e->filename != filename ||
        e->linetable != linetable || e->firstlineno != firstlineno) {
        clear_entry(e);
        char *function = read_str(rt, qualname, FUNCTION_CHARS_MAX);
        char *file = function ? read_str(rt, filename, FILE_CHARS_MAX) : NULL;
        if (!file) {
            free(function);
            return 0;
        }
        uint8_t *table = NULL;
        size_t table_len = 0;
        if (!read_bytes(rt, linetable, &table, &table_len)) {
            free(function);
            free(file);
            return 0;
        }
        *e = (struct code_entry){.code = code,
                                 .qualname = qualname,
                                 .filename = filename,
                                 .linetable = linetable,
                                 .firstlineno = firstlineno,
                                 .function = function,
                                 .file = file,
                                 .table = table,
                                 .table_len = table_len,
                                 .last_lasti = INT64_MIN};
    }
    /* The instruction, in code units from the first. */
    uint64_t first = code + l->code_adaptive;
    int64_t lasti =
        instr >= first && instr - first < 2ULL * LASTI_MAX ? (int64_t)((instr - first) / 2) : -1;
    if (lasti == e->last_lasti)
        return e->last_pc;
    struct interp_frame_name name = {
        .function = e->function,
        .file = e->file,
        .line = python_line_of(e->table, e->table_len, e->firstlineno, lasti),
    };
    e->last_lasti = lasti;
    e->last_pc = interp_names_pc(names, pid, &name);
    return e->last_pc;
}
