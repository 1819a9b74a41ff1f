/*
 * test_instream.c - util/instream.h: a decompressing input read a piece at
 * a time.  Peeking does not consume and grows with the bytes that arrived,
 * not with what was asked; reading, skipping and offsets agree across
 * compressions; zero runs under the limit are data (held back only until
 * something follows, or the input ends), over it damage that is never
 * delivered; the limit may be set after a first peek and covers the bytes
 * already decoded; how the data ended is told apart.  And its lines
 * (util/linereader.h): one at a time through every compression, long ones
 * across pieces, none cut by damage, none longer than the limit.
 */
#include "../lib/spawn.h"
#include "util/instream.h"
#include "util/linereader.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

static void setup(void)
{
    dir = test_mkdtemp();
}

static void teardown(void)
{
    test_rmtree(dir);
    free(dir);
}

TestSuite(instream, .init = setup, .fini = teardown, .timeout = 60);

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* PLAIN compressed by the command line TOOL ("cat" for none) into a file. */
static char *compressed(const char *name, const char *tool, const void *plain, size_t len)
{
    char *src = test_path(dir, "plain"), *dst = test_path(dir, name), *cmd = NULL;
    write_file(src, plain, len);
    cr_assert_geq(asprintf(&cmd, "%s < '%s' > '%s'", tool, src, dst), 0);
    char *sh = test_need_tool("sh");
    struct spawn_result r;
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){sh, "-c", cmd, NULL}}, &r);
    cr_assert_eq(spawn_exit_code(r.status), 0, "%s: %s", cmd, r.err);
    spawn_result_free(&r);
    free(sh);
    free(cmd);
    free(src);
    return dst;
}

static const char *const tools[] = {"cat", "gzip -c", "bzip2 -c", "zstd -q -c"};

/* Bytes that never repeat for a while and hold no zero. */
static unsigned char *pattern(size_t len)
{
    unsigned char *p = malloc(len);
    cr_assert_not_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(1 + (i * 7 + i / 251) % 255);
    return p;
}

Test(instream, peek_read_skip_and_offsets_agree_for_every_compression)
{
    const size_t len = 300000;
    unsigned char *plain = pattern(len);
    for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++) {
        char *path = compressed("p", tools[k], plain, len);
        struct instream *in = instream_open(path);
        cr_assert_not_null(in);
        const unsigned char *d;
        /* A peek does not consume: twice the same bytes. */
        cr_assert_eq(instream_peek(in, 100, &d), 100, "%s", tools[k]);
        cr_expect_eq(memcmp(d, plain, 100), 0);
        cr_assert_eq(instream_peek(in, 70000, &d), 70000, "more than one piece");
        cr_expect_eq(memcmp(d, plain, 70000), 0);
        cr_expect_eq(instream_offset(in), 0);
        instream_consume(in, 1000);
        cr_expect_eq(instream_offset(in), 1000);
        unsigned char buf[5000];
        cr_assert_eq(instream_read(in, buf, sizeof(buf)), sizeof(buf));
        cr_expect_eq(memcmp(buf, plain + 1000, sizeof(buf)), 0);
        cr_expect_eq(instream_skip(in, 200000), 200000);
        cr_expect_eq(instream_end(in), INSTREAM_MORE, "%s: not at the end yet", tools[k]);
        size_t rest = len - 206000;
        cr_assert_eq(instream_peek(in, len, &d), rest, "%s: the rest, no more", tools[k]);
        cr_expect_eq(memcmp(d, plain + 206000, rest), 0);
        instream_consume(in, rest);
        cr_expect_eq(instream_read(in, buf, 1), 0);
        cr_expect_eq(instream_end(in), INSTREAM_CLEAN, "%s", tools[k]);
        cr_expect_null(instream_error(in));
        cr_expect_eq(instream_offset(in), len);
        cr_expect_eq(instream_compression(in) == COMPRESSION_NONE, k == 0);
        instream_close(in);
        free(path);
    }
    free(plain);
}

/* A length field claiming far more than the file holds costs what is there:
 * under an address-space cap a peek of 8 GiB returns the 100 bytes. */
Test(instream, a_large_peek_grows_with_the_data_not_the_request)
{
    unsigned char *plain = pattern(100);
    struct instream *in = instream_open_memory("m", plain, 100);
    test_limit_address_space();
    const unsigned char *d;
    cr_expect_eq(instream_peek(in, (size_t)8 << 30, &d), 100);
    cr_expect_eq(instream_end(in), INSTREAM_CLEAN);
    instream_close(in);
    free(plain);
}

