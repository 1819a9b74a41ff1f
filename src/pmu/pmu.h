/*
 * pmu.h - measurement sources sampled alongside the threads.
 *
 * A "PMU" is anything that yields one or more numbers per sample: the RAPL
 * energy counters, a hwmon sensor, external equipment.  Each source is a
 * plug-in (one file per source) behind struct pmu_ops; the recorder picks
 * one at run time with "-p NAME[:ARG]" and never knows which it got.
 *
 * Contract:
 *  - pmu_open(spec) parses "NAME[:ARG]", initialises the source and returns
 *    it, or prints one line naming the problem (unknown source, ARG naming
 *    no domain, unreadable file) and returns NULL.  A spec that names no
 *    known source but is an existing path is accepted as the original
 *    sampler's argument: a powercap domain directory selects "rapl", a
 *    plain file selects "file".
 *  - Every source describes its channels (name, unit, kind) before the first
 *    read; the count never changes afterwards.
 *  - pmu_read() fills one double per channel.  It is called once per sample
 *    from the recorder's loop, so it must be cheap (pread on descriptors
 *    opened at init, no allocation) and never block for long.
 *  - pmu_pperf_magic() is the original raw format's magic number for the
 *    source's data (0 custom, 1 current, 2 voltage, 3 power).
 *  - The sysfs root defaults to "/sys" and is redirected by the environment
 *    variable PTPROF_SYSFS_ROOT, so tests can drive a simulated tree.
 */
#ifndef PTPROF_PMU_PMU_H
#define PTPROF_PMU_PMU_H

#include <stdint.h>

#include "model/channel.h"

struct pmu_source;

struct pmu_ops {
    const char *name;  /* what -p selects */
    const char *about; /* one line for --help */
    /* Set up SRC (channels, private state) from ARG (may be NULL). */
    int (*init)(struct pmu_source *src, const char *arg);
    /* Fill VALUES[0..nchannels-1]; return 0, or -1 when the source failed. */
    int (*read)(struct pmu_source *src, double *values);
    void (*release)(struct pmu_source *src);
};

struct pmu_source {
    const struct pmu_ops *ops;
    unsigned nchannels;
    struct pmu_channel *channels;
    void *priv;
};

struct pmu_source *pmu_open(const char *spec);
int pmu_read(struct pmu_source *src, double *values);
void pmu_close(struct pmu_source *src);
uint32_t pmu_pperf_magic(const struct pmu_source *src);
/* The registered sources, NULL-terminated, for --help and lookup. */
const struct pmu_ops *const *pmu_sources(void);
/* "/sys" or $PTPROF_SYSFS_ROOT. */
const char *pmu_sysfs_root(void);

#endif
