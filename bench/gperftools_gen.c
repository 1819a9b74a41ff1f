/*
 * gperftools_gen.c - a large gperftools CPU profile grown from a real one,
 * for bench/gperftools_report.sh.
 *
 * usage: gperftools_gen SEED.prof MEGABYTES [TICKS] > OUT.prof
 *
 * SEED is a 64-bit little-endian profile written by libprofiler.  The
 * output keeps its header and its mapped-objects text, and its records are
 * the seed's call chains recombined: each keeps a seed chain's leaf and
 * callers and continues with the outer frames of another seed chain, up to
 * libprofiler's 64 frames, with counts of 1 to 4.  Every PC is one the
 * program really ran, so both tools symbolize real functions of real
 * binaries, while the chains are as varied as in a long profile of a large
 * program (libprofiler writes one record per eviction from its table).
 * Deterministic: the same seed gives the same file.  With TICKS the file
 * ends when its counts add up to exactly TICKS samples instead of at
 * MEGABYTES (bench/flamegraph.sh: a profile of a given number of samples).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct chain {
    uint64_t depth;
    const uint64_t *pcs;
};

static uint64_t rng_state = 0x853c49e6748fea9bu;

static uint64_t rng(void)
{
    /* xorshift64*: enough to vary chains, and the same on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static void put(uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    fwrite(b, 1, 8, stdout);
}

static uint64_t get(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: gperftools_gen SEED.prof MEGABYTES [TICKS] > OUT.prof\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, len = 0;
    unsigned char *d = malloc(cap);
    size_t n;
    while (d && (n = fread(d + len, 1, cap - len, f)) > 0)
        if ((len += n) == cap)
            d = realloc(d, cap *= 2);
    fclose(f);
    if (!d || len < 64 || get(d) != 0 || get(d + 8) != 3) {
        fprintf(stderr, "%s: not a 64-bit little-endian gperftools profile\n", argv[1]);
        return 1;
    }
    size_t nchains = 0, off = 40;
    struct chain *chains = malloc(len / 24 * sizeof(*chains));
    for (;;) {
        if (off + 24 > len) {
            fprintf(stderr, "%s: no trailer\n", argv[1]);
            return 1;
        }
        uint64_t count = get(d + off), depth = get(d + off + 8);
        if (depth == 0 || depth > (len - off - 16) / 8) {
            fprintf(stderr, "%s: bad record at %zu\n", argv[1], off);
            return 1;
        }
        if (count == 0 && depth == 1 && get(d + off + 16) == 0)
            break;
        chains[nchains++] = (struct chain){depth, NULL};
        uint64_t *pcs = malloc(depth * sizeof(*pcs));
        for (uint64_t i = 0; i < depth; i++)
            pcs[i] = get(d + off + 16 + 8 * i);
        chains[nchains - 1].pcs = pcs;
        off += 16 + 8 * depth;
    }
    off += 24;
    if (nchains == 0) {
        fprintf(stderr, "%s: no records\n", argv[1]);
        return 1;
    }

    uint64_t target = strtoull(argv[2], NULL, 10) << 20, written = 40;
    uint64_t ticks = argc == 4 ? strtoull(argv[3], NULL, 10) : 0, counted = 0;
    put(0);
    put(3);
    put(0);
    put(get(d + 24));
    put(0);
    uint64_t pcs[MAX_DEPTH];
    while (ticks ? counted < ticks : written < target) {
        const struct chain *inner = &chains[rng() % nchains];
        const struct chain *outer = &chains[rng() % nchains];
        uint64_t keep = 1 + rng() % inner->depth, depth = 0;
        for (uint64_t i = 0; i < keep && depth < MAX_DEPTH; i++)
            pcs[depth++] = inner->pcs[i];
        for (uint64_t i = rng() % outer->depth; i < outer->depth && depth < MAX_DEPTH; i++)
            pcs[depth++] = outer->pcs[i];
        uint64_t count = 1 + rng() % 4;
        if (ticks && count > ticks - counted)
            count = ticks - counted;
        counted += count;
        put(count);
        put(depth);
        for (uint64_t i = 0; i < depth; i++)
            put(pcs[i]);
        written += 16 + 8 * depth;
    }
    put(0);
    put(1);
    put(0);
    fwrite(d + off, 1, len - off, stdout);
    for (size_t i = 0; i < nchains; i++)
        free((void *)chains[i].pcs);
    free(chains);
    free(d);
    return fflush(stdout) == 0 ? 0 : 1;
}
