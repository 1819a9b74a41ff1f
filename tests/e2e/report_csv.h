/*
 * report_csv.h - what end-to-end tests read from "ptprof report --format
 * csv": one number of one row.
 *
 * Contract: report_csv() runs "ptprof report ARGS... --format csv", fails
 * the test unless it exits 0, and returns its stdout (free it).
 * report_csv_value() finds the row whose first field is KEY (a quoted
 * field is compared unquoted) and returns its COLUMN as a number, or NAN
 * when the row or the column is missing.  Rows whose key has a comma are
 * not looked into beyond the key: the tests ask about function names.
 */
#ifndef PTPROF_TESTS_E2E_REPORT_CSV_H
#define PTPROF_TESTS_E2E_REPORT_CSV_H

char *report_csv(const char *const *args);
double report_csv_value(const char *csv, const char *key, const char *column);

#endif
