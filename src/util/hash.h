/*
 * hash.h - the hash of a run of integers: a call stack's addresses, a call
 * path's key ids.
 *
 * Contract: hash_u64s() and hash_u32s() mix each value into the hash with
 * a multiply and a shift (addresses and ids differ mostly in their low
 * bits, which the multiply carries up), seeded with the count so that a
 * run and its prefix padded with zeros differ.  The same run gives the same
 * hash in every process; any bits of it may index a table.
 */
#ifndef PTPROF_UTIL_HASH_H
#define PTPROF_UTIL_HASH_H

#include <stdint.h>

static inline uint64_t hash_step(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline uint64_t hash_u64s(const uint64_t *v, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = hash_step(h, v[i]);
    return h;
}

static inline uint64_t hash_u32s(const uint32_t *v, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = hash_step(h, v[i]);
    return h;
}

#endif
