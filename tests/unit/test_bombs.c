/*
 * test_bombs.c - decompression bombs and endless inputs against
 * format/load.h, in this process under an address-space cap (a reader that
 * held the decompressed file would die of it) and the suite's time limit:
 * gzip of 2 GiB of zeros streamed through a pipe, a small zstd file of
 * 2 GiB of zeros, /dev/zero, FIFOs whose writers never stop (zeros, noise,
 * a native header and then zeros, a whole profile and then zeros).  Each
 * must stop early with one message naming the input and the offset, and
 * a profile before the endless part must still load.  And text that
 * repeats: a few MB of gzip holding 2 GiB of valid folded lines or `perf
 * script` events load with the right totals in the memory of their few
 * distinct stacks, read a line at a time.
 */
#include "../lib/spawn.h"
#include "format/load.h"
#include "format/native.h"
#include "interop/folded.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* --- text that repeats: gigabytes of valid lines in a few MB of gzip ---- */

/* The text bombs: 2 GiB of text, 256 gzip members of 8 MiB each. */
#define TEXT_CHUNK ((size_t)8 << 20)
#define TEXT_CHUNKS 256

/* UNIT repeated to TEXT_CHUNK bytes into DIR/NAME, gzipped to
 * DIR/NAME.gz (returned), which must stay a bomb: all its chunks in under
 * 16 MiB; *UNITS is how many units a chunk holds. */
static char *gzip_chunk(const char *name, const char *unit, size_t *units)
{
    char *plain = test_path(dir, name), *gz = NULL;
    cr_assert_geq(asprintf(&gz, "%s.gz", plain), 0);
    FILE *f = fopen(plain, "w");
    cr_assert_not_null(f);
    size_t len = strlen(unit);
    *units = TEXT_CHUNK / len;
    for (size_t i = 0; i < *units; i++)
        cr_assert_eq(fwrite(unit, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    char *sh = test_need_tool("sh"), *script = NULL;
    cr_assert_geq(asprintf(&script, "gzip -9 -c '%s' > '%s'", plain, gz), 0);
    struct spawn_result r;
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){sh, "-c", script, NULL}}, &r);
    cr_assert_eq(spawn_exit_code(r.status), 0, "gzip: %s", r.err);
    spawn_result_free(&r);
    free(script);
    free(sh);
    free(plain);
    struct stat st;
    cr_assert_eq(stat(gz, &st), 0);
    cr_assert_lt((size_t)st.st_size * TEXT_CHUNKS, (size_t)16 << 20, "not a bomb: %lld bytes",
                 (long long)st.st_size);
    return gz;
}

/* The largest resident size this process has had, in bytes. */
static size_t peak_rss(void)
{
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    return (size_t)ru.ru_maxrss << 10;
}

/* CHUNK (gzipped) TEXT_CHUNKS times through a FIFO, loaded under the
 * address-space cap: into P, with the bytes the load left on the heap and
 * by how much it raised the peak resident size. */
static void load_repeated(const char *chunk, struct profile *p, size_t *kept, size_t *peak)
{
    char *fifo = make_fifo("repeated.gz"), *script = NULL;
    cr_assert_geq(asprintf(&script,
                           "i=0; while [ $i -lt %d ]; do cat '%s' || exit 1; i=$((i+1)); done "
                           "> '%s'",
                           TEXT_CHUNKS, chunk, fifo),
                  0);
    struct spawn_proc w;
    start_writer(&w, script);
    test_limit_address_space();
    size_t heap = test_heap_in_use(), rss = peak_rss();
    char *msg;
    cr_assert_eq(load(fifo, p, &msg), 0, "%s", msg);
    cr_expect_eq(msg[0], '\0', "%s", msg);
    *kept = test_heap_in_use() - heap;
    *peak = peak_rss() - rss;
    free(msg);
    end_writer(&w);
    free(script);
    free(fifo);
}

/* What a text's profile may cost: its few stacks and names, and the
 * stream's pieces. */
#define TEXT_PROFILE_BYTES ((size_t)1 << 20)
#define TEXT_PEAK_BYTES ((size_t)64 << 20)

/* 2 GiB of folded lines, two stacks in runs: every count adds up, and
 * memory is the two stacks', not the text's. */
