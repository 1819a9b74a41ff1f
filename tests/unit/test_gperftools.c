/*
 * test_gperftools.c - the gperftools CPU profile reader and writer
 * (interop/gperftools.h): hand-made files in every slot size and byte order,
 * damaged files, and real files both ways: profiles written by gperftools'
 * libprofiler read as google-pprof reads them, and our recordings converted
 * for google-pprof.  Needs google-pprof and libprofiler (scripts/install-deps)
 * and the workloads under $PTPROF_BUILD (default build/).
 */
#include "../lib/spawn.h"
#include "real_tools.h"
#include "interop/gperftools.h"
#include "format/load.h"
#include "symbol/elf_symtab.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so"

/* --- hand-made files ----------------------------------------------------- */

struct crafted {
    unsigned char data[4096];
    size_t len;
    unsigned slot;
    bool big_endian;
    size_t trailer_end; /* where the text begins */
};

static void put(struct crafted *c, uint64_t v)
{
    cr_assert_leq(c->len + c->slot, sizeof(c->data));
    for (unsigned i = 0; i < c->slot; i++) {
        unsigned shift = 8 * (c->big_endian ? c->slot - 1 - i : i);
        c->data[c->len++] = (unsigned char)(v >> shift);
    }
}

static void put_text(struct crafted *c, const char *s)
{
    size_t n = strlen(s);
    cr_assert_leq(c->len + n, sizeof(c->data));
    memcpy(c->data + c->len, s, n);
    c->len += n;
}

/* Chain A twice (3 + 4 ticks: summed), chain B once (2 ticks). */
static const uint64_t chain_a[] = {0x401000, 0x402010, 0x403020};
static const uint64_t chain_b[] = {0x404000};
#define PERIOD_US 4000u
#define MAPS_TEXT                                                                                  \
    "build=/opt/app\n"                                                                             \
    "00400000-00410000 r-xp 00000000 08:01 1234   $build/bin/app\n"                                \
    "this line is not a mapping\n"                                                                 \
    "   build=/other\n"                                                                            \
    "7f000000-7f100000 r-xp 00001000 08:01 99     /lib/$buildx/libc.so\n"                          \
    "7f200000-7f300000 rw-p 00002000 08:01 98     $build\n"

static void put_record(struct crafted *c, uint64_t count, const uint64_t *pcs, size_t depth)
{
    put(c, count);
    put(c, depth);
    for (size_t i = 0; i < depth; i++)
        put(c, pcs[i]);
}

static void craft(struct crafted *c, unsigned slot, bool big_endian, unsigned header_words)
{
    memset(c, 0, sizeof(*c));
    c->slot = slot;
    c->big_endian = big_endian;
    put(c, 0);
    put(c, header_words);
    put(c, 0);
    put(c, PERIOD_US);
    for (unsigned i = 2; i < header_words; i++) /* padding */
        put(c, 0);
    put_record(c, 3, chain_a, 3);
    put_record(c, 2, chain_b, 1);
    put_record(c, 4, chain_a, 3);
    put(c, 0);
    put(c, 1);
    put(c, 0);
    c->trailer_end = c->len;
    put_text(c, MAPS_TEXT);
}

/* Run a loader with stderr captured; returns what it printed. */
static char *load_quiet(const void *data, size_t len, struct profile *p, int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    cr_assert_not_null(mem);
    FILE *saved = stderr;
    stderr = mem;
    *rc = gperftools_load_buffer("t.prof", data, len, p);
    stderr = saved;
    fclose(mem);
    return text;
}

static void expect_crafted_content(const struct profile *p, const char *exe)
{
    cr_assert_str_eq(p->format, "gperftools");
    cr_expect_float_eq(p->frequency, 1e6 / PERIOD_US, 1e-9);
    cr_assert_eq(p->nstacks, 3, "stack 0 and one per distinct chain");
    cr_expect_eq(p->stacks[0].depth, 0);
    /* One sample per chain standing for its ticks, chains as they first
     * appear (A: 3 + 4 ticks, B: 2), on a timeline of one period per tick;
     * the first tick is a sample of its own (no wall time is lost but its
     * period). */
    const struct {
        const uint64_t *chain;
        uint64_t weight, ticks_so_far;
    } want[] = {{chain_a, 1, 1}, {chain_a, 6, 7}, {chain_b, 2, 9}};
    cr_assert_eq(p->nsamples, 3);
    uint32_t stack_a = p->samples[0].threads[0].stack;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_assert_eq(s->nthreads, 1);
        const struct prof_thread_sample *th = &s->threads[0];
        const struct prof_stack *st = &p->stacks[th->stack];
        size_t depth = want[i].chain == chain_a ? 3 : 1;
        cr_assert_eq(st->depth, depth, "sample %zu", i);
        for (size_t d = 0; d < depth; d++)
            cr_expect_eq(st->pcs[d], want[i].chain[d], "sample %zu frame %zu", i, d);
        cr_expect_eq(th->pc, want[i].chain[0]);
        if (want[i].chain == chain_a)
            cr_expect_eq(th->stack, stack_a, "identical chains share one stack");
        cr_expect_eq(prof_weight(s, 0), want[i].weight, "sample %zu", i);
        cr_expect_eq(th->cpu_ns, want[i].ticks_so_far * PERIOD_US * 1000ull, "sample %zu", i);
        cr_expect_eq(s->time_ns, want[i].ticks_so_far * PERIOD_US * 1000ull, "sample %zu", i);
        cr_expect_eq(th->tid, p->samples[0].threads[0].tid);
        cr_expect_eq(th->flags, 0);
    }
    cr_expect(p->has_totals);
    cr_expect_eq(p->totals.samples, 9);

    cr_assert_eq(p->nmaps, 3, "the line that is no mapping is ignored");
    cr_expect_eq(p->maps[0].start, 0x400000);
    cr_expect_eq(p->maps[0].end, 0x410000);
    cr_expect_eq(p->maps[0].offset, 0);
    cr_expect_str_eq(p->maps[0].path, "/opt/app/bin/app");
    cr_expect_eq(p->maps[1].offset, 0x1000);
    cr_expect_str_eq(p->maps[1].path, "/lib/$buildx/libc.so", "a word character follows");
    cr_expect_str_eq(p->maps[2].path, "/other", "the last build= line, spaces before it");
    cr_expect_eq(p->maps[2].offset, 0x2000);
    cr_assert_eq(p->nprocesses, 1);
    cr_expect_str_eq(p->processes[0].exe, exe);
    cr_expect_eq(p->nthreads, 1);
}

