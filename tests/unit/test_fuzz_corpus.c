/* test_fuzz_corpus.c - replays the kept fuzz corpora (tests/fuzz/corpus/NAME)
 * through the code their fuzz targets exercise, so every input that once
 * found a new path stays a regression test without a fuzzer. */
#include "interop/gmon.h"
#include "interop/gperftools.h"
#include "interop/perf_data.h"
#include "format/load.h"
#include "format/native.h"
#include "interop/pperf.h"
#include "format/pbin.h"
#include "symbol/symbolizer.h"
#include "util/slurp.h"

#include "../lib/corpus.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PPERF_CORPUS "tests/fuzz/corpus/pperf"
#define SLURP_CORPUS "tests/fuzz/corpus/slurp"
#define NATIVE_CORPUS "tests/fuzz/corpus/native"
#define GPERFTOOLS_CORPUS "tests/fuzz/corpus/gperftools"
#define PBIN_CORPUS "tests/fuzz/corpus/pbin"
#define GMON_CORPUS "tests/fuzz/corpus/gmon"
#define PERF_DATA_CORPUS "tests/fuzz/corpus/perf_data"
#define LOAD_CORPUS "tests/fuzz/corpus/load"

/* Counts of what a replay saw, by the kind its file name promises. */
struct tally {
    size_t valid, damaged;
    const char *copy; /* a scratch file for writers */
};

/* What an accepted file must add up to: the reader takes nothing on faith. */
static size_t expected_length(const struct pperf_profile *p)
{
    size_t n = PPERF_HEADER_SIZE + (size_t)p->nmaps * PPERF_MAP_SIZE;
    for (uint64_t i = 0; i < p->nsamples; i++)
        n += 12 + p->pmu_size + (size_t)p->samples[i].nthreads * PPERF_THREAD_SIZE;
    return n;
}

static void replay_pperf(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    struct pperf_profile p;
    int rc = pperf_load_buffer(f->name, f->data, f->len, &p);
    cr_expect(rc == 0 || !f->must_load, "%s does not load", f->path);
    if (rc == 0) {
        cr_expect_eq(expected_length(&p), f->len, "%s: counts do not add up", f->path);
        for (uint32_t i = 0; i < p.nmaps; i++)
            cr_expect_lt(strlen(p.maps[i].label), PPERF_LABEL_SIZE);
        t->valid += f->must_load;
    } else {
        cr_expect_null(p.storage);
    }
    pperf_free(&p);
}

Test(fuzz_corpus, pperf_inputs_load_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(PPERF_CORPUS, replay_pperf, &t);
    cr_expect_gt(t.valid, 0, "no valid-* profile in %s", PPERF_CORPUS);
}

/* Both ways in (a file, and the buffer the fuzz target uses) must agree.
 * valid-* decode completely; trunc-* keep a decoded prefix and say where
 * the damage is; the rest may fail, but only cleanly. */
#define SLURP_MAX_LEN (1 << 20)

static void replay_slurp(const struct corpus_file *cf, void *ctx)
{
    struct tally *t = ctx;
    const char *path = cf->path;
    struct slurp f, b;
    int rc = slurp_path(path, SLURP_MAX_LEN, &f);
    int brc = slurp_buffer_decompress(cf->name, cf->data, cf->len, SLURP_MAX_LEN, &b);
    cr_expect_eq(rc, brc, "%s: file and buffer disagree", path);
    if (rc == 0 && brc == 0) {
        cr_expect_eq(f.len, b.len, "%s", path);
        cr_expect_eq(memcmp(f.data, b.data, f.len < b.len ? f.len : b.len), 0, "%s", path);
        cr_expect_eq(f.truncated, b.truncated, "%s", path);
        cr_expect_eq(f.compression, b.compression, "%s", path);
        cr_expect_leq(f.len, SLURP_MAX_LEN);
        cr_expect_eq(f.data[f.len], '\0');
        cr_expect_eq(f.truncated, f.error != NULL, "%s", path);
        if (f.error)
            cr_expect_not_null(strstr(f.error, ": offset "), "%s: %s", path, f.error);
    } else {
        cr_expect_null(f.data);
        cr_expect_null(b.data);
    }
    if (cf->must_load) {
        cr_expect(rc == 0 && !f.truncated, "%s does not decode: %s", path,
                  f.error ? f.error : "error");
        t->valid += rc == 0 && !f.truncated;
    } else if (strncmp(cf->name, "trunc-", 6) == 0) {
        cr_expect(rc == 0 && f.truncated && f.len > 0,
                  "%s is not a truncated prefix (rc %d, truncated %d, %zu bytes)", path, rc,
                  f.truncated, f.len);
        t->damaged += rc == 0 && f.truncated;
    }
    slurp_free(&f);
    slurp_free(&b);
}