Test(bombs, gzip_of_2_gib_of_folded_lines_through_a_pipe, .timeout = 300)
{
    char unit[4096];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(unit + n, sizeof(unit) - n, "main;serve;parse;lex 3\n");
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(unit + n, sizeof(unit) - n, "main;serve;respond 2\n");
    size_t units;
    char *gz = gzip_chunk("repeated.folded", unit, &units);

    struct profile p;
    size_t kept, peak;
    load_repeated(gz, &p, &kept, &peak);
    uint64_t runs = (uint64_t)units * TEXT_CHUNKS * 40;
    uint64_t deep = 0, shallow = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_thread_sample *t = &p.samples[i].threads[0];
        uint32_t depth = p.stacks[t->stack].depth;
        cr_assert(depth == 4 || depth == 3, "a stack of %u frames", depth);
        *(depth == 4 ? &deep : &shallow) += prof_weight(&p.samples[i], 0);
    }
    cr_expect_eq(p.nstacks, 3, "%zu stacks", p.nstacks);
    cr_expect_eq(deep, 3 * runs, "lex: %llu samples", (unsigned long long)deep);
    cr_expect_eq(shallow, 2 * runs, "respond: %llu samples", (unsigned long long)shallow);
    cr_expect_eq(p.totals.samples, 5 * runs);
    cr_expect_eq(p.samples[p.nsamples - 1].threads[0].cpu_ns, 5 * runs * FOLDED_COUNT_NS);
    cr_expect_not(p.truncated);
    cr_expect_lt(kept, TEXT_PROFILE_BYTES, "the profile kept %zu bytes", kept);
    cr_expect_lt(peak, TEXT_PEAK_BYTES, "reading raised the peak by %zu bytes", peak);
    profile_free(&p);
    free(gz);
}

/* 2 GiB of `perf script` text, two threads' events at one time over and
 * over: each thread's events are one sample of their number, its CPU time
 * their periods, and memory is two samples', not the text's. */
Test(bombs, gzip_of_2_gib_of_perf_script_text_through_a_pipe, .timeout = 300)
{
    static const char unit[] = "app 4242/4242 [001] 100.000001:     250000 cpu-clock:u: \n"
                               "\t    55d0c0a01139 lex+0x19 (/usr/bin/app)\n"
                               "\t    55d0c0a01200 parse+0x10 (/usr/bin/app)\n"
                               "\t    55d0c0a01300 main+0x5 (/usr/bin/app)\n"
                               "\n"
                               "app 4242/4243 [002] 100.000001:     250000 cpu-clock:u: \n"
                               "\t    55d0c0a01400 work+0x1 (/usr/bin/app)\n"
                               "\t    7f0000000180 start_thread+0x80 (/usr/lib/libc.so.6)\n"
                               "\n";
    size_t units;
    char *gz = gzip_chunk("repeated.perf", unit, &units);

    struct profile p;
    size_t kept, peak;
    load_repeated(gz, &p, &kept, &peak);
    uint64_t events = (uint64_t)units * TEXT_CHUNKS;
    cr_assert_eq(p.nsamples, 2, "%zu samples", p.nsamples);
    for (size_t i = 0; i < 2; i++) {
        const struct prof_thread_sample *t = &p.samples[i].threads[0];
        cr_expect_eq(t->tid, 4242 + i);
        cr_expect_eq(prof_weight(&p.samples[i], 0), events, "thread %u: %llu events", t->tid,
                     (unsigned long long)prof_weight(&p.samples[i], 0));
        cr_expect_eq(t->cpu_ns, events * 250000, "thread %u: %llu ns", t->tid,
                     (unsigned long long)t->cpu_ns);
        cr_expect_eq(p.stacks[t->stack].depth, i ? 2 : 3);
    }
    cr_expect_eq(p.totals.samples, 2 * events);
    cr_expect_not(p.truncated);
    cr_expect_lt(kept, TEXT_PROFILE_BYTES, "the profile kept %zu bytes", kept);
    cr_expect_lt(peak, TEXT_PEAK_BYTES, "reading raised the peak by %zu bytes", peak);
    profile_free(&p);
    free(gz);
}
