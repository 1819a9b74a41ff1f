/* report_csv.c - see report_csv.h. */
#include "report_csv.h"
#include "test_record_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *report_csv(const char *const *args)
{
    char *ptprof = build_ptprof();
    const char *argv[32] = {ptprof, "report"};
    size_t n = 2;
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(n, 28, "too many report arguments");
        argv[n++] = args[i];
    }
    argv[n++] = "--format";
    argv[n++] = "csv";
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof report\n" RUN_FMT, RUN_ARGS(&res));
    char *out = res.out;
    res.out = NULL;
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

/* Index of column NAME in the header line starting at HEADER, or -1. */
static int column_of(const char *header, const char *name)
{
    size_t len = strlen(name);
    int col = 0;
    for (const char *p = header; *p && *p != '\n'; col++) {
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\n' || p[len] == '\0'))
            return col;
        p += strcspn(p, ",\n");
        if (*p != ',')
            break;
        p++;
    }
    return -1;
}

/* Whether the line at LINE starts with the field KEY; *REST is set after it. */
static int starts_with_key(const char *line, const char *key, const char **rest)
{
    size_t len = strlen(key);
    if (line[0] == '"')
        line++;
    if (strncmp(line, key, len) != 0)
        return 0;
    const char *p = line + len;
    if (*p == '"')
        p++;
    if (*p != ',')
        return 0;
    *rest = p;
    return 1;
}

double report_csv_value(const char *csv, const char *key, const char *column)
{
    int col = column_of(csv, column);
    if (col <= 0)
        return NAN;
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line, '\n')) {
        line++;
        const char *p;
        if (!starts_with_key(line, key, &p))
            continue;
        for (int c = 0; c < col; c++) {
            if (*p != ',')
                return NAN;
            p++;
            if (c + 1 < col)
                p += strcspn(p, ",\n");
        }
        char *end;
        double v = strtod(p, &end);
        return end == p ? NAN : v;
    }
    return NAN;
}