Test(fuzz_corpus, slurp_inputs_decode_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(SLURP_CORPUS, replay_slurp, &t);
    cr_expect_gt(t.valid, 0, "no valid-* input in %s", SLURP_CORPUS);
    cr_expect_gt(t.damaged, 0, "no trunc-* input in %s", SLURP_CORPUS);
}

/* What the native reader promises about any profile it accepts. */
static void check_native_profile(const char *path, const struct profile *p, size_t len)
{
    cr_expect_geq(p->nstacks, 1, "%s: no empty stack 0", path);
    if (p->nstacks)
        cr_expect_eq(p->stacks[0].depth, 0, "%s", path);
    for (size_t i = 0; i < p->nstacks; i++)
        cr_expect_leq(p->stacks[i].depth, 4096, "%s: stack %zu", path, i);
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_expect(p->nchannels == 0 || s->values, "%s: sample %zu has no values", path, i);
        for (uint32_t t = 0; t < s->nthreads; t++)
            cr_expect_lt(s->threads[t].stack, p->nstacks, "%s: sample %zu", path, i);
    }
    for (size_t i = 0; i < p->nmaps; i++)
        cr_expect_leq(p->maps[i].build_id_len, 64, "%s", path);
    cr_expect(!p->truncated || (p->truncated_at >= 16 && p->truncated_at < len),
              "%s: truncated at %llu of %zu bytes", path, (unsigned long long)p->truncated_at, len);
}

/* The loader and the record-level dump must agree on what cannot be read. */
static void replay_native(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    FILE *sink = fopen("/dev/null", "w");
    cr_assert_not_null(sink);
    struct profile p;
    int rc = native_load_buffer(f->name, f->data, f->len, &p);
    int drc = native_dump_buffer(f->name, f->data, f->len, sink);
    fclose(sink);
    cr_expect_eq(rc, drc, "%s: load and dump disagree", f->path);
    cr_expect(rc == 0 || !f->must_load, "%s does not load", f->path);
    if (rc == 0) {
        check_native_profile(f->path, &p, f->len);
        cr_expect(!f->must_load || !p.truncated, "%s is truncated", f->path);
        t->valid += f->must_load;
    } else {
        cr_expect_eq(p.nsamples, 0);
        cr_expect_null(p.format);
    }
    profile_free(&p);
}

Test(fuzz_corpus, native_inputs_load_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(NATIVE_CORPUS, replay_native, &t);
    cr_expect_gt(t.valid, 0, "no valid-* profile in %s", NATIVE_CORPUS);
}

