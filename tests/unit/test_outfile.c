/* test_outfile.c - util/outfile.h: all-or-nothing output files, compression
 * chosen by the name (checked with the real gzip/bzip2/zstd tools), early
 * publishing for the recorder, and "-" as standard output. */
#include "../lib/spawn.h"
#include "util/outfile.h"
#include "util/slurp.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *suffix;
    const char *untool;
    enum compression c;
} kinds[] = {
    {".gz", "gzip -dc", COMPRESSION_GZIP},
    {".bz2", "bzip2 -dc", COMPRESSION_BZIP2},
    {".zst", "zstd -q -dc", COMPRESSION_ZSTD},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

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

static unsigned char *make_data(size_t n, unsigned seed)
{
    unsigned char *d = malloc(n + 1);
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        /* Text-like: a skewed alphabet, so it compresses but not to nothing. */
        d[i] = (unsigned char)("aaaabbbcc de\n0123456789xyz"[(x >> 16) % 26]);
    }
    return d;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static bool file_is(const char *path, const void *data, size_t len)
{
    size_t n;
    unsigned char *got = read_file(path, &n);
    bool same = got && n == len && memcmp(got, data, len) == 0;
    free(got);
    return same;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Entries of DIR other than "." and "..": temporaries must not linger. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void put(struct outfile *o, const void *data, size_t len)
{
    cr_assert_eq(fwrite(data, 1, len, outfile_stream(o)), len);
}

/* --- the original contract -------------------------------------------------- */

Test(outfile, nothing_appears_at_the_path_until_commit)
{
    char *dir = test_mkdtemp();
    char *p = test_path(dir, "out.bin");
    struct outfile *o = outfile_open(p);
    cr_assert_not_null(o);
    cr_expect(outfile_seekable(o));
    cr_expect_str_eq(outfile_path(o), p);
    put(o, "hello", 5);
    cr_assert_eq(fflush(outfile_stream(o)), 0);
    cr_expect_not(exists(p), "the file appeared before commit");
    cr_assert_eq(outfile_commit(o), 0);
    cr_expect(file_is(p, "hello", 5));
    cr_expect_eq(entries(dir), 1, "a temporary was left behind");
    free(p);
    test_rmtree(dir);
    free(dir);
}

Test(outfile, abort_leaves_an_existing_file_untouched)
{
    char *dir = test_mkdtemp();
    for (size_t k = 0; k <= NKINDS; k++) {
        char *name = NULL;
        cr_assert_geq(asprintf(&name, "old%s", k < NKINDS ? kinds[k].suffix : ""), 0);
        char *p = test_path(dir, name);
        cr_assert_eq(sh("printf 'old contents' > '%s'", p), 0);
        struct outfile *o = outfile_open(p);
        cr_assert_not_null(o);
        unsigned char *data = make_data(100000, 1);
        put(o, data, 100000);
        cr_assert_eq(fflush(outfile_stream(o)), 0);
        outfile_abort(o);
        cr_expect(file_is(p, "old contents", 12), "%s was changed by an aborted write", p);
        free(data);
        free(name);
        free(p);
    }
    cr_expect_eq(entries(dir), (int)NKINDS + 1, "a temporary was left behind");
    test_rmtree(dir);
    free(dir);
}

Test(outfile, an_unwritable_directory_fails_at_open)
{
    struct outfile *o = outfile_open("/nonexistent-ptprof-dir/out.gz");
    cr_expect_null(o);
}

/* --- compression by name ------------------------------------------------------ */

Test(outfile, compresses_by_suffix_and_the_tools_read_it)
{
    char *dir = test_mkdtemp();
    char *plain = test_path(dir, "decoded");
    const size_t sizes[] = {0, 1, 70000, 2000 * 1000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *data = make_data(sizes[i], (unsigned)i + 3);
        for (size_t k = 0; k < NKINDS; k++) {
            char *name = NULL;
            cr_assert_geq(asprintf(&name, "profile%s", kinds[k].suffix), 0);
            char *p = test_path(dir, name);
            struct outfile *o = outfile_open(p);
            cr_assert_not_null(o);
            cr_expect_not(outfile_seekable(o), "a compressed output claims to be seekable");
            /* Uneven pieces, as a record writer produces them. */
            for (size_t done = 0; done < sizes[i];) {
                size_t n = (done * 7 + 13) % 5000 + 1;
                if (n > sizes[i] - done)
                    n = sizes[i] - done;
                put(o, data + done, n);
                done += n;
            }
            cr_assert_eq(outfile_commit(o), 0);

            size_t zlen;
            unsigned char *z = read_file(p, &zlen);
            cr_assert_not_null(z);
            cr_expect_eq(compression_detect(z, zlen), kinds[k].c, "%s is not %s", p,
                         compression_name(kinds[k].c));
            free(z);
            cr_assert_eq(sh("%s '%s' > '%s'", kinds[k].untool, p, plain), 0,
                         "%s rejects %s of %zu bytes", kinds[k].untool, p, sizes[i]);
            cr_expect(file_is(plain, data, sizes[i]), "%s of %zu bytes decodes differently",
                      kinds[k].suffix, sizes[i]);
            free(name);
            free(p);
        }
        free(data);
    }
    cr_expect_eq(entries(dir), (int)NKINDS + 1, "a temporary was left behind");
    free(plain);
    test_rmtree(dir);
    free(dir);
}

Test(outfile, other_names_are_not_compressed)
{
    char *dir = test_mkdtemp();
    const char *names[] = {"raw.pperf", "x.gz.txt", "zst"};
    for (size_t i = 0; i < 3; i++) {
        char *p = test_path(dir, names[i]);
        struct outfile *o = outfile_open(p);
        cr_assert_not_null(o);
        cr_expect(outfile_seekable(o));
        put(o, "\x1f\x8b plain", 8);
        cr_assert_eq(outfile_commit(o), 0);
        cr_expect(file_is(p, "\x1f\x8b plain", 8), "%s was changed", names[i]);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}

/* --- publishing early ------------------------------------------------------- */

Test(outfile, publish_puts_the_growing_file_at_its_path)
{
    char *dir = test_mkdtemp();
    unsigned char *data = make_data(300000, 9);
    for (size_t k = 0; k <= NKINDS; k++) {
        char *name = NULL;
        cr_assert_geq(asprintf(&name, "live%s", k < NKINDS ? kinds[k].suffix : ""), 0);
        char *p = test_path(dir, name);
        cr_assert_eq(sh("printf 'previous run' > '%s'", p), 0);
        struct outfile *o = outfile_open(p);
        cr_assert_not_null(o);
        put(o, data, 1000);
        cr_assert_eq(fflush(outfile_stream(o)), 0);
        cr_expect(file_is(p, "previous run", 12), "%s changed before publish", name);

        cr_assert_eq(outfile_publish(o), 0);
        cr_assert_eq(outfile_publish(o), 0, "publishing twice fails");
        cr_expect_eq(entries(dir), 1, "%s: the temporary is still there", name);
        put(o, data + 1000, 200000 - 1000);
        cr_assert_eq(fflush(outfile_stream(o)), 0);

        /* Still open: what is at PATH decodes to everything flushed. */
        struct slurp s;
        cr_assert_eq(slurp_path(p, 1 << 20, &s), 0);
        cr_expect_eq(s.compression, k < NKINDS ? kinds[k].c : COMPRESSION_NONE);
        cr_assert_eq(s.len, 200000u, "%s: %zu bytes visible while writing", name, s.len);
        cr_expect_eq(memcmp(s.data, data, 200000), 0);
        slurp_free(&s);

        put(o, data + 200000, 100000);
        cr_assert_eq(outfile_commit(o), 0);
        cr_assert_eq(slurp_path(p, 1 << 20, &s), 0);
        cr_expect_not(s.truncated, "%s: %s", name, s.error ? s.error : "");
        cr_assert_eq(s.len, 300000u);
        cr_expect_eq(memcmp(s.data, data, 300000), 0);
        slurp_free(&s);
        cr_expect_eq(entries(dir), 1);
        cr_expect_eq(unlink(p), 0);
        free(name);
        free(p);
    }
    free(data);
    test_rmtree(dir);
    free(dir);
}

Test(outfile, abort_after_publish_keeps_what_was_written)
{
    char *dir = test_mkdtemp();
    unsigned char *data = make_data(50000, 4);
    for (size_t k = 0; k <= NKINDS; k++) {
        char *name = NULL;
        cr_assert_geq(asprintf(&name, "partial%s", k < NKINDS ? kinds[k].suffix : ""), 0);
        char *p = test_path(dir, name);
        struct outfile *o = outfile_open(p);
        cr_assert_not_null(o);
        cr_assert_eq(outfile_publish(o), 0);
        put(o, data, 50000);
        outfile_abort(o);

        struct slurp s;
        cr_assert_eq(slurp_path(p, 1 << 20, &s), 0, "%s is gone after abort", name);
        /* Closing finished the compressed stream: complete, not damaged. */
        cr_expect_not(s.truncated, "%s: %s", name, s.error ? s.error : "");
        cr_assert_eq(s.len, 50000u);
        cr_expect_eq(memcmp(s.data, data, 50000), 0);
        slurp_free(&s);
        free(name);
        free(p);
    }
    cr_expect_eq(entries(dir), (int)NKINDS + 1, "a temporary was left behind");
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* --- standard output ---------------------------------------------------------- */

Test(outfile, dash_is_standard_output_and_never_compressed)
{
    char *dir = test_mkdtemp();
    char *p = test_path(dir, "stdout.txt");
    cr_assert_not_null(freopen(p, "w", stdout));
    struct outfile *o = outfile_open("-");
    cr_assert_not_null(o);
    cr_expect_eq(outfile_stream(o), stdout);
    cr_expect_not(outfile_seekable(o));
    cr_expect_eq(outfile_publish(o), 0);
    put(o, "to stdout\n", 10);
    cr_assert_eq(outfile_commit(o), 0);
    cr_expect(file_is(p, "to stdout\n", 10));
    cr_expect_eq(entries(dir), 1, "writing to stdout created a file");
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* "-o /dev/null" run as root must not replace the device with a file: a
 * path that is not a regular file is written in place.  A FIFO stands for
 * every such path here (a test must not risk /dev/null itself). */
Test(outfile, a_fifo_or_device_is_written_in_place_not_replaced)
{
    char *dir = test_mkdtemp();
    char *p = test_path(dir, "pipe");
    cr_assert_eq(mkfifo(p, 0600), 0, "mkfifo: %s", strerror(errno));
    int reader = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    cr_assert_geq(reader, 0);
    struct outfile *o = outfile_open(p);
    cr_assert_not_null(o);
    cr_expect_not(outfile_seekable(o));
    put(o, "through the pipe", 16);
    cr_assert_eq(outfile_commit(o), 0);
    char buf[64] = {0};
    cr_expect_eq(read(reader, buf, sizeof(buf)), 16);
    cr_expect_str_eq(buf, "through the pipe");
    close(reader);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file");
    cr_expect_eq(entries(dir), 1, "a temporary was left behind");
    free(p);
    test_rmtree(dir);
    free(dir);
}
