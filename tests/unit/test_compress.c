/* test_compress.c - util/compress.h and util/slurp.h against the real gzip,
 * bzip2 and zstd command-line tools: what they write we read, what we write
 * they read, and damaged or oversized inputs behave as the contracts say;
 * and the original sampler's raw profiles load when compressed. */
#include "../lib/spawn.h"
#include "interop/pperf.h"
#include "util/compress.h"
#include "util/slurp.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct kind {
    enum compression c;
    const char *suffix;
    const char *tool; /* compresses stdin to stdout */
    const char *untool;
    const char *small_tool; /* small blocks, so a short input has several */
};

static const struct kind kinds[] = {
    {COMPRESSION_GZIP, ".gz", "gzip -c", "gzip -dc", "gzip -c"},
    {COMPRESSION_BZIP2, ".bz2", "bzip2 -c", "bzip2 -dc", "bzip2 -1 -c"},
    {COMPRESSION_ZSTD, ".zst", "zstd -q -c", "zstd -q -dc", "zstd -q -c"},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Profile-like text with random numbers: compressible, but not so much that
 * a few megabytes fit into one bzip2 block's worth of output. */
static unsigned char *make_data(size_t n, unsigned seed)
{
    unsigned char *d = malloc(n + 1);
    unsigned long long x = 0x9e3779b97f4a7c15ull ^ seed;
    size_t pos = 0;
    unsigned line = 0;
    char tmp[96];
    while (pos < n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int k = snprintf(tmp, sizeof(tmp), "sample %u tid %llu pc 0x%llx cpu %llu\n", line++,
                         x % 64, x >> 20, x % 1000003);
        size_t take = (size_t)k < n - pos ? (size_t)k : n - pos;
        memcpy(d + pos, tmp, take);
        pos += take;
    }
    return d;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "fopen %s", path);
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    cr_assert_geq(vasprintf(&cmd, fmt, ap), 0);
    va_end(ap);
    int rc = system(cmd);
    free(cmd);
    return rc;
}

/* Run the body with stderr going to a file; returns what was printed. */
static int saved_stderr = -1;
static char *capture_path;