/* What the gperftools reader promises about any profile it accepts. */
static void check_gperftools_profile(const char *path, const struct profile *p)
{
    cr_expect_str_eq(p->format, "gperftools", "%s", path);
    cr_expect_gt(p->frequency, 0, "%s", path);
    cr_expect_eq(p->nprocesses, 1, "%s", path);
    cr_expect_eq(p->nthreads, 1, "%s", path);
    cr_assert_geq(p->nstacks, 1, "%s: no empty stack 0", path);
    cr_expect_eq(p->stacks[0].depth, 0, "%s", path);
    for (size_t i = 1; i < p->nstacks; i++) {
        cr_expect_geq(p->stacks[i].depth, 1, "%s: stack %zu", path, i);
        cr_expect_leq(p->stacks[i].depth, GPERFTOOLS_MAX_DEPTH, "%s: stack %zu", path, i);
    }
    uint64_t cpu = 0, ticks = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_assert_eq(s->nthreads, 1, "%s: sample %zu", path, i);
        ticks += prof_weight(s, 0);
        const struct prof_thread_sample *t = &s->threads[0];
        cr_assert(t->stack > 0 && t->stack < p->nstacks, "%s: sample %zu", path, i);
        cr_expect_eq(t->pc, p->stacks[t->stack].pcs[0], "%s: sample %zu", path, i);
        cr_expect_gt(t->cpu_ns, cpu, "%s: sample %zu: CPU time must grow", path, i);
        cpu = t->cpu_ns;
    }
    cr_expect_eq(p->totals.samples, ticks, "%s", path);
    for (size_t i = 0; i < p->nmaps; i++)
        cr_expect_leq(p->maps[i].start, p->maps[i].end, "%s: map %zu", path, i);
}

/* valid-* are real libprofiler output and hand-made variants (byte orders,
 * 32-bit slots, build= lines); the rest must fail with "NAME: offset N:"
 * and leave nothing behind.  Both ways in: the buffer reader the fuzz
 * target uses, and profile_load() through content detection. */
static void replay_gperftools(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    char *msg = NULL;
    size_t msg_len = 0;
    FILE *mem = open_memstream(&msg, &msg_len);
    FILE *saved = stderr;
    stderr = mem;
    struct profile p, viaload;
    int rc = gperftools_load_buffer(f->name, f->data, f->len, &p);
    int lrc = gperftools_detect(f->data, f->len, NULL) ? profile_load(f->path, &viaload) : -1;
    if (lrc != 0)
        profile_init(&viaload);
    stderr = saved;
    fclose(mem);

    cr_expect(rc == 0 || !f->must_load, "%s does not load: %s", f->path, msg);
    cr_expect_eq(rc, lrc, "%s: profile_load disagrees", f->path);
    if (rc == 0) {
        check_gperftools_profile(f->path, &p);
        cr_expect_eq(viaload.nsamples, p.nsamples, "%s", f->path);
        t->valid += f->must_load;
    } else {
        cr_expect_eq(p.nsamples, 0);
        cr_expect_null(p.format);
        char *prefix = NULL;
        cr_assert_geq(asprintf(&prefix, "%s: offset ", f->name), 0);
        cr_expect_not_null(strstr(msg, prefix), "%s: message: %s", f->path, msg);
        free(prefix);
    }
    profile_free(&p);
    profile_free(&viaload);
    free(msg);
}

Test(fuzz_corpus, gperftools_inputs_load_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(GPERFTOOLS_CORPUS, replay_gperftools, &t);
    cr_expect_gt(t.valid, 0, "no valid-* profile in %s", GPERFTOOLS_CORPUS);
}

/* What a .pbin reader and writer promise about any profile the reader
 * accepts: tables within their limits, naming processes it knows, that the
 * symbolizer answers from, and a native copy that reads back whole. */
