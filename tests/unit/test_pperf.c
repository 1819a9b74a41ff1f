/* test_pperf.c - interop/pperf.h: the original sampler's raw format. */
#include "../lib/pperf_legacy.h"
#include "../lib/spawn.h"
#include "interop/pperf.h"
#include "record/proc_maps.h"
#include "symbol/binary_finder.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------- */

static size_t dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static unsigned char *grow(unsigned char *buf, size_t size)
{
    unsigned char *bigger = realloc(buf, size);
    cr_assert_not_null(bigger);
    return bigger;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = grow(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Little-endian decoding written out byte by byte, independent of the code
 * under test. */
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static double ledouble(const unsigned char *p)
{
    uint64_t bits = le64(p);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* --- the reference profile ------------------------------------------------ */

#define WALL0 1700000000123456ULL
static const double pmu_values[3][2] = {{1.5, -2.25}, {3.0e9, 0.0}, {-0.0, 1e-300}};
static const struct pperf_thread threads0[] = {{101, 0x555555555139ULL, 123456789ULL}};
static const struct pperf_thread threads1[] = {
    {101, 0x555555555200ULL, 123556789ULL},
    {102, 0x7ffff7e5a123ULL, 5000ULL},
    {0xfffffffeu, UINT64_MAX, 0x0102030405060708ULL},
};
static const uint32_t nthreads_of[3] = {1, 3, 0};
static const struct pperf_thread *const threads_of[3] = {threads0, threads1, NULL};

static struct pperf_map ref_maps[2] = {
    {0x555555554000ULL, 0x2000ULL, "demo-pie"},
    {0x7ffff7fc1000ULL, 0x1000ULL, "[vdso]"},
};

/* Magic 3 (power), 16 PMU bytes, samples with 1, 3 and 0 threads, 2 maps;
 * EXTRA more samples of 4 threads each make the body larger than any
 * single buffer in the writer. */
static int write_reference(const char *path, unsigned extra)
{
    struct pperf_writer *w = pperf_writer_open(path, 3, 16);
    if (!w)
        return -1;
    for (unsigned i = 0; i < 3; i++)
        if (pperf_writer_sample(w, WALL0 + 1000 * i, pmu_values[i], nthreads_of[i],
                                threads_of[i]) != 0) {
            pperf_writer_abort(w);
            return -1;
        }
    for (unsigned i = 0; i < extra; i++) {
        struct pperf_thread t[4];
        for (unsigned k = 0; k < 4; k++)
            t[k] = (struct pperf_thread){1000 + k, 0x400000 + i * 16 + k, (uint64_t)i * 1000 + k};
        double v[2] = {i * 0.5, -(double)i};
        if (pperf_writer_sample(w, WALL0 + 3000 + i, v, 4, t) != 0) {
            pperf_writer_abort(w);
            return -1;
        }
    }
    return pperf_writer_finish(w, 3000, 42, ref_maps, 2);
}

static unsigned char *reference_bytes(size_t *len)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "ref.pperf");
    cr_assert_eq(write_reference(path, 0), 0);
    unsigned char *b = read_file(path, len);
    test_rmtree(dir);
    free(path);
    free(dir);
    return b;
}

/* --- writing -------------------------------------------------------------- */

Test(pperf_write, every_field_at_its_offset)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    /* 36 header + (8+16+4+20) + (8+16+4+60) + (8+16+4) + 2 * 272 */
    cr_assert_eq(len, 744);

    /* header */
    cr_assert_eq(b[0], 3);
    cr_assert_eq(b[1] | b[2] | b[3], 0);
    cr_assert_eq(le32(b + 0), 3u);
    cr_assert_eq(le64(b + 4), 3000u);
    cr_assert_eq(le64(b + 12), 42u);
    cr_assert_eq(le64(b + 20), 3u);
    cr_assert_eq(le32(b + 28), 16u);
    cr_assert_eq(le32(b + 32), 2u);

    /* sample 0: one thread */
    cr_assert_eq(le64(b + 36), WALL0);
    cr_assert_eq(ledouble(b + 44), 1.5);
    cr_assert_eq(ledouble(b + 52), -2.25);
    cr_assert_eq(le32(b + 60), 1u);
    cr_assert_eq(le32(b + 64), 101u);
    cr_assert_eq(le64(b + 68), 0x555555555139ULL);
    cr_assert_eq(le64(b + 76), 123456789ULL);

    /* sample 1: three threads */
    cr_assert_eq(le64(b + 84), WALL0 + 1000);
    cr_assert_eq(ledouble(b + 92), 3.0e9);
    cr_assert_eq(ledouble(b + 100), 0.0);
    cr_assert_eq(le32(b + 108), 3u);
    cr_assert_eq(le32(b + 112), 101u);
    cr_assert_eq(le64(b + 116), 0x555555555200ULL);
    cr_assert_eq(le64(b + 124), 123556789ULL);
    cr_assert_eq(le32(b + 132), 102u);
    cr_assert_eq(le64(b + 136), 0x7ffff7e5a123ULL);
    cr_assert_eq(le64(b + 144), 5000u);
    cr_assert_eq(le32(b + 152), 0xfffffffeu);
    cr_assert_eq(le64(b + 156), UINT64_MAX);
    cr_assert_eq(le64(b + 164), 0x0102030405060708ULL);
    cr_assert_eq(b[164], 0x08);
    cr_assert_eq(b[171], 0x01);

    /* sample 2: no thread */
    cr_assert_eq(le64(b + 172), WALL0 + 2000);
    cr_assert_eq(memcmp(b + 180, &(uint64_t){0x8000000000000000ULL}, 8), 0); /* -0.0 */
    cr_assert_eq(ledouble(b + 188), 1e-300);
    cr_assert_eq(le32(b + 196), 0u);

    /* maps: address, size, label NUL padded to 256 bytes */
    cr_assert_eq(le64(b + 200), 0x555555554000ULL);
    cr_assert_eq(le64(b + 208), 0x2000u);
    cr_assert_eq(memcmp(b + 216, "demo-pie", 8), 0);
    for (size_t i = 216 + 8; i < 472; i++)
        cr_assert_eq(b[i], 0, "label byte at %zu is not NUL padding", i);
    cr_assert_eq(le64(b + 472), 0x7ffff7fc1000ULL);
    cr_assert_eq(le64(b + 480), 0x1000u);
    cr_assert_eq(memcmp(b + 488, "[vdso]", 6), 0);
    for (size_t i = 488 + 6; i < 744; i++)
        cr_assert_eq(b[i], 0, "label byte at %zu is not NUL padding", i);
    free(b);
}

