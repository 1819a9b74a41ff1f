/*
 * csv_options.c - see csv_options.h: parsing convert's CSV join options
 * and running the join.
 */
#include "cli/csv_options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/xalloc.h"

void csv_cli_init(struct csv_cli *c)
{
    memset(c, 0, sizeof(*c));
}

void csv_cli_free(struct csv_cli *c)
{
    for (size_t i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c->columns);
    memset(c, 0, sizeof(*c));
}

static char *keep(struct csv_cli *c, const char *s)
{
    c->strings = xrealloc(c->strings, (c->nstrings + 1) * sizeof(*c->strings));
    return c->strings[c->nstrings++] = xstrdup(s);
}

/* "COL[:KIND][:UNIT]": each part after COL is a kind if it names one, else
 * a unit. */
static int parse_column(struct csv_cli *c, const char *arg)
{
    char *s = keep(c, arg);
    struct csv_column_spec spec = {.column = strsep(&s, ":")};
    bool unit_given = false;
    if (!*spec.column) {
        pt_err("convert: --csv-column '%s' names no column", arg);
        return -1;
    }
    for (char *part; (part = strsep(&s, ":"));) {
        if (!*part)
            continue;
        enum pmu_kind kind;
        if (csv_parse_kind(part, &kind) == 0) {
            if (spec.kind_given) {
                pt_err("convert: --csv-column '%s' gives two kinds", arg);
                return -1;
            }
            spec.kind = kind;
            spec.kind_given = true;
        } else {
            if (unit_given) {
                pt_err("convert: --csv-column '%s': '%s' is neither a kind (power, current, "
                       "voltage, energy, custom) nor the only unit",
                       arg, part);
                return -1;
            }
            spec.unit = part;
            unit_given = true;
        }
    }
    if (spec.unit && (!spec.kind_given || spec.kind != PMU_KIND_CUSTOM) &&
        !csv_parse_unit(spec.unit)) {
        pt_err("convert: --csv-column '%s': unknown unit '%s' (W, mW, uW, kW, A, mA, uA, V, mV, "
               "J, mJ, Wh...; any unit with kind custom)",
               arg, spec.unit);
        return -1;
    }
    c->columns = xrealloc(c->columns, (c->ncolumns + 1) * sizeof(*c->columns));
    c->columns[c->ncolumns++] = spec;
    c->timeline.columns = c->columns;
    c->timeline.ncolumns = c->ncolumns;
    return 0;
}

/* "COL[:UNIT]" with UNIT a time unit. */
static int parse_time(struct csv_cli *c, const char *arg)
{
    char *s = keep(c, arg);
    char *colon = strrchr(s, ':');
    if (colon && csv_time_unit_ns(colon + 1)) {
        *colon = '\0';
        c->timeline.time_unit = colon + 1;
    } else if (colon && colon[1] && !strchr(colon + 1, ' ')) {
        pt_err("convert: --csv-time '%s': unknown time unit '%s' (s, ms, us, ns)", arg, colon + 1);
        return -1;
    }
    if (!*s) {
        pt_err("convert: --csv-time '%s' names no column", arg);
        return -1;
    }
    c->timeline.time_column = s;
    return 0;
}

static int parse_separator(struct csv_cli *c, const char *arg)
{
    if (strcmp(arg, "tab") == 0 || strcmp(arg, "\\t") == 0)
        c->timeline.separator = '\t';
    else if (strcmp(arg, "comma") == 0)
        c->timeline.separator = ',';
    else if (strcmp(arg, "semicolon") == 0)
        c->timeline.separator = ';';
    else if (strlen(arg) == 1 && arg[0] > ' ' && arg[0] < 0x7f && arg[0] != '"' && arg[0] != '#')
        c->timeline.separator = arg[0];
    else {
        pt_err("convert: --csv-separator '%s': one character (',', ';', '|'...) or 'tab'", arg);
        return -1;
    }
    return 0;
}

int csv_cli_option(struct csv_cli *c, int opt, const char *arg)
{
    c->companions |= opt != CSV_CLI_FIRST;
    switch (opt - CSV_CLI_FIRST) {
    case 0:
        c->path = arg;
        return 0;
    case 1:
        return parse_time(c, arg);
    case 2:
        return parse_column(c, arg);
    case 3: {
        int64_t ns;
        if (csv_parse_offset(arg, 0, &ns) != 0) {
            pt_err("convert: --csv-offset '%s': seconds (may be negative, or epoch seconds), an "
                   "ISO 8601 date-time, or profile[+-S]",
                   arg);
            return -1;
        }
        c->join.offset = arg;
        return 0;
    }
    case 4: {
        char *end;
        double v = strtod(arg, &end);
        if (end == arg || *end || !isfinite(v) || v <= 0 || v > 1e6) {
            pt_err("convert: --voltage '%s': volts, a number above 0", arg);
            return -1;
        }
        c->join.voltage = v;
        return 0;
    }
    case 5:
        return parse_separator(c, arg);
    case 6:
        if (strcmp(arg, "step") == 0)
            c->join.interpolation = CSV_STEP;
        else if (strcmp(arg, "linear") == 0)
            c->join.interpolation = CSV_LINEAR;
        else {
            pt_err("convert: --csv-interpolate '%s': step or linear", arg);
            return -1;
        }
        return 0;
    }
    pt_err("convert: internal: unknown CSV option %d", opt);
    return -1;
}

int csv_cli_check(const struct csv_cli *c)
{
    if (c->companions && !c->path) {
        pt_err("convert: --csv-* options and --voltage need --join-csv FILE");
        return -1;
    }
    return 0;
}

int csv_cli_join(const struct csv_cli *c, struct profile *p)
{
    if (!c->path)
        return 0;
    struct csv_timeline t;
    if (csv_timeline_load(c->path, &c->timeline, &t) != 0)
        return -1;
    struct csv_join_result r;
    int rc = csv_join(strcmp(c->path, "-") == 0 ? "<stdin>" : c->path, &t, &c->join, p, &r);
    if (rc == 0)
        pt_debug("%s: %zu channels joined, %zu samples with values, %.1f%% covered", c->path,
                 r.nchannels, r.covered_samples, 100 * r.covered);
    csv_timeline_free(&t);
    return rc;
}

void csv_cli_usage(FILE *out)
{
    fputs("Joining a measurement device's CSV (docs/formats/csv.md):\n"
          "      --join-csv FILE  add FILE's power/current/voltage/energy columns to the\n"
          "                       profile as channels, by time\n"
          "      --csv-time COL[:UNIT]  the time column (name or number from 1) and unit of\n"
          "                       its numbers: s, ms, us, ns (default: from the header)\n"
          "      --csv-column COL[:KIND][:UNIT]  a value column (repeatable; default: every\n"
          "                       column whose header says power, current, voltage or energy);\n"
          "                       KIND power, current, voltage, energy or custom; UNIT W, mW,\n"
          "                       A, mA, uA, V, mV, J, Wh...\n"
          "      --csv-offset S   seconds added to the CSV's times: the device's start for\n"
          "                       relative times (epoch seconds, a date-time, or\n"
          "                       profile[+-S]); a clock correction for absolute ones\n"
          "      --voltage V      currents times V volts are power (the original's -v)\n"
          "      --csv-separator C  ',', ';', 'tab'... (default: detected)\n"
          "      --csv-interpolate step|linear  between readings: each reading holds since\n"
          "                       the previous one (default), or a straight line\n",
          out);
}