Test(gperftools, every_slot_size_and_byte_order_reads_the_same)
{
    const struct {
        unsigned slot;
        bool be;
    } variants[] = {{8, false}, {8, true}, {4, false}, {4, true}};
    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
        struct crafted c;
        craft(&c, variants[v].slot, variants[v].be, 3);
        struct gperftools_layout layout;
        cr_assert(gperftools_detect(c.data, c.len, &layout), "variant %zu", v);
        cr_expect_eq(layout.slot_size, variants[v].slot);
        cr_expect_eq(layout.big_endian, variants[v].be);
        struct profile p;
        cr_assert_eq(gperftools_load_buffer("t.prof", c.data, c.len, &p), 0, "variant %zu", v);
        expect_crafted_content(&p, "/other");
        profile_free(&p);
    }
}

Test(gperftools, a_longer_header_is_skipped)
{
    struct crafted c;
    craft(&c, 8, false, 6);
    struct profile p;
    cr_assert_eq(gperftools_load_buffer("t.prof", c.data, c.len, &p), 0);
    expect_crafted_content(&p, "/other");
    profile_free(&p);
}

Test(gperftools, profile_load_recognises_it_by_content)
{
    char *dir = test_mkdtemp();
    const unsigned slots[] = {4, 8};
    for (size_t i = 0; i < 2; i++) {
        struct crafted c;
        craft(&c, slots[i], i == 0, 3);
        char *path = NULL;
        cr_assert_geq(asprintf(&path, "%s/profile.data", dir), 0);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(c.data, 1, c.len, f), c.len);
        fclose(f);
        struct profile_file pf;
        cr_assert_eq(profile_file_read(path, &pf), 0);
        cr_expect_str_eq(profile_file_format(&pf), "gperftools");
        profile_file_free(&pf);
        struct profile p;
        cr_assert_eq(profile_load(path, &p), 0);
        expect_crafted_content(&p, "/other");
        profile_free(&p);
        free(path);
    }
    test_rmtree(dir);
    free(dir);
}

/* A profile cut inside its mapped-objects text is not complete. */
Test(gperftools, info_says_a_cut_text_is_truncated)
{
    struct crafted c;
    craft(&c, 8, false, 3);
    char *dir = test_mkdtemp(), *path = test_path(dir, "cut.prof"), *ptprof = build_ptprof();
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    size_t len = c.len - 10; /* inside the last maps line */
    cr_assert_eq(fwrite(c.data, 1, len, f), len);
    fclose(f);
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "info", path, NULL}, NULL, &res);
    cr_expect_not_null(strstr(res.out, "status:     TRUNCATED at offset "), "%s", res.out);
    cr_expect_null(strstr(res.out, "complete"), "%s", res.out);
    cr_expect_not_null(strstr(res.err, "the mapped-objects text ends inside a line"), "%s",
                       res.err);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(path);
    free(ptprof);
}

Test(gperftools, other_headers_are_not_gperftools)
{
    struct crafted c;
    craft(&c, 8, false, 3);
    cr_expect_not(gperftools_detect(c.data, 11, NULL), "too short for a header");
    craft(&c, 8, false, 2);
    cr_expect_not(gperftools_detect(c.data, c.len, NULL), "fewer than 3 header words");
    craft(&c, 4, true, 3);
    c.data[11] = 1; /* version 1 */
    cr_expect_not(gperftools_detect(c.data, c.len, NULL), "an unknown version");
    cr_expect_not(gperftools_detect("\x89PTPROF\n\x01\0\0\0\0\0\0\0", 16, NULL));
}

/* Every prefix that ends before the trailer is damage: a clean error that
 * names the file and an offset, and nothing kept.  Prefixes that cut the
 * text lose mappings and, when they end inside a line, say the profile is
 * truncated at that line. */
Test(gperftools, truncated_at_every_offset)
{
    const unsigned slots[] = {4, 8};
    for (size_t v = 0; v < 2; v++) {
        struct crafted c;
        craft(&c, slots[v], v == 1, 3);
        for (size_t len = 0; len < c.len; len++) {
            struct profile p;
            int rc;
            char *msg = load_quiet(c.data, len, &p, &rc);
            if (len < c.trailer_end) {
                cr_expect_eq(rc, -1, "slot %u, %zu bytes", slots[v], len);
                cr_expect_null(p.format);
                cr_expect_eq(p.nsamples, 0);
                cr_expect_not_null(strstr(msg, "t.prof: offset "), "%zu bytes: %s", len, msg);
            } else {
                cr_expect_eq(rc, 0, "slot %u, %zu bytes: %s", slots[v], len, msg);
                cr_expect_eq(p.nsamples, 3);
                cr_expect_eq(p.totals.samples, 9);
                cr_expect_leq(p.nmaps, 3);
                /* Where the last line that lost its newline starts. */
                size_t line = c.trailer_end;
                for (size_t k = c.trailer_end; k < len; k++)
                    if (c.data[k] == '\n')
                        line = k + 1;
                bool cut = line < len;
                cr_expect_eq(p.truncated, cut, "slot %u, %zu bytes", slots[v], len);
                if (cut) {
                    cr_expect_eq(p.truncated_at, line, "slot %u, %zu bytes", slots[v], len);
                    cr_expect_not_null(strstr(msg, "truncated"), "%s", msg);
                }
            }
            profile_free(&p);
            free(msg);
        }
    }
}