Test(pperf_write, empty_profile_is_a_bare_header)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "empty.pperf");
    struct pperf_writer *w = pperf_writer_open(path, 0, 0);
    cr_assert_not_null(w);
    cr_assert_eq(pperf_writer_finish(w, 7, 1, NULL, 0), 0);
    size_t len;
    unsigned char *b = read_file(path, &len);
    cr_assert_eq(len, PPERF_HEADER_SIZE);
    cr_assert_eq(le64(b + 4), 7u);
    cr_assert_eq(le64(b + 12), 1u);
    cr_assert_eq(le64(b + 20), 0u);
    cr_assert_eq(le32(b + 32), 0u);
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_write, long_labels_are_cut_to_255_bytes_and_terminated)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "long.pperf");
    struct pperf_map m = {0x1000, 0x10, ""};
    memset(m.label, 'L', sizeof(m.label)); /* no terminator at all */
    struct pperf_writer *w = pperf_writer_open(path, 0, 0);
    cr_assert_not_null(w);
    cr_assert_eq(pperf_writer_finish(w, 0, 0, &m, 1), 0);
    size_t len;
    unsigned char *b = read_file(path, &len);
    cr_assert_eq(len, PPERF_HEADER_SIZE + PPERF_MAP_SIZE);
    cr_assert_eq(b[36 + 16 + 254], 'L');
    cr_assert_eq(b[36 + 16 + 255], 0);
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* Run write_reference(path "-", EXTRA) in a child whose stdout is a pipe. */
static unsigned char *write_to_stdout(unsigned extra, bool abort_instead, size_t *len)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        if (abort_instead) {
            struct pperf_writer *w = pperf_writer_open("-", 3, 16);
            if (!w)
                _exit(1);
            pperf_writer_sample(w, WALL0, pmu_values[0], 1, threads0);
            pperf_writer_abort(w);
            fflush(stdout);
            _exit(0);
        }
        _exit(write_reference("-", extra) == 0 ? 0 : 1);
    }
    close(fds[1]);
    size_t cap = 65536, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (n == cap)
            buf = grow(buf, cap *= 2);
        ssize_t got = read(fds[0], buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        cr_assert_geq(got, 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer child failed");
    *len = n;
    return buf;
}

Test(pperf_write, stdout_gives_the_same_bytes_as_a_file)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "file.pperf");
    /* Small, and larger than the writer's copy buffer and a pipe's. */
    const unsigned extras[] = {0, 5000};
    for (size_t k = 0; k < 2; k++) {
        cr_assert_eq(write_reference(path, extras[k]), 0);
        size_t flen, slen;
        unsigned char *f = read_file(path, &flen);
        unsigned char *s = write_to_stdout(extras[k], false, &slen);
        cr_assert_eq(flen, 744 + (size_t)extras[k] * (8 + 16 + 4 + 4 * 20));
        cr_assert_eq(slen, flen);
        cr_assert_eq(memcmp(f, s, flen), 0);
        free(f);
        free(s);
    }
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_write, abort_on_stdout_writes_nothing)
{
    size_t len;
    unsigned char *s = write_to_stdout(0, true, &len);
    cr_assert_eq(len, 0);
    free(s);
}

