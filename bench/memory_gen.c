/*
 * memory_gen.c - valid profiles of a given size for bench/memory.sh, each
 * shaped as the campaign of issue 19 found the readers costliest:
 *
 *   memory_gen folded MB      stacks of 8-40 frames over 5,000 function
 *                             names, one line per distinct stack;
 *   memory_gen pprof MB       many tiny samples: one value each, stacks of
 *                             1-8 of 4,096 locations (as a Go CPU profile
 *                             of a long run holds);
 *   memory_gen gperftools MB  a 64-bit CPU profile, records of 1-30 PCs
 *                             over 4,096 addresses;
 *   memory_gen gmon MB [PCT]  a gmon.out whose every bin was hit (a 200 MB
 *                             text at 100 MB), or PCT percent of its bins,
 *                             as programs hit theirs; no arcs;
 *   memory_gen pperf MB       the original sampler's raw format: a sample
 *                             a millisecond of 1-4 threads at 4,096 PCs,
 *                             with a power reading each.
 *
 * The output goes to stdout; the content is a deterministic function of
 * the size (a fixed-seed generator), so runs compare.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void put_varint(FILE *f, uint64_t v)
{
    while (v >= 0x80) {
        fputc((int)(v & 0x7f) | 0x80, f);
        v >>= 7;
    }
    fputc((int)v, f);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void folded(uint64_t bytes)
{
    uint64_t out = 0;
    while (out < bytes) {
        unsigned depth = 8 + next(33);
        int n = 0;
        for (unsigned d = 0; d < depth; d++)
            n += printf("%sns::module_%u::function_%u", d ? ";" : "", next(50), next(5000));
        n += printf(" %u\n", 1 + next(100));
        out += (uint64_t)n;
    }
}

/* One length-delimited field: tag, length, then the caller's bytes. */
static void field(FILE *f, unsigned number, size_t len)
{
    put_varint(f, (uint64_t)number << 3 | 2);
    put_varint(f, len);
}

static void pprof(uint64_t bytes)
{
    const char *strings[] = {"", "samples", "count", "cpu", "nanoseconds"};
    /* sample_type: samples/count; period type cpu/nanoseconds. */
    field(stdout, 1, 4);
    fputc(0x08, stdout);
    fputc(1, stdout);
    fputc(0x10, stdout);
    fputc(2, stdout);
    uint64_t out = 6;
    const unsigned nfunctions = 4096;
    for (unsigned i = 1; i <= nfunctions; i++) {
        /* Function {id, name}, Location {id, address, line {function_id}}. */
        /* Its name is string 4 + i: after the five above. */
        size_t fn_len = 1 + varint_len(i) + 1 + varint_len(4 + i);
        field(stdout, 5, fn_len);
        fputc(0x08, stdout);
        put_varint(stdout, i);
        fputc(0x10, stdout);
        put_varint(stdout, 4 + i);
        uint64_t addr = 0x400000 + 16ull * i;
        size_t line_len = 1 + varint_len(i);
        size_t loc_len =
            1 + varint_len(i) + 1 + varint_len(addr) + 1 + varint_len(line_len) + line_len;
        field(stdout, 4, loc_len);
        fputc(0x08, stdout);
        put_varint(stdout, i);
        fputc(0x18, stdout);
        put_varint(stdout, addr);
        field(stdout, 4, line_len);
        fputc(0x08, stdout);
        put_varint(stdout, i);
        out += 40;
    }
    while (out < bytes) {
        unsigned depth = 1 + next(8);
        uint32_t ids[8];
        size_t ids_len = 0;
        for (unsigned d = 0; d < depth; d++) {
            ids[d] = 1 + next(nfunctions);
            ids_len += varint_len(ids[d]);
        }
        size_t len = 1 + varint_len(ids_len) + ids_len + 2;
        field(stdout, 2, len);
        field(stdout, 1, ids_len); /* packed location_id */
        for (unsigned d = 0; d < depth; d++)
            put_varint(stdout, ids[d]);
        fputc(0x10, stdout); /* value 1 */
        fputc(1, stdout);
        out += 2 + len;
    }
    for (unsigned i = 0; i < 5; i++) {
        field(stdout, 6, strlen(strings[i]));
        fputs(strings[i], stdout);
    }
    for (unsigned i = 1; i <= nfunctions; i++) {
        char name[32];
        int n = snprintf(name, sizeof(name), "function_%u", i);
        field(stdout, 6, (size_t)n);
        fputs(name, stdout);
    }
}