static void capture_stderr(const char *dir)
{
    fflush(stderr);
    capture_path = test_path(dir, "stderr.txt");
    int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

static char *captured_stderr(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    size_t n;
    unsigned char *text = read_file(capture_path, &n);
    text = realloc(text, n + 1);
    text[n] = '\0';
    free(capture_path);
    return (char *)text;
}

static void assert_prefix(const struct slurp *s, const unsigned char *orig, size_t orig_len)
{
    cr_assert_leq(s->len, orig_len);
    cr_assert_eq(memcmp(s->data, orig, s->len), 0, "decoded bytes differ from the original");
}

/* --- naming and detection ----------------------------------------------- */

Test(compress, output_compression_comes_from_the_suffix)
{
    cr_expect_eq(compression_for_path("out.pbin.gz"), COMPRESSION_GZIP);
    cr_expect_eq(compression_for_path("dir.gz/out.bz2"), COMPRESSION_BZIP2);
    cr_expect_eq(compression_for_path("/a/b/raw.zst"), COMPRESSION_ZSTD);
    cr_expect_eq(compression_for_path("raw.pperf"), COMPRESSION_NONE);
    cr_expect_eq(compression_for_path("out.gz.txt"), COMPRESSION_NONE);
    cr_expect_eq(compression_for_path("zst"), COMPRESSION_NONE);
    cr_expect_eq(compression_for_path("-"), COMPRESSION_NONE);
    cr_expect_eq(compression_for_path(""), COMPRESSION_NONE);
}

Test(compress, input_compression_comes_from_magic_bytes)
{
    cr_expect_eq(compression_detect("\x1f\x8b\x08\x00", 4), COMPRESSION_GZIP);
    cr_expect_eq(compression_detect("\x1f\x8b", 2), COMPRESSION_GZIP);
    cr_expect_eq(compression_detect("BZh9", 4), COMPRESSION_BZIP2);
    cr_expect_eq(compression_detect("BZh1", 4), COMPRESSION_BZIP2);
    cr_expect_eq(compression_detect("BZh0", 4), COMPRESSION_NONE);
    cr_expect_eq(compression_detect("BZh", 3), COMPRESSION_NONE);
    cr_expect_eq(compression_detect("\x28\xb5\x2f\xfd", 4), COMPRESSION_ZSTD);
    cr_expect_eq(compression_detect("\x50\x2a\x4d\x18", 4), COMPRESSION_ZSTD);
    cr_expect_eq(compression_detect("\x28\xb5\x2f", 3), COMPRESSION_NONE);
    cr_expect_eq(compression_detect("\x89PTPROF\n", 8), COMPRESSION_NONE);
    cr_expect_eq(compression_detect("", 0), COMPRESSION_NONE);
    cr_expect_str_eq(compression_name(COMPRESSION_GZIP), "gzip");
    cr_expect_str_eq(compression_name(COMPRESSION_BZIP2), "bzip2");
    cr_expect_str_eq(compression_name(COMPRESSION_ZSTD), "zstd");
    cr_expect_str_eq(compression_name(COMPRESSION_NONE), "none");
}

/* --- the compressing stream ---------------------------------------------- */

/* Write in pieces, fflush, and check that the bytes on disk at that moment
 * decode to everything written so far, with our reader and with the tool. */
Test(compress, fflush_makes_everything_written_so_far_decodable)
{
    char *dir = test_mkdtemp();
    const size_t total = 1500 * 1000;
    unsigned char *data = make_data(total, 7);
    /* Small records, a large one, and a flush inside a stdio buffer. */
    const size_t marks[] = {37, 5000, 300 * 1000, 1200 * 1000, total};
    for (size_t k = 0; k < NKINDS; k++) {
        char *path = test_path(dir, "stream");
        char *copy = test_path(dir, "copy");
        char *decoded = test_path(dir, "decoded");
        FILE *raw = fopen(path, "wb");
        cr_assert_not_null(raw);
        FILE *z = compress_open(raw, kinds[k].c);
        cr_assert_not_null(z);
        size_t done = 0;
        for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
            while (done < marks[m]) {
                size_t n = marks[m] - done < 4000 ? marks[m] - done : 4000;
                if (m == 3)
                    n = marks[m] - done; /* one fwrite larger than any buffer */
                cr_assert_eq(fwrite(data + done, 1, n, z), n);
                done += n;
            }
            cr_assert_eq(fflush(z), 0);

            size_t len;
            unsigned char *disk = read_file(path, &len);
            struct slurp s;
            cr_assert_eq(slurp_buffer_decompress("disk", disk, len, total, &s), 0,
                         "%s: nothing decodable after fflush at %zu", kinds[k].suffix, done);
            cr_assert_eq(s.compression, kinds[k].c);
            cr_assert_eq(s.len, done, "%s: %zu bytes decodable after fflush at %zu",
                         kinds[k].suffix, s.len, done);
            cr_assert_eq(memcmp(s.data, data, done), 0);
            slurp_free(&s);

            /* The tool may complain about the unfinished stream, but it
             * must produce the same bytes.  zstd's CLI is the exception: on
             * an unfinished frame it drops what sits in its own output
             * buffer (up to 128 kB), so from it we can only ask a prefix. */
            write_file(copy, disk, len);
            sh("%s '%s' > '%s' 2>/dev/null", kinds[k].untool, copy, decoded);
            size_t tlen;
            unsigned char *tool = read_file(decoded, &tlen);
            if (kinds[k].c == COMPRESSION_ZSTD) {
                cr_assert_leq(tlen, done);
                cr_assert_geq(tlen + 128 * 1024, done);
            } else {
                cr_assert_eq(tlen, done, "%s: the tool decodes %zu of %zu flushed bytes",
                             kinds[k].suffix, tlen, done);
            }
            cr_assert_eq(memcmp(tool, data, tlen), 0);
            free(tool);
            free(disk);
        }
        cr_assert_eq(fclose(z), 0);
        /* Closed, the stream is complete: the tool now exits cleanly. */
        cr_assert_eq(sh("%s '%s' > '%s'", kinds[k].untool, path, decoded), 0);
        size_t tlen;
        unsigned char *tool = read_file(decoded, &tlen);
        cr_assert_eq(tlen, total);
        cr_assert_eq(memcmp(tool, data, total), 0);
        free(tool);
        free(path);
        free(copy);
        free(decoded);
    }
    free(data);
    test_rmtree(dir);
    free(dir);
}

