/*
 * pperf.h - the original sampler's raw profile format ("--format pperf").
 *
 * Layout (little-endian, packed, as specs/sampler-readme.txt documents it):
 *   header:  u32 magic (PMU kind: 0 custom, 1 current, 2 voltage, 3 power)
 *            u64 total wall time (us)   u64 sampler latency (us)
 *            u64 number of samples      u32 PMU sample size in bytes
 *            u32 number of maps
 *   samples: u64 wall time (us since the epoch; the spec's "(ms)" is wrong)
 *            PMU sample size bytes (doubles, one per channel)
 *            u32 thread count, then per thread: u32 tid, u64 pc, u64 cpu ns
 *   maps:    u64 address (load base: start of the file's mapping at file
 *            offset 0), u64 size (to the end of its last executable
 *            mapping), char[256] label (the file's base name, NUL padded)
 *
 * Writer contract: the header comes first but its counts are known only at
 * the end, so the writer back-patches a seekable output and otherwise
 * buffers the body in an unlinked temporary file.  Output goes through
 * util/outfile.h: the file at PATH is replaced only by a complete profile;
 * pperf_writer_abort() leaves an existing file untouched.
 *
 * Reader contract: pperf_load_buffer() validates every count and length
 * against the bytes actually present before allocating, and on damage
 * returns -1 after printing "NAME: offset N: what is wrong".  Nothing in a
 * file can make it crash, loop or allocate more than the input justifies.
 */
#ifndef PTPROF_INTEROP_PPERF_H
#define PTPROF_INTEROP_PPERF_H

#include <stddef.h>
#include <stdint.h>

#include "format/profile.h"
#include "record/maps.h"

#define PPERF_HEADER_SIZE 36u
#define PPERF_THREAD_SIZE 20u
#define PPERF_MAP_SIZE 272u
#define PPERF_LABEL_SIZE 256u
/* Largest PMU sample we write or accept (512 channels of doubles). */
#define PPERF_PMU_SIZE_MAX 4096u

struct pperf_thread {
    uint32_t tid;
    uint64_t pc;
    uint64_t cpu_ns;
};

struct pperf_map {
    uint64_t address;
    uint64_t size;
    char label[PPERF_LABEL_SIZE]; /* always NUL terminated in memory */
};

struct pperf_sample {
    uint64_t wall_us;
    const double *pmu;            /* pmu_size / 8 values (pmu_size % 8 == 0) */
    const unsigned char *pmu_raw; /* pmu_size raw bytes, whatever their type */
    uint32_t nthreads;
    struct pperf_thread *threads;
};

struct pperf_profile {
    uint32_t magic;
    uint64_t wall_us;
    uint64_t latency_us;
    uint64_t nsamples;
    uint32_t pmu_size;
    uint32_t nmaps;
    struct pperf_sample *samples;
    struct pperf_map *maps;
    void *storage; /* owns everything above */
};

/* --- writing --- */
struct pperf_writer;

struct pperf_writer *pperf_writer_open(const char *path, uint32_t magic, uint32_t pmu_size);
int pperf_writer_sample(struct pperf_writer *w, uint64_t wall_us, const void *pmu_data,
                        uint32_t nthreads, const struct pperf_thread *threads);
/* Write maps and header, then commit the file.  Frees W either way. */
int pperf_writer_finish(struct pperf_writer *w, uint64_t wall_us, uint64_t latency_us,
                        const struct pperf_map *maps, uint32_t nmaps);
void pperf_writer_abort(struct pperf_writer *w);

/* Turn /proc/PID/maps entries into the format's map entries: one per
 * loaded ELF file that has an executable mapping, plus [vdso]. */
size_t pperf_maps_from_proc(const struct map_list *maps, struct pperf_map **out);

/* --- reading --- */
int pperf_load_buffer(const char *name, const void *data, size_t len, struct pperf_profile *out);
int pperf_load(const char *path, struct pperf_profile *out);
void pperf_free(struct pperf_profile *p);

/* The original raw format as a struct profile (pperf_profile.c): one
 * process (pid = the first sample's first tid, or 0), one thread per tid
 * seen, pmu_size/8 channels of the header's magic kind, the map entries as
 * maps, the header as totals; frequency unknown (0). */
int profile_from_pperf(const struct pperf_profile *in, struct profile *out);

#endif
