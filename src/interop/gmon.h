/*
 * gmon.h - gprof's gmon.out (what a gcc -pg program writes at exit), read
 * into and written from a struct profile (profile.h).  The layout and our
 * choices are in docs/formats/gmon.md.
 *
 * The file: a 20-byte header ("gmon", a 4-byte version, 12 spare bytes),
 * then records, each a tag byte and its body, in the byte order and address
 * size of the profiled executable (nothing in the file says which):
 *   0 histogram: low_pc, high_pc (addresses), u32 bins, u32 rate (Hz),
 *     15-byte dimension name, 1-byte abbreviation, then `bins` u16 counts
 *     spread evenly over [low_pc, high_pc);
 *   1 call-graph arc: from_pc, self_pc (addresses), u32 count;
 *   2 basic-block counts: u32 n, then n pairs (address, count), each the
 *     size of an address.
 * Addresses are the executable's link-time addresses (glibc subtracts the
 * load address of a PIE).
 *
 * Reader contract: gmon_parse() checks the whole file before anything is
 * built and returns -1 after one message "NAME: offset N: what is wrong"
 * for: a bad magic, a version other than 1 (or 0, before basic blocks), a
 * record cut short, an unknown tag, a histogram with no bins or an empty or
 * inverted range, one whose dimension or scale (address units per bin)
 * differs from the first, one that overlaps another without covering
 * exactly the same range, a first rate of 0, and more than MAX_COUNTS
 * counts in all.  Records of a kind may come any number of times and are
 * unioned as gprof does: histograms of the same range add bin by bin, arcs
 * of the same (from_pc, self_pc) and blocks of the same address add their
 * counts.  The layout (address size, byte order) is the binary's when one
 * is given; otherwise the byte order is the one in which the version reads
 * 1, and the address size 8, or 4 when only that reads the whole file.
 * Memory is bounded by the input size: bins stay in the input buffer.
 *
 * gmon_load_buffer() turns the file into one process and one thread (pid
 * and tid 0: the format has neither).  Each histogram bin's counts are
 * spread evenly over the bin's address range in gprof's 2-byte units: one
 * sample per count when there are no more counts than units, else one
 * sample per unit standing for that unit's counts (a weight, profile.h),
 * and never more than GMON_SPREAD_MAX samples per bin (each a point of the
 * range standing for its share), so memory and time follow the file, not
 * its counts.  Each point carries the CPU time gprof credits its units
 * with: count x (its units / units per bin) / rate seconds, whatever whole
 * counts it stands for.  The histograms' ranges are kept in the meta entry
 * "gmon.histograms" ("0xLOW-0xHIGH/BINS", comma-separated) so that
 * gmon_set_binary() can split a point whose units a function starts inside
 * into one sample per function (its CPU time by units, its counts spread,
 * at least one each), as gprof splits a bin by the overlap; with the
 * binary, per-function CPU time equals gprof's self seconds.  Samples form
 * a synthetic timeline:
 * the thread's cumulative CPU time and the sample's time are the credit so
 * far (starting from 0).  A dimension other than
 * "seconds" leaves CPU time 0 (samples still count).  Arcs fill
 * profile.arcs (first appearance order); basic-block counts are checked,
 * counted in the meta entry "gmon.basic_blocks" and otherwise dropped.
 * Frequency is the first histogram's rate; totals: samples = counts, wall
 * time = CPU time.
 *
 * The executable: without a binary, one map named "a.out" (gprof's default
 * name; `-s DIR` finds DIR/a.out) starts at the lowest histogram low_pc,
 * file offset 0, which is where glibc starts the histogram
 * (__executable_start: the first PT_LOAD, so PC - start is the file offset
 * in the usual layouts) and runs past every address in the file.  With a
 * binary (OPTS->binary, gmon_load(), or gmon_set_binary() afterwards) the
 * maps are the binary's PT_LOAD segments at their link-time addresses, the
 * path absolute and the build-id recorded, and the process's exe is the
 * binary.  Samples in padding after a function move onto its last byte,
 * past a symbol without a size onto its first, as gprof credits them.
 *
 * Writer contract: gmon_write_stream() writes what P sampled in the
 * executable of its first process (the process's exe, else its first
 * executable map; OPTS->binary names the file to read for it, else the
 * map's path or its base name in OPTS->search_dirs) in that executable's
 * byte order and address size: one histogram over its executable PT_LOAD
 * segments with one bin per 2-byte unit, counts being CPU time in periods
 * of 1/rate (each thread's CPU time since its previous sample, attributed
 * to where it is now, on its first sample at most one period per sample it
 * stands for), rounded so
 * they add up to the rounded total; a bin above 65535 continues in further
 * records of the same range, which gprof adds.  The rate is OPTS->rate,
 * else P->frequency, else from the mean interval between samples, else
 * 100 Hz.  Call counts: P->arcs when it has any, else estimated from the
 * sampled stacks: every adjacent (caller frame, callee frame) pair whose
 * both ends are in the executable becomes an arc from the return address to
 * the callee's entry, counted once per thread sample showing it.  Samples
 * outside the executable are left out, as profil() leaves them out.
 * Returns 0, or -1 after a message (no executable, unreadable binary, no
 * sample in it is not an error: the histogram is then empty), or
 * GMON_WRITE_BAD_INPUT after a message when the profile's values would
 * make the file out of all proportion to it: a bin needing more than 256
 * records (CPU times no program reached), an arc more than 256 parts of
 * 2^32 calls; nothing is written then.
 * gmon_write() does the same into PATH through util/outfile.h (atomic, "-"
 * is stdout, compressed by suffix).
 */
