/*
 * csv_timeline.c - see csv_timeline.h: a device's CSV export as a timeline.
 *
 * The lexer unquotes one record at a time into a fixed buffer (a record is
 * bounded, so a hostile line cannot make us allocate); the rows' times and
 * values are the only arrays that grow, and they grow with the input.
 * Times are parsed as exact decimals into nanoseconds (a double cannot
 * hold epoch seconds to the nanosecond).
 */
#include "interop/csv_timeline.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/log.h"
#include "util/slurp.h"
#include "util/xalloc.h"

/* --- units ----------------------------------------------------------------- */

static const struct csv_unit units[] = {
    {"W", PMU_KIND_POWER, 1, "W"},       {"mW", PMU_KIND_POWER, 1e-3, "W"},
    {"uW", PMU_KIND_POWER, 1e-6, "W"},   {"nW", PMU_KIND_POWER, 1e-9, "W"},
    {"kW", PMU_KIND_POWER, 1e3, "W"},    {"A", PMU_KIND_CURRENT, 1, "A"},
    {"mA", PMU_KIND_CURRENT, 1e-3, "A"}, {"uA", PMU_KIND_CURRENT, 1e-6, "A"},
    {"nA", PMU_KIND_CURRENT, 1e-9, "A"}, {"V", PMU_KIND_VOLTAGE, 1, "V"},
    {"mV", PMU_KIND_VOLTAGE, 1e-3, "V"}, {"uV", PMU_KIND_VOLTAGE, 1e-6, "V"},
    {"kV", PMU_KIND_VOLTAGE, 1e3, "V"},  {"J", PMU_KIND_ENERGY, 1, "J"},
    {"mJ", PMU_KIND_ENERGY, 1e-3, "J"},  {"uJ", PMU_KIND_ENERGY, 1e-6, "J"},
    {"kJ", PMU_KIND_ENERGY, 1e3, "J"},   {"Wh", PMU_KIND_ENERGY, 3600, "J"},
    {"mWh", PMU_KIND_ENERGY, 3.6, "J"},  {"kWh", PMU_KIND_ENERGY, 3.6e6, "J"},
};

#define NUNITS (sizeof(units) / sizeof(units[0]))

/* NAME with a leading micro sign (U+00B5 or U+03BC) written as 'u'. */
static void ascii_micro(const char *name, char *buf, size_t size)
{
    if ((unsigned char)name[0] == 0xc2 && (unsigned char)name[1] == 0xb5)
        snprintf(buf, size, "u%s", name + 2);
    else if ((unsigned char)name[0] == 0xce && (unsigned char)name[1] == 0xbc)
        snprintf(buf, size, "u%s", name + 2);
    else
        snprintf(buf, size, "%s", name);
}

const struct csv_unit *csv_parse_unit(const char *name)
{
    char buf[32];
    if (strlen(name) >= sizeof(buf))
        return NULL;
    ascii_micro(name, buf, sizeof(buf));
    for (size_t i = 0; i < NUNITS; i++)
        if (strcmp(units[i].name, buf) == 0)
            return &units[i];
    /* Headers written in one case ("POWER_MW", "current_ma"): a device
     * measuring megawatts or megaamperes is not what we expect here. */
    for (size_t i = 0; i < NUNITS; i++)
        if (strcasecmp(units[i].name, buf) == 0)
            return &units[i];
    return NULL;
}

int64_t csv_time_unit_ns(const char *name)
{
    static const struct {
        const char *name;
        int64_t ns;
    } tu[] = {
        {"s", 1000000000}, {"sec", 1000000000}, {"secs", 1000000000}, {"seconds", 1000000000},
        {"ms", 1000000},   {"msec", 1000000},   {"us", 1000},         {"usec", 1000},
        {"ns", 1},         {"nsec", 1},
    };
    char buf[32];
    if (strlen(name) >= sizeof(buf))
        return 0;
    ascii_micro(name, buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(tu) / sizeof(tu[0]); i++)
        if (strcasecmp(tu[i].name, buf) == 0)
            return tu[i].ns;
    return 0;
}

int csv_parse_kind(const char *name, enum pmu_kind *kind)
{
    static const struct {
        const char *name;
        enum pmu_kind kind;
    } kinds[] = {
        {"power", PMU_KIND_POWER},   {"current", PMU_KIND_CURRENT}, {"voltage", PMU_KIND_VOLTAGE},
        {"energy", PMU_KIND_ENERGY}, {"custom", PMU_KIND_CUSTOM},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcasecmp(kinds[i].name, name) == 0) {
            *kind = kinds[i].kind;
            return 0;
        }
    }
    return -1;
}