static void expect_error(const struct crafted *c, const char *offset_text)
{
    struct profile p;
    int rc;
    char *msg = load_quiet(c->data, c->len, &p, &rc);
    cr_expect_eq(rc, -1, "accepted; expected an error at %s", offset_text);
    cr_expect_not_null(strstr(msg, offset_text), "\"%s\" not in: %s", offset_text, msg);
    cr_expect_eq(p.nsamples, 0);
    cr_expect_eq(p.nstacks, 0);
    profile_free(&p);
    free(msg);
}

Test(gperftools, damaged_records_are_clean_errors)
{
    const uint64_t pc = 0x401000;
    struct crafted c;
    /* The first record starts at 5 slots: offset 40. */
    memset(&c, 0, sizeof(c));
    c.slot = 8;
    const uint64_t header[] = {0, 3, 0, PERIOD_US, 0};
    for (int i = 0; i < 5; i++)
        put(&c, header[i]);
    struct crafted base = c;

    put(&c, 1); /* an absurd depth: no allocation, no read beyond the end */
    put(&c, UINT64_MAX / 2);
    put(&c, pc);
    expect_error(&c, "t.prof: offset 40:");

    c = base;
    put_record(&c, UINT64_MAX, &pc, 1); /* an absurd count */
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    expect_error(&c, "t.prof: offset 40:");

    c = base;
    /* Two counts that make more CPU time than 64 bits of nanoseconds. */
    uint64_t half = UINT64_MAX / (PERIOD_US * 1000ull) / 2 + 1;
    put_record(&c, half, &pc, 1);
    put_record(&c, half, &pc, 1);
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    expect_error(&c, "t.prof: offset 64:");

    c = base;
    put_record(&c, 0, &pc, 1); /* count 0 that is not the trailer */
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    expect_error(&c, "t.prof: offset 40:");

    c = base;
    put(&c, 2); /* no PCs */
    put(&c, 0);
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    expect_error(&c, "t.prof: offset 40:");

    c = base;
    put_record(&c, 2, &pc, 1); /* no trailer: the file ends after a record */
    expect_error(&c, "t.prof: offset 64:");

    c = base;
    memset(c.data + 24, 0, 8); /* period 0 */
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    expect_error(&c, "t.prof: offset 24:");
}

/* Memory and time follow the file, not its counts: a few records counted
 * 2^40 times (billions of hours of CPU) are a few samples, with the exact
 * totals. */
