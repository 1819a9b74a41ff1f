/*
 * fake_powercap.h - a simulated Linux powercap (RAPL) tree for tests.
 *
 * Builds, in a fresh temporary directory ROOT, the part of sysfs that the
 * "rapl" PMU source reads, laid out as the kernel lays it out:
 *
 *   ROOT/devices/virtual/powercap/intel-rapl/                 control type
 *   ROOT/devices/virtual/powercap/intel-rapl/intel-rapl:0/    package domain
 *   ROOT/devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:1/
 *   ROOT/class/powercap/intel-rapl, intel-rapl:0, intel-rapl:0:1  (symlinks)
 *
 * Each domain directory holds "name", "energy_uj", "max_energy_range_uj" and
 * "enabled".  Point ptprof at it with PTPROF_SYSFS_ROOT=ROOT (in-process:
 * fake_powercap_setenv(); for a child ptprof: put the variable in its
 * environment, or call fake_powercap_setenv() before fork/exec).
 *
 * Counters are rewritten in place (same inode, fixed width with leading
 * zeros, one pwrite), so a reader that keeps energy_uj open and preads it,
 * as ptprof does, sees every new value.  The current value lives only in the
 * file, so any process may advance it (e.g. a forked child while the parent
 * runs ptprof).  The reader corrects at most one wrap between two of its
 * reads; a wrap is only visible if the counter is read between wraps.
 *
 * Functions returning int give 0 on success, -1 on failure (with a message on
 * stderr and errno set).  Not thread-safe; one tree per object.
 *
 * Example:
 *   struct fake_powercap *fp = fake_powercap_create();
 *   fake_powercap_add(fp, "intel-rapl:0", "package-0", 1000, 262143328850);
 *   fake_powercap_setenv(fp);
 *   ... pmu_open("rapl") ...
 *   fake_powercap_advance(fp, "intel-rapl:0", 2000000);   (2 J more)
 *   ... pmu_read() ...
 *   fake_powercap_destroy(fp);                             (removes the tree)
 */
#ifndef PTPROF_TESTS_FAKE_POWERCAP_H
#define PTPROF_TESTS_FAKE_POWERCAP_H

#include <stdint.h>

struct fake_powercap;

/* A new, empty tree (ROOT/class/powercap exists) in $TMPDIR or /tmp; NULL on failure. */
struct fake_powercap *fake_powercap_create(void);

/* Remove the whole tree and free FP.  FP may be NULL. */
void fake_powercap_destroy(struct fake_powercap *fp);

/* ROOT: the value for PTPROF_SYSFS_ROOT. */
const char *fake_powercap_root(const struct fake_powercap *fp);

/* setenv("PTPROF_SYSFS_ROOT", ROOT, 1). */
int fake_powercap_setenv(const struct fake_powercap *fp);

/*
 * Add domain ID ("intel-rapl:N" for a package, "intel-rapl:N:M" for a
 * subdomain of the already added "intel-rapl:N"; other control types such
 * as "intel-rapl-mmio:0" work the same way).  NAME goes in the "name" file
 * (NULL: no name file).  MAX_RANGE_UJ is max_energy_range_uj (0: no such
 * file).  ENERGY_UJ is the counter's start value.
 */
int fake_powercap_add(struct fake_powercap *fp, const char *id, const char *name,
                      uint64_t energy_uj, uint64_t max_range_uj);

/* ROOT/class/powercap/ID, valid until destroy; NULL if ID was not added. */
const char *fake_powercap_dir(const struct fake_powercap *fp, const char *id);

/* Set the counter to ENERGY_UJ. */
int fake_powercap_set(struct fake_powercap *fp, const char *id, uint64_t energy_uj);

/*
 * Add DELTA_UJ to the counter, wrapping modulo max_energy_range_uj as the
 * hardware counter does (no wrap when the domain has no range).
 */
int fake_powercap_advance(struct fake_powercap *fp, const char *id, uint64_t delta_uj);

/* The counter's current value, read from the file; UINT64_MAX on failure. */
uint64_t fake_powercap_energy(const struct fake_powercap *fp, const char *id);

/* Overwrite energy_uj with text that is not a number: reads of it now fail. */
int fake_powercap_break(struct fake_powercap *fp, const char *id);

/*
 * Make ID's energy_uj readable by its owner only (mode 0400), as Linux 5.10
 * and later have it, and ROOT traversable by everyone, so that a process
 * of another user meets exactly what an unprivileged user meets in sysfs.
 */
int fake_powercap_root_only(struct fake_powercap *fp, const char *id);

#endif