static const char *base_unit(enum pmu_kind k)
{
    switch (k) {
    case PMU_KIND_POWER:
        return "W";
    case PMU_KIND_CURRENT:
        return "A";
    case PMU_KIND_VOLTAGE:
        return "V";
    case PMU_KIND_ENERGY:
        return "J";
    default:
        return "";
    }
}

/* --- headers --------------------------------------------------------------- */

static void copy_trimmed(char *dst, size_t size, const char *s, size_t n, const char *strip)
{
    while (n && strchr(strip, s[0]))
        s++, n--;
    while (n && strchr(strip, s[n - 1]))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

void csv_split_header(const char *h, char *name, size_t name_size, char *unit, size_t unit_size)
{
    size_t n = strlen(h);
    while (n && isspace((unsigned char)h[0]))
        h++, n--;
    while (n && isspace((unsigned char)h[n - 1]))
        n--;
    unit[0] = '\0';
    copy_trimmed(name, name_size, h, n, "");
    if (n < 2)
        return;
    char close = h[n - 1];
    const char *open = close == ')' ? "(" : close == ']' ? "[" : close == '}' ? "{" : NULL;
    if (open) {
        for (size_t i = n - 1; i-- > 0;) {
            if (h[i] != open[0])
                continue;
            copy_trimmed(unit, unit_size, h + i + 1, n - i - 2, " \t");
            if (i > 0)
                copy_trimmed(name, name_size, h, i, " \t_-");
            return;
        }
        return;
    }
    const char *slash = memrchr(h, '/', n);
    if (slash && slash > h && slash < h + n - 1 && !memchr(slash, ' ', (size_t)(h + n - slash))) {
        copy_trimmed(unit, unit_size, slash + 1, (size_t)(h + n - slash - 1), "");
        copy_trimmed(name, name_size, h, (size_t)(slash - h), " \t_-");
        return;
    }
    for (size_t i = n - 1; i-- > 0;) {
        if (h[i] != '_' && h[i] != ' ')
            continue;
        char tail[32];
        copy_trimmed(tail, sizeof(tail), h + i + 1, n - i - 1, "");
        /* "Channel A" names a channel, not amperes: after a space, only
         * units of two letters or more count. */
        bool known = csv_parse_unit(tail) || csv_time_unit_ns(tail);
        if (known && (h[i] == '_' || strlen(tail) >= 2) && n - i - 1 < sizeof(tail)) {
            snprintf(unit, unit_size, "%s", tail);
            copy_trimmed(name, name_size, h, i, " \t_-");
        }
        return;
    }
}

/* What a header names without a unit: "Power", "I", "U1", "voltage"... */
static enum pmu_kind kind_by_name(const char *name)
{
    char low[64];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof(low); n++)
        low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = '\0';
    if (strstr(low, "power") || strstr(low, "watt"))
        return PMU_KIND_POWER;
    if (strstr(low, "current"))
        return PMU_KIND_CURRENT;
    if (strstr(low, "volt"))
        return PMU_KIND_VOLTAGE;
    if (strstr(low, "energy") || strstr(low, "joule"))
        return PMU_KIND_ENERGY;
    /* A symbol, possibly numbered: P, I1, U_2, V 3, E. */
    if (n >= 1 && strspn(low + 1, "0123456789_ ") == n - 1) {
        switch (low[0]) {
        case 'p':
            return PMU_KIND_POWER;
        case 'i':
            return PMU_KIND_CURRENT;
        case 'u':
        case 'v':
            return PMU_KIND_VOLTAGE;
        case 'e':
            return PMU_KIND_ENERGY;
        }
    }
    return PMU_KIND_CUSTOM;
}

static bool says_time(const char *name)
{
    static const char *const exact[] = {"t", "ts", "date", "datetime", "epoch", "sec", "seconds"};
    if (strcasestr(name, "time"))
        return true;
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strcasecmp(name, exact[i]) == 0)
            return true;
    return false;
}

/* --- the lexer ------------------------------------------------------------- */

