/*
 * channel.h - what a measurement channel is: its name, unit and kind.
 *
 * Contract: a profile's channels (model/profile.h) and the measurement
 * sources that fill them (pmu/pmu.h) share this description, and so do the
 * readers of a device's CSV.  The kinds' numbers are the original raw
 * format's magic numbers and never change.
 */
#ifndef PTPROF_MODEL_CHANNEL_H
#define PTPROF_MODEL_CHANNEL_H

/* Values are part of the original raw format (its magic number). */
enum pmu_kind {
    PMU_KIND_CUSTOM = 0,
    PMU_KIND_CURRENT = 1, /* A */
    PMU_KIND_VOLTAGE = 2, /* V */
    PMU_KIND_POWER = 3,   /* W */
    PMU_KIND_ENERGY = 4,  /* J, a monotonically increasing counter */
};

struct pmu_channel {
    char name[64];
    char unit[16];
    enum pmu_kind kind;
};

#endif