static void check_pbin_profile(const char *path, const struct profile *p, size_t len,
                               const char *copy)
{
    check_native_profile(path, p, len);
    for (size_t i = 0; i < p->nlocations; i++) {
        const struct prof_location *l = &p->locations[i];
        cr_expect_leq(l->nframes, NATIVE_LOCATION_FRAMES_MAX, "%s: location %zu", path, i);
        bool known = false;
        for (size_t k = 0; k < p->nprocesses && !known; k++)
            known = p->processes[k].pid == l->pid;
        cr_expect(known, "%s: location %zu names pid %u, no process", path, i, l->pid);
    }
    if (p->nlocations) {
        struct symbolizer_options opts = {0};
        struct symbolizer *s = symbolizer_new(p, &opts);
        for (size_t i = 0; i < p->nsamples; i++)
            for (uint32_t t = 0; t < p->samples[i].nthreads; t++) {
                const struct prof_thread_sample *th = &p->samples[i].threads[t];
                const struct sym_location *l =
                    symbolizer_resolve(s, th->pid, p->samples[i].time_ns, th->pc, false);
                cr_expect_geq(l->nframes, 1, "%s: sample %zu", path, i);
            }
        symbolizer_free(s);
    }
    cr_assert_eq(native_write_profile(copy, p), 0, "%s: cannot be written", path);
    struct profile q;
    cr_assert_eq(profile_load(copy, &q), 0, "%s: its copy cannot be read", path);
    cr_expect_not(q.truncated, "%s: its copy is truncated", path);
    cr_expect_eq(q.nsamples, p->nsamples, "%s", path);
    cr_expect_eq(q.nlocations, p->nlocations, "%s", path);
    cr_expect_eq(q.nmaps, p->nmaps, "%s", path);
    cr_expect_eq(q.has_totals, p->has_totals, "%s", path);
    profile_free(&q);
}

/* valid-* are .pbin files with symbol tables and must read whole; trunc-*
 * and bad-* are damaged in a LOCATION and must read as truncated; the rest
 * came from fuzzing. */
static void replay_pbin(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    FILE *sink = fopen("/dev/null", "w");
    cr_assert_not_null(sink);
    struct profile p;
    int rc = native_load_buffer(f->name, f->data, f->len, &p);
    int drc = native_dump_buffer(f->name, f->data, f->len, sink);
    fclose(sink);
    cr_expect_eq(rc, drc, "%s: load and dump disagree", f->path);
    bool must_cut = strncmp(f->name, "trunc-", 6) == 0 || strncmp(f->name, "bad-", 4) == 0;
    cr_expect(rc == 0 || !f->must_load, "%s does not load", f->path);
    if (rc == 0) {
        check_pbin_profile(f->path, &p, f->len, t->copy);
        if (f->must_load) {
            cr_expect(!p.truncated && p.nlocations > 0, "%s: truncated or no tables", f->path);
            t->valid++;
        }
        if (must_cut) {
            cr_expect(p.truncated, "%s is not truncated", f->path);
            t->damaged++;
        }
    }
    profile_free(&p);
}

Test(fuzz_corpus, pbin_inputs_load_or_fail_cleanly)
{
    char tmpl[] = "/tmp/ptprof-test-pbin-corpus-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char *copy = NULL;
    cr_assert_geq(asprintf(&copy, "%s/copy.pbin", tmpl), 0);
    struct tally t = {.copy = copy};
    corpus_replay(PBIN_CORPUS, replay_pbin, &t);
    unlink(copy);
    rmdir(tmpl);
    cr_expect_gt(t.valid, 0, "no valid-* profile in %s", PBIN_CORPUS);
    cr_expect_gt(t.damaged, 0, "no trunc-* or bad-* profile in %s", PBIN_CORPUS);
    free(copy);
}

/* What the gmon.out reader promises about any file it accepts. */
static void check_gmon_profile(const char *path, const struct profile *p, uint64_t max)
{
    cr_expect_str_eq(p->format, "gmon", "%s", path);
    cr_expect_eq(p->nprocesses, 1, "%s", path);
    cr_expect_eq(p->nthreads, 1, "%s", path);
    cr_assert_eq(p->nstacks, 1, "%s: only the empty stack", path);
    cr_expect_eq(p->stacks[0].depth, 0, "%s", path);
    uint64_t cpu = 0, ticks = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_assert_eq(s->nthreads, 1, "%s: sample %zu", path, i);
        ticks += prof_weight(s, 0);
        cr_expect_eq(s->threads[0].stack, 0, "%s: sample %zu", path, i);
        cr_expect_geq(s->threads[0].cpu_ns, cpu, "%s: sample %zu: CPU time goes back", path, i);
        cpu = s->threads[0].cpu_ns;
    }
    cr_expect_leq(ticks, max, "%s", path);
    cr_expect_eq(p->totals.samples, ticks, "%s", path);
    cr_assert_eq(p->nmaps, 1, "%s", path);
    cr_expect_leq(p->maps[0].start, p->maps[0].end, "%s", path);
    for (size_t i = 0; i < p->narcs; i++)
        for (size_t j = i + 1; j < p->narcs; j++)
            cr_expect(p->arcs[i].from_pc != p->arcs[j].from_pc ||
                          p->arcs[i].self_pc != p->arcs[j].self_pc,
                      "%s: arcs %zu and %zu are one pair", path, i, j);
}