struct lexer {
    const char *name;
    const unsigned char *p, *end;
    size_t line;        /* of the next byte */
    size_t record_line; /* where the record last read starts */
    char sep;
    char *buf; /* CSV_TIMELINE_MAX_RECORD + 1: the fields, unquoted, NUL-ended */
    size_t used;
    char **fields; /* CSV_TIMELINE_MAX_FIELDS */
    size_t nfields;
};

static void lex_error(const struct lexer *lx, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void lex_error(const struct lexer *lx, size_t line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pt_err("%s:%zu: %s", lx->name, line, msg);
}

/* FIELD quoted for a message: at most 40 bytes, control bytes escaped. */
static const char *shown(const char *field, char *buf, size_t size)
{
    size_t o = 0;
    buf[o++] = '\'';
    for (size_t i = 0; field[i] && o + 8 < size; i++) {
        unsigned char c = (unsigned char)field[i];
        if (i == 40) {
            o += (size_t)snprintf(buf + o, size - o, "...");
            break;
        }
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

static int emit(struct lexer *lx, unsigned char c)
{
    if (c == '\0') {
        lex_error(lx, lx->record_line, "a NUL byte: not a text file");
        return -1;
    }
    if (lx->used >= CSV_TIMELINE_MAX_RECORD) {
        lex_error(lx, lx->record_line, "a record longer than %d bytes", CSV_TIMELINE_MAX_RECORD);
        return -1;
    }
    lx->buf[lx->used++] = (char)c;
    return 0;
}

static bool line_is_blank_or_comment(const struct lexer *lx)
{
    const unsigned char *q = lx->p;
    while (q < lx->end && (*q == ' ' || *q == '\t'))
        q++;
    return q == lx->end || *q == '\n' || *q == '\r' || *q == '#';
}

static void skip_line(struct lexer *lx)
{
    while (lx->p < lx->end && *lx->p != '\n' && *lx->p != '\r')
        lx->p++;
    if (lx->p < lx->end && *lx->p == '\r')
        lx->p++;
    if (lx->p < lx->end && *lx->p == '\n')
        lx->p++;
    lx->line++;
}

/* Consume a line ending (CRLF, LF or a lone CR) if one is next. */
static void end_line(struct lexer *lx)
{
    bool cr = lx->p < lx->end && *lx->p == '\r';
    if (cr)
        lx->p++;
    if (lx->p < lx->end && *lx->p == '\n') {
        lx->p++;
        cr = true;
    }
    if (cr)
        lx->line++;
}

/* One quoted field, from its opening quote.  -1 after reporting. */
static int lex_quoted(struct lexer *lx)
{
    size_t opened = lx->line;
    lx->p++;
    for (;;) {
        if (lx->p >= lx->end) {
            lex_error(lx, opened, "a quote that is never closed");
            return -1;
        }
        unsigned char c = *lx->p;
        if (c == '"') {
            if (lx->p + 1 < lx->end && lx->p[1] == '"') {
                if (emit(lx, '"') != 0)
                    return -1;
                lx->p += 2;
                continue;
            }
            lx->p++;
            break;
        }
        if (c == '\n' || (c == '\r' && !(lx->p + 1 < lx->end && lx->p[1] == '\n')))
            lx->line++;
        if (emit(lx, c) != 0)
            return -1;
        lx->p++;
    }
    while (lx->p < lx->end && (*lx->p == ' ' || (*lx->p == '\t' && lx->sep != '\t')))
        lx->p++;
    if (lx->p < lx->end && *lx->p != (unsigned char)lx->sep && *lx->p != '\n' && *lx->p != '\r') {
        lex_error(lx, lx->line, "text after a closing quote");
        return -1;
    }
    return 0;
}

/* The next record into LX->fields: 1, 0 at the end of the input, -1 after
 * reporting. */
static int lex_record(struct lexer *lx)
{
    while (lx->p < lx->end && line_is_blank_or_comment(lx))
        skip_line(lx);
    if (lx->p >= lx->end)
        return 0;
    lx->record_line = lx->line;
    lx->used = 0;
    lx->nfields = 0;
    for (;;) {
        if (lx->nfields >= CSV_TIMELINE_MAX_FIELDS) {
            lex_error(lx, lx->record_line, "more than %d fields", CSV_TIMELINE_MAX_FIELDS);
            return -1;
        }
        size_t start = lx->used;
        const unsigned char *q = lx->p;
        while (q < lx->end && (*q == ' ' || (*q == '\t' && lx->sep != '\t')))
            q++;
        if (q < lx->end && *q == '"') {
            lx->p = q;
            if (lex_quoted(lx) != 0)
                return -1;
        } else {
            while (lx->p < lx->end && *lx->p != (unsigned char)lx->sep && *lx->p != '\n' &&
                   *lx->p != '\r') {
                if (emit(lx, *lx->p) != 0)
                    return -1;
                lx->p++;
            }
        }
        if (lx->used >= CSV_TIMELINE_MAX_RECORD) {
            lex_error(lx, lx->record_line, "a record longer than %d bytes",
                      CSV_TIMELINE_MAX_RECORD);
            return -1;
        }
        lx->buf[lx->used++] = '\0';
        lx->fields[lx->nfields++] = lx->buf + start;
        if (lx->p < lx->end && *lx->p == (unsigned char)lx->sep) {
            lx->p++;
            continue;
        }
        end_line(lx);
        return 1;
    }
}

/* The separator the line at P uses most outside quotes: ',', ';' or tab. */
static char detect_separator(const unsigned char *p, const unsigned char *end)
{
    size_t comma = 0, semi = 0, tab = 0;
    bool quoted = false;
    for (; p < end && (quoted || (*p != '\n' && *p != '\r')); p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (!quoted)
            comma += *p == ',', semi += *p == ';', tab += *p == '\t';
    }
    if (semi > comma && semi >= tab)
        return ';';
    if (tab > comma && tab > semi)
        return '\t';
    return ',';
}

/* --- numbers and times ----------------------------------------------------- */

static const char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A plain decimal: [+-] digits [. digits] [e [+-] digits], at least one
 * digit before the exponent.  With DECIMAL_COMMA a single ',' may stand
 * for the point. */
static bool is_decimal(const char *s, bool decimal_comma)
{
    const char *p = s;
    size_t digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (isdigit((unsigned char)*p))
        p++, digits++;
    if (*p == '.' || (decimal_comma && *p == ',')) {
        p++;
        while (isdigit((unsigned char)*p))
            p++, digits++;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

/* S (a plain decimal) as a double: 0, or -1 when it is not one. */
static int parse_value(const char *field, bool decimal_comma, double *out)
{
    char buf[128];
    if (strlen(field) >= sizeof(buf))
        return -1;
    snprintf(buf, sizeof(buf), "%s", field);
    if (!is_decimal(buf, decimal_comma))
        return -1;
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '.';
    *out = strtod(buf, NULL);
    return 0;
}

/* S (a plain decimal) times UNIT_NS as exact integer nanoseconds, rounded
 * half away from zero: 0, -1 not a number, -2 out of range. */
static int parse_decimal_ns(const char *s, bool decimal_comma, int64_t unit_ns, int64_t *out)
{
    if (strlen(s) > 128 || !is_decimal(s, decimal_comma))
        return -1;
    bool neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    /* Up to 19 significant digits in MANT (below 2^64), the rest only
     * moves EXP10. */
    uint64_t mant = 0;
    int sig = 0;
    long exp10 = 0;
    bool frac = false, round_up = false, seen_rest = false;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s == '.' || *s == ',') {
            frac = true;
            continue;
        }
        int d = *s - '0';
        if (sig < 19) {
            if (mant || d)
                sig++;
            mant = mant * 10 + (uint64_t)d;
            if (frac)
                exp10--;
        } else {
            if (!seen_rest)
                round_up = d >= 5;
            seen_rest = true;
            if (!frac)
                exp10++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        long e = strtol(s, NULL, 10);
        if (e > 1000)
            e = 1000;
        if (e < -1000)
            e = -1000;
        exp10 += e;
    }
    if (round_up)
        mant++;
    for (int64_t u = unit_ns; u > 1; u /= 10)
        exp10++;
    /* mant * 10^exp10, within int64. */
    if (mant == 0) {
        *out = 0;
        return 0;
    }
    while (exp10 > 0) {
        if (mant > (uint64_t)INT64_MAX / 10)
            return -2;
        mant *= 10;
        exp10--;
    }
    while (exp10 < 0 && mant) {
        uint64_t q = mant / 10, r = mant % 10;
        mant = q + (exp10 == -1 && r >= 5);
        exp10++;
    }
    if (mant > (uint64_t)INT64_MAX)
        return -2;
    *out = neg ? -(int64_t)mant : (int64_t)mant;
    return 0;
}

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static int num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool looks_like_datetime(const char *s)
{
    return digits(s, 4) && (s[4] == '-' || s[4] == '/');
}

/* "YYYY-MM-DD[T ]hh:mm[:ss[.frac]][Z|+hh[:mm]|-hh[:mm]]" (or '/' in the
 * date) as nanoseconds since the epoch; no zone is local time.  0, or -1
 * with *WHY set. */
static int parse_datetime(const char *s, int64_t *out, const char **why)
{
    *why = "not an ISO 8601 date-time (YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm])";
    if (strlen(s) < 16 || !digits(s, 4) || !digits(s + 5, 2) || s[7] != s[4] || !digits(s + 8, 2) ||
        (s[10] != 'T' && s[10] != ' ' && s[10] != 't') || !digits(s + 11, 2) || s[13] != ':' ||
        !digits(s + 14, 2))
        return -1;
    int year = num(s, 4), mon = num(s + 5, 2), day = num(s + 8, 2);
    int hour = num(s + 11, 2), min = num(s + 14, 2), sec = 0;
    int64_t frac_ns = 0;
    const char *p = s + 16;
    if (*p == ':') {
        if (!digits(p + 1, 2))
            return -1;
        sec = num(p + 1, 2);
        p += 3;
        if (*p == '.' || *p == ',') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            int64_t scale = 100000000;
            for (; isdigit((unsigned char)*p); p++, scale /= 10)
                frac_ns += scale * (*p - '0');
        }
    }
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] || hour > 23 || min > 59 ||
        sec > 60) {
        *why = "a date-time with a month, day, hour, minute or second out of range";
        return -1;
    }
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (mon == 2 && day == 29 && !leap) {
        *why = "February 29th of a year that is not a leap year";
        return -1;
    }
    if (year < 1678 || year > 2261) {
        *why = "a year outside 1678..2261 (nanoseconds since 1970 in 64 bits)";
        return -1;
    }
    int64_t secs;
    if (*p == '\0') {
        struct tm tm = {.tm_year = year - 1900,
                        .tm_mon = mon - 1,
                        .tm_mday = day,
                        .tm_hour = hour,
                        .tm_min = min,
                        .tm_sec = sec,
                        .tm_isdst = -1};
        time_t t = mktime(&tm);
        if (t == (time_t)-1 && !(year == 1969 || year == 1970)) {
            *why = "a local time that does not exist";
            return -1;
        }
        secs = (int64_t)t;
    } else {
        int64_t zone = 0;
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if ((*p == '+' || *p == '-') && digits(p + 1, 2)) {
            int sign = *p == '-' ? -1 : 1;
            int zh = num(p + 1, 2), zm = 0;
            p += 3;
            if (*p == ':')
                p++;
            if (digits(p, 2)) {
                zm = num(p, 2);
                p += 2;
            }
            if (zh > 23 || zm > 59)
                return -1;
            zone = sign * (zh * 3600 + zm * 60);
        }
        if (*p != '\0')
            return -1;
        secs = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec - zone;
    }
    *out = secs * 1000000000 + frac_ns;
    return 0;
}

int csv_parse_time(const char *s, int64_t unit_ns, bool *datetime, int64_t *out, const char **why)
{
    *datetime = looks_like_datetime(s);
    if (*datetime)
        return parse_datetime(s, out, why);
    int rc = parse_decimal_ns(s, false, unit_ns, out);
    *why = rc == -1 ? "not a decimal number or ISO 8601 date-time"
                    : "out of range (nanoseconds in 64 bits)";
    return rc == 0 ? 0 : -1;
}

/* --- columns --------------------------------------------------------------- */

struct column {
    char *label;
    char name[256];
    char unit[64];
};

/* The column SPEC names: exact header, bare name ignoring case, whole
 * header ignoring case, or a number from 1.  -1 when none. */
static long find_column(const struct column *cols, size_t ncols, const char *spec)
{
    for (size_t i = 0; i < ncols; i++)
        if (strcmp(cols[i].label, spec) == 0)
            return (long)i;
    for (size_t i = 0; i < ncols; i++)
        if (strcasecmp(cols[i].name, spec) == 0 || strcasecmp(cols[i].label, spec) == 0)
            return (long)i;
    if (*spec && strspn(spec, "0123456789") == strlen(spec) && strlen(spec) < 10) {
        long n = strtol(spec, NULL, 10);
        if (n >= 1 && (size_t)n <= ncols)
            return n - 1;
    }
    return -1;
}

static void list_columns(const struct column *cols, size_t ncols, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ncols && o + 8 < size; i++) {
        int n = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", cols[i].label);
        if (n < 0 || (size_t)n >= size - o) {
            snprintf(buf + (size - 5), 5, "...");
            return;
        }
        o += (size_t)n;
    }
}