Test(compress, a_failed_write_is_reported_and_sticks)
{
    for (size_t k = 0; k < NKINDS; k++) {
        FILE *raw = fopen("/dev/full", "wb");
        cr_assert_not_null(raw);
        FILE *z = compress_open(raw, kinds[k].c);
        cr_assert_not_null(z);
        unsigned char *data = make_data(10000, 3);
        fwrite(data, 1, 10000, z);
        errno = 0;
        cr_expect_eq(fflush(z), EOF, "%s: fflush to a full device succeeded", kinds[k].suffix);
        cr_expect_eq(errno, ENOSPC, "%s: errno %d", kinds[k].suffix, errno);
        cr_expect(ferror(z));
        cr_expect_eq(fclose(z), EOF);
        free(data);
    }
}

Test(compress, none_is_the_raw_stream_itself)
{
    FILE *raw = tmpfile();
    cr_assert_not_null(raw);
    cr_expect_eq(compress_open(raw, COMPRESSION_NONE), raw);
    fclose(raw);
}

/* --- reading what the tools wrote ---------------------------------------- */

Test(slurp, reads_files_made_by_the_tools)
{
    char *dir = test_mkdtemp();
    const size_t sizes[] = {0, 1, 100 * 1000, 2500 * 1000};
    char *plain = test_path(dir, "plain");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *data = make_data(sizes[i], (unsigned)i);
        write_file(plain, data, sizes[i]);
        for (size_t k = 0; k < NKINDS; k++) {
            char *z = test_path(dir, kinds[k].suffix + 1);
            cr_assert_eq(sh("%s < '%s' > '%s'", kinds[k].tool, plain, z), 0);
            struct slurp s;
            cr_assert_eq(slurp_path(z, sizes[i], &s), 0);
            cr_expect_eq(s.compression, kinds[k].c);
            cr_expect_not(s.truncated, "%s of %zu bytes: %s", kinds[k].suffix, sizes[i],
                          s.error ? s.error : "");
            cr_assert_eq(s.len, sizes[i], "%s: %zu of %zu bytes", kinds[k].suffix, s.len, sizes[i]);
            cr_assert_eq(memcmp(s.data, data, s.len), 0);
            cr_expect_eq(s.data[s.len], '\0');
            slurp_free(&s);
            free(z);
        }
        free(data);
    }
    free(plain);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, reads_concatenated_members_streams_and_frames)
{
    char *dir = test_mkdtemp();
    char *a = test_path(dir, "a"), *b = test_path(dir, "b"), *z = test_path(dir, "z");
    unsigned char *da = make_data(70000, 1), *db = make_data(50000, 2);
    write_file(a, da, 70000);
    write_file(b, db, 50000);
    for (size_t k = 0; k < NKINDS; k++) {
        cr_assert_eq(sh("%s < '%s' > '%s' && %s < /dev/null >> '%s' && %s < '%s' >> '%s'",
                        kinds[k].tool, a, z, kinds[k].tool, z, kinds[k].tool, b, z),
                     0);
        struct slurp s;
        cr_assert_eq(slurp_path(z, 1 << 20, &s), 0);
        cr_expect_not(s.truncated, "%s: %s", kinds[k].suffix, s.error ? s.error : "");
        cr_assert_eq(s.len, 120000u, "%s: %zu bytes", kinds[k].suffix, s.len);
        cr_expect_eq(memcmp(s.data, da, 70000), 0);
        cr_expect_eq(memcmp(s.data + 70000, db, 50000), 0);
        slurp_free(&s);
    }
    free(da);
    free(db);
    free(a);
    free(b);
    free(z);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, detects_by_content_not_by_name)
{
    char *dir = test_mkdtemp();
    unsigned char *data = make_data(30000, 5);
    char *plain = test_path(dir, "plain");
    char *gz_named_bz2 = test_path(dir, "really-gzip.bz2");
    char *plain_named_gz = test_path(dir, "really-plain.gz");
    char *zst_named_txt = test_path(dir, "really-zstd.txt");
    write_file(plain, data, 30000);
    write_file(plain_named_gz, data, 30000);
    cr_assert_eq(sh("gzip -c < '%s' > '%s'", plain, gz_named_bz2), 0);
    cr_assert_eq(sh("zstd -q -c < '%s' > '%s'", plain, zst_named_txt), 0);

    const struct {
        const char *path;
        enum compression c;
    } cases[] = {
        {gz_named_bz2, COMPRESSION_GZIP},
        {plain_named_gz, COMPRESSION_NONE},
        {zst_named_txt, COMPRESSION_ZSTD},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct slurp s;
        cr_assert_eq(slurp_path(cases[i].path, 1 << 20, &s), 0, "%s", cases[i].path);
        cr_expect_eq(s.compression, cases[i].c, "%s", cases[i].path);
        cr_expect_not(s.truncated);
        cr_assert_eq(s.len, 30000u);
        cr_expect_eq(memcmp(s.data, data, 30000), 0);
        slurp_free(&s);
    }
    free(data);
    free(plain);
    free(gz_named_bz2);
    free(plain_named_gz);
    free(zst_named_txt);
    test_rmtree(dir);
    free(dir);
}