Test(pperf_write, abort_leaves_an_existing_file_untouched)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "keep.pperf");
    const char old[] = "previous profile contents";
    write_bytes(path, old, sizeof(old));

    struct pperf_writer *w = pperf_writer_open(path, 1, 8);
    cr_assert_not_null(w);
    double v = 2.5;
    for (int i = 0; i < 100; i++)
        cr_assert_eq(pperf_writer_sample(w, WALL0 + (uint64_t)i, &v, 1, threads0), 0);
    /* The file must not change before the end either. */
    size_t len;
    unsigned char *b = read_file(path, &len);
    cr_assert_eq(len, sizeof(old));
    free(b);
    pperf_writer_abort(w);

    b = read_file(path, &len);
    cr_assert_eq(len, sizeof(old));
    cr_assert_eq(memcmp(b, old, len), 0);
    cr_assert_eq(dir_entries(dir), 1, "a temporary file was left behind");
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_write, finish_replaces_an_existing_file_and_leaves_no_temporary)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "replace.pperf");
    write_bytes(path, "old", 3);
    cr_assert_eq(write_reference(path, 0), 0);
    size_t len;
    unsigned char *b = read_file(path, &len);
    cr_assert_eq(len, 744);
    cr_assert_eq(dir_entries(dir), 1);
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_write, unwritable_directory_fails_at_open)
{
    char *dir = test_mkdtemp();
    cr_assert_eq(chmod(dir, 0555), 0);
    char *path = test_path(dir, "out.pperf");
    int err[2];
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* root ignores permissions: test as an ordinary user instead. */
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        dup2(err[1], 2);
        struct pperf_writer *w = pperf_writer_open(path, 0, 8);
        _exit(w == NULL ? 0 : 1);
    }
    close(err[1]);
    char msg[4096] = {0};
    size_t n = 0;
    ssize_t got;
    while (n < sizeof(msg) - 1 && (got = read(err[0], msg + n, sizeof(msg) - 1 - n)) > 0)
        n += (size_t)got;
    close(err[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    cr_assert_neq(WEXITSTATUS(status), 3, "cannot drop root privileges for this test");
    cr_assert_eq(WEXITSTATUS(status), 0, "open succeeded in a read-only directory");
    cr_assert_not_null(strstr(msg, path), "the message does not name the file: %s", msg);
    cr_assert_eq(dir_entries(dir), 0);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_write, missing_directory_fails_at_open)
{
    cr_assert_null(pperf_writer_open("/nonexistent-ptprof-dir/x.pperf", 0, 0));
}

Test(pperf_write, refuses_a_pmu_size_no_reader_accepts)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "big.pperf");
    cr_assert_null(pperf_writer_open(path, 0, PPERF_PMU_SIZE_MAX + 8));
    cr_assert_eq(dir_entries(dir), 0);
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* --- reading -------------------------------------------------------------- */

static void check_reference(const struct pperf_profile *p)
{
    cr_assert_eq(p->magic, 3u);
    cr_assert_eq(p->wall_us, 3000u);
    cr_assert_eq(p->latency_us, 42u);
    cr_assert_eq(p->nsamples, 3u);
    cr_assert_eq(p->pmu_size, 16u);
    cr_assert_eq(p->nmaps, 2u);
    for (unsigned i = 0; i < 3; i++) {
        const struct pperf_sample *s = &p->samples[i];
        cr_assert_eq(s->wall_us, WALL0 + 1000 * i);
        cr_assert_not_null(s->pmu);
        cr_assert_eq(memcmp(s->pmu, pmu_values[i], 16), 0);
        cr_assert_eq(memcmp(s->pmu_raw, pmu_values[i], 16), 0);
        cr_assert_eq(s->nthreads, nthreads_of[i]);
        for (uint32_t t = 0; t < s->nthreads; t++) {
            cr_assert_eq(s->threads[t].tid, threads_of[i][t].tid);
            cr_assert_eq(s->threads[t].pc, threads_of[i][t].pc);
            cr_assert_eq(s->threads[t].cpu_ns, threads_of[i][t].cpu_ns);
        }
    }
    for (unsigned i = 0; i < 2; i++) {
        cr_assert_eq(p->maps[i].address, ref_maps[i].address);
        cr_assert_eq(p->maps[i].size, ref_maps[i].size);
        cr_assert_str_eq(p->maps[i].label, ref_maps[i].label);
    }
}