Test(instream, zero_runs_under_the_limit_are_data)
{
    /* 'a', 4000 zeros, 'b', then 3000 zeros at the very end. */
    size_t len = 1 + 4000 + 1 + 3000;
    unsigned char *buf = calloc(1, len);
    buf[0] = 'a';
    buf[4001] = 'b';
    for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++) {
        char *path = compressed("z", tools[k], buf, len);
        struct instream *in = instream_open(path);
        instream_limit_zero_run(in, 4096);
        const unsigned char *d;
        cr_assert_eq(instream_peek(in, len + 10, &d), len, "%s: everything", tools[k]);
        cr_expect_eq(memcmp(d, buf, len), 0);
        cr_expect_eq(instream_end(in), INSTREAM_CLEAN, "%s: %s", tools[k],
                     instream_error(in) ? instream_error(in) : "");
        instream_close(in);
        free(path);
    }
    free(buf);
}

Test(instream, a_zero_run_over_the_limit_is_damage_never_delivered)
{
    /* 10 bytes of data, then 200000 zeros, then more data. */
    size_t len = 10 + 200000 + 10;
    unsigned char *buf = calloc(1, len);
    memset(buf, 'x', 10);
    memset(buf + 200010, 'y', 10);
    for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++) {
        char *path = compressed("zz", tools[k], buf, len);
        struct instream *in = instream_open(path);
        instream_limit_zero_run(in, 65536);
        unsigned char out[1000];
        size_t got = instream_read(in, out, sizeof(out));
        cr_expect_eq(got, 10, "%s: the data before the run only, got %zu", tools[k], got);
        cr_expect_eq(instream_end(in), INSTREAM_DAMAGED, "%s", tools[k]);
        const char *e = instream_error(in);
        cr_assert_not_null(e);
        cr_expect_not_null(strstr(e, path), "%s", e);
        cr_expect_not_null(strstr(e, k == 0 ? ": offset 10: " : ": decompressed offset 10: "), "%s",
                           e);
        cr_expect_not_null(strstr(e, "more than 64 KiB") || strstr(e, "more than 65536 bytes"),
                           "%s", e);
        instream_close(in);
        free(path);
    }
    free(buf);
}

/* A reader may peek at a magic number without a limit and choose one by
 * it: the zeros decoded meanwhile count. */
Test(instream, a_limit_set_after_a_peek_covers_what_was_decoded)
{
    size_t len = 8 + 40000;
    unsigned char *buf = calloc(1, len);
    memcpy(buf, "MAGIC123", 8);
    struct instream *in = instream_open_memory("late", buf, len);
    const unsigned char *d;
    cr_assert_eq(instream_peek(in, 8, &d), 8);
    instream_limit_zero_run(in, 1000);
    cr_expect_eq(instream_peek(in, 9, &d), 8, "the zeros after the magic are refused");
    cr_expect_eq(instream_end(in), INSTREAM_DAMAGED);
    cr_assert_not_null(instream_error(in));
    cr_expect_not_null(strstr(instream_error(in), "late: offset 8: more than 1000 bytes"), "%s",
                       instream_error(in));
    instream_close(in);
    free(buf);
}

Test(instream, damage_and_a_clean_end_are_told_apart)
{
    unsigned char *plain = pattern(50000);
    char *gz = compressed("c.gz", "gzip -c", plain, 50000);
    size_t zlen;
    char *z = test_read_file(gz, &zlen);
    struct instream *in = instream_open_memory("cut.gz", z, zlen / 2);
    unsigned char *out = malloc(50000);
    size_t got = instream_read(in, out, 50000);
    cr_expect_gt(got, 0);
    cr_expect_lt(got, 50000);
    cr_expect_eq(memcmp(out, plain, got), 0, "a prefix of the data");
    cr_expect_eq(instream_end(in), INSTREAM_DAMAGED);
    char want[64];
    snprintf(want, sizeof(want), "cut.gz: offset %zu: ", zlen / 2);
    cr_expect_not_null(strstr(instream_error(in), want), "%s", instream_error(in));
    instream_close(in);
    free(out);
    free(z);
    free(gz);
    free(plain);
}

/* --- lines (util/linereader.h) ------------------------------------------ */

/* Every line of DATA, through each compression, joined by '|' (a '\r'
 * kept), with their count and the stream's end. */
