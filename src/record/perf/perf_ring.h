/*
 * perf_ring.h - one perf_event ring buffer, read by the profiler.
 *
 * Contract: perf_ring_map() maps the buffer of a perf_event fd (1 + 2^k
 * pages: the control page, then the data); perf_ring_peek() returns the
 * next whole record as contiguous bytes (in place, or, for a record that
 * wraps around the end of the buffer, copied into a scratch buffer) or
 * NULL when the kernel has written nothing more, and leaves it there:
 * the same record again until perf_ring_skip() takes it; the bytes stay
 * valid until then.  perf_ring_release() gives the space of every record
 * taken so far back to the kernel (data_tail), after which their bytes
 * may be overwritten.  The kernel never waits for us:
 * when the buffer is full it drops records and later writes a LOST record
 * saying how many.  A record header that cannot be right (size below 8 or
 * beyond what was written) means the buffer is out of step: everything
 * written so far is skipped and counted in `desync`.
 */
#ifndef PTPROF_RECORD_PERF_PERF_RING_H
#define PTPROF_RECORD_PERF_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_ring {
    int fd;
    void *base;      /* the mapping: control page + data */
    size_t map_size; /* bytes mapped */
    uint8_t *data;
    uint64_t mask;   /* data size - 1 */
    uint64_t head;   /* what the kernel has written, as last read */
    uint64_t tail;   /* what we have taken */
    uint64_t peeked; /* the size of the record perf_ring_peek() returned */
    uint8_t scratch[65536];
    uint64_t desync;
};

/* Map DATA_PAGES (a power of two) pages of data for FD; 0 or -1 (errno). */
int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages);
void perf_ring_unmap(struct perf_ring *r);
const uint8_t *perf_ring_peek(struct perf_ring *r, size_t *size);
void perf_ring_skip(struct perf_ring *r);
void perf_ring_release(struct perf_ring *r);

#endif
