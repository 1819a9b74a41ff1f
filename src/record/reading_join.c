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

static struct joined_reading *at_index(struct reading_join *j, size_t k)
{
    return &j->ring[(j->head + k) % READING_JOIN_MAX];
}

void reading_join_add(struct reading_join *j, const double *values, uint64_t at)
{
    if (j->count == READING_JOIN_MAX) {
        reading_join_pop(j);
        j->dropped++;
    }
    struct joined_reading *r = at_index(j, j->count++);
    r->at = at;
    r->end = at;
    r->end_known = j->timing == PMU_OVER_INTERVAL;
    memcpy(r->values, values, j->nchannels * sizeof(double));
}

void reading_join_close(struct reading_join *j)
{
    for (size_t k = 0; k < j->count; k++) {
        struct joined_reading *r = at_index(j, k);
        if (!r->end_known) {
            r->end = k + 1 < j->count ? at_index(j, k + 1)->at : r->at;
            r->end_known = true;
        }
    }
}

bool reading_join_next_at(const struct reading_join *j, uint64_t *at)
{
    if (j->count < 2)
        return false;
    *at = j->ring[(j->head + 1) % READING_JOIN_MAX].at;
    return true;
}

void reading_join_set_end(struct reading_join *j, uint64_t end)
{
    if (!j->count)
        return;
    j->ring[j->head].end = end;
    j->ring[j->head].end_known = true;
}

const struct joined_reading *reading_join_ended(const struct reading_join *j, uint64_t t)
{
    if (!j->count)
        return NULL;
    const struct joined_reading *r = &j->ring[j->head];
    return r->end_known && r->end < t ? r : NULL;
}

const struct joined_reading *reading_join_newest(const struct reading_join *j)
{
    return j->count ? &j->ring[(j->head + j->count - 1) % READING_JOIN_MAX] : NULL;
}

void reading_join_pop(struct reading_join *j)
{
    if (!j->count)
        return;
    j->head = (j->head + 1) % READING_JOIN_MAX;
    j->count--;
}

void reading_join_free(struct reading_join *j)
{
    for (size_t i = 0; i < READING_JOIN_MAX; i++) {
        free(j->ring[i].values);
        j->ring[i].values = NULL;
    }
}