/* valid-* are gcc -pg output and variants (records repeated, basic blocks,
 * other layouts); bad-* and trunc-* must fail with one "NAME: offset N:"
 * message and leave nothing behind; fuzz-* may do either, cleanly.  The
 * limit is the fuzz target's. */
#define GMON_FUZZ_MAX_COUNTS 100000

static void replay_gmon(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    const struct gmon_read_options opts = {.max_counts = GMON_FUZZ_MAX_COUNTS};
    fflush(stderr);
    int saved = dup(2);
    FILE *msg = tmpfile();
    cr_assert_not_null(msg);
    dup2(fileno(msg), 2);
    struct profile p;
    int rc = gmon_load_buffer_opts(f->name, f->data, f->len, &opts, &p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[1024];
    rewind(msg);
    text[fread(text, 1, sizeof(text) - 1, msg)] = '\0';
    fclose(msg);

    bool must_fail = strncmp(f->name, "bad-", 4) == 0 || strncmp(f->name, "trunc-", 6) == 0;
    cr_expect(rc == 0 || !f->must_load, "%s does not load: %s", f->path, text);
    cr_expect(rc != 0 || !must_fail, "%s loads", f->path);
    if (rc == 0) {
        check_gmon_profile(f->path, &p, opts.max_counts);
        t->valid += f->must_load;
    } else {
        char want[300];
        snprintf(want, sizeof(want), "%s: offset ", f->name);
        cr_expect_not_null(strstr(text, want), "%s: %s", f->path, text);
        cr_expect_eq(p.nsamples, 0);
        cr_expect_null(p.format);
        t->damaged += must_fail;
    }
    profile_free(&p);
}

Test(fuzz_corpus, gmon_inputs_load_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(GMON_CORPUS, replay_gmon, &t);
    cr_expect_gt(t.valid, 0, "no valid-* file in %s", GMON_CORPUS);
    cr_expect_gt(t.damaged, 0, "no bad-* file in %s", GMON_CORPUS);
}

/* perf.data: valid-* files are perf record's own; trunc-* are cut from
 * them and must fail with the file's name and an offset. */
struct perf_data_load {
    const struct corpus_file *f;
    struct profile p;
};

static int load_perf_data(void *arg)
{
    struct perf_data_load *l = arg;
    return perf_data_load_buffer(l->f->name, l->f->data, l->f->len, &l->p);
}

static void replay_perf_data(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    struct perf_data_load l = {.f = f};
    int rc;
    char *text = test_capture_stderr(load_perf_data, &l, &rc);
    bool must_fail = strncmp(f->name, "bad-", 4) == 0 || strncmp(f->name, "trunc-", 6) == 0;
    cr_expect(rc == 0 || !f->must_load, "%s does not load: %s", f->path, text);
    cr_expect(rc != 0 || !must_fail, "%s loads", f->path);
    if (rc == 0) {
        cr_expect(l.p.nsamples > 0 || !f->must_load, "%s: no samples", f->path);
        for (size_t i = 0; i < l.p.nsamples; i++)
            cr_expect_lt(l.p.samples[i].threads[0].stack, l.p.nstacks, "%s", f->path);
        t->valid += f->must_load;
    } else {
        char want[300];
        snprintf(want, sizeof(want), "%s: offset ", f->name);
        cr_expect_not_null(strstr(text, want), "%s: %s", f->path, text);
        cr_expect_eq(l.p.nsamples, 0);
        t->damaged += must_fail;
    }
    profile_free(&l.p);
    free(text);
}

Test(fuzz_corpus, perf_data_inputs_load_or_fail_cleanly)
{
    struct tally t = {0};
    corpus_replay(PERF_DATA_CORPUS, replay_perf_data, &t);
    cr_expect_gt(t.valid, 0, "no valid-* file in %s", PERF_DATA_CORPUS);
    cr_expect_gt(t.damaged, 0, "no trunc-* file in %s", PERF_DATA_CORPUS);
}

/* --- any file: detection, bounds, and the format a file resembles ---------- */

/* The fuzz target's limit for formats read whole. */
#define LOAD_FUZZ_MAX_LEN ((size_t)16 << 20)

/* A message "NAME: offset N: ...", "NAME: decompressed offset N: ...",
 * "NAME:LINE: ..." or "NAME: the file is empty ..." somewhere in TEXT. */
static bool names_where(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
        const char *r = at + n;
        if (r[0] != ':')
            continue;
        if ((r[1] >= '0' && r[1] <= '9') || strncmp(r + 1, " offset ", 8) == 0 ||
            strncmp(r + 1, " decompressed offset ", 21) == 0 ||
            strncmp(r + 1, " the file is empty", 18) == 0)
            return true;
    }
    return false;
}