Test(gperftools, huge_counts_cost_nothing_and_add_up_exactly)
{
    test_limit_address_space();
    const uint64_t pc = 0x401000, big = (uint64_t)1 << 40;
    struct crafted c;
    memset(&c, 0, sizeof(c));
    c.slot = 8;
    const uint64_t header[] = {0, 3, 0, 1000, 0}; /* 1 ms: 2^40 ms fit in 64 bits of ns */
    for (int i = 0; i < 5; i++)
        put(&c, header[i]);
    for (uint64_t k = 0; k < 4; k++)
        put_record(&c, big + k, (const uint64_t[]){pc + 16 * (k % 2)}, 1);
    put_record(&c, 0, (const uint64_t[]){0}, 1);
    size_t before = test_heap_in_use();
    struct profile p;
    int rc;
    char *msg = load_quiet(c.data, c.len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_lt(test_heap_in_use() - before, 1u << 20, "a %zu-byte file kept %zu bytes", c.len,
                 test_heap_in_use() - before);
    cr_expect_leq(p.nsamples, 3, "two chains (and the first tick)");
    uint64_t ticks = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        ticks += prof_weight(&p.samples[i], 0);
    cr_expect_eq(ticks, 4 * big + 6);
    cr_expect_eq(p.totals.samples, 4 * big + 6);
    const struct prof_sample *last = &p.samples[p.nsamples - 1];
    cr_expect_eq(last->threads[0].cpu_ns, (4 * big + 6) * 1000000, "every tick is 1 ms of CPU");
    profile_free(&p);
    free(msg);
}

/* A chain deeper than the limit keeps its innermost frames, says so, and
 * its samples carry the flag `info` counts. */
Test(gperftools, deep_chains_are_cut_and_flagged)
{
    size_t depth = GPERFTOOLS_MAX_DEPTH + 10, n = 5 + 2 + depth + 3;
    uint64_t *w = calloc(n, sizeof(*w));
    cr_assert_not_null(w);
    size_t k = 0;
    const uint64_t header[] = {0, 3, 0, 1000, 0};
    for (int i = 0; i < 5; i++)
        w[k++] = header[i];
    w[k++] = 2;
    w[k++] = depth;
    for (size_t d = 0; d < depth; d++)
        w[k++] = 0x400000 + 16 * d;
    w[k++] = 0; /* the trailer */
    w[k++] = 1;
    w[k++] = 0;
    struct profile p;
    int rc;
    char *msg = load_quiet(w, n * 8, &p, &rc); /* little-endian host */
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_not_null(strstr(msg, "1 call chain deeper than 4096 frames"), "%s", msg);
    cr_assert_eq(p.nstacks, 2);
    cr_expect_eq(p.stacks[1].depth, GPERFTOOLS_MAX_DEPTH);
    cr_expect_eq(p.stacks[1].pcs[0], 0x400000, "the leaf is kept");
    cr_expect_eq(profile_truncated_stacks(&p), p.nsamples);
    cr_expect_eq(p.totals.samples, 2);
    profile_free(&p);
    free(msg);
    free(w);
}

/* --- writing ------------------------------------------------------------- */

static uint32_t add_stack(struct profile *p, const uint64_t *pcs, uint32_t depth)
{
    p->stacks = realloc(p->stacks, (p->nstacks + 1) * sizeof(*p->stacks));
    uint64_t *copy = malloc(depth * sizeof(*copy) + 1);
    if (depth)
        memcpy(copy, pcs, depth * sizeof(*copy));
    p->stacks[p->nstacks] = (struct prof_stack){.depth = depth, .pcs = copy};
    return (uint32_t)p->nstacks++;
}

static void add_sample(struct profile *p, uint64_t time_ns, uint32_t n,
                       const struct prof_thread_sample *threads)
{
    p->samples = realloc(p->samples, (p->nsamples + 1) * sizeof(*p->samples));
    struct prof_thread_sample *copy = malloc(n * sizeof(*copy));
    memcpy(copy, threads, n * sizeof(*copy));
    p->samples[p->nsamples++] =
        (struct prof_sample){.time_ns = time_ns, .nthreads = n, .threads = copy};
}

static void add_map(struct profile *p, uint32_t pid, uint64_t start, uint64_t end, uint64_t offset,
                    uint64_t time_ns, uint64_t unmap_ns, const char *path)
{
    p->maps = realloc(p->maps, (p->nmaps + 1) * sizeof(*p->maps));
    p->maps[p->nmaps++] = (struct prof_map){.pid = pid,
                                            .start = start,
                                            .end = end,
                                            .offset = offset,
                                            .time_ns = time_ns,
                                            .unmap_ns = unmap_ns,
                                            .perms = 5,
                                            .path = strdup(path)};
}

#define MS 1000000ull

static struct prof_thread_sample ts(uint32_t pid, uint32_t tid, uint64_t pc, uint64_t cpu_ns,
                                    uint32_t stack)
{
    return (struct prof_thread_sample){
        .pid = pid, .tid = tid, .pc = pc, .cpu_ns = cpu_ns, .stack = stack, .syscall = -1};
}

/* Write P as gperftools into memory and read it back. */
static void write_and_read(const struct profile *p, struct profile *back, char **warnings)
{
    char *buf = NULL, *err = NULL;
    size_t len = 0, elen = 0;
    FILE *out = open_memstream(&buf, &len);
    FILE *errs = open_memstream(&err, &elen);
    FILE *saved = stderr;
    stderr = errs;
    int rc = gperftools_write(p, "out.prof", out);
    stderr = saved;
    fclose(errs);
    fclose(out);
    cr_assert_eq(rc, 0, "%s", err);
    /* The header as google-pprof expects it: 64-bit little-endian. */
    cr_assert_geq(len, 40);
    uint64_t slots[5];
    for (int i = 0; i < 5; i++) {
        slots[i] = 0;
        for (int b = 7; b >= 0; b--)
            slots[i] = slots[i] << 8 | (unsigned char)buf[8 * i + b];
    }
    cr_expect_eq(slots[0], 0);
    cr_expect_eq(slots[1], 3);
    cr_expect_eq(slots[2], 0);
    cr_expect_eq(slots[4], 0);
    cr_assert_eq(gperftools_load_buffer("out.prof", buf, len, back), 0);
    free(buf);
    if (warnings)
        *warnings = err;
    else
        free(err);
}

/* Ticks per distinct chain, as the reader gives them back. */
static uint64_t ticks_of(const struct profile *p, const uint64_t *chain, uint32_t depth)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_stack *st = &p->stacks[p->samples[i].threads[0].stack];
        if (st->depth == depth && memcmp(st->pcs, chain, depth * sizeof(*chain)) == 0)
            n += prof_weight(&p->samples[i], 0);
    }
    return n;
}