Test(pperf_read, round_trip_through_a_file)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "rt.pperf");
    cr_assert_eq(write_reference(path, 0), 0);
    struct pperf_profile p;
    cr_assert_eq(pperf_load(path, &p), 0);
    check_reference(&p);
    pperf_free(&p);
    cr_assert_null(p.storage);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_read, round_trip_of_many_samples)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "many.pperf");
    cr_assert_eq(write_reference(path, 3000), 0);
    struct pperf_profile p;
    cr_assert_eq(pperf_load(path, &p), 0);
    cr_assert_eq(p.nsamples, 3003u);
    for (unsigned i = 0; i < 3000; i++) {
        const struct pperf_sample *s = &p.samples[3 + i];
        cr_assert_eq(s->wall_us, WALL0 + 3000 + i);
        cr_assert_eq(s->pmu[0], i * 0.5);
        cr_assert_eq(s->pmu[1], -(double)i);
        cr_assert_eq(s->nthreads, 4u);
        cr_assert_eq(s->threads[3].tid, 1003u);
        cr_assert_eq(s->threads[2].pc, 0x400000u + i * 16 + 2);
        cr_assert_eq(s->threads[1].cpu_ns, (uint64_t)i * 1000 + 1);
    }
    pperf_free(&p);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_read, pmu_size_not_a_multiple_of_8_keeps_raw_bytes_only)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "odd.pperf");
    struct pperf_writer *w = pperf_writer_open(path, 0, 12);
    cr_assert_not_null(w);
    const unsigned char raw[2][12] = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                      {0xff, 0, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}};
    cr_assert_eq(pperf_writer_sample(w, 10, raw[0], 1, threads0), 0);
    cr_assert_eq(pperf_writer_sample(w, 20, raw[1], 3, threads1), 0);
    cr_assert_eq(pperf_writer_finish(w, 30, 0, NULL, 0), 0);

    struct pperf_profile p;
    cr_assert_eq(pperf_load(path, &p), 0);
    cr_assert_eq(p.pmu_size, 12u);
    cr_assert_eq(p.nsamples, 2u);
    for (unsigned i = 0; i < 2; i++) {
        cr_assert_null(p.samples[i].pmu);
        cr_assert_eq(memcmp(p.samples[i].pmu_raw, raw[i], 12), 0);
    }
    cr_assert_eq(p.samples[1].nthreads, 3u);
    cr_assert_eq(p.samples[1].threads[2].tid, 0xfffffffeu);
    cr_assert_null(p.maps);
    pperf_free(&p);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(pperf_read, a_label_filling_all_256_bytes_is_terminated)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    memset(b + 216, 'A', 256);
    struct pperf_profile p;
    cr_assert_eq(pperf_load_buffer("full-label", b, len, &p), 0);
    cr_assert_eq(strlen(p.maps[0].label), 255);
    cr_assert_str_eq(p.maps[1].label, "[vdso]");
    pperf_free(&p);
    free(b);
}

struct load_args {
    const char *name;
    const void *data;
    size_t len;
    struct pperf_profile *out;
};

static int do_load(void *arg)
{
    struct load_args *a = arg;
    return pperf_load_buffer(a->name, a->data, a->len, a->out);
}

/* Load DATA and expect -1 with "NAME: offset N: ..." on stderr; returns N. */
static unsigned long long expect_rejected(const char *name, const void *data, size_t len)
{
    struct pperf_profile p;
    struct load_args a = {name, data, len, &p};
    int rc;
    char *msg = test_capture_stderr(do_load, &a, &rc);
    cr_assert_eq(rc, -1, "%s: %zu bytes accepted", name, len);
    cr_assert_null(p.storage);
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "%s: offset ", name);
    const char *at = strstr(msg, prefix);
    cr_assert_not_null(at, "message does not name the file and an offset: %s", msg);
    at += strlen(prefix);
    cr_assert(*at >= '0' && *at <= '9', "no offset in: %s", msg);
    unsigned long long off = strtoull(at, NULL, 10);
    free(msg);
    return off;
}

Test(pperf_read, truncation_at_every_offset_is_rejected)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    struct pperf_profile p;
    cr_assert_eq(pperf_load_buffer("whole.pperf", b, len, &p), 0);
    pperf_free(&p);
    for (size_t n = 0; n < len; n++) {
        /* An exact-size copy lets a sanitizer catch any read past the end. */
        unsigned char *cut = malloc(n ? n : 1);
        memcpy(cut, b, n);
        unsigned long long off = expect_rejected("cut.pperf", cut, n);
        cr_assert_leq(off, n, "offset %llu lies beyond the %zu bytes present", off, n);
        free(cut);
    }
    free(b);
}

Test(pperf_read, trailing_garbage_is_rejected_at_its_offset)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    b = grow(b, len + 5);
    memset(b + len, 0xaa, 5);
    cr_assert_eq(expect_rejected("tail.pperf", b, len + 5), len);
    free(b);
}

