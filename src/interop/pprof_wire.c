/*
 * pprof_wire.c - see pprof_wire.h: a pprof profile.proto checked at the
 * protobuf wire level, with the offset of whatever is wrong.
 */
#include "interop/pprof_wire.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum msg {
    M_PROFILE,
    M_VALUE_TYPE,
    M_SAMPLE,
    M_LABEL,
    M_MAPPING,
    M_LOCATION,
    M_LINE,
    M_FUNCTION,
    M_NONE, /* not a message */
};

enum kind {
    K_UNKNOWN, /* not in the schema: any wire type is skipped */
    K_VARINT,  /* a single number (also a bool) */
    K_PACKED,  /* a repeated number: varints or one packed run */
    K_BYTES,   /* a string */
    K_MESSAGE,
};

struct field {
    enum kind kind;
    enum msg msg;     /* the message, for K_MESSAGE */
    int element;      /* enum pprof_element to record, or -1 */
    const char *name; /* for messages */
};

#define MAX_FIELD 15
#define MAX_FIELD_NUMBER ((1u << 29) - 1)

/* The schema of interop/pprof.proto, by message and field number. */
static const struct field schema[M_NONE][MAX_FIELD + 1] =
    {
        [M_PROFILE] =
            {
                [1] = {K_MESSAGE, M_VALUE_TYPE, PPROF_EL_SAMPLE_TYPE, "sample_type"},
                [2] = {K_MESSAGE, M_SAMPLE, PPROF_EL_SAMPLE, "sample"},
                [3] = {K_MESSAGE, M_MAPPING, PPROF_EL_MAPPING, "mapping"},
                [4] = {K_MESSAGE, M_LOCATION, PPROF_EL_LOCATION, "location"},
                [5] = {K_MESSAGE, M_FUNCTION, PPROF_EL_FUNCTION, "function"},
                [6] = {K_BYTES, M_NONE, -1, "string_table"},
                [7] = {K_VARINT, M_NONE, -1, "drop_frames"},
                [8] = {K_VARINT, M_NONE, -1, "keep_frames"},
                [9] = {K_VARINT, M_NONE, -1, "time_nanos"},
                [10] = {K_VARINT, M_NONE, -1, "duration_nanos"},
                [11] = {K_MESSAGE, M_VALUE_TYPE, -1, "period_type"},
                [12] = {K_VARINT, M_NONE, -1, "period"},
                [13] = {K_PACKED, M_NONE, -1, "comment"},
                [14] = {K_VARINT, M_NONE, -1, "default_sample_type"},
            },
        [M_VALUE_TYPE] =
            {
                [1] = {K_VARINT, M_NONE, -1, "type"},
                [2] = {K_VARINT, M_NONE, -1, "unit"},
            },
        [M_SAMPLE] =
            {
                [1] = {K_PACKED, M_NONE, -1, "location_id"},
                [2] = {K_PACKED, M_NONE, -1, "value"},
                [3] = {K_MESSAGE, M_LABEL, -1, "label"},
            },
        [M_LABEL] =
            {
                [1] = {K_VARINT, M_NONE, -1, "key"},
                [2] = {K_VARINT, M_NONE, -1, "str"},
                [3] = {K_VARINT, M_NONE, -1, "num"},
                [4] = {K_VARINT, M_NONE, -1, "num_unit"},
            },
        [M_MAPPING] =
            {
                [1] = {K_VARINT, M_NONE, -1, "id"},
                [2] = {K_VARINT, M_NONE, -1, "memory_start"},
                [3] = {K_VARINT, M_NONE, -1, "memory_limit"},
                [4] = {K_VARINT, M_NONE, -1, "file_offset"},
                [5] = {K_VARINT, M_NONE, -1, "filename"},
                [6] = {K_VARINT, M_NONE, -1, "build_id"},
                [7] = {K_VARINT, M_NONE, -1, "has_functions"},
                [8] = {K_VARINT, M_NONE, -1, "has_filenames"},
                [9] = {K_VARINT, M_NONE, -1, "has_line_numbers"},
                [10] = {K_VARINT, M_NONE, -1, "has_inline_frames"},
            },
        [M_LOCATION] =
            {
                [1] = {K_VARINT, M_NONE, -1, "id"},
                [2] = {K_VARINT, M_NONE, -1, "mapping_id"},
                [3] = {K_VARINT, M_NONE, -1, "address"},
                [4] = {K_MESSAGE, M_LINE, -1, "line"},
                [5] = {K_VARINT, M_NONE, -1, "is_folded"},
            },
        [M_LINE] =
            {
                [1] = {K_VARINT, M_NONE, -1, "function_id"},
                [2] = {K_VARINT, M_NONE, -1, "line"},
                [3] = {K_VARINT, M_NONE, -1, "column"},
            },
        [M_FUNCTION] =
            {
                [1] = {K_VARINT, M_NONE, -1, "id"},
                [2] = {K_VARINT, M_NONE, -1, "name"},
                [3] = {K_VARINT, M_NONE, -1, "system_name"},
                [4] = {K_VARINT, M_NONE, -1, "filename"},
                [5] = {K_VARINT, M_NONE, -1, "start_line"},
            },
};