Test(gperftools, writer_counts_cpu_time_in_periods_per_call_chain)
{
    struct profile p;
    profile_init(&p);
    p.frequency = 100; /* period 10 ms */
    p.processes = calloc(2, sizeof(*p.processes));
    p.processes[0] = (struct prof_process){.pid = 100, .exe = strdup("/bin/app")};
    p.processes[1] = (struct prof_process){.pid = 200, .exe = strdup("/bin/other")};
    p.nprocesses = 2;
    add_stack(&p, NULL, 0);
    const uint64_t hot[] = {0x1010, 0x2005, 0x3005};
    const uint64_t cold[] = {0x1110, 0x2005};
    const uint64_t tail[] = {0x2205, 0x3005}; /* a stack without its leaf */
    uint32_t s_hot = add_stack(&p, hot, 3);
    uint32_t s_cold = add_stack(&p, cold, 2);
    uint32_t s_tail = add_stack(&p, tail, 2);

    /* Thread 100: first seen with 7 ms used (worth 7 ms), then +20 ms in
     * hot, +10 ms in cold, +0 while blocked, +30 ms in hot.  Thread 101:
     * first seen after 50 ms of CPU (worth one period) in cold, then +20
     * ms at 0x1200 with no stack, +10 ms at 0x1300 on the tail stack.
     * Process 200 runs 40 ms in hot: left out. */
    struct prof_thread_sample s1[] = {ts(100, 100, 0x1010, 7 * MS, s_hot),
                                      ts(100, 101, 0x1110, 50 * MS, s_cold)};
    struct prof_thread_sample s2[] = {ts(100, 100, 0x1010, 27 * MS, s_hot),
                                      ts(100, 101, 0x1200, 70 * MS, 0)};
    struct prof_thread_sample s3[] = {ts(100, 100, 0x1110, 37 * MS, s_cold),
                                      ts(100, 101, 0x1300, 80 * MS, s_tail),
                                      ts(200, 200, 0x1010, 5 * MS, s_hot)};
    struct prof_thread_sample s4[] = {ts(100, 100, 0x1010, 37 * MS, s_hot),
                                      ts(200, 200, 0x1010, 45 * MS, s_hot)};
    struct prof_thread_sample s5[] = {ts(100, 100, 0x1010, 67 * MS, s_hot)};
    add_sample(&p, 1000 * MS, 2, s1);
    add_sample(&p, 1010 * MS, 2, s2);
    add_sample(&p, 1020 * MS, 3, s3);
    add_sample(&p, 1030 * MS, 2, s4);
    add_sample(&p, 1040 * MS, 1, s5);

    add_map(&p, 100, 0x1000, 0x2000, 0, 900 * MS, 0, "/bin/app");
    add_map(&p, 100, 0x2000, 0x4000, 0x1000, 900 * MS, 0, "/lib/libx.so");
    add_map(&p, 100, 0x9000, 0xa000, 0, 100 * MS, 500 * MS, "/lib/gone.so"); /* before */
    add_map(&p, 100, 0x1000, 0x2000, 0, 900 * MS, 0, "/bin/app");            /* repeated */
    add_map(&p, 200, 0x1000, 0x2000, 0, 900 * MS, 0, "/bin/other");

    struct profile back;
    char *warnings;
    write_and_read(&p, &back, &warnings);
    cr_expect_float_eq(back.frequency, 100, 1e-9);
    /* Only whole periods can be written; each chain is within one period
     * of its CPU time.  hot: 7 + 20 + 30 ms. */
    uint64_t n_hot = ticks_of(&back, hot, 3);
    uint64_t n_cold = ticks_of(&back, cold, 2);
    uint64_t n_bare = ticks_of(&back, (const uint64_t[]){0x1200}, 1);
    uint64_t n_tail = ticks_of(&back, (const uint64_t[]){0x1300, 0x2205, 0x3005}, 3);
    cr_expect_eq(n_hot + n_cold + n_bare + n_tail, 11, "107 ms is 10.7 periods: 11, got %llu",
                 (unsigned long long)(n_hot + n_cold + n_bare + n_tail));
    cr_expect(n_hot == 5 || n_hot == 6, "hot: 57 ms gives %llu", (unsigned long long)n_hot);
    cr_expect_eq(n_cold, 2, "cold: 10 ms of thread 100, 10 ms (one period) of thread 101");
    cr_expect_eq(n_bare, 2, "a sample without a stack is its PC alone");
    cr_expect_eq(n_tail, 1, "the PC goes in front of a stack that lacks it");
    cr_expect_eq(back.totals.samples, n_hot + n_cold + n_bare + n_tail, "no other chain");
    cr_expect_not_null(strstr(warnings, "out.prof: "), "%s", warnings);
    cr_expect_not_null(strstr(warnings, "left out"), "%s", warnings);

    cr_assert_eq(back.nmaps, 2, "live maps of process 100, once each");
    cr_expect_str_eq(back.maps[0].path, "/bin/app");
    cr_expect_eq(back.maps[0].start, 0x1000);
    cr_expect_eq(back.maps[0].end, 0x2000);
    cr_expect_str_eq(back.maps[1].path, "/lib/libx.so");
    cr_expect_eq(back.maps[1].offset, 0x1000);
    cr_expect_eq(back.maps[1].perms, 5);
    free(warnings);
    profile_free(&back);
    profile_free(&p);
}

Test(gperftools, rounding_keeps_the_total)
{
    /* Ten chains of 0.4 period each: none is worth a period alone, all of
     * them together are 4. */
    struct profile p;
    profile_init(&p);
    p.frequency = 1000; /* 1 ms */
    add_stack(&p, NULL, 0);
    uint64_t cpu = 0;
    for (uint64_t i = 0; i < 10; i++) {
        cpu += 400000;
        struct prof_thread_sample t = ts(1, 1, 0x1000 + 16 * i, cpu, 0);
        add_sample(&p, i * MS, 1, &t);
    }
    struct profile back;
    write_and_read(&p, &back, NULL);
    cr_expect_eq(back.totals.samples, 4);
    for (size_t i = 1; i < back.nstacks; i++)
        cr_expect_eq(ticks_of(&back, back.stacks[i].pcs, back.stacks[i].depth), 1);
    profile_free(&back);
    profile_free(&p);
}

Test(gperftools, reading_back_what_was_written_keeps_every_tick)
{
    struct crafted c;
    craft(&c, 4, true, 3);
    struct profile p, back;
    cr_assert_eq(gperftools_load_buffer("t.prof", c.data, c.len, &p), 0);
    write_and_read(&p, &back, NULL);
    /* Paths come back with $build replaced and no build= line: the
     * program is then the first mapped file. */
    expect_crafted_content(&back, "/opt/app/bin/app");
    profile_free(&back);
    profile_free(&p);
}

/* --- real files ---------------------------------------------------------- */

/* google-pprof's flat column per function.  With SYMBOLS_ONLY it names
 * functions from the symbol table alone (nm: addr2line made unusable), so
 * code inlined into a function counts for it, as an ELF symbol lookup
 * sees it; otherwise inlined code has a row "F (inline)", here "F". */