/* Kind, unit and scale of column C under SPEC (NULL: from the header). */
static int column_meaning(const struct lexer *lx, const struct column *c,
                          const struct csv_column_spec *spec, struct csv_series *s, double *scale)
{
    const char *unit = spec && spec->unit ? spec->unit : c->unit;
    /* A header that is only a unit ("W", "mA") says both. */
    if (!*unit && csv_parse_unit(c->name))
        unit = c->name;
    const struct csv_unit *u = *unit ? csv_parse_unit(unit) : NULL;
    enum pmu_kind kind = u ? u->kind : *unit ? PMU_KIND_CUSTOM : kind_by_name(c->name);
    if (spec && spec->kind_given) {
        if (spec->kind != PMU_KIND_CUSTOM && *unit && (!u || u->kind != spec->kind)) {
            lex_error(lx, lx->record_line, "column '%s': unit '%s' does not measure %s", c->label,
                      unit,
                      spec->kind == PMU_KIND_POWER     ? "power"
                      : spec->kind == PMU_KIND_CURRENT ? "current"
                      : spec->kind == PMU_KIND_VOLTAGE ? "voltage"
                                                       : "energy");
            return -1;
        }
        kind = spec->kind;
    }
    s->kind = kind;
    if (kind == PMU_KIND_CUSTOM) {
        /* As written: a unit we do not know, or values kept unscaled. */
        s->unit = xstrdup(unit);
        *scale = 1;
    } else {
        s->unit = xstrdup(base_unit(kind));
        *scale = u ? u->scale : 1;
    }
    s->name = xstrdup(*c->name ? c->name : c->label);
    s->label = xstrdup(c->label);
    return 0;
}

