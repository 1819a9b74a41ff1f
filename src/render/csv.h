/*
 * csv.h - RFC 4180 fields.
 *
 * Contract: csv_field() writes S as one field, in double quotes (inner
 * quotes doubled) when it holds a comma, a quote, CR or LF.  csv_number()
 * writes V with up to 9 significant digits ("%.9g"), "nan"/"inf"/"-inf"
 * for values that are not finite.  Neither writes a separator.
 */
#ifndef PTPROF_RENDER_CSV_H
#define PTPROF_RENDER_CSV_H

#include <stdio.h>

void csv_field(FILE *out, const char *s);
void csv_number(FILE *out, double v);

#endif
