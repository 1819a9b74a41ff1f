/*
 * json.h - the pieces of JSON output (RFC 8259).
 *
 * Contract: json_string() writes S as a JSON string: quotes, backslash
 * and control characters escaped (\n, \t... or \u00XX), bytes that are
 * not valid UTF-8 replaced by U+FFFD, so the output always parses.
 * json_number() writes V ("%.9g"), or null when V is not finite (JSON has
 * no NaN or infinity).  json_bool() writes true or false.
 */
#ifndef PTPROF_RENDER_JSON_H
#define PTPROF_RENDER_JSON_H

#include <stdbool.h>
#include <stdio.h>

void json_string(FILE *out, const char *s);
void json_number(FILE *out, double v);
void json_bool(FILE *out, bool v);

#endif