static void put64(uint64_t v)
{
    fwrite(&v, 8, 1, stdout);
}

static void gperftools(uint64_t bytes)
{
    put64(0);
    put64(3);
    put64(0);
    put64(10000); /* 10 ms */
    put64(0);
    uint64_t out = 40;
    while (out < bytes) {
        unsigned depth = 1 + next(30);
        put64(1 + next(5));
        put64(depth);
        for (unsigned d = 0; d < depth; d++)
            put64(0x400000 + 16ull * next(4096));
        out += 16 + 8ull * depth;
    }
    put64(0);
    put64(1);
    put64(0);
    printf("00400000-00500000 r-xp 00000000 08:01 1234 /usr/bin/program\n");
}

static void gmon(uint64_t bytes, uint32_t percent)
{
    uint32_t nbins = (uint32_t)(bytes / 2);
    uint64_t low = 0x400000, high = low + 2ull * nbins;
    fwrite("gmon", 1, 4, stdout);
    uint32_t version = 1, rate = 100;
    fwrite(&version, 4, 1, stdout);
    for (int i = 0; i < 12; i++)
        fputc(0, stdout);
    fputc(0, stdout); /* GMON_TAG_TIME_HIST */
    fwrite(&low, 8, 1, stdout);
    fwrite(&high, 8, 1, stdout);
    fwrite(&nbins, 4, 1, stdout);
    fwrite(&rate, 4, 1, stdout);
    char dim[16] = "seconds";
    dim[15] = 's';
    fwrite(dim, 1, 16, stdout);
    for (uint32_t i = 0; i < nbins; i++) {
        uint16_t c = (uint16_t)(percent >= 100 || next(100) < percent ? 1 + next(3) : 0);
        fwrite(&c, 2, 1, stdout);
    }
}

static void put32(uint32_t v)
{
    fwrite(&v, 4, 1, stdout);
}

/* The samples of pperf(): their count and bytes, or written when WRITE.
 * The generator starts from the same state both times. */
static uint64_t pperf_samples(uint64_t bytes, bool write, uint64_t *nsamples)
{
    uint64_t out = 36, cpu_ns[4] = {0}, wall_us = 1700000000000000ull;
    rng = 0x9e3779b97f4a7c15ull;
    *nsamples = 0;
    while (out < bytes) {
        uint32_t nthreads = 1 + next(4);
        double watts = 1.0 + next(1000) / 100.0;
        if (write) {
            put64(wall_us);
            fwrite(&watts, 8, 1, stdout);
            put32(nthreads);
        }
        for (uint32_t t = 0; t < nthreads; t++) {
            uint64_t pc = 0x400000 + 16ull * next(4096);
            cpu_ns[t] += 1000000;
            if (write) {
                put32(1001 + t);
                put64(pc);
                put64(cpu_ns[t]);
            }
        }
        wall_us += 1000;
        out += 20 + 20ull * nthreads;
        ++*nsamples;
    }
    return out;
}

static void pperf(uint64_t bytes)
{
    uint64_t nsamples;
    pperf_samples(bytes, false, &nsamples);
    put32(3); /* power */
    put64(nsamples * 1000);
    put64(0);
    put64(nsamples);
    put32(8); /* one double */
    put32(1); /* one map */
    pperf_samples(bytes, true, &nsamples);
    char label[256] = "program";
    put64(0x400000);
    put64(0x100000);
    fwrite(label, 1, sizeof(label), stdout);
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[1], "gmon") == 0)) {
        fprintf(stderr, "usage: memory_gen folded|pprof|gperftools|gmon|pperf MB (gmon: [PCT])\n");
        return 2;
    }
    uint64_t bytes = strtoull(argv[2], NULL, 10) << 20;
    if (strcmp(argv[1], "folded") == 0)
        folded(bytes);
    else if (strcmp(argv[1], "pprof") == 0)
        pprof(bytes);
    else if (strcmp(argv[1], "gperftools") == 0)
        gperftools(bytes);
    else if (strcmp(argv[1], "pperf") == 0)
        pperf(bytes);
    else if (strcmp(argv[1], "gmon") == 0)
        gmon(bytes, argc == 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : 100);
    else {
        fprintf(stderr, "memory_gen: unknown format '%s'\n", argv[1]);
        return 2;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
