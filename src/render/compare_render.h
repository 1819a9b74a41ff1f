/*
 * compare_render.h - a comparison (analyze/compare.h) as a text table, CSV
 * or JSON (docs/report.md).
 *
 * Contract: NAMES has 1 + R->nprofiles entries, the baseline first.
 *  - Table: what is compared, then per key the baseline's value and each
 *    profile's value and error, key columns fitted to WIDTH, then the
 *    aggregate per profile when one was asked for.
 *  - CSV without an aggregate: header "KEYS,baseline,NAME,NAME_error,..."
 *    and one line per key.  With an aggregate: header "profile,AGGREGATE"
 *    and one line per compared profile.
 *  - JSON: one object with the settings, the profiles (name, total,
 *    aggregate) and the rows (key, fields, baseline, weight, values,
 *    errors); non-finite numbers are null.
 * Returns 0, or -1 when writing failed.
 */
#ifndef PTPROF_RENDER_COMPARE_RENDER_H
#define PTPROF_RENDER_COMPARE_RENDER_H

#include <stdio.h>

#include "analyze/compare.h"
#include "render/report_render.h"

int render_compare(FILE *out, const struct compare_result *r, const char *const *names,
                   enum render_format format, int width);

#endif