/* --- the reader ------------------------------------------------------------ */

struct reader {
    struct lexer lx;
    struct column *cols;
    size_t ncols;
    long time_col;
    int64_t time_unit_ns;
    long *series_col; /* per series */
    double *scale;
    size_t rows_cap;
    bool first_is_datetime;
};

static int read_header(struct reader *r, const struct csv_timeline_options *o,
                       struct csv_timeline *t)
{
    struct lexer *lx = &r->lx;
    r->ncols = lx->nfields;
    r->cols = xcalloc(r->ncols, sizeof(*r->cols));
    for (size_t i = 0; i < r->ncols; i++) {
        r->cols[i].label = xstrdup(trim(lx->fields[i]));
        csv_split_header(r->cols[i].label, r->cols[i].name, sizeof(r->cols[i].name),
                         r->cols[i].unit, sizeof(r->cols[i].unit));
    }
    char list[300], b[64];
    list_columns(r->cols, r->ncols, list, sizeof(list));
    if (o->time_column) {
        r->time_col = find_column(r->cols, r->ncols, o->time_column);
        if (r->time_col < 0) {
            lex_error(lx, lx->record_line, "no time column %s in the header (%s)",
                      shown(o->time_column, b, sizeof(b)), list);
            return -1;
        }
    } else {
        r->time_col = 0;
        for (size_t i = r->ncols; i-- > 0;)
            if (says_time(r->cols[i].name))
                r->time_col = (long)i;
    }
    const struct column *tc = &r->cols[r->time_col];
    t->time_label = xstrdup(tc->label);
    const char *tu = o->time_unit ? o->time_unit : tc->unit;
    r->time_unit_ns = *tu ? csv_time_unit_ns(tu) : 1000000000;
    if (!r->time_unit_ns) {
        if (o->time_unit) {
            lex_error(lx, lx->record_line, "unknown time unit '%s' (s, ms, us or ns)", tu);
            return -1;
        }
        r->time_unit_ns = 1000000000; /* "Time (UTC)": date-times, or seconds */
    }

