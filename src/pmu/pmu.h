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
 *    opened at init, no allocation) and never block for long.  A reading
 *    is stamped when it is taken: read_at is the CLOCK_MONOTONIC instant
 *    it stands for, and `timing` says whether its values are the values at
 *    that instant (a file, a sensor) or averages over the time since the
 *    previous reading's read_at (rapl): docs/pmu.md, "The join".
 *  - A failed read returns -1 and leaves a one-line reason in `why`
 *    ("empty read", "not a number", strerror...); the next read tries
 *    again.  Deciding when a source is given up is the caller's.
 *  - pmu_pperf_magic() is the original raw format's magic number for the
 *    source's data (0 custom, 1 current, 2 voltage, 3 power).
 *  - The sysfs root defaults to "/sys" and is redirected by the environment
 *    variable PTPROF_SYSFS_ROOT, so tests can drive a simulated tree.
 */
#ifndef PTPROF_PMU_PMU_H
#define PTPROF_PMU_PMU_H

#include <stdint.h>

#include "model/channel.h"

/* What a reading's values stand for (pmu_source.timing). */
enum pmu_timing {
    PMU_AT_INSTANT = 0,    /* the values at read_at */
    PMU_OVER_INTERVAL = 1, /* averages from the previous reading's read_at to read_at */
};

struct pmu_source;

struct pmu_ops {
    const char *name;  /* what -p selects */
    const char *about; /* one line for --help */
    /* Set up SRC (channels, private state) from ARG (may be NULL). */
    int (*init)(struct pmu_source *src, const char *arg);
    /* Fill VALUES[0..nchannels-1] and src->read_at; return 0, or -1 with
     * src->why set when the read failed. */
    int (*read)(struct pmu_source *src, double *values);
    void (*release)(struct pmu_source *src);
};

struct pmu_source {
    const struct pmu_ops *ops;
    unsigned nchannels;
    struct pmu_channel *channels;
    enum pmu_timing timing;
    uint64_t read_at; /* CLOCK_MONOTONIC ns: the instant the last reading stands for */
    char why[160];    /* why the last read failed */
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
