/*
 * test_bombs.c - decompression bombs and endless inputs against
 * format/load.h, in this process under an address-space cap (a reader that
 * held the decompressed file would die of it) and the suite's time limit:
 * gzip of 2 GiB of zeros streamed through a pipe, a small zstd file of
 * 2 GiB of zeros, /dev/zero, FIFOs whose writers never stop (zeros, noise,
 * a native header and then zeros, a whole profile and then zeros).  Each
 * must stop early with one message naming the input and the offset, and
 * a profile before the endless part must still load.
 */
#include "../lib/spawn.h"
#include "format/load.h"
#include "format/native.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

TestSuite(bombs, .init = setup, .fini = teardown, .timeout = 60);

struct load_args {
    const char *path;
    struct profile *p;
};

static int do_load(void *arg)
{
    struct load_args *a = arg;
    return profile_load(a->path, a->p);
}

/* profile_load(PATH) with its messages in *MSG. */
static int load(const char *path, struct profile *p, char **msg)
{
    struct load_args a = {path, p};
    int rc;
    *msg = test_capture_stderr(do_load, &a, &rc);
    return rc;
}

/* Start sh -c SCRIPT in the background: the writer of a pipe or a FIFO. */
static void start_writer(struct spawn_proc *w, const char *script)
{
    char *sh = test_need_tool("sh");
    struct spawn_opts o = {.argv = (const char *[]){sh, "-c", script, NULL}, .timeout_s = 50};
    spawn_start(&o, w);
    free(sh);
}

/* The writer ends once its reader has gone (SIGPIPE), which is the point. */
static void end_writer(struct spawn_proc *w)
{
    struct spawn_result r;
    spawn_finish(w, &r);
    spawn_result_free(&r);
}

static char *make_fifo(const char *name)
{
    char *path = test_path(dir, name);
    cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s: %s", path, strerror(errno));
    return path;
}

/* A small valid native profile, written by our writer. */
static char *write_profile(void)
{
    char *path = test_path(dir, "one.prof");
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    cr_assert_eq(native_write_meta(w, "command", "demo"), 0);
    cr_assert_eq(native_write_process(w, 7, 0, 1000), 0);
    cr_assert_eq(native_write_thread(w, 7, 7, 1000, "demo"), 0);
    for (int i = 0; i < 50; i++) {
        struct prof_thread_sample t = {.pid = 7,
                                       .tid = 7,
                                       .pc = 0x1000 + (uint64_t)i,
                                       .cpu_ns = (uint64_t)i * 1000000,
                                       .syscall = -1};
        cr_assert_eq(native_write_sample(w, 2000 + (uint64_t)i * 1000000, NULL, 0, &t, 1), 0);
    }
    cr_assert_eq(native_writer_finish(w, NULL), 0);
    return path;
}

static void expect_stopped(const char *path, const char *offset, const char *what)
{
    struct profile p;
    char *msg;
    int rc = load(path, &p, &msg);
    cr_expect_eq(rc, -1, "%s was accepted", path);
    cr_expect_eq(p.nsamples, 0);
    cr_expect_not_null(strstr(msg, path), "the message does not name %s: %s", path, msg);
    cr_expect_not_null(strstr(msg, offset), "the message lacks '%s': %s", offset, msg);
    cr_expect_not_null(strstr(msg, what), "the message lacks '%s': %s", what, msg);
    profile_free(&p);
    free(msg);
}

Test(bombs, gzip_of_2_gib_of_zeros_through_a_pipe)
{
    char *fifo = make_fifo("zeros.gz");
    char *script = NULL;
    cr_assert_geq(asprintf(&script, "head -c 2147483648 /dev/zero | gzip -1 > '%s'", fifo), 0);
    struct spawn_proc w;
    start_writer(&w, script);
    test_limit_address_space();
    expect_stopped(fifo, "decompressed offset 0:", "zero bytes in a row");
    end_writer(&w);
    free(script);
    free(fifo);
}