static void pprof_text(const char *binary, const char *file, bool symbols_only,
                       struct fn_counts *out, uint64_t *total)
{
    char *pprof = test_need_tool("google-pprof");
    char *nm = test_need_tool("nm"), *objdump = test_need_tool("objdump"),
         *cxxfilt = test_need_tool("c++filt");
    char *tools = NULL;
    cr_assert_geq(asprintf(&tools, "--tools=addr2line:/bin/false,nm:%s,objdump:%s,c++filt:%s", nm,
                           objdump, cxxfilt),
                  0);
    const char *argv[7];
    size_t n = 0;
    argv[n++] = pprof;
    if (symbols_only)
        argv[n++] = tools;
    argv[n++] = "--text";
    argv[n++] = "--nodecount=100000";
    argv[n++] = binary;
    argv[n++] = file;
    argv[n] = NULL;
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    const char *t = strstr(res.out, "Total: ");
    cr_assert_not_null(t, "google-pprof printed no total:\n%s\n%s", res.out, res.err);
    unsigned long long ticks;
    cr_assert_eq(sscanf(t, "Total: %llu samples", &ticks), 1);
    *total = ticks;
    memset(out, 0, sizeof(*out));
    for (const char *line = strchr(t, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        unsigned long long flat, cum;
        double p1, p2, p3;
        int at = 0;
        if (sscanf(line + 1, "%llu %lf%% %lf%% %llu %lf%% %n", &flat, &p1, &p2, &cum, &p3, &at) !=
                5 ||
            at == 0)
            continue;
        const char *name = line + 1 + at;
        size_t len = strcspn(name, "\n");
        /* Inlined code has a row of its own, as in ptprof report. */
        static const char inl[] = " (inline)";
        if (len >= sizeof(inl) - 1 &&
            strncmp(name + len - (sizeof(inl) - 1), inl, sizeof(inl) - 1) == 0)
            len -= sizeof(inl) - 1;
        char buf[256];
        snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
        if (flat)
            fn_add(out, buf, (double)flat);
        out->total += (double)flat;
    }
    spawn_result_free(&res);
    free(tools);
    free(pprof);
    free(nm);
    free(objdump);
    free(cxxfilt);
}

/* Per function of BINARY (by ELF symbol), what P holds: samples, or (with
 * CPU) each thread's CPU time since its previous appearance as ptprof
 * report counts it.  Everything outside BINARY goes to "[other]". */
static void model_counts(const struct profile *p, const char *binary, bool cpu,
                         struct fn_counts *out)
{
    char real[PATH_MAX];
    cr_assert_not_null(realpath(binary, real));
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(real, &tab), 0);
    memset(out, 0, sizeof(*out));
    struct {
        uint32_t tid;
        uint64_t cpu;
    } seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t k = 0; k < s->nthreads; k++) {
            const struct prof_thread_sample *th = &s->threads[k];
            double v = (double)prof_weight(s, k);
            if (cpu) {
                size_t j = 0;
                while (j < nseen && seen[j].tid != th->tid)
                    j++;
                if (j == nseen) {
                    cr_assert_lt(nseen, 64);
                    seen[nseen++].tid = th->tid;
                    v = 0;
                } else {
                    v = th->cpu_ns >= seen[j].cpu ? (double)(th->cpu_ns - seen[j].cpu) : 0;
                }
                seen[j].cpu = th->cpu_ns;
            }
            const char *name = "[other]";
            for (size_t m = 0; m < p->nmaps; m++) {
                const struct prof_map *map = &p->maps[m];
                char mreal[PATH_MAX];
                if (map->pid != th->pid || th->pc < map->start || th->pc >= map->end ||
                    map->time_ns > s->time_ns || (map->unmap_ns && map->unmap_ns <= s->time_ns) ||
                    !realpath(map->path, mreal) || strcmp(mreal, real) != 0)
                    continue;
                uint64_t vaddr;
                const struct elf_symbol *sym = NULL;
                if (elf_symtab_vaddr(&tab, th->pc - map->start + map->offset, &vaddr) == 0)
                    sym = elf_symtab_lookup(&tab, vaddr);
                if (sym)
                    name = sym->name;
            }
            fn_add(out, name, v);
            out->total += v;
        }
    }
    elf_symtab_free(&tab);
}

/* Enough ticks that one more or less somewhere is a small share. */
#define MIN_TICKS 300
/* A loaded machine gives a workload less CPU: runs grow up to this. */
#define MAX_SECONDS 16

static size_t ticks_in(const char *file)
{
    struct profile p;
    cr_assert_eq(profile_load(file, &p), 0, "%s does not load", file);
    size_t n = (size_t)p.totals.samples; /* ticks (a sample stands for a chain's) */
    profile_free(&p);
    return n;
}

/* Run WORKLOAD [THREADS] SECONDS under libprofiler into DIR/NAME.prof,
 * longer until the profile has MIN_TICKS. */
static char *libprofiler_run(const char *dir, const char *workload, const char *threads)
{
    cr_assert_eq(access(LIBPROFILER, R_OK), 0, "%s is missing (scripts/install-deps)", LIBPROFILER);
    char *bin = build_workload(workload);
    char *out = NULL, *env_out = NULL;
    cr_assert_geq(asprintf(&out, "%s/%s.prof", dir, workload), 0);
    cr_assert_geq(asprintf(&env_out, "CPUPROFILE=%s", out), 0);
    const char *env[] = {"LD_PRELOAD=" LIBPROFILER, env_out, "CPUPROFILE_FREQUENCY=250", NULL};
    for (int seconds = 2;; seconds *= 2) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%d", seconds);
        const char *argv[] = {bin, threads ? threads : secs, threads ? secs : NULL, NULL};
        struct spawn_result res;
        run_ok(argv, env, &res);
        spawn_result_free(&res);
        size_t n = ticks_in(out);
        if (n >= MIN_TICKS || seconds >= MAX_SECONDS) {
            cr_assert_geq(n, MIN_TICKS, "%s ran %d s for %zu samples", workload, seconds, n);
            break;
        }
    }
    free(env_out);
    free(bin);
    return out;
}

/* ptprof report -k binary,procedure: COLUMN of each row whose binary is
 * BINARY_NAME, and its sum over all rows in OUT->total. */