Test(pperf_read, missing_maps_are_rejected)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    put_le32(b + 32, 3); /* one map more than present */
    expect_rejected("maps.pperf", b, len);
    put_le32(b + 32, 1); /* one map fewer: the other one is garbage */
    cr_assert_eq(expect_rejected("maps.pperf", b, len), 472);
    free(b);
}

Test(pperf_read, absurd_counts_are_rejected_without_allocating)
{
    size_t len;
    unsigned char *b = reference_bytes(&len);
    unsigned char *m = malloc(len);
    test_limit_address_space();

    memcpy(m, b, len);
    put_le64(m + 20, 1ULL << 63);
    cr_assert_eq(expect_rejected("nsamples", m, len), 20);

    memcpy(m, b, len);
    put_le64(m + 20, UINT64_MAX);
    cr_assert_eq(expect_rejected("nsamples", m, len), 20);

    memcpy(m, b, len);
    put_le32(m + 108, UINT32_MAX); /* sample 1's thread count */
    cr_assert_eq(expect_rejected("nthreads", m, len), 108);

    memcpy(m, b, len);
    put_le32(m + 60, UINT32_MAX / PPERF_THREAD_SIZE + 1); /* wraps 32-bit sizes */
    cr_assert_eq(expect_rejected("nthreads", m, len), 60);

    memcpy(m, b, len);
    put_le32(m + 32, UINT32_MAX);
    expect_rejected("nmaps", m, len);

    memcpy(m, b, len);
    put_le32(m + 28, UINT32_MAX);
    cr_assert_eq(expect_rejected("pmu_size", m, len), 28);

    memcpy(m, b, len);
    put_le32(m + 28, PPERF_PMU_SIZE_MAX + 8);
    cr_assert_eq(expect_rejected("pmu_size", m, len), 28);

    memcpy(m, b, len);
    put_le32(m + 28, 24); /* plausible, but not what the samples hold */
    expect_rejected("pmu_size", m, len);

    /* Many tiny samples are fine as long as the bytes are there. */
    unsigned char many[PPERF_HEADER_SIZE + 1000 * 12] = {0};
    put_le64(many + 20, 1000);
    struct pperf_profile p;
    cr_assert_eq(pperf_load_buffer("many", many, sizeof(many), &p), 0);
    cr_assert_eq(p.nsamples, 1000u);
    cr_assert_eq(p.samples[999].nthreads, 0u);
    pperf_free(&p);
    free(m);
    free(b);
}

Test(pperf_read, load_reports_a_missing_file)
{
    struct pperf_profile p;
    cr_assert_eq(pperf_load("/nonexistent-ptprof-dir/x.pperf", &p), -1);
    cr_assert_null(p.storage);
}

/* --- /proc/PID/maps conversion ------------------------------------------- */

static const char pie_maps[] =
    "5555555d4000-5555555d6000 r--p 00000000 fd:01 1316123                    "
    "/opt/demo/bin/demo-pie\n"
    "5555555d6000-5555555db000 r-xp 00002000 fd:01 1316123                    "
    "/opt/demo/bin/demo-pie\n"
    "5555555db000-5555555dd000 r--p 00007000 fd:01 1316123                    "
    "/opt/demo/bin/demo-pie\n"
    "5555555dd000-5555555de000 r--p 00008000 fd:01 1316123                    "
    "/opt/demo/bin/demo-pie\n"
    "5555555de000-5555555df000 rw-p 00009000 fd:01 1316123                    "
    "/opt/demo/bin/demo-pie\n"
    "5555555df000-555555600000 rw-p 00000000 00:00 0                          [heap]\n"
    "7ffff7d80000-7ffff7d83000 rw-p 00000000 00:00 0 \n"
    "7ffff7d83000-7ffff7dab000 r--p 00000000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7dab000-7ffff7f40000 r-xp 00028000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7f40000-7ffff7f98000 r--p 001bd000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7f98000-7ffff7f99000 ---p 00215000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7f99000-7ffff7f9d000 r--p 00215000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7f9d000-7ffff7f9f000 rw-p 00219000 fd:01 1312345                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7f9f000-7ffff7fac000 rw-p 00000000 00:00 0 \n"
    "7ffff7fb0000-7ffff7fb8000 r--p 00000000 fd:01 1400000                    "
    "/usr/share/demo/table.bin\n"
    "7ffff7fbb000-7ffff7fbd000 rw-p 00000000 00:00 0 \n"
    "7ffff7fbd000-7ffff7fc1000 r--p 00000000 00:00 0                          [vvar]\n"
    "7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0                          [vdso]\n"
    "7ffff7fc3000-7ffff7fc5000 r--p 00000000 fd:01 1312000                    "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffff7fc5000-7ffff7fef000 r-xp 00002000 fd:01 1312000                    "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffff7fef000-7ffff7ffa000 r--p 0002c000 fd:01 1312000                    "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffff7ffb000-7ffff7ffd000 r--p 00037000 fd:01 1312000                    "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffff7ffd000-7ffff7fff000 rw-p 00039000 fd:01 1312000                    "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffff7fff000-7ffff8000000 rw-p 00000000 00:00 0 \n"
    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static size_t convert(const char *text, struct pperf_map **out)
{
    struct map_list ml = {0};
    cr_assert_eq(maps_parse(text, strlen(text), &ml), 0);
    size_t n = pperf_maps_from_proc(&ml, out);
    maps_clear(&ml);
    return n;
}

