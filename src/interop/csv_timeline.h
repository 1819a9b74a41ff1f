/*
 * csv_timeline.h - a measurement device's CSV export read as a timeline: a
 * time column and value columns (power, current, voltage, an energy
 * counter, or anything else), each scaled to its base unit
 * (docs/formats/csv.md).
 *
 * Contract:
 *  - csv_timeline_parse() reads LEN bytes of DATA (not NUL-terminated; NAME
 *    is for messages) as text: an optional UTF-8 byte order mark, lines
 *    ending in LF or CRLF, blank lines and lines starting with '#' skipped,
 *    a header row, then one row per reading.  Fields are separated by
 *    OPTS->separator (0: whichever of ',', ';' or tab the header holds most
 *    outside quotes) and may be quoted as RFC 4180 says (doubled quotes
 *    inside, separators and line breaks allowed).  With a separator other
 *    than ',' a number may use a decimal comma.
 *  - The time column is OPTS->time_column (a header name, matched exactly,
 *    then without its unit and case, or a column number counted from 1), by
 *    default the first column whose name says time ("time", "timestamp",
 *    "t", "date"...), else the first column.  Its values are decimal
 *    numbers in OPTS->time_unit (else the header's unit, else seconds) or
 *    ISO 8601 date-times ("2024-03-05T14:22:01.5+01:00"; without a zone,
 *    local time).  Times must not go back; equal times are allowed.
 *  - Value columns are OPTS->columns, by default every other column whose
 *    header says what it measures.  A column's unit comes from its spec, or
 *    the header ("Power (W)", "Current [mA]", "Voltage/V", "P[mW]",
 *    "power_mW"), and gives its kind and scale; a spec's kind wins, and a
 *    header without a unit gives its kind by name ("Power", "I", "U"...),
 *    in the base unit.  Values are scaled to W, A, V or J; an unknown unit
 *    keeps the values as they are, as kind custom with that unit.  An empty
 *    field is a missing reading (NaN).
 *  - Errors are one line "NAME:LINE: what" through pt_err(), and -1; OUT is
 *    then empty.  Numbers are plain decimals (no NaN, infinity or hex),
 *    values at most 1e15 in magnitude after scaling, times within the
 *    years 1677..2262 as nanoseconds; a record is at most
 *    CSV_TIMELINE_MAX_RECORD bytes and CSV_TIMELINE_MAX_FIELDS fields, at
 *    most CSV_TIMELINE_MAX_SERIES value columns are taken, and every data
 *    row has the header's number of fields (empty trailing ones aside), so
 *    memory stays proportional to the input.
 *  - ABSOLUTE is set when times are date-times or numbers from 2001 on
 *    (1e9 s since the epoch); otherwise they are relative (a device's
 *    seconds since it started) and a join needs an offset (csv_join.h).
 *  - csv_timeline_load() reads PATH ("-" standard input; gzip, bzip2 and
 *    zstd decompressed by content) and parses it.
 *  - csv_parse_unit() and csv_split_header() are the unit table and header
 *    reading, shared with the option parser and the sample export.
 */
#ifndef PTPROF_INTEROP_CSV_TIMELINE_H
#define PTPROF_INTEROP_CSV_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/channel.h"

#define CSV_TIMELINE_MAX_RECORD 65536
#define CSV_TIMELINE_MAX_FIELDS 4096
#define CSV_TIMELINE_MAX_SERIES 64
#define CSV_TIMELINE_MAX_BYTES ((size_t)1 << 30)
#define CSV_TIMELINE_MAX_VALUE 1e15

/* A value column chosen by the user: "COL[:KIND][:UNIT]". */
struct csv_column_spec {
    const char *column; /* a header name or a column number from 1 */
    enum pmu_kind kind;
    bool kind_given;
    const char *unit; /* NULL: from the header */
};

struct csv_timeline_options {
    char separator;          /* 0: detect */
    const char *time_column; /* NULL: the default */
    const char *time_unit;   /* "s", "ms", "us", "ns"; NULL: the header's, else s */
    const struct csv_column_spec *columns;
    size_t ncolumns; /* 0: every column whose header says what it measures */
};

struct csv_series {
    char *name;  /* the header without its unit */
    char *unit;  /* "W", "A", "V", "J", or an unknown unit as written, or "" */
    char *label; /* the header as written, for messages */
    enum pmu_kind kind;
    double *values; /* one per row, in the base unit; NaN: no reading */
};

struct csv_timeline {
    size_t nrows;
    int64_t *time_ns; /* per row: since the epoch, or since the device's start */
    bool absolute;
    char *time_label; /* the time column's header */
    size_t nseries;
    struct csv_series *series;
};

/* A unit's kind and the factor to its base unit ("mW": power, 1e-3, "W"). */
struct csv_unit {
    const char *name;
    enum pmu_kind kind;
    double scale;
    const char *base;
};

int csv_timeline_parse(const char *name, const void *data, size_t len,
                       const struct csv_timeline_options *opts, struct csv_timeline *out);
int csv_timeline_load(const char *path, const struct csv_timeline_options *opts,
                      struct csv_timeline *out);
void csv_timeline_free(struct csv_timeline *t);

/* The unit NAME (exact, else ignoring case; "u" and "µ" both micro), or
 * NULL. */
const struct csv_unit *csv_parse_unit(const char *name);
/* A time as the time column holds it: a decimal number of UNIT_NS
 * nanoseconds, or an ISO 8601 date-time (*DATETIME set).  0, or -1 with
 * *WHY saying what is wrong. */
int csv_parse_time(const char *s, int64_t unit_ns, bool *datetime, int64_t *out, const char **why);
/* A time unit's length in nanoseconds ("s", "ms", "us", "µs", "ns"), or 0. */
int64_t csv_time_unit_ns(const char *name);
/* "power", "current", "voltage", "energy", "custom": 0 and the kind, or -1. */
int csv_parse_kind(const char *name, enum pmu_kind *kind);
/* Split header H into its bare name and its unit ("" when none) into the
 * buffers given; the unit is what a trailing (), [] or {} holds, what
 * follows a last '/', or a known unit after a last '_' or space. */
void csv_split_header(const char *h, char *name, size_t name_size, char *unit, size_t unit_size);

#endif