Test(bombs, a_small_zstd_file_of_2_gib_of_zeros)
{
    char *bomb = test_path(dir, "bomb.zst"), *script = NULL;
    cr_assert_geq(asprintf(&script, "head -c 2147483648 /dev/zero | zstd -q -1 -c > '%s'", bomb),
                  0);
    struct spawn_result r;
    char *sh = test_need_tool("sh");
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){sh, "-c", script, NULL}}, &r);
    cr_assert_eq(spawn_exit_code(r.status), 0, "zstd: %s", r.err);
    spawn_result_free(&r);
    struct stat st;
    cr_assert_eq(stat(bomb, &st), 0);
    cr_assert_lt(st.st_size, 200000, "not a bomb: %lld bytes", (long long)st.st_size);
    test_limit_address_space();
    expect_stopped(bomb, "decompressed offset 0:", "zero bytes in a row");
    free(sh);
    free(script);
    free(bomb);
}

Test(bombs, dev_zero)
{
    test_limit_address_space();
    expect_stopped("/dev/zero", "/dev/zero: offset 0:", "zero bytes in a row");
}

Test(bombs, a_fifo_of_endless_zeros_or_noise)
{
    const struct {
        const char *writer, *offset, *what;
    } cases[] = {
        {"cat /dev/zero", ": offset 0:", "zero bytes in a row"},
        {"cat /dev/urandom", ": offset 0:", "not a profile"},
        {"cat /dev/zero | gzip -1", ": decompressed offset 0:", "zero bytes in a row"},
        {"cat /dev/urandom | zstd -q -1", ": offset 0:", "not a profile"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "endless-%zu", i);
        char *fifo = make_fifo(name), *script = NULL;
        cr_assert_geq(asprintf(&script, "%s > '%s'", cases[i].writer, fifo), 0);
        struct spawn_proc w;
        start_writer(&w, script);
        expect_stopped(fifo, cases[i].offset, cases[i].what);
        end_writer(&w);
        free(script);
        free(fifo);
    }
}

/* A native header and then zeros for ever: damage at the first record,
 * and nothing before it, so an error rather than an empty profile. */
Test(bombs, a_native_header_then_endless_zeros)
{
    char *prof = write_profile();
    const char *compressors[] = {"cat", "gzip -1", "zstd -q -1"};
    test_limit_address_space();
    for (size_t i = 0; i < sizeof(compressors) / sizeof(compressors[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "header-%zu", i);
        char *fifo = make_fifo(name), *script = NULL;
        cr_assert_geq(asprintf(&script, "(head -c 16 '%s'; cat /dev/zero) | %s > '%s'", prof,
                               compressors[i], fifo),
                      0);
        struct spawn_proc w;
        start_writer(&w, script);
        expect_stopped(fifo, ": offset 16:", "a record of type 0");
        end_writer(&w);
        free(script);
        free(fifo);
    }
    free(prof);
}

/* A whole profile and then zeros for ever: the profile, marked truncated
 * where the zeros begin. */
Test(bombs, a_native_profile_then_endless_zeros)
{
    char *prof = write_profile();
    struct stat st;
    cr_assert_eq(stat(prof, &st), 0);
    char *fifo = make_fifo("then-zeros.gz"), *script = NULL;
    cr_assert_geq(asprintf(&script, "(cat '%s'; cat /dev/zero) | gzip -1 > '%s'", prof, fifo), 0);
    struct spawn_proc w;
    start_writer(&w, script);
    test_limit_address_space();
    struct profile p;
    char *msg;
    cr_assert_eq(load(fifo, &p, &msg), 0, "%s", msg);
    cr_expect_eq(p.nsamples, 50);
    cr_expect(p.truncated);
    cr_expect_eq(p.truncated_at, (uint64_t)st.st_size, "truncated at %llu",
                 (unsigned long long)p.truncated_at);
    cr_expect_not_null(strstr(msg, "a record of type 0"), "%s", msg);
    profile_free(&p);
    free(msg);
    end_writer(&w);
    free(script);
    free(fifo);
    free(prof);
}
