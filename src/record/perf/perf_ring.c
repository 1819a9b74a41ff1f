/* perf_ring.c - see perf_ring.h */
#include "record/perf/perf_ring.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(r, 0, offsetof(struct perf_ring, scratch));
    r->fd = fd;
    r->map_size = (1 + data_pages) * page;
    r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        return -1;
    }
    r->data = (uint8_t *)r->base + page;
    r->mask = data_pages * page - 1;
    struct perf_event_mmap_page *meta = r->base;
    r->tail = meta->data_tail;
    r->head = r->tail;
    return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
    if (r->base)
        munmap(r->base, r->map_size);
    r->base = NULL;
}

const uint8_t *perf_ring_peek(struct perf_ring *r, size_t *size)
{
    if (!r->base)
        return NULL;
    struct perf_event_mmap_page *meta = r->base;
    if (r->tail == r->head) {
        /* Acquire: the record bytes are read only after the head that
         * covers them (the kernel publishes the head after writing). */
        r->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        if (r->tail == r->head)
            return NULL;
    }
    uint64_t avail = r->head - r->tail;
    uint64_t off = r->tail & r->mask;
    struct perf_event_header h;
    uint8_t *hp = (uint8_t *)&h;
    for (size_t i = 0; i < sizeof(h); i++)
        hp[i] = r->data[(off + i) & r->mask];
    if (avail < sizeof(h) || h.size < sizeof(h) || h.size > avail) {
        r->desync += avail;
        r->tail = r->head;
        r->peeked = 0;
        return NULL;
    }
    const uint8_t *rec;
    if (off + h.size <= r->mask + 1) {
        rec = r->data + off;
    } else { /* wraps: copy both parts */
        size_t first = (size_t)(r->mask + 1 - off);
        memcpy(r->scratch, r->data + off, first);
        memcpy(r->scratch + first, r->data, h.size - first);
        rec = r->scratch;
    }
    r->peeked = h.size;
    *size = h.size;
    return rec;
}

void perf_ring_skip(struct perf_ring *r)
{
    r->tail += r->peeked;
    r->peeked = 0;
}

void perf_ring_release(struct perf_ring *r)
{
    if (!r->base)
        return;
    struct perf_event_mmap_page *meta = r->base;
    /* Release: our reads of the records happen before the kernel may
     * overwrite them. */
    __atomic_store_n(&meta->data_tail, r->tail, __ATOMIC_RELEASE);
}
