/* pmu_none.c - the "none" source of pmu.h: no channels, for runs without -p. */
#include "pmu/pmu.h"

#include <stddef.h>

#include "util/log.h"
#include "util/timeutil.h"

static int none_init(struct pmu_source *src, const char *arg)
{
    if (arg) {
        pt_err("PMU source 'none' takes no argument (got '%s')", arg);
        return -1;
    }
    src->nchannels = 0;
    src->channels = NULL;
    return 0;
}

static int none_read(struct pmu_source *src, double *values)
{
    (void)values;
    src->read_at = monotonic_ns();
    return 0;
}

static void none_release(struct pmu_source *src)
{
    (void)src;
}

const struct pmu_ops pmu_none_ops = {
    .name = "none",
    .about = "no measurement (the default)",
    .init = none_init,
    .read = none_read,
    .release = none_release,
};