/* One entry per executable mapping of a file, exactly as its r-x line
 * says; nothing bracketed, nothing anonymous, no data file. */
Test(pperf_maps, a_pie_program_with_libc_and_ldso_and_no_pseudo_mapping)
{
    struct pperf_map *m = NULL;
    size_t n = convert(pie_maps, &m);
    cr_assert_eq(n, 3);
    cr_assert_eq(m[0].address, 0x5555555d6000ULL);
    cr_assert_eq(m[0].size, 0x5000ULL);
    cr_assert_str_eq(m[0].label, "demo-pie");
    cr_assert_eq(m[1].address, 0x7ffff7dab000ULL);
    cr_assert_eq(m[1].size, 0x195000ULL);
    cr_assert_str_eq(m[1].label, "libc.so.6");
    cr_assert_eq(m[2].address, 0x7ffff7fc5000ULL);
    cr_assert_eq(m[2].size, 0x2a000ULL);
    cr_assert_str_eq(m[2].label, "ld-linux-x86-64.so.2");
    for (size_t i = 0; i < n; i++)
        for (size_t k = strlen(m[i].label); k < PPERF_LABEL_SIZE; k++)
            cr_assert_eq(m[i].label[k], 0);
    free(m);
}

Test(pperf_maps, deleted_files_twice_loaded_files_and_code_pieces)
{
    const char *text =
        /* a library replaced on disk while loaded: the label is the line's */
        "7f0000000000-7f0000001000 r--p 00000000 08:01 11 /tmp/build/libhot.so (deleted)\n"
        "7f0000001000-7f0000003000 r-xp 00001000 08:01 11 /tmp/build/libhot.so (deleted)\n"
        /* the same file loaded twice (dlmopen): two mappings, two entries */
        "7f0000010000-7f0000011000 r-xp 00000000 08:01 12 /lib/libtwice.so\n"
        "7f0000011000-7f0000012000 rw-p 00001000 08:01 12 /lib/libtwice.so\n"
        "7f0000020000-7f0000021000 r-xp 00000000 08:01 12 /lib/libtwice.so\n"
        /* code of a file whose offset-0 mapping is absent still counts */
        "7f0000030000-7f0000031000 r-xp 00005000 08:01 13 /lib/partial.so\n"
        /* executable and writable is executable */
        "7f0000040000-7f0000041000 rwxp 00001000 08:01 15 /lib/libtextrel.so\n"
        /* executable anonymous memory (a JIT), the vDSO, the vsyscall page */
        "7f0000050000-7f0000051000 rwxp 00000000 00:00 0 \n"
        "7f0000060000-7f0000062000 r-xp 00000000 00:00 0 [vdso]\n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
    struct pperf_map *m = NULL;
    size_t n = convert(text, &m);
    cr_assert_eq(n, 5);
    static const struct pperf_map want[] = {
        {0x7f0000001000ULL, 0x2000ULL, "libhot.so (deleted)"},
        {0x7f0000010000ULL, 0x1000ULL, "libtwice.so"},
        {0x7f0000020000ULL, 0x1000ULL, "libtwice.so"},
        {0x7f0000030000ULL, 0x1000ULL, "partial.so"},
        {0x7f0000040000ULL, 0x1000ULL, "libtextrel.so"},
    };
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(m[i].address, want[i].address, "entry %zu", i);
        cr_assert_eq(m[i].size, want[i].size, "entry %zu", i);
        cr_assert_str_eq(m[i].label, want[i].label, "entry %zu", i);
    }
    free(m);
}

Test(pperf_maps, long_paths_are_cut_and_nothing_gives_null)
{
    char text[1024];
    char name[400];
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    snprintf(text, sizeof(text), "1000-2000 r-xp 00000000 08:01 5 /x/%s\n", name);
    struct pperf_map *m = NULL;
    cr_assert_eq(convert(text, &m), 1);
    cr_assert_eq(strlen(m[0].label), PPERF_LABEL_SIZE - 1);
    cr_assert_eq(strncmp(m[0].label, "nnn", 3), 0, "the base name's first bytes are kept");
    free(m);

    m = (struct pperf_map *)1;
    cr_assert_eq(convert("1000-2000 rw-p 00000000 00:00 0 [heap]\n"
                         "3000-4000 r-xp 00000000 00:00 0 [vdso]\n"
                         "5000-6000 r--p 00000000 08:01 7 /usr/share/fonts/a.ttf\n",
                         &m),
                 0);
    cr_assert_null(m);
}