static void report_rows(const char *file, const char *metric, const char *column,
                        const char *binary_name, struct fn_counts *out)
{
    /* The later -k wins over report_column()'s own. */
    const char *extra[] = {"-k", "binary,procedure", "--limit", "100", NULL};
    struct fn_counts rows;
    report_column(file, metric, column, extra, &rows);
    memset(out, 0, sizeof(*out));
    out->total = rows.total;
    size_t blen = strlen(binary_name);
    for (size_t i = 0; i < rows.n; i++) {
        const struct fn_count *r = &rows.items[i];
        if (strncmp(r->name, binary_name, blen) == 0 && r->name[blen] == ':' && r->value != 0)
            fn_add(out, r->name + blen + 1, r->value);
    }
    fn_free(&rows);
}

static void check_libprofiler_file(const char *workload, const char *threads)
{
    char *dir = test_mkdtemp();
    char *file = libprofiler_run(dir, workload, threads);
    char *bin = build_workload(workload);

    struct profile p;
    cr_assert_eq(profile_load(file, &p), 0);
    cr_assert_str_eq(p.format, "gperftools");
    cr_expect_float_eq(p.frequency, 250, 1e-9);

    struct fn_counts ours, theirs;
    uint64_t total, plain_total;
    model_counts(&p, bin, false, &ours);
    pprof_text(bin, file, true, &theirs, &total);
    cr_expect_eq(p.totals.samples, total, "%s: samples: ours %llu, google-pprof %llu", workload,
                 (unsigned long long)p.totals.samples, (unsigned long long)total);
    /* Every function of the workload, as either side names it. */
    char real[PATH_MAX];
    cr_assert_not_null(realpath(bin, real));
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(real, &tab), 0);
    size_t compared = 0;
    for (size_t i = 0; i < tab.count; i++) {
        const char *name = tab.syms[i].name;
        if (i > 0 && strcmp(name, tab.syms[i - 1].name) == 0)
            continue;
        double a = fn_get(&ours, name), b = fn_get(&theirs, name);
        cr_expect_eq(a, b, "%s: %s: ours %.0f, google-pprof %.0f", workload, name, a, b);
        compared += a > 0;
    }
    cr_expect_geq(compared, 2, "%s: too few functions to compare", workload);
    elf_symtab_free(&tab);

    /* google-pprof as users run it, against ptprof report: the same total,
     * and the same samples in every function of the workload (inlined ones
     * included).  Together these functions hold what the symbol table puts
     * in the workload. */
    struct fn_counts plain, report;
    pprof_text(bin, file, false, &plain, &plain_total);
    cr_expect_eq(plain_total, p.totals.samples);
    report_rows(file, "samples", "samples", workload, &report);
    cr_expect_eq(report.total, (double)plain_total, "%s: report %.0f samples, google-pprof %llu",
                 workload, report.total, (unsigned long long)plain_total);
    double report_in_binary = 0;
    for (size_t i = 0; i < report.n; i++) {
        const char *name = report.items[i].name;
        cr_expect_eq(report.items[i].value, fn_get(&plain, name),
                     "%s: %s: report %.0f, google-pprof %.0f", workload, name,
                     report.items[i].value, fn_get(&plain, name));
        report_in_binary += report.items[i].value;
    }
    cr_expect_eq(report_in_binary, ours.total - fn_get(&ours, "[other]"),
                 "%s: report puts %.0f samples in the workload, its symbol table %.0f", workload,
                 report_in_binary, ours.total - fn_get(&ours, "[other]"));

    /* Writing it back keeps every tick of every chain. */
    struct profile back;
    write_and_read(&p, &back, NULL);
    cr_expect_eq(back.totals.samples, p.totals.samples);
    for (size_t i = 1; i < p.nstacks; i++)
        cr_expect_eq(ticks_of(&back, p.stacks[i].pcs, p.stacks[i].depth),
                     ticks_of(&p, p.stacks[i].pcs, p.stacks[i].depth), "stack %zu", i);
    profile_free(&back);

    free(ours.items);
    free(theirs.items);
    free(plain.items);
    free(report.items);
    profile_free(&p);
    free(bin);
    free(file);
    test_rmtree(dir);
    free(dir);
}

Test(gperftools, libprofiler_callers_matches_google_pprof, .timeout = 120)
{
    check_libprofiler_file("callers", NULL);
}

Test(gperftools, libprofiler_shares_matches_google_pprof, .timeout = 120)
{
    check_libprofiler_file("shares", "3");
}

/* google-pprof --collapsed: "frame;frame;...;leaf count", root first;
 * pprof appends "<address>" to some names.  Per leaf, and how many ticks
 * of LEAF have CALLER_A or CALLER_B among their frames. */
