/*
 * values.h - the value columns of an analysis: the value types (format/
 * profile.h: a pprof profile's sample types, a recorder's counters) its
 * profiles carry, one column per distinct name, in order of first
 * appearance across the profiles walked.
 *
 * Contract: value_columns_add() returns the column of TYPE, adding a copy
 * of it when its name is new; the same name with another unit or
 * aggregation is an error (-1 and a message in *ERROR, allocated: adding
 * bytes to nanoseconds would mean nothing).  value_columns_find() returns
 * a name's column or -1.  Columns never move, so a visitor sizes what it
 * keeps per column by value_columns.n and grows it when a later profile
 * adds columns.  value_columns_copy() makes an independent copy;
 * value_columns_free() frees the copies and leaves the set empty.
 */
#ifndef PTPROF_ANALYZE_VALUES_H
#define PTPROF_ANALYZE_VALUES_H

#include <stddef.h>

#include "model/profile.h"

struct value_columns {
    struct prof_value_type *types;
    size_t n;
};

int value_columns_add(struct value_columns *c, const struct prof_value_type *type, char **error);
int value_columns_find(const struct value_columns *c, const char *name);
void value_columns_copy(struct value_columns *dst, const struct value_columns *src);
void value_columns_free(struct value_columns *c);

#endif