/* --- placing map entries in their files ----------------------------------- */

/* This process's maps, as the kernel gives them. */
static void own_maps(struct map_list *ml)
{
    cr_assert_eq(maps_read(getpid(), ml), 0, "maps_read: %s", strerror(errno));
}

/* The r-x file line of ML holding PC, or NULL. */
static const struct map_entry *exec_line_of(const struct map_list *ml, uint64_t pc)
{
    for (size_t i = 0; i < ml->count; i++) {
        const struct map_entry *e = &ml->entries[i];
        if ((e->perms & MAP_PERM_EXEC) && e->path[0] == '/' && pc >= e->start && pc < e->end)
            return e;
    }
    return NULL;
}

/* The file offset of PC through table M placed as P: what the symbolizer
 * computes from the profile's maps.  Fails when no entry holds PC. */
static uint64_t placed_offset(const struct pperf_map *m, const struct pperf_place *p, size_t n,
                              uint64_t pc)
{
    for (size_t i = 0; i < n; i++)
        if (pc >= m[i].address && pc - m[i].address < m[i].size)
            return pc - m[i].address + p[i].offset;
    cr_assert_fail("no map entry holds 0x%" PRIx64, pc);
    return 0;
}

/* The table's labels are base names, as the original's: its files are
 * found in the directories of this process's code, as -s DIR would say. */
static struct pperf_place *place(struct pperf_map *maps, size_t n)
{
    struct pperf_profile in = {.nmaps = (uint32_t)n, .maps = maps};
    struct pperf_place *out = calloc(n ? n : 1, sizeof(*out));
    cr_assert_not_null(out);
    struct map_list ml = {0};
    own_maps(&ml);
    char *dirs[64];
    size_t ndirs = 0;
    for (size_t i = 0; i < ml.count && ndirs < 64; i++) {
        const struct map_entry *e = &ml.entries[i];
        if (!(e->perms & MAP_PERM_EXEC) || e->path[0] != '/')
            continue;
        char *dir = strdup(e->path);
        cr_assert_not_null(dir);
        *strrchr(dir, '/') = '\0';
        bool seen = false;
        for (size_t k = 0; k < ndirs && !seen; k++)
            seen = strcmp(dirs[k], dir) == 0;
        if (seen)
            free(dir);
        else
            dirs[ndirs++] = dir;
    }
    maps_clear(&ml);
    struct binary_finder *finder = binary_finder_new((const char *const *)dirs, ndirs);
    for (size_t k = 0; k < ndirs; k++)
        free(dirs[k]);
    pperf_place_maps("self.pperf", &in, finder, out);
    binary_finder_free(finder);
    return out;
}

/* Code of this executable and of libc, at run time. */
static uint64_t own_code(void)
{
    return (uint64_t)(uintptr_t)&own_maps;
}

static uint64_t libc_code(void)
{
    return (uint64_t)(uintptr_t)&clock_gettime;
}

/* The table the original writes for this very process: every entry is an
 * executable mapping, and its offset is the one the kernel reports for it
 * (some twenty libraries, linked every which way). */
Test(pperf_place, the_originals_table_of_this_process_is_placed_as_the_kernel_mapped_it)
{
    struct map_list ml = {0};
    own_maps(&ml);
    struct pperf_map *m = NULL;
    size_t n = pperf_maps_from_proc(&ml, &m);
    cr_assert_geq(n, 3, "this test, libc and ld.so at least");
    struct pperf_place *p = place(m, n);

    size_t k = 0, nonzero = 0;
    for (size_t i = 0; i < ml.count; i++) {
        const struct map_entry *e = &ml.entries[i];
        if (!(e->perms & MAP_PERM_EXEC) || e->path[0] != '/')
            continue;
        cr_assert_lt(k, n);
        cr_assert_eq(m[k].address, e->start);
        cr_assert_eq(p[k].form, PPERF_ENTRY_MAPPING, "%s", e->path);
        cr_assert_eq(p[k].offset, e->offset, "%s: offset 0x%" PRIx64 ", the kernel says 0x%" PRIx64,
                     e->path, p[k].offset, e->offset);
        nonzero += e->offset != 0;
        k++;
    }
    cr_assert_eq(k, n);
    cr_assert_gt(nonzero, 0, "no file here has its code past offset 0: the test proves nothing");
    free(p);
    free(m);
    maps_clear(&ml);
}

/* ptprof 0.2.0's table for the same process: load bases, base names and
 * [vdso]; the placed offsets of real code agree with the kernel's. */