static void pprof_collapsed(const char *binary, const char *file, struct fn_counts *leaves,
                            const char *leaf, const char *caller_a, const char *caller_b,
                            uint64_t *through)
{
    char *pprof = test_need_tool("google-pprof");
    const char *argv[] = {pprof, "--collapsed", binary, file, NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    memset(leaves, 0, sizeof(*leaves));
    *through = 0;
    for (char *save = NULL, *line = strtok_r(res.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strrchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        double n = strtod(sp + 1, NULL);
        char *last = strrchr(line, ';');
        last = last ? last + 1 : line;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(last, "<"), last);
        fn_add(leaves, name, n);
        leaves->total += n;
        if (strcmp(name, leaf) == 0 && (strstr(line, caller_a) || strstr(line, caller_b)))
            *through += (uint64_t)n;
    }
    spawn_result_free(&res);
    free(pprof);
}

Test(gperftools, converted_recording_reads_in_google_pprof, .timeout = 180)
{
    char *dir = test_mkdtemp();
    char *ptprof = build_ptprof(), *bin = build_workload("callers");
    char *data = NULL, *prof = NULL, *zprof = NULL;
    cr_assert_geq(asprintf(&data, "%s/callers.data", dir), 0);
    cr_assert_geq(asprintf(&prof, "%s/callers.prof", dir), 0);
    cr_assert_geq(asprintf(&zprof, "%s/callers.out.zst", dir), 0);
    /* The period is 1 ms, so a converted profile holds a tick per ms of
     * CPU, however many samples a loaded machine lets the recorder take. */
    for (int seconds = 2;; seconds *= 2) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%d", seconds);
        struct spawn_result res;
        run_ok((const char *[]){ptprof, "record", "-f", "1000", "-o", data, "--", bin, secs, NULL},
               NULL, &res);
        spawn_result_free(&res);
        /* The output's name chooses the format. */
        run_ok((const char *[]){ptprof, "convert", data, "-o", prof, NULL}, NULL, &res);
        spawn_result_free(&res);
        if (ticks_in(prof) >= MIN_TICKS || seconds >= MAX_SECONDS)
            break;
    }
    /* --to overrides a name that says nothing; compressed by its suffix. */
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", data, "-o", zprof, "--to", "gperftools", NULL}, NULL,
           &res);
    spawn_result_free(&res);

    struct profile rec, conv, zconv;
    cr_assert_eq(profile_load(data, &rec), 0);
    cr_assert_eq(profile_load(prof, &conv), 0);
    cr_assert_eq(profile_load(zprof, &zconv), 0);
    cr_expect_str_eq(conv.format, "gperftools");
    cr_expect_eq(zconv.nsamples, conv.nsamples, "compressed output reads the same");

    struct fn_counts ours, theirs;
    uint64_t total;
    model_counts(&rec, bin, true, &ours);
    pprof_text(bin, prof, true, &theirs, &total);
    cr_assert_geq(total, MIN_TICKS, "too few ticks: %llu", (unsigned long long)total);
    cr_expect_eq(total, conv.totals.samples);
    /* The top function is the same, and every function with a share of
     * 2 % or more has it within 1 percentage point. */
    const struct fn_count *top_ours = NULL, *top_theirs = NULL;
    for (size_t i = 0; i < ours.n; i++)
        if (strcmp(ours.items[i].name, "[other]") != 0 &&
            (!top_ours || ours.items[i].value > top_ours->value))
            top_ours = &ours.items[i];
    for (size_t i = 0; i < theirs.n; i++)
        if (!top_theirs || theirs.items[i].value > top_theirs->value)
            top_theirs = &theirs.items[i];
    cr_assert_not_null(top_ours);
    cr_assert_not_null(top_theirs);
    cr_expect_str_eq(top_ours->name, top_theirs->name);
    size_t compared = 0;
    for (size_t i = 0; i < ours.n; i++) {
        const char *name = ours.items[i].name;
        double a = 100 * ours.items[i].value / ours.total;
        double b = 100 * fn_get(&theirs, name) / (double)total;
        if (strcmp(name, "[other]") == 0 || (a < 2 && b < 2))
            continue;
        cr_expect_leq(a > b ? a - b : b - a, 1.0, "%s: ours %.2f %%, google-pprof %.2f %%", name, a,
                      b);
        compared++;
    }
    cr_expect_geq(compared, 2);

    /* The same against ptprof report and google-pprof as users run them
     * (inlined code under its own name on both sides). */
    struct fn_counts report, plain;
    uint64_t plain_total;
    report_rows(data, "cpu", "cpu_time_pct", "callers", &report);
    pprof_text(bin, prof, false, &plain, &plain_total);
    cr_expect_eq(plain_total, total);
    const struct fn_count *top_report = NULL, *top_plain = NULL;
    for (size_t i = 0; i < report.n; i++)
        if (!top_report || report.items[i].value > top_report->value)
            top_report = &report.items[i];
    for (size_t i = 0; i < plain.n; i++)
        if (!top_plain || plain.items[i].value > top_plain->value)
            top_plain = &plain.items[i];
    cr_assert_not_null(top_report);
    cr_assert_not_null(top_plain);
    cr_expect_str_eq(top_report->name, top_plain->name);
    compared = 0;
    for (size_t i = 0; i < report.n; i++) {
        const char *name = report.items[i].name;
        double a = report.items[i].value, b = 100 * fn_get(&plain, name) / (double)plain_total;
        if (a < 2 && b < 2)
            continue;
        cr_expect_leq(a > b ? a - b : b - a, 1.0, "%s: report %.2f %%, google-pprof %.2f %%", name,
                      a, b);
        compared++;
    }
    cr_expect_geq(compared, 2);

    /* The call chains are real and leaf first: the collapsed stacks end in
     * the same leaves as the flat profile, and hot() is reached through
     * its callers. */
    struct fn_counts leaves;
    uint64_t through;
    pprof_collapsed(bin, prof, &leaves, "hot", "via_a", "via_b", &through);
    cr_expect_eq(leaves.total, (double)total);
    cr_expect_eq(fn_get(&leaves, "hot"), fn_get(&theirs, "hot"));
    cr_expect_geq((double)through, 0.9 * fn_get(&leaves, "hot"),
                  "only %llu of %.0f ticks in hot() come through via_a or via_b",
                  (unsigned long long)through, fn_get(&leaves, "hot"));

    free(ours.items);
    free(theirs.items);
    free(leaves.items);
    free(report.items);
    free(plain.items);
    profile_free(&rec);
    profile_free(&conv);
    profile_free(&zconv);
    free(data);
    free(prof);
    free(zprof);
    free(ptprof);
    free(bin);
    test_rmtree(dir);
    free(dir);
}