    size_t want = o->ncolumns ? o->ncolumns : r->ncols;
    if (want > CSV_TIMELINE_MAX_SERIES)
        want = CSV_TIMELINE_MAX_SERIES + 1;
    t->series = xcalloc(want, sizeof(*t->series));
    r->series_col = xcalloc(want, sizeof(*r->series_col));
    r->scale = xcalloc(want, sizeof(*r->scale));
    for (size_t i = 0; i < o->ncolumns; i++) {
        const struct csv_column_spec *spec = &o->columns[i];
        long c = find_column(r->cols, r->ncols, spec->column);
        if (c < 0) {
            lex_error(lx, lx->record_line, "no column %s in the header (%s)",
                      shown(spec->column, b, sizeof(b)), list);
            return -1;
        }
        if (c == r->time_col) {
            lex_error(lx, lx->record_line, "column '%s' is the time column", r->cols[c].label);
            return -1;
        }
        if (t->nseries == CSV_TIMELINE_MAX_SERIES) {
            lex_error(lx, lx->record_line, "more than %d value columns", CSV_TIMELINE_MAX_SERIES);
            return -1;
        }
        struct csv_series *s = &t->series[t->nseries];
        if (column_meaning(lx, &r->cols[c], spec, s, &r->scale[t->nseries]) != 0)
            return -1;
        r->series_col[t->nseries++] = c;
    }
    for (size_t c = 0; !o->ncolumns && c < r->ncols; c++) {
        struct csv_series probe = {0};
        double scale;
        if ((long)c == r->time_col)
            continue;
        if (column_meaning(lx, &r->cols[c], NULL, &probe, &scale) != 0)
            return -1;
        if (probe.kind == PMU_KIND_CUSTOM) {
            free(probe.name), free(probe.unit), free(probe.label);
            continue;
        }
        if (t->nseries == CSV_TIMELINE_MAX_SERIES) {
            free(probe.name), free(probe.unit), free(probe.label);
            lex_error(lx, lx->record_line, "more than %d value columns", CSV_TIMELINE_MAX_SERIES);
            return -1;
        }
        r->scale[t->nseries] = scale;
        t->series[t->nseries] = probe;
        r->series_col[t->nseries++] = (long)c;
    }
    if (!t->nseries) {
        lex_error(lx, lx->record_line,
                  "no column says it holds power, current, voltage or energy (%s): name the "
                  "value columns and their kinds",
                  list);
        return -1;
    }
    return 0;
}