struct load_both {
    const struct corpus_file *f;
    struct profile mem, file;
    int mem_rc, file_rc;
};

static int load_both_ways(void *arg)
{
    struct load_both *b = arg;
    struct profile_file pf;
    b->mem_rc = profile_file_read_memory(b->f->name, b->f->data, b->f->len, LOAD_FUZZ_MAX_LEN, &pf);
    if (b->mem_rc == 0) {
        b->mem_rc = profile_parse(&pf, &b->mem);
        profile_file_free(&pf);
    } else {
        profile_init(&b->mem);
    }
    b->file_rc = profile_load(b->f->path, &b->file);
    return 0;
}

/* valid-* load whole; trunc-* load, marked truncated; bad-* fail with a
 * message naming the file and where.  From memory and from the file alike. */
static void replay_load(const struct corpus_file *f, void *ctx)
{
    struct tally *t = ctx;
    struct load_both b = {.f = f};
    int ignored;
    char *text = test_capture_stderr(load_both_ways, &b, &ignored);
    cr_expect_eq(b.mem_rc, b.file_rc, "%s: from memory %d, from the file %d: %s", f->path, b.mem_rc,
                 b.file_rc, text);
    if (f->must_load) {
        cr_expect(b.mem_rc == 0 && !b.mem.truncated, "%s does not load whole: %s", f->path, text);
        t->valid += b.mem_rc == 0;
    } else if (strncmp(f->name, "trunc-", 6) == 0) {
        cr_expect(b.mem_rc == 0 && b.mem.truncated, "%s: not a truncated profile: %s", f->path,
                  text);
        t->damaged += b.mem_rc == 0;
    } else if (strncmp(f->name, "bad-", 4) == 0) {
        cr_expect_neq(b.mem_rc, 0, "%s loads", f->path);
        cr_expect(names_where(text, f->name), "%s: the message does not say where: %s", f->path,
                  text);
        t->damaged++;
    }
    if (b.mem_rc == 0 && b.file_rc == 0) {
        cr_expect_eq(b.mem.nsamples, b.file.nsamples, "%s", f->path);
        cr_expect_eq(b.mem.truncated, b.file.truncated, "%s", f->path);
    } else {
        cr_expect_eq(b.mem.nsamples, 0, "%s", f->path);
    }
    profile_free(&b.mem);
    profile_free(&b.file);
    free(text);
}

Test(fuzz_corpus, any_input_loads_or_says_where_it_is_wrong)
{
    struct tally t = {0};
    corpus_replay(LOAD_CORPUS, replay_load, &t);
    cr_expect_gt(t.valid, 0, "no valid-* file in %s", LOAD_CORPUS);
    cr_expect_gt(t.damaged, 0, "no bad-* or trunc-* file in %s", LOAD_CORPUS);
}