static char *lines_of(const char *tool, const void *data, size_t len, int *rc,
                      enum instream_end *end)
{
    char *path = compressed("lines", tool, data, len);
    struct instream *in = instream_open(path);
    cr_assert_not_null(in);
    struct line_reader r;
    line_reader_init(&r, in);
    char *out = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&out, &size);
    const char *line;
    size_t n;
    uint64_t count = 0;
    while ((*rc = line_reader_next(&r, &line, &n)) == 1) {
        cr_assert_eq(r.lineno, ++count);
        fprintf(m, "%s%.*s", count > 1 ? "|" : "", (int)n, line);
    }
    fclose(m);
    *end = instream_end(in);
    instream_close(in);
    free(path);
    return out;
}

Test(instream, lines_one_at_a_time_whatever_the_compression)
{
    static const char text[] = "a b 1\r\n\nlast without newline";
    for (size_t t = 0; t < sizeof(tools) / sizeof(tools[0]); t++) {
        int rc;
        enum instream_end end;
        char *got = lines_of(tools[t], text, sizeof(text) - 1, &rc, &end);
        cr_expect_eq(rc, 0, "%s", tools[t]);
        cr_expect_eq(end, INSTREAM_CLEAN);
        cr_expect_str_eq(got, "a b 1\r||last without newline", "%s", tools[t]);
        free(got);
    }
    int rc;
    enum instream_end end;
    char *got = lines_of("cat", "", 0, &rc, &end);
    cr_expect_eq(rc, 0);
    cr_expect_str_eq(got, "", "an empty input has no line");
    free(got);
}

/* Lines longer than what is first looked at, across the stream's pieces. */
Test(instream, long_lines_across_pieces)
{
    size_t len = 3 * 100000 + 3;
    char *text = malloc(len);
    for (size_t i = 0; i < 3; i++) {
        memset(text + i * 100001, 'a' + (int)i, 100000);
        text[i * 100001 + 100000] = '\n';
    }
    for (size_t t = 0; t < sizeof(tools) / sizeof(tools[0]); t++) {
        int rc;
        enum instream_end end;
        char *got = lines_of(tools[t], text, len, &rc, &end);
        cr_expect_eq(rc, 0);
        cr_assert_eq(strlen(got), 300002, "%s", tools[t]);
        cr_expect(got[99999] == 'a' && got[100000] == '|' && got[100001] == 'b' &&
                      got[200001] == '|' && got[200002] == 'c',
                  "%s", tools[t]);
        free(got);
    }
    free(text);
}

/* Damage: the line it cut is no line, and stays unconsumed, so the offset
 * is the end of the last whole line. */
Test(instream, a_line_cut_by_damage_is_no_line)
{
    char text[200000];
    size_t n = 0;
    for (int i = 0; n + 20 < sizeof(text); i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "line %d\n", i * 7919 % 100003);
    char *gz = compressed("cut.gz", "gzip -c", text, n);
    size_t zlen;
    char *z = test_read_file(gz, &zlen);
    write_file(gz, z, zlen / 2);
    struct instream *in = instream_open(gz);
    struct line_reader r;
    line_reader_init(&r, in);
    const char *line;
    size_t len;
    uint64_t lines = 0;
    while (line_reader_next(&r, &line, &len) == 1)
        lines++;
    cr_expect_eq(instream_end(in), INSTREAM_DAMAGED);
    uint64_t at = instream_offset(in);
    cr_assert_gt(at, 0);
    cr_assert_lt(at, n);
    cr_expect_eq(text[at - 1], '\n', "stopped at %llu, inside a line", (unsigned long long)at);
    uint64_t before = 0;
    for (uint64_t i = 0; i < at; i++)
        before += text[i] == '\n';
    cr_expect_eq(lines, before);
    instream_close(in);
    free(z);
    free(gz);
}

Test(instream, a_line_longer_than_the_limit_is_refused, .timeout = 120)
{
    size_t len = 6 + LINE_READER_MAX + 1; /* a second line one byte too long */
    char *text = malloc(len);
    memcpy(text, "short\n", 6);
    memset(text + 6, 'x', len - 6);
    char *gz = compressed("long.gz", "gzip -1 -c", text, len);
    free(text);
    struct instream *in = instream_open(gz);
    struct line_reader r;
    line_reader_init(&r, in);
    const char *line;
    size_t n;
    cr_assert_eq(line_reader_next(&r, &line, &n), 1);
    char *msg = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&msg, &size), *saved = stderr;
    stderr = m;
    int rc = line_reader_next(&r, &line, &n);
    stderr = saved;
    fclose(m);
    cr_expect_eq(rc, -1);
    cr_expect_not_null(strstr(msg, "long.gz:2: a line longer than 64 MiB"), "%s", msg);
    free(msg);
    instream_close(in);
    free(gz);
}