Test(pperf_place, ptprof_020_table_of_this_process_is_placed_at_load_bases)
{
    struct map_list ml = {0};
    own_maps(&ml);
    struct pperf_map *legacy = NULL, *orig = NULL;
    size_t nl = legacy_pperf_maps(&ml, &legacy), no = pperf_maps_from_proc(&ml, &orig);
    struct pperf_place *pl = place(legacy, nl), *po = place(orig, no);
    for (size_t i = 0; i < nl; i++) {
        cr_assert_eq(pl[i].form, PPERF_ENTRY_LOAD, "%s", legacy[i].label);
        cr_assert_eq(pl[i].offset, 0, "%s", legacy[i].label);
    }
    const uint64_t pcs[] = {own_code(), libc_code()};
    for (size_t i = 0; i < 2; i++) {
        const struct map_entry *e = exec_line_of(&ml, pcs[i]);
        cr_assert_not_null(e);
        uint64_t truth = pcs[i] - e->start + e->offset;
        cr_assert_eq(placed_offset(orig, po, no, pcs[i]), truth, "%s, original table", e->path);
        cr_assert_eq(placed_offset(legacy, pl, nl, pcs[i]), truth, "%s, 0.2.0 table", e->path);
    }
    free(pl);
    free(po);
    free(legacy);
    free(orig);
    maps_clear(&ml);
}

/* NEEDLE occurs in TEXT exactly once. */
static bool said_once(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    return at && !strstr(at + 1, needle);
}

struct place_call {
    struct pperf_map *maps;
    size_t n;
    struct pperf_place *out;
};

static int place_quietly(void *arg)
{
    struct place_call *c = arg;
    c->out = place(c->maps, c->n);
    return 0;
}

/* A file of the original's form that cannot be read, or whose size fits
 * none of its segments, is said once per file, naming the profile. */
Test(pperf_place, missing_files_and_other_builds_are_reported_once)
{
    struct map_list ml = {0};
    own_maps(&ml);
    const struct map_entry *libc = exec_line_of(&ml, libc_code());
    cr_assert_not_null(libc);
    struct pperf_map maps[5] = {
        {0x10000, 0x1000, "/nonexistent-ptprof-dir/libgone.so"},
        {0x20000, 0x1000, "/nonexistent-ptprof-dir/libgone.so"},
        {0x30000, 0x1000, ""},
        {0x40000, 0x2000, "[vdso]"},
        {libc->start, 0x1000, ""},
    };
    snprintf(maps[2].label, sizeof(maps[2].label), "%s", libc->path);
    snprintf(maps[4].label, sizeof(maps[4].label), "%s", libc->path);
    struct place_call c = {maps, 5, NULL};
    int rc;
    char *err = test_capture_stderr(place_quietly, &c, &rc);
    cr_assert(said_once(err, "libgone.so"), "one warning for the missing file:\n%s", err);
    cr_assert(strstr(err, "self.pperf: map 0: cannot read"), "%s", err);
    cr_assert(said_once(err, "another build"), "one warning for libc's sizes:\n%s", err);
    cr_assert_eq(c.out[0].form, PPERF_ENTRY_MAPPING);
    cr_assert_eq(c.out[0].offset, 0, "unknown: nothing to place it by");
    cr_assert_eq(c.out[2].form, PPERF_ENTRY_MAPPING, "a path that fits nothing: by its label");
    cr_assert_eq(c.out[2].offset, libc->offset, "libc's only executable segment");
    cr_assert_eq(c.out[3].form, PPERF_ENTRY_LOAD);
    free(err);
    free(c.out);
    maps_clear(&ml);
}

/* A hostile table: tens of thousands of unreadable files, sizes that wrap
 * around, runs of pieces.  It is placed in time, with a bounded number of
 * warnings. */
Test(pperf_place, a_huge_hostile_table_costs_little_and_says_little, .timeout = 60)
{
    enum { N = 40000 };
    struct pperf_map *maps = calloc(N, sizeof(*maps));
    cr_assert_not_null(maps);
    for (uint32_t i = 0; i < N; i++) {
        maps[i].address = i % 3 ? maps[i - 1].address + maps[i - 1].size : UINT64_MAX - i;
        maps[i].size = i % 5 ? 0x1000 : UINT64_MAX;
        snprintf(maps[i].label, sizeof(maps[i].label), "/nonexistent-ptprof-dir/%u", i / 2);
    }
    struct place_call c = {maps, N, NULL};
    int rc;
    char *err = test_capture_stderr(place_quietly, &c, &rc);
    size_t lines = 0;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 11, "ten files named, then one count:\n%.2000s", err);
    cr_assert(strstr(err, "and 19990 more files"), "%.2000s", err);
    for (uint32_t i = 0; i < N; i++)
        cr_assert_eq(c.out[i].form, PPERF_ENTRY_MAPPING);
    free(err);
    free(c.out);
    free(maps);
}
