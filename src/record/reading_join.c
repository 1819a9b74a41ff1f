/* reading_join.c - see reading_join.h */
#include "record/reading_join.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void reading_join_init(struct reading_join *j, enum pmu_timing timing, unsigned nchannels)
{
    memset(j, 0, sizeof(*j));
    j->timing = timing;
    j->nchannels = nchannels;
    for (size_t i = 0; i < READING_JOIN_MAX; i++)
        j->ring[i].values = xcalloc(nchannels ? nchannels : 1, sizeof(double));
}

static const struct joined_reading *kept(const struct reading_join *j, size_t k)
{
    return &j->ring[(j->head + k) % READING_JOIN_MAX];
}

void reading_join_add(struct reading_join *j, const double *values, uint64_t at)
{
    if (j->count == READING_JOIN_MAX) {
        j->head = (j->head + 1) % READING_JOIN_MAX;
        j->count--;
        j->dropped++;
    }
    struct joined_reading *r = &j->ring[(j->head + j->count++) % READING_JOIN_MAX];
    r->at = at;
    memcpy(r->values, values, j->nchannels * sizeof(double));
}

const double *reading_join_values_at(const struct reading_join *j, uint64_t t)
{
    if (!j->count)
        return NULL;
    size_t k = 0; /* the first kept at or after T */
    while (k < j->count && kept(j, k)->at < t)
        k++;
    if (k == j->count)
        return kept(j, k - 1)->values;
    if (j->timing == PMU_OVER_INTERVAL || k == 0)
        return kept(j, k)->values;
    const struct joined_reading *before = kept(j, k - 1), *after = kept(j, k);
    return t - before->at <= after->at - t ? before->values : after->values;
}

void reading_join_forget_before(struct reading_join *j, uint64_t t)
{
    /* The oldest is no one's once the next one was taken by T: for T and
     * later, that one is nearer, and its interval comes after. */
    while (j->count >= 2 && kept(j, 1)->at <= t) {
        j->head = (j->head + 1) % READING_JOIN_MAX;
        j->count--;
    }
}

void reading_join_free(struct reading_join *j)
{
    for (size_t i = 0; i < READING_JOIN_MAX; i++) {
        free(j->ring[i].values);
        j->ring[i].values = NULL;
    }
}
