/*
 * gperftools.h - the CPU profile written by gperftools' libprofiler
 * (CPUPROFILE=...), read into and written from a struct profile (profile.h).
 * The layout and our choices are in docs/formats/gperftools.md.
 *
 * Reader contract: gperftools_detect() recognises the header (slots 0,
 * N >= 3, 0 at the start) and tells the slot size (4 or 8 bytes) and byte
 * order from where the non-zero header count sits, so a 32-bit or
 * big-endian profile reads on any machine.  gperftools_load_buffer() fills
 * OUT with one process and one thread (pid and tid 0: the format has
 * neither), one stack per distinct call chain (the records' PCs as they
 * are, leaf first: the interrupted PC, then return addresses), and one
 * sample per chain standing for its ticks (a weight, profile.h): records
 * with the same chain are summed, chains in the order they first appear
 * (the order of records means nothing in this format), except that the
 * first chain's first tick is a sample of its own (a thread's first
 * appearance counts no wall time).  The samples form a synthetic timeline
 * of one period per tick: a sample standing for N ticks comes N periods
 * after the previous one and its thread has used N more periods of CPU,
 * so CPU-time metrics count one period per tick.  Frequency is 1e6 /
 * period_us; totals say how many ticks there were.  The mapped-objects
 * text after the trailer gives the maps (pid 0, valid from time 0), with
 * "$build" replaced by the last "build=" path; other lines are ignored.
 * The process's exe is the last build= path, else the first mapped file.
 * A text whose last line has no newline was cut: that line is left out and
 * the profile is truncated there (a warning).
 *
 * Errors are "NAME: offset N: what is wrong" and -1, with OUT empty: a bad
 * header, a record with a zero count or depth that is not the trailer, a
 * record cut short, a file without the trailer (0, 1, 0), a sampling period
 * of 0 or over 1e8 us, ticks adding up past 2^64 ns of CPU time.  Memory and
 * time are proportional to the input's size, whatever its counts; call
 * chains deeper than GPERFTOOLS_MAX_DEPTH keep their innermost frames, as
 * the native format does (a warning; their samples are flagged
 * PROF_THREAD_STACK_TRUNCATED).
 *
 * Writer contract: gperftools_write() writes P as a 64-bit little-endian
 * profile into OUT (NAME is for messages): header, one record per distinct
 * call chain (the sample's PC then its stack's return addresses) with its
 * count, the trailer, then the maps as /proc/PID/maps lines, so
 * google-pprof and go tool pprof read it.  gperftools is a CPU profile of
 * one process: counts are CPU time in sampling periods (each thread's CPU
 * time since its previous appearance, attributed to where it is now; on a
 * thread's first appearance at most one period), rounded so that the
 * counts add up to the rounded total.  The period is 1e6 / P->frequency
 * microseconds, else the mean interval between samples, else 10 ms.  Only
 * the first process is written (a warning says how many samples of other
 * processes were left out) with the maps of it that were live while it was
 * sampled.  Returns 0, or -1 after a message when writing failed.
 * gperftools_write_path() does the same into PATH through util/outfile.h
 * (atomic, "-" is stdout, compressed by suffix).
 */
#ifndef PTPROF_INTEROP_GPERFTOOLS_H
#define PTPROF_INTEROP_GPERFTOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

#define GPERFTOOLS_MAX_DEPTH 4096
/* Header slots after the count slot that a reader accepts (3 are written). */
#define GPERFTOOLS_MAX_HEADER_WORDS 1024
/* The period when nothing in a profile says what it was (gperftools'). */
#define GPERFTOOLS_DEFAULT_PERIOD_US 10000u

struct gperftools_layout {
    unsigned slot_size; /* 4 or 8 */
    bool big_endian;
};

/* True when DATA starts with a gperftools CPU profile header; LAYOUT may
 * be NULL. */
bool gperftools_detect(const void *data, size_t len, struct gperftools_layout *layout);
int gperftools_load_buffer(const char *name, const void *data, size_t len, struct profile *out);

int gperftools_write(const struct profile *p, const char *name, FILE *out);
int gperftools_write_path(const struct profile *p, const char *path);

#endif