/* --- damage ---------------------------------------------------------------- */

Test(slurp, a_cut_compressed_file_gives_the_decoded_prefix)
{
    char *dir = test_mkdtemp();
    const size_t total = 600 * 1000; /* several 100 kB bzip2 blocks */
    unsigned char *data = make_data(total, 11);
    char *plain = test_path(dir, "plain");
    char *z = test_path(dir, "z");
    char *cut = test_path(dir, "cut");
    write_file(plain, data, total);
    for (size_t k = 0; k < NKINDS; k++) {
        cr_assert_eq(sh("%s < '%s' > '%s'", kinds[k].small_tool, plain, z), 0);
        size_t zlen;
        unsigned char *zdata = read_file(z, &zlen);
        const size_t cuts[] = {zlen * 3 / 4, zlen - 1};
        for (size_t c = 0; c < 2; c++) {
            write_file(cut, zdata, cuts[c]);
            struct slurp s;
            cr_assert_eq(slurp_path(cut, total, &s), 0, "%s cut at %zu", kinds[k].suffix, cuts[c]);
            cr_expect_eq(s.compression, kinds[k].c);
            cr_expect(s.truncated, "%s cut at %zu is not marked truncated", kinds[k].suffix,
                      cuts[c]);
            cr_assert_not_null(s.error);
            char want[64];
            snprintf(want, sizeof(want), ": offset %zu: ", cuts[c]);
            cr_expect_not_null(strstr(s.error, cut), "message does not name the file: %s", s.error);
            cr_expect_not_null(strstr(s.error, want), "message lacks '%s': %s", want, s.error);
            cr_expect_gt(s.len, 0u, "%s cut at %zu decoded nothing", kinds[k].suffix, cuts[c]);
            assert_prefix(&s, data, total);
            slurp_free(&s);
        }
        free(zdata);
    }
    free(data);
    free(plain);
    free(z);
    free(cut);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, garbage_after_a_stream_keeps_the_data_and_says_where)
{
    char *dir = test_mkdtemp();
    unsigned char *data = make_data(40000, 13);
    char *plain = test_path(dir, "plain");
    char *z = test_path(dir, "z");
    write_file(plain, data, 40000);
    for (size_t k = 0; k < NKINDS; k++) {
        cr_assert_eq(sh("%s < '%s' > '%s'", kinds[k].tool, plain, z), 0);
        struct stat st;
        cr_assert_eq(stat(z, &st), 0);
        cr_assert_eq(sh("printf 'this is no compressed stream' >> '%s'", z), 0);
        struct slurp s;
        cr_assert_eq(slurp_path(z, 1 << 20, &s), 0);
        cr_expect(s.truncated, "%s: trailing garbage went unnoticed", kinds[k].suffix);
        cr_assert_eq(s.len, 40000u);
        cr_expect_eq(memcmp(s.data, data, 40000), 0);
        cr_assert_not_null(s.error);
        /* The damage is reported at or just after the end of the stream. */
        const char *at = strstr(s.error, "offset ");
        cr_assert_not_null(at, "%s", s.error);
        long long off = atoll(at + 7);
        cr_expect_geq(off, (long long)st.st_size, "%s", s.error);
        cr_expect_leq(off, (long long)st.st_size + 28, "%s", s.error);
        slurp_free(&s);
    }
    free(data);
    free(plain);
    free(z);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, damage_before_any_data_is_an_error)
{
    char *dir = test_mkdtemp();
    const struct {
        const char *name;
        const char *bytes;
        size_t len;
    } cases[] = {
        {"bad.gz", "\x1f\x8b\x08\x00garbage-garbage-garbage", 27},
        {"cut.gz", "\x1f\x8b\x08", 3},
        {"bad.bz2", "BZh9garbage-garbage-garbage", 27},
        {"bad.zst", "\x28\xb5\x2f\xfdgarbage-garbage-garbage", 27},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *p = test_path(dir, cases[i].name);
        write_file(p, cases[i].bytes, cases[i].len);
        capture_stderr(dir);
        struct slurp s;
        int rc = slurp_path(p, 1 << 20, &s);
        char *msg = captured_stderr();
        cr_expect_eq(rc, -1, "%s loads", cases[i].name);
        cr_expect_null(s.data);
        cr_expect_not_null(strstr(msg, p), "message does not name %s: %s", p, msg);
        cr_expect_not_null(strstr(msg, "offset "), "message has no offset: %s", msg);
        free(msg);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}

/* --- limits ---------------------------------------------------------------- */

Test(slurp, never_grows_beyond_max_len)
{
    char *dir = test_mkdtemp();
    const size_t total = 200000;
    unsigned char *data = make_data(total, 17);
    char *plain = test_path(dir, "plain");
    write_file(plain, data, total);
    for (size_t k = 0; k <= NKINDS; k++) {
        char *p = plain;
        if (k < NKINDS) {
            p = test_path(dir, kinds[k].suffix + 1);
            cr_assert_eq(sh("%s < '%s' > '%s'", kinds[k].tool, plain, p), 0);
        }
        /* Exactly the limit fits. */
        struct slurp s;
        cr_assert_eq(slurp_path(p, total, &s), 0);
        cr_expect_eq(s.len, total);
        slurp_free(&s);

        capture_stderr(dir);
        int rc = slurp_path(p, total - 1, &s);
        char *msg = captured_stderr();
        cr_expect_eq(rc, -1, "%s: one byte over the limit is accepted", p);
        cr_expect_null(s.data);
        cr_expect_not_null(strstr(msg, p), "message does not name the file: %s", msg);
        cr_expect_not_null(strstr(msg, "limit"), "%s", msg);
        free(msg);

        capture_stderr(dir);
        rc = slurp_path(p, 1000, &s);
        free(captured_stderr());
        cr_expect_eq(rc, -1);
        if (p != plain)
            free(p);
    }
    free(data);
    free(plain);
    test_rmtree(dir);
    free(dir);
}

/* A few hundred bytes of zstd that expand to 64 MiB must not be expanded. */
Test(slurp, a_decompression_bomb_stops_at_the_limit)
{
    char *dir = test_mkdtemp();
    char *bomb = test_path(dir, "bomb.zst");
    cr_assert_eq(sh("head -c 67108864 /dev/zero | zstd -q -19 -c > '%s'", bomb), 0);
    struct stat st;
    cr_assert_eq(stat(bomb, &st), 0);
    cr_assert_lt(st.st_size, 100000);
    capture_stderr(dir);
    struct slurp s;
    int rc = slurp_path(bomb, 1 << 20, &s);
    char *msg = captured_stderr();
    cr_expect_eq(rc, -1);
    cr_expect_not_null(strstr(msg, "limit"), "%s", msg);
    free(msg);
    free(bomb);
    test_rmtree(dir);
    free(dir);
}

/* --- stdin and errors ------------------------------------------------------ */

Test(slurp, dash_is_standard_input_compressed_or_not)
{
    char *dir = test_mkdtemp();
    unsigned char *data = make_data(90000, 19);
    char *plain = test_path(dir, "plain");
    char *z = test_path(dir, "z");
    write_file(plain, data, 90000);
    cr_assert_eq(sh("bzip2 -c < '%s' > '%s'", plain, z), 0);
    const char *inputs[] = {plain, z};
    for (size_t i = 0; i < 2; i++) {
        cr_assert_not_null(freopen(inputs[i], "rb", stdin));
        struct slurp s;
        cr_assert_eq(slurp_path("-", 1 << 20, &s), 0);
        cr_expect_eq(s.compression, i ? COMPRESSION_BZIP2 : COMPRESSION_NONE);
        cr_assert_eq(s.len, 90000u);
        cr_expect_eq(memcmp(s.data, data, 90000), 0);
        slurp_free(&s);
    }
    free(data);
    free(plain);
    free(z);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, a_missing_file_is_reported_by_name)
{
    char *dir = test_mkdtemp();
    char *p = test_path(dir, "does-not-exist.gz");
    capture_stderr(dir);
    struct slurp s;
    int rc = slurp_path(p, 1 << 20, &s);
    char *msg = captured_stderr();
    cr_expect_eq(rc, -1);
    cr_expect_null(s.data);
    cr_expect_not_null(strstr(msg, p), "%s", msg);
    slurp_free(&s); /* harmless on a failed slurp */
    free(msg);
    free(p);
    test_rmtree(dir);
    free(dir);
}

Test(slurp, an_empty_file_is_empty_not_an_error)
{
    struct slurp s;
    cr_assert_eq(slurp_buffer_decompress("empty", "", 0, 10, &s), 0);
    cr_expect_eq(s.len, 0u);
    cr_assert_not_null(s.data);
    cr_expect_eq(s.data[0], '\0');
    cr_expect_not(s.truncated);
    slurp_free(&s);
}

/* --- a reader on top: the original sampler's raw format ------------------- */

Test(slurp, compressed_pperf_profiles_load)
{
    char *dir = test_mkdtemp();
    const struct pperf_thread th[2] = {{101, 0x401000, 5000}, {102, 0x402000, 7000}};
    const double pmu[2] = {1.5, 2.5};
    struct pperf_map map = {0x400000, 0x10000, "prog"};
    for (size_t k = 0; k < NKINDS; k++) {
        char *name = NULL;
        cr_assert_geq(asprintf(&name, "raw.pperf%s", kinds[k].suffix), 0);
        char *p = test_path(dir, name);
        struct pperf_writer *w = pperf_writer_open(p, 0x50504552u, sizeof(pmu));
        cr_assert_not_null(w);
        for (uint64_t i = 0; i < 3000; i++)
            cr_assert_eq(pperf_writer_sample(w, 1000 * i, pmu, 2, th), 0);
        cr_assert_eq(pperf_writer_finish(w, 3000000, 1234, &map, 1), 0);
        cr_assert_eq(sh("%s '%s' > /dev/null", kinds[k].untool, p), 0, "%s rejects %s",
                     kinds[k].untool, p);

        struct pperf_profile prof;
        cr_assert_eq(pperf_load(p, &prof), 0, "%s does not load", name);
        cr_expect_eq(prof.nsamples, 3000u);
        cr_expect_eq(prof.wall_us, 3000000u);
        cr_expect_eq(prof.samples[2999].wall_us, 2999000u);
        cr_expect_eq(prof.samples[2999].threads[1].cpu_ns, 7000u);
        cr_expect_eq(prof.nmaps, 1u);
        cr_expect_str_eq(prof.maps[0].label, "prog");
        pperf_free(&prof);

        /* Cut short, it must not load (its header counts describe the
         * whole file), and the message gives the compressed offset. */
        size_t zlen;
        unsigned char *z = read_file(p, &zlen);
        write_file(p, z, zlen - 3);
        capture_stderr(dir);
        int rc = pperf_load(p, &prof);
        char *msg = captured_stderr();
        cr_expect_eq(rc, -1, "a cut %s loads", name);
        cr_expect_null(prof.storage);
        cr_expect_not_null(strstr(msg, p), "%s", msg);
        cr_expect_not_null(strstr(msg, "offset"), "%s", msg);
        free(msg);
        free(z);
        free(name);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}