static int read_row(struct reader *r, struct csv_timeline *t)
{
    struct lexer *lx = &r->lx;
    char b[64];
    /* A trailing separator some exporters write on data rows only. */
    while (lx->nfields > r->ncols && *trim(lx->fields[lx->nfields - 1]) == '\0')
        lx->nfields--;
    if (lx->nfields != r->ncols) {
        lex_error(lx, lx->record_line, "%zu field%s, the header has %zu", lx->nfields,
                  lx->nfields == 1 ? "" : "s", r->ncols);
        return -1;
    }
    bool comma = lx->sep != ',';
    const char *tf = trim(lx->fields[r->time_col]);
    int64_t ns;
    bool datetime = looks_like_datetime(tf);
    if (!*tf) {
        lex_error(lx, lx->record_line, "no time in column '%s'", t->time_label);
        return -1;
    }
    if (datetime) {
        const char *why;
        if (parse_datetime(tf, &ns, &why) != 0) {
            lex_error(lx, lx->record_line, "time %s: %s", shown(tf, b, sizeof(b)), why);
            return -1;
        }
    } else {
        int rc = parse_decimal_ns(tf, comma, r->time_unit_ns, &ns);
        if (rc != 0) {
            lex_error(lx, lx->record_line, "time %s: %s", shown(tf, b, sizeof(b)),
                      rc == -1 ? "not a decimal number or ISO 8601 date-time"
                               : "out of range (nanoseconds in 64 bits)");
            return -1;
        }
    }
    if (t->nrows == 0) {
        r->first_is_datetime = datetime;
        t->absolute = datetime || ns >= INT64_C(1000000000000000000);
    } else if (datetime != r->first_is_datetime) {
        lex_error(lx, lx->record_line, "time %s: the first row's time is %s",
                  shown(tf, b, sizeof(b)), datetime ? "a number" : "a date-time");
        return -1;
    } else if (ns < t->time_ns[t->nrows - 1]) {
        lex_error(lx, lx->record_line, "time %s goes back (the row before is later)",
                  shown(tf, b, sizeof(b)));
        return -1;
    }
    if (t->nrows == r->rows_cap) {
        size_t cap = r->rows_cap;
        t->time_ns = xgrow(t->time_ns, &cap, t->nrows + 1, sizeof(*t->time_ns));
        for (size_t i = 0; i < t->nseries; i++) {
            size_t c2 = r->rows_cap;
            t->series[i].values = xgrow(t->series[i].values, &c2, t->nrows + 1, sizeof(double));
        }
        r->rows_cap = cap;
    }
    t->time_ns[t->nrows] = ns;
    for (size_t i = 0; i < t->nseries; i++) {
        const char *f = trim(lx->fields[r->series_col[i]]);
        double v = NAN;
        if (*f) {
            if (parse_value(f, comma, &v) != 0) {
                lex_error(lx, lx->record_line, "column '%s': %s is not a decimal number",
                          t->series[i].label, shown(f, b, sizeof(b)));
                return -1;
            }
            v *= r->scale[i];
            if (!(fabs(v) <= CSV_TIMELINE_MAX_VALUE)) {
                lex_error(lx, lx->record_line, "column '%s': %s is out of range (at most %g %s)",
                          t->series[i].label, shown(f, b, sizeof(b)), CSV_TIMELINE_MAX_VALUE,
                          t->series[i].unit);
                return -1;
            }
        }
        t->series[i].values[t->nrows] = v;
    }
    t->nrows++;
    return 0;
}

