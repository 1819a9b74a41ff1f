/*
 * csv_options.h - the options with which "ptprof convert" joins a
 * measurement device's CSV to a profile (--join-csv and its --csv-*
 * companions, --voltage), kept here so cmd_convert.c stays thin.
 *
 * Contract: CSV_CLI_LONGOPTS are getopt_long entries whose values are
 * CSV_CLI_FIRST and up; csv_cli_option() takes such an option (returns 0,
 * or -1 after a message: a usage error), csv_cli_check() after the loop
 * refuses --csv-* options without --join-csv, and csv_cli_join() joins the
 * CSV to P when one was given (0, or -1 after a message: bad input).
 * csv_cli_usage() prints the options' help lines.  docs/formats/csv.md
 * describes them.
 */
#ifndef PTPROF_CLI_CSV_OPTIONS_H
#define PTPROF_CLI_CSV_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/csv_join.h"
#include "interop/csv_timeline.h"
#include "model/profile.h"

#define CSV_CLI_FIRST 0x2000 /* above analysis_args.h's options: convert takes both */

#define CSV_CLI_LONGOPTS                                                                           \
    {"join-csv", required_argument, NULL, CSV_CLI_FIRST},                                          \
        {"csv-time", required_argument, NULL, CSV_CLI_FIRST + 1},                                  \
        {"csv-column", required_argument, NULL, CSV_CLI_FIRST + 2},                                \
        {"csv-offset", required_argument, NULL, CSV_CLI_FIRST + 3},                                \
        {"voltage", required_argument, NULL, CSV_CLI_FIRST + 4},                                   \
        {"csv-separator", required_argument, NULL, CSV_CLI_FIRST + 5},                             \
    {                                                                                              \
        "csv-interpolate", required_argument, NULL, CSV_CLI_FIRST + 6                              \
    }

struct csv_cli {
    const char *path; /* --join-csv, NULL: none */
    struct csv_timeline_options timeline;
    struct csv_join_options join;
    struct csv_column_spec *columns;
    size_t ncolumns;
    char **strings; /* copies the specs point into */
    size_t nstrings;
    bool companions; /* a --csv-* option or --voltage was given */
};

void csv_cli_init(struct csv_cli *c);
int csv_cli_option(struct csv_cli *c, int opt, const char *arg);
int csv_cli_check(const struct csv_cli *c);
int csv_cli_join(const struct csv_cli *c, struct profile *p);
void csv_cli_usage(FILE *out);
void csv_cli_free(struct csv_cli *c);

#endif
