/*
 * perf_data.h - perf.data, the file `perf record` writes, read into a
 * struct profile (docs/formats/perf-data.md).
 *
 * The data section holds the records the kernel wrote into perf's ring
 * buffers, decoded by the parser the perf engine uses (perf_records.h).
 *
 * Reader contract: perf_data_load_buffer() reads a little-endian file
 * (`PERFILE2`) or pipe stream (`perf record -o -`) and fills OUT with:
 *  - one sample per SAMPLE record (one thread sample), in time order, at
 *    its time: the wall clock when the file says how its clock maps to it
 *    (HEADER_CLOCK_DATA, `perf record -k CLOCK_MONOTONIC` and later), else
 *    perf's clock as it is (META clock says which);
 *  - its stack: the call chain (-g, kernel frames included, without the
 *    context markers), else the IP alone (a --call-graph dwarf file keeps
 *    its IP: its user stacks are not unwound);
 *  - processes, threads and their names from COMM, FORK and EXIT, execs
 *    with the program's path (the first file mapped after a COMM exec),
 *    maps from MMAP and MMAP2 (the kernel's own map, [kernel.kallsyms],
 *    given to every process), build-ids from the header's HEADER_BUILD_ID
 *    (and from MMAP2 records that carry one);
 *  - CPU time: each thread's grows by the period of its samples of a
 *    cpu-clock or task-clock event (nanoseconds), else by 1/frequency (or
 *    a millisecond) a sample;
 *  - META: command (perf's command line), host, kernel, perf_version,
 *    event (its name), frequency, stacks, clock, lost_samples.
 * Errors are "NAME: offset N: what is wrong" and -1 with OUT empty: a
 * big-endian file, a header or section that does not fit the file, attrs
 * too short for their sample layout, events whose records cannot be told
 * apart (several sample layouts and no PERF_SAMPLE_IDENTIFIER), a record
 * that does not fit its size, compressed data (perf record -z).  Nothing
 * is allocated from a count the file's bytes cannot hold.
 *
 * perf_data_detect() is true when DATA starts with perf's magic in
 * either byte order.
 */
#ifndef PTPROF_INTEROP_PERF_DATA_H
#define PTPROF_INTEROP_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

bool perf_data_detect(const void *data, size_t len);
int perf_data_load_buffer(const char *name, const void *data, size_t len, struct profile *out);

#endif
