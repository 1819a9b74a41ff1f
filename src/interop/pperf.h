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
 *   maps:    one per executable mapping of a file, as /proc/PID/maps
 *            shows it: u64 address (its start), u64 size (end - start),
 *            char[256] label (the file's base name, NUL padded: the
 *            original's post-processing opens SEARCH_DIR/LABEL; ptprof
 *            before issue 20 wrote the whole path).  A reader puts
 *            a PC at file address pc - address + the p_vaddr of the file's
 *            executable PT_LOAD (the original's rule; ptprof's reader uses
 *            the segment's page-aligned file offset, exact for any layout).
 *            ptprof 0.2.0 and earlier wrote instead one entry per loaded
 *            file from its load base (where file offset 0 is mapped) with
 *            its base name, and [vdso]; the reader takes both (pperf_place.c).
 *
 * The original has no "no PMU": its default build's dummy PMU reports power
 * (magic 3) and one double 0.0 per sample, and its post-processing accepts
 * only 8 PMU bytes.  A run without a measurement is written that way
 * (PPERF_DUMMY_*), and the reader turns it back into no channel.
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

#include "model/profile.h"
#include "model/maps.h"

#define PPERF_HEADER_SIZE 36u
#define PPERF_THREAD_SIZE 20u
#define PPERF_MAP_SIZE 272u
#define PPERF_LABEL_SIZE 256u
/* Largest PMU sample we write or accept (512 channels of doubles). */
#define PPERF_PMU_SIZE_MAX 4096u
/* What the original's default build (its dummy PMU) writes: power, 0.0. */
#define PPERF_DUMMY_MAGIC 3u
#define PPERF_DUMMY_PMU_SIZE 8u

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
/* PMU_DATA holds pmu_size bytes; NULL writes zeros (0.0 doubles). */
int pperf_writer_sample(struct pperf_writer *w, uint64_t wall_us, const void *pmu_data,
                        uint32_t nthreads, const struct pperf_thread *threads);
/* Write maps and header, then commit the file.  Frees W either way. */
int pperf_writer_finish(struct pperf_writer *w, uint64_t wall_us, uint64_t latency_us,
                        const struct pperf_map *maps, uint32_t nmaps);
void pperf_writer_abort(struct pperf_writer *w);

/* Turn /proc/PID/maps entries into the format's map entries: one per
 * executable mapping of a file (bracketed names such as [vdso] and
 * anonymous memory are left out), its start, size and the base name of its
 * path, as the original wrote them. */
size_t pperf_maps_from_proc(const struct map_list *maps, struct pperf_map **out);

/* --- reading --- */
int pperf_load_buffer(const char *name, const void *data, size_t len, struct pperf_profile *out);
int pperf_load(const char *path, struct pperf_profile *out);
void pperf_free(struct pperf_profile *p);

/* --- placing map entries in their files (pperf_place.c) --- */

/* What a map entry's address is: the start of an executable mapping (the
 * original's entries, and ptprof's after 0.2.0), or the load base of a
 * file (ptprof 0.2.0 and earlier). */
enum pperf_entry_form {
    PPERF_ENTRY_MAPPING,
    PPERF_ENTRY_LOAD,
};

struct pperf_place {
    enum pperf_entry_form form;
    uint64_t offset; /* the file offset mapped at the entry's address */
};

/* Decide the form of every map entry of IN and the file offset at its
 * address, into OUT[0..nmaps-1].  The labelled file is the one FINDER
 * finds (symbol/binary_finder.h: a file the user named with --binary, else
 * the search directories, the label's path and the standard library
 * directories, as the symbolizer looks); when found, the entry's size says
 * which form it is (an executable segment's mapped size, or a load base up
 * to the end of the code), else its label does (a path: a mapping, as
 * ptprof wrote them; a base name: a mapping, the original's form, unless
 * the table has a bracketed name, which only ptprof 0.2.0 wrote: a load).  An entry of the
 * original's form whose file cannot be read has no known offset: it gets 0
 * and one warning per label, naming NAME. */
struct binary_finder;
void pperf_place_maps(const char *name, const struct pperf_profile *in,
                      struct binary_finder *finder, struct pperf_place *out);

/* The original raw format as a struct profile (pperf_profile.c): one
 * process (pid = the first sample's first tid, or 0), one thread per tid
 * seen, pmu_size/8 channels of the header's magic kind (none for the
 * original's dummy PMU: power 0.0 in every sample), the map entries as maps
 * placed by pperf_place_maps() with the binaries found where SEARCH says
 * (-s DIR and --binary of the analysing commands; NULL: nothing said), then
 * next to PATH, the profile's file, and in the working directory
 * (binary_search_dirs(); PATH may be NULL or "-"), the header as totals;
 * frequency unknown (0).  META "pperf.maps" says the entries' form
 * ("mapping", "load" or "mixed"; absent without entries) and META
 * "pperf.pmu" is "dummy" for the dummy PMU. */
struct binary_search;
int profile_from_pperf(const struct pperf_profile *in, const char *path,
                       const struct binary_search *search, struct profile *out);

#endif
