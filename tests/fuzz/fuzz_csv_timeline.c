/* fuzz_csv_timeline.c - libFuzzer target for the device CSV reader
 * (interop/csv_timeline.h) and its join (analyze/csv_join.h): what reads
 * must have times that never go back and finite, bounded values, and must
 * join to a profile spanning it with every new sample value either NaN or
 * within the readings' range (a mean or an interpolation cannot leave
 * it).  The first byte chooses the separator and the interpolation. */
#include "analyze/csv_join.h"
#include "interop/csv_timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Rejected inputs print a line through stdio's stderr. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

static void check_join(const struct csv_timeline *t, enum csv_interpolation how)
{
    struct profile p;
    profile_init(&p);
    p.nsamples = 4;
    p.samples = calloc(p.nsamples, sizeof(*p.samples));
    if (!p.samples)
        abort();
    int64_t first = t->time_ns[0], last = t->time_ns[t->nrows - 1];
    int64_t step = (last / 2 - first / 2) / 2 + 1;
    for (size_t i = 0; i < p.nsamples; i++)
        p.samples[i].time_ns = (uint64_t)(first + step * (int64_t)i);
    struct csv_join_result r;
    if (csv_join("fuzz", t, &(struct csv_join_options){.offset = "0", .interpolation = how}, &p,
                 &r) == 0) {
        if (p.nchannels != r.nchannels || r.covered < 0 || r.covered > 1)
            abort();
        for (size_t c = 0; c < t->nseries; c++) {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < t->nrows; i++) {
                double v = t->series[c].values[i];
                if (!isnan(v))
                    lo = fmin(lo, v), hi = fmax(hi, v);
            }
            /* A mean is a difference of running integrals: its rounding
             * grows with the whole span over the sample's interval. */
            double span = (double)((uint64_t)last - (uint64_t)first);
            for (size_t i = 0; i < p.nsamples; i++) {
                double v = p.samples[i].values[c];
                double slack = 1e-9 * fmax(fabs(lo), fabs(hi)) * (1 + span / (double)step);
                if (!isnan(v) && (v < lo - slack || v > hi + slack))
                    abort();
            }
        }
    }
    profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char seps[] = {0, ',', ';', '\t'};
    struct csv_timeline_options o = {0};
    enum csv_interpolation how = CSV_STEP;
    if (size && data[0] < 8) {
        o.separator = seps[data[0] & 3];
        how = data[0] & 4 ? CSV_LINEAR : CSV_STEP;
        data++, size--;
    }
    struct csv_timeline t;
    if (csv_timeline_parse("fuzz", data, size, &o, &t) != 0) {
        if (t.nrows || t.series || t.time_ns)
            abort(); /* a failed parse leaves nothing behind */
        return 0;
    }
    if (!t.nrows || !t.nseries || t.nseries > CSV_TIMELINE_MAX_SERIES)
        abort();
    for (size_t i = 1; i < t.nrows; i++)
        if (t.time_ns[i] < t.time_ns[i - 1])
            abort();
    for (size_t c = 0; c < t.nseries; c++)
        for (size_t i = 0; i < t.nrows; i++) {
            double v = t.series[c].values[i];
            if (!isnan(v) && !(fabs(v) <= CSV_TIMELINE_MAX_VALUE))
                abort();
        }
    check_join(&t, how);
    csv_timeline_free(&t);
    return 0;
}