static const char *const msg_names[M_NONE] = {
    "Profile", "ValueType", "Sample", "Label", "Mapping", "Location", "Line", "Function",
};

struct checker {
    const char *name; /* NULL: quiet */
    const unsigned char *data;
    struct pprof_offsets *offsets;
    bool seen_string;
};

static int fail(const struct checker *c, size_t off, const char *what, enum msg m, uint64_t field)
{
    if (c->name)
        pt_err("%s: offset %zu: %s (field %llu of a %s)", c->name, off, what,
               (unsigned long long)field, msg_names[m]);
    return -1;
}

/* A varint at *OFF before END; false when it runs past END or over 10 bytes. */
static bool varint(const unsigned char *d, size_t *off, size_t end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (*off >= end)
            return false;
        unsigned char b = d[(*off)++];
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static void record(struct pprof_offsets *o, int element, size_t off)
{
    if (!o || element < 0)
        return;
    o->at[element] =
        xgrow(o->at[element], &o->cap[element], o->n[element] + 1, pprof_offset_width(o->narrow));
    pprof_offset_put(o->at[element], o->narrow, o->n[element]++, off);
}

static int check_message(struct checker *c, enum msg m, size_t off, size_t end)
{
    const unsigned char *d = c->data;
    while (off < end) {
        size_t at = off;
        uint64_t tag, v;
        if (!varint(d, &off, end, &tag)) {
            if (c->name)
                pt_err("%s: offset %zu: a field's tag runs past the end of its %s", c->name, at,
                       msg_names[m]);
            return -1;
        }
        uint64_t field = tag >> 3;
        unsigned wire = (unsigned)(tag & 7);
        /* protobuf's limits, which protobuf-c enforces: a tag of 5 bytes
         * at most, field numbers below 2^29. */
        if (off - at > 5 || field > MAX_FIELD_NUMBER) {
            if (c->name)
                pt_err("%s: offset %zu: field number %llu (in a %s) is out of range", c->name, at,
                       (unsigned long long)field, msg_names[m]);
            return -1;
        }
        if (field == 0) {
            if (c->name)
                pt_err("%s: offset %zu: field number 0 (in a %s): not protobuf", c->name, at,
                       msg_names[m]);
            return -1;
        }
        const struct field *f = field <= MAX_FIELD ? &schema[m][field] : NULL;
        enum kind k = f ? f->kind : K_UNKNOWN;
        switch (wire) {
        case 0:
            if (k == K_BYTES || k == K_MESSAGE)
                return fail(c, at, "a number where the schema has a string or a message", m, field);
            if (!varint(d, &off, end, &v))
                return fail(c, at, "varint runs past its message or over 10 bytes", m, field);
            break;
        case 1:
        case 5: {
            size_t n = wire == 1 ? 8 : 4;
            if (k != K_UNKNOWN)
                return fail(c, at, "a fixed-size value where the schema has a varint or bytes", m,
                            field);
            if (end - off < n)
                return fail(c, at, "fixed-size value runs past the end of its message", m, field);
            off += n;
            break;
        }
        case 2: {
            uint64_t len;
            size_t len_at = off;
            if (!varint(d, &off, end, &len) || off - len_at > 5 || len > INT32_MAX)
                return fail(c, at, "length runs past its message, or over 5 bytes or 2^31", m,
                            field);
            if (len > end - off) {
                if (c->name)
                    pt_err("%s: offset %zu: field %llu of a %s is %llu bytes long, %zu are left "
                           "in its message",
                           c->name, at, (unsigned long long)field, msg_names[m],
                           (unsigned long long)len, end - off);
                return -1;
            }
            size_t body = off, body_end = off + (size_t)len;
            if (k == K_VARINT)
                return fail(c, at, "bytes where the schema has a single number", m, field);
            if (k == K_PACKED) {
                for (size_t p = body; p < body_end;)
                    if (!varint(d, &p, body_end, &v))
                        return fail(c, at, "packed numbers end inside a varint", m, field);
            } else if (k == K_MESSAGE) {
                record(c->offsets, f->element, at);
                if (check_message(c, f->msg, body, body_end) != 0)
                    return -1;
            } else if (k == K_BYTES && m == M_PROFILE && field == 6 && !c->seen_string) {
                c->seen_string = true;
                if (len != 0) {
                    if (c->name)
                        pt_err("%s: offset %zu: the string table starts with a %llu-byte string, "
                               "not with \"\"",
                               c->name, at, (unsigned long long)len);
                    return -1;
                }
            }
            off = body_end;
            break;
        }
        default:
            if (c->name)
                pt_err("%s: offset %zu: wire type %u (field %llu of a %s) is not used by "
                       "profile.proto",
                       c->name, at, wire, (unsigned long long)field, msg_names[m]);
            return -1;
        }
    }
    return 0;
}

int pprof_wire_check(const char *name, const void *data, size_t len, struct pprof_offsets *offsets)
{
    struct checker c = {.name = name, .data = data, .offsets = offsets};
    if (offsets) {
        memset(offsets, 0, sizeof(*offsets));
        offsets->narrow = len <= UINT32_MAX;
    }
    if (check_message(&c, M_PROFILE, 0, len) != 0) {
        pprof_offsets_free(offsets);
        return -1;
    }
    if (!c.seen_string) {
        if (name)
            pt_err("%s: offset %zu: no string table: not a pprof profile.proto", name, len);
        pprof_offsets_free(offsets);
        return -1;
    }
    /* Doubling left up to half of each array unused. */
    for (int i = 0; offsets && i < PPROF_EL_COUNT; i++)
        if (offsets->n[i] && offsets->n[i] < offsets->cap[i]) {
            offsets->at[i] =
                xrealloc(offsets->at[i], offsets->n[i] * pprof_offset_width(offsets->narrow));
            offsets->cap[i] = offsets->n[i];
        }
    return 0;
}

bool pprof_wire_starts_like(const void *data, size_t len)
{
    const unsigned char *d = data;
    size_t off = 1;
    uint64_t n, v;
    if (len < 2 || d[0] != 0x0a || !varint(d, &off, len, &n) || n < 2 || n > len - off)
        return false;
    /* A ValueType: only its two numbers, type (0x08) and unit (0x10).  Both
     * there and then something else: the length is what is damaged, and
     * the reader will say so (a file is told by its start, not its luck). */
    size_t end = off + (size_t)n;
    bool type = false, unit = false;
    while (off < end) {
        unsigned char tag = d[off++];
        if ((tag != 0x08 && tag != 0x10) || !varint(d, &off, end, &v))
            return type && unit;
        type = type || tag == 0x08;
        unit = unit || tag == 0x10;
    }
    return true;
}

void pprof_offsets_free(struct pprof_offsets *o)
{
    if (!o)
        return;
    for (int i = 0; i < PPROF_EL_COUNT; i++)
        free(o->at[i]);
    memset(o, 0, sizeof(*o));
}

void pprof_offsets_drop(struct pprof_offsets *o, enum pprof_element k)
{
    free(o->at[k]);
    o->at[k] = NULL;
    o->n[k] = o->cap[k] = 0;
}

size_t pprof_offset(const struct pprof_offsets *o, enum pprof_element k, size_t i)
{
    if (!o || i >= o->n[k])
        return 0;
    return pprof_offset_get(o->at[k], o->narrow, i);
}