int csv_timeline_parse(const char *name, const void *data, size_t len,
                       const struct csv_timeline_options *opts, struct csv_timeline *out)
{
    static const struct csv_timeline_options defaults;
    const struct csv_timeline_options *o = opts ? opts : &defaults;
    memset(out, 0, sizeof(*out));
    struct reader r = {
        .lx = {.name = name, .p = data, .end = (const unsigned char *)data + len, .line = 1}};
    struct lexer *lx = &r.lx;
    if (len >= 2 &&
        ((lx->p[0] == 0xff && lx->p[1] == 0xfe) || (lx->p[0] == 0xfe && lx->p[1] == 0xff))) {
        lex_error(lx, 1, "UTF-16 text: save it as UTF-8");
        return -1;
    }
    if (len >= 3 && lx->p[0] == 0xef && lx->p[1] == 0xbb && lx->p[2] == 0xbf)
        lx->p += 3;
    lx->buf = xmalloc(CSV_TIMELINE_MAX_RECORD + 1);
    lx->fields = xcalloc(CSV_TIMELINE_MAX_FIELDS, sizeof(*lx->fields));
    int rc = -1;
    while (lx->p < lx->end && line_is_blank_or_comment(lx))
        skip_line(lx);
    lx->sep = o->separator ? o->separator : detect_separator(lx->p, lx->end);
    int got = lex_record(lx);
    if (got == 0)
        lex_error(lx, lx->line, "no header row: the file is empty");
    if (got <= 0 || read_header(&r, o, out) != 0)
        goto done;
    while ((got = lex_record(lx)) == 1)
        if (read_row(&r, out) != 0)
            goto done;
    if (got < 0)
        goto done;
    if (out->nrows == 0) {
        lex_error(lx, lx->line, "no readings after the header");
        goto done;
    }
    rc = 0;
done:
    for (size_t i = 0; i < r.ncols; i++)
        free(r.cols[i].label);
    free(r.cols);
    free(r.series_col);
    free(r.scale);
    free(lx->buf);
    free(lx->fields);
    if (rc != 0)
        csv_timeline_free(out);
    return rc;
}

int csv_timeline_load(const char *path, const struct csv_timeline_options *opts,
                      struct csv_timeline *out)
{
    struct slurp s;
    memset(out, 0, sizeof(*out));
    if (slurp_path(path, CSV_TIMELINE_MAX_BYTES, &s) != 0)
        return -1;
    if (s.truncated) {
        pt_err("%s", s.error);
        slurp_free(&s);
        return -1;
    }
    int rc =
        csv_timeline_parse(strcmp(path, "-") == 0 ? "<stdin>" : path, s.data, s.len, opts, out);
    slurp_free(&s);
    return rc;
}

void csv_timeline_free(struct csv_timeline *t)
{
    for (size_t i = 0; i < t->nseries; i++) {
        free(t->series[i].name);
        free(t->series[i].unit);
        free(t->series[i].label);
        free(t->series[i].values);
    }
    free(t->series);
    free(t->time_ns);
    free(t->time_label);
    memset(t, 0, sizeof(*t));
}