#ifndef PTPROF_INTEROP_GMON_H
#define PTPROF_INTEROP_GMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

#define GMON_MAGIC_BYTES "gmon"
#define GMON_HEADER_SIZE 20u
#define GMON_TAG_HIST 0
#define GMON_TAG_ARC 1
#define GMON_TAG_BB 2
/* gmon_write*() refused the profile's values (an input error). */
#define GMON_WRITE_BAD_INPUT (-2)
/* Counts a profile may hold: their CPU time stays inside 64 bits of
 * nanoseconds at any rate (2^33 s at 1 Hz); 2.7 years of CPU at 100 Hz. */
#define GMON_MAX_COUNTS ((uint64_t)1 << 33)
/* Samples one bin's counts become at most (points of its range). */
#define GMON_SPREAD_MAX 64u
/* The map of an executable whose file is unknown (gprof's default). */
#define GMON_DEFAULT_BINARY "a.out"

struct gmon_layout {
    unsigned addr_size; /* 4 or 8 */
    bool big_endian;
};

/* One histogram range: every record with exactly this range, unioned. */
struct gmon_hist {
    uint64_t offset; /* of the first record's tag byte */
    uint64_t low_pc, high_pc;
    uint32_t nbins;
    uint32_t rate;
    size_t first_rec, nrecs; /* into gmon_file.bins_at */
};

struct gmon_bb {
    uint64_t addr;
    uint64_t count;
};

struct gmon_file {
    struct gmon_layout layout;
    uint32_t version;
    char dimension[16]; /* NUL-terminated */
    char abbrev;
    uint32_t rate;           /* the first histogram's */
    struct gmon_hist *hists; /* sorted by low_pc */
    size_t nhists;
    /* File offsets of every histogram record's bins, grouped by range. */
    uint64_t *bins_at;
    size_t nbins_at;
    struct prof_arc *arcs;
    size_t narcs;
    struct gmon_bb *bbs;
    size_t nbbs;
    uint64_t total_counts;
    const unsigned char *data; /* the input, borrowed */
};

struct gmon_read_options {
    const char *binary;  /* the profiled executable, or NULL */
    uint64_t max_counts; /* 0: GMON_MAX_COUNTS */
};

struct gmon_write_options {
    const char *binary; /* the executable's file, else found from the maps */
    const char *const *search_dirs;
    size_t nsearch_dirs;
    uint32_t rate; /* Hz, 0: from the profile */
};

/* True when DATA starts with the "gmon" magic (any version). */
bool gmon_detect(const void *data, size_t len);
/* The layout of an ELF file's gmon.out.  Returns 0, or -1 after a message. */
int gmon_binary_layout(const char *binary, struct gmon_layout *out);

/* LAYOUT NULL: guess it as the contract says. */
int gmon_parse(const char *name, const void *data, size_t len, const struct gmon_layout *layout,
               uint64_t max_counts, struct gmon_file *out);
/* Bin BIN of histogram range H, summed over its records. */
uint64_t gmon_hist_count(const struct gmon_file *g, size_t h, uint32_t bin);
void gmon_file_free(struct gmon_file *g);

int gmon_load_buffer(const char *name, const void *data, size_t len, struct profile *out);
/* The same with a binary or another limit on counts (OPTS may be NULL). */
int gmon_load_buffer_opts(const char *name, const void *data, size_t len,
                          const struct gmon_read_options *opts, struct profile *out);
/* Read PATH (decompressing as load.h does) with BINARY (may be NULL). */
int gmon_load(const char *path, const char *binary, struct profile *out);
/* Map a gmon profile's executable to BINARY's segments (P must come from
 * this reader).  Returns 0, or -1 after a message (P unchanged). */
int gmon_set_binary(struct profile *p, const char *binary);

int gmon_write_stream(const struct profile *p, const char *name, FILE *out,
                      const struct gmon_write_options *opts);
int gmon_write(const struct profile *p, const char *path, const struct gmon_write_options *opts);
/* gmon_write() with the executable found from the maps, the rate from P. */
int gmon_write_path(const struct profile *p, const char *path);

#endif
