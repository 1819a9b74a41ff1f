/* test_profile_load.c - format/load.h: any profile file into the model, the
 * original raw format's conversion, and `ptprof info` / `ptprof dump`. */
#include "../lib/spawn.h"
#include "format/load.h"
#include "format/native.h"
#include "interop/pperf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0, got;
    unsigned char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert_not_null(buf);
        }
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

struct load_args {
    const char *path;
    struct profile *p;
};

static int do_load(void *arg)
{
    struct load_args *a = arg;
    return profile_load(a->path, a->p);
}

/* profile_load() with stderr captured into *MSG. */
static int load_capture(const char *path, struct profile *p, char **msg)
{
    FILE *tmp = tmpfile();
    cr_assert_not_null(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    struct load_args a = {path, p};
    int rc = do_load(&a);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(fileno(tmp), 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    cr_assert_eq(pread(fileno(tmp), text, (size_t)n, 0), (ssize_t)n);
    fclose(tmp);
    *msg = text;
    return rc;
}

/* --- reference profiles ---------------------------------------------------- */

#define WALL0 1700000000123456ULL
static const double pmu_values[3][2] = {{1.5, -2.25}, {3.0e9, 0.0}, {7.0, 8.0}};
static const struct pperf_thread threads0[] = {{101, 0x555555555139ULL, 123456789ULL}};
static const struct pperf_thread threads1[] = {
    {101, 0x555555555200ULL, 123556789ULL},
    {102, 0x7ffff7e5a123ULL, 5000ULL},
};
static const struct pperf_thread threads2[] = {
    {103, 0x1000, 1},
    {102, 0x7ffff7e5a200ULL, 6000ULL},
};
static const uint32_t nthreads_of[3] = {1, 2, 2};
static const struct pperf_thread *const threads_of[3] = {threads0, threads1, threads2};
static const struct pperf_map ref_maps[2] = {
    {0x555555554000ULL, 0x2000ULL, "demo-pie"},
    {0x7ffff7fc1000ULL, 0x1000ULL, "[vdso]"},
};

static void write_pperf(const char *path, uint32_t magic, uint32_t pmu_size)
{
    struct pperf_writer *w = pperf_writer_open(path, magic, pmu_size);
    cr_assert_not_null(w);
    for (unsigned i = 0; i < 3; i++) {
        /* The first PMU_SIZE bytes of two doubles, none of them 0.0. */
        const void *pmu = pmu_values[i];
        cr_assert_eq(pperf_writer_sample(w, WALL0 + 1000 * i, pmu, nthreads_of[i], threads_of[i]),
                     0);
    }
    cr_assert_eq(pperf_writer_finish(w, 3000, 42, ref_maps, 2), 0);
}

static void write_native(const char *path, bool finish)
{
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    struct pmu_channel ch = {"package-0", "W", PMU_KIND_POWER};
    cr_assert_eq(native_write_meta(w, "command", "./demo --fast"), 0);
    cr_assert_eq(native_write_meta(w, "frequency", "500"), 0);
    cr_assert_eq(native_write_meta(w, "stacks", "dwarf"), 0);
    cr_assert_eq(native_write_channel(w, 0, &ch), 0);
    cr_assert_eq(native_writer_publish(w), 0);
    cr_assert_eq(native_write_process(w, 4242, 0, 1000), 0);
    cr_assert_eq(native_write_exec(w, 4242, 1001, "/usr/bin/demo"), 0);
    cr_assert_eq(native_write_thread(w, 4242, 4242, 1000, "demo"), 0);
    cr_assert_eq(native_write_thread(w, 4242, 4243, 1000, "demo-worker"), 0);
    struct prof_map m = {.pid = 4242, .start = 0x400000, .end = 0x401000, .path = "/usr/bin/demo"};
    cr_assert_eq(native_write_map(w, &m), 0);
    uint64_t pcs[2] = {0x400100, 0x400200};
    for (unsigned i = 0; i < 100; i++) {
        double v = i * 0.5;
        struct prof_thread_sample t[2] = {
            {4242, 4242, 0x400100 + i, i * 1000000ull, native_stack_id(w, pcs, 2), -1, 0},
            {4242, 4243, 0x400200, i * 10ull, native_stack_id(w, pcs + 1, 1), 7,
             PROF_THREAD_IN_SYSCALL},
        };
        cr_assert_eq(native_write_sample(w, 2000000000ull + i * 2000000ull, &v, 1, t, 2), 0);
    }
    cr_assert_eq(native_write_exit(w, 4242, 3000000000ull, 3 << 8), 0);
    if (!finish) {
        native_writer_abort(w);
        return;
    }
    struct prof_totals tot = {200000000, 5000000, 100, 100};
    cr_assert_eq(native_writer_finish(w, &tot), 0);
}

/* --- the original raw format ---------------------------------------------- */

Test(profile_from_pperf, converts_everything_the_format_holds)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "ref.pperf");
    write_pperf(path, 3, 16);
    struct pperf_profile pp;
    cr_assert_eq(pperf_load(path, &pp), 0);
    struct profile p;
    cr_assert_eq(profile_from_pperf(&pp, path, NULL, &p), 0);
    pperf_free(&pp);

    cr_assert_str_eq(p.format, "pperf");
    cr_assert_eq(p.nprocesses, 1);
    cr_assert_eq(p.processes[0].pid, 101, "pid is the first sample's first tid");
    cr_assert_not(p.processes[0].exited);
    cr_assert_eq(p.nthreads, 3);
    cr_assert_eq(p.threads[0].tid, 101);
    cr_assert_eq(p.threads[1].tid, 102);
    cr_assert_eq(p.threads[2].tid, 103);
    cr_assert_eq(p.threads[2].pid, 101);

    cr_assert_eq(p.nchannels, 2, "16 PMU bytes are two doubles");
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(p.channels[i].kind, PMU_KIND_POWER);
        cr_assert_str_eq(p.channels[i].unit, "W");
    }
    cr_assert_str_neq(p.channels[0].name, p.channels[1].name);

    cr_assert_eq(p.nstacks, 1);
    cr_assert_eq(p.stacks[0].depth, 0);
    cr_assert_eq(p.nsamples, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct prof_sample *s = &p.samples[i];
        cr_assert_eq(s->time_ns, (WALL0 + 1000 * i) * 1000);
        cr_assert_eq(s->values[0], pmu_values[i][0]);
        cr_assert_eq(s->values[1], pmu_values[i][1]);
        cr_assert_eq(s->nthreads, nthreads_of[i]);
        for (uint32_t t = 0; t < s->nthreads; t++) {
            cr_assert_eq(s->threads[t].pid, 101);
            cr_assert_eq(s->threads[t].tid, threads_of[i][t].tid);
            cr_assert_eq(s->threads[t].pc, threads_of[i][t].pc);
            cr_assert_eq(s->threads[t].cpu_ns, threads_of[i][t].cpu_ns);
            cr_assert_eq(s->threads[t].stack, 0);
            cr_assert_eq(s->threads[t].syscall, -1);
        }
    }
    cr_assert_eq(p.nmaps, 2);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(p.maps[i].start, ref_maps[i].address);
        cr_assert_eq(p.maps[i].end, ref_maps[i].address + ref_maps[i].size);
        cr_assert_eq(p.maps[i].offset, 0);
        cr_assert_str_eq(p.maps[i].path, ref_maps[i].label);
        cr_assert_eq(p.maps[i].pid, 101);
    }
    /* A base name and [vdso]: the map table of ptprof 0.2.0 (load bases). */
    cr_assert_str_eq(profile_meta(&p, "pperf.maps"), "load");
    cr_assert_null(profile_meta(&p, "pperf.pmu"));
    cr_assert(p.has_totals);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.totals.wall_ns, 3000000);
    cr_assert_eq(p.totals.latency_ns, 42000);
    cr_assert_eq(p.totals.samples, 3);
    cr_assert_eq(p.frequency, 0);
    profile_free(&p);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(profile_from_pperf, magic_and_pmu_size_decide_the_channels)
{
    static const struct {
        uint32_t magic, pmu_size;
        size_t nchannels;
        enum pmu_kind kind;
        const char *unit;
    } cases[] = {
        {1, 8, 1, PMU_KIND_CURRENT, "A"}, {2, 8, 1, PMU_KIND_VOLTAGE, "V"},
        {3, 8, 1, PMU_KIND_POWER, "W"},   {0, 16, 2, PMU_KIND_CUSTOM, ""},
        {0, 0, 0, PMU_KIND_CUSTOM, ""},   {3, 12, 0, PMU_KIND_CUSTOM, ""}, /* not doubles */
        {77, 8, 1, PMU_KIND_CUSTOM, ""},
    };
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "c.pperf");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_pperf(path, cases[i].magic, cases[i].pmu_size);
        struct profile p;
        char *msg;
        cr_assert_eq(load_capture(path, &p, &msg), 0, "%s", msg);
        free(msg);
        cr_assert_eq(p.nchannels, cases[i].nchannels, "case %zu", i);
        for (size_t c = 0; c < p.nchannels; c++) {
            cr_assert_eq(p.channels[c].kind, cases[i].kind, "case %zu", i);
            cr_assert_str_eq(p.channels[c].unit, cases[i].unit, "case %zu", i);
        }
        if (p.nchannels == 1)
            cr_assert_str_eq(p.channels[0].name, "pmu");
        for (size_t s = 0; s < p.nsamples; s++)
            cr_assert_eq(p.samples[s].values == NULL, p.nchannels == 0);
        profile_free(&p);
    }
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* The original's default build writes power 0.0 in every sample (its dummy
 * PMU): no channel, rather than one that reports zero energy. */
Test(profile_from_pperf, the_original_dummy_pmu_is_no_channel)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "dummy.pperf");
    for (int measured = 0; measured <= 1; measured++) {
        struct pperf_writer *w = pperf_writer_open(path, PPERF_DUMMY_MAGIC, PPERF_DUMMY_PMU_SIZE);
        cr_assert_not_null(w);
        for (unsigned i = 0; i < 3; i++) {
            double v = measured && i == 2 ? 0.25 : 0.0;
            cr_assert_eq(
                pperf_writer_sample(w, WALL0 + 1000 * i, &v, nthreads_of[i], threads_of[i]), 0);
        }
        cr_assert_eq(pperf_writer_finish(w, 3000, 42, ref_maps, 2), 0);
        struct profile p;
        char *msg;
        cr_assert_eq(load_capture(path, &p, &msg), 0, "%s", msg);
        free(msg);
        cr_assert_eq(p.nsamples, 3);
        if (measured) {
            cr_assert_eq(p.nchannels, 1, "one sample measured 0.25 W: a real channel");
            cr_assert_eq(p.channels[0].kind, PMU_KIND_POWER);
            cr_assert_eq(p.samples[2].values[0], 0.25);
            cr_assert_null(profile_meta(&p, "pperf.pmu"));
        } else {
            cr_assert_eq(p.nchannels, 0);
            for (size_t s = 0; s < p.nsamples; s++)
                cr_assert_null(p.samples[s].values);
            cr_assert_str_eq(profile_meta(&p, "pperf.pmu"), "dummy");
        }
        profile_free(&p);
    }
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(profile_from_pperf, an_empty_profile_has_pid_zero)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "empty.pperf");
    struct pperf_writer *w = pperf_writer_open(path, 0, 0);
    cr_assert_not_null(w);
    cr_assert_eq(pperf_writer_finish(w, 0, 0, NULL, 0), 0);
    struct profile p;
    char *msg;
    cr_assert_eq(load_capture(path, &p, &msg), 0, "%s", msg);
    free(msg);
    cr_assert_eq(p.nprocesses, 1);
    cr_assert_eq(p.processes[0].pid, 0);
    cr_assert_eq(p.nthreads, 0);
    cr_assert_eq(p.nsamples, 0);
    profile_free(&p);
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* --- detection by content -------------------------------------------------- */

Test(profile_load, the_format_is_decided_by_content_not_name)
{
    char *dir = test_mkdtemp();
    char *native = test_path(dir, "native.raw");
    char *pperf = test_path(dir, "pperf.data");
    write_native(native, true);
    write_pperf(pperf, 3, 16);

    struct profile p;
    char *msg;
    cr_assert_eq(load_capture(native, &p, &msg), 0, "%s", msg);
    free(msg);
    cr_assert_str_eq(p.format, "native");
    cr_assert_str_eq(profile_meta(&p, "command"), "./demo --fast");
    cr_assert_eq(p.nsamples, 100);
    cr_assert_eq(p.frequency, 500);
    cr_assert(p.has_totals);
    profile_free(&p);

    cr_assert_eq(load_capture(pperf, &p, &msg), 0, "%s", msg);
    free(msg);
    cr_assert_str_eq(p.format, "pperf");
    cr_assert_eq(p.nsamples, 3);
    profile_free(&p);

    test_rmtree(dir);
    free(native);
    free(pperf);
    free(dir);
}

Test(profile_load, compressed_files_load_whatever_their_name)
{
    static const char *const suffixes[] = {".gz", ".bz2", ".zst"};
    char *dir = test_mkdtemp();
    for (size_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%s", suffixes[i]);
        char *written = test_path(dir, name);
        char *renamed = test_path(dir, "profile.raw");
        write_native(written, true);
        size_t len;
        unsigned char *b = read_file(written, &len);
        cr_assert_not(native_is_native(b, len), "%s was not compressed", name);
        free(b);
        cr_assert_eq(rename(written, renamed), 0);

        struct profile_file f;
        cr_assert_eq(profile_file_read(renamed, &f), 0);
        cr_assert_neq(f.raw.compression, COMPRESSION_NONE);
        cr_assert_str_eq(profile_file_format(&f), "native");
        profile_file_free(&f);

        struct profile p;
        char *msg;
        cr_assert_eq(load_capture(renamed, &p, &msg), 0, "%s: %s", name, msg);
        free(msg);
        cr_assert_eq(p.nsamples, 100, "%s", name);
        cr_assert(p.has_totals);
        cr_assert_not(p.truncated);
        profile_free(&p);

        snprintf(name, sizeof(name), "p%s", suffixes[i]);
        char *pp = test_path(dir, name);
        write_pperf(pp, 1, 16);
        cr_assert_eq(load_capture(pp, &p, &msg), 0, "%s: %s", name, msg);
        free(msg);
        cr_assert_str_eq(p.format, "pperf");
        cr_assert_eq(p.nsamples, 3);
        profile_free(&p);
        unlink(pp);
        unlink(renamed);
        free(pp);
        free(written);
        free(renamed);
    }
    test_rmtree(dir);
    free(dir);
}

Test(profile_load, a_compressed_native_file_cut_short_loads_as_truncated)
{
    char *dir = test_mkdtemp();
    char *gz = test_path(dir, "cut.prof.gz");
    write_native(gz, true);
    size_t len;
    unsigned char *b = read_file(gz, &len);
    write_bytes(gz, b, len * 2 / 3);
    struct profile p;
    char *msg;
    cr_assert_eq(load_capture(gz, &p, &msg), 0, "%s", msg);
    cr_assert(p.truncated);
    cr_assert_not(p.has_totals);
    cr_assert_gt(p.nsamples, 0);
    cr_assert_lt(p.nsamples, 100);
    cr_assert_not_null(strstr(msg, gz), "the warning names the file: %s", msg);
    free(msg);
    profile_free(&p);
    free(b);
    test_rmtree(dir);
    free(gz);
    free(dir);
}

Test(profile_load, errors_name_the_file)
{
    char *dir = test_mkdtemp();
    char *missing = test_path(dir, "missing.prof");
    char *junk = test_path(dir, "junk.prof");
    write_bytes(junk, "this is not a profile at all, not even close to one", 51);
    struct profile p;
    char *msg;
    cr_assert_eq(load_capture(missing, &p, &msg), -1);
    cr_assert_not_null(strstr(msg, missing), "%s", msg);
    cr_assert_eq(p.nsamples, 0);
    profile_free(&p);
    free(msg);
    cr_assert_eq(load_capture(junk, &p, &msg), -1);
    cr_assert_not_null(strstr(msg, junk), "%s", msg);
    cr_assert_not_null(strstr(msg, "offset"), "%s", msg);
    profile_free(&p);
    free(msg);
    test_rmtree(dir);
    free(missing);
    free(junk);
    free(dir);
}

/* --- ptprof info / dump ------------------------------------------------------ */

static char *ptprof_binary(void)
{
    const char *build = getenv("PTPROF_BUILD");
    char *bin = NULL;
    cr_assert_geq(asprintf(&bin, "%s/ptprof", build && *build ? build : "build"), 0);
    if (access(bin, X_OK) != 0) {
        free(bin);
        return NULL;
    }
    return bin;
}

/* Run ptprof ARGS; returns its exit code, stdout in *OUT, stderr in *ERR. */
static int run_ptprof(const char *bin, const char *const *args, char **out, char **err)
{
    FILE *o = tmpfile(), *e = tmpfile();
    cr_assert(o && e);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fileno(o), 1);
        dup2(fileno(e), 2);
        char *argv[16];
        size_t n = 0;
        argv[n++] = (char *)bin;
        for (; args[n - 1] && n < 15; n++)
            argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(bin, argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "ptprof died");
    FILE *fs[2] = {o, e};
    char **dst[2] = {out, err};
    for (int i = 0; i < 2; i++) {
        off_t n = lseek(fileno(fs[i]), 0, SEEK_END);
        char *t = calloc(1, (size_t)n + 1);
        cr_assert_eq(pread(fileno(fs[i]), t, (size_t)n, 0), (ssize_t)n);
        fclose(fs[i]);
        *dst[i] = t;
    }
    return WEXITSTATUS(status);
}

static void expect_line(const char *text, const char *line)
{
    cr_assert_not_null(strstr(text, line), "missing '%s' in:\n%s", line, text);
}

Test(ptprof_cli, info_describes_both_formats_and_flags_truncation)
{
    char *bin = ptprof_binary();
    if (!bin)
        cr_skip_test("no ptprof binary (set PTPROF_BUILD)");
    char *dir = test_mkdtemp();
    char *complete = test_path(dir, "complete.prof.zst");
    char *killed = test_path(dir, "killed.prof");
    char *cut = test_path(dir, "cut.prof");
    char *pperf = test_path(dir, "orig.data");
    char *junk = test_path(dir, "junk");
    write_native(complete, true);
    write_native(killed, false);
    size_t len;
    unsigned char *b = read_file(killed, &len);
    write_bytes(cut, b, len - 5);
    free(b);
    write_pperf(pperf, 3, 16);
    write_bytes(junk, "junk", 4);

    char *out, *err;
    const char *a1[] = {"info", complete, pperf, NULL};
    cr_assert_eq(run_ptprof(bin, a1, &out, &err), 0, "%s", err);
    expect_line(out, "  format:     native 1.1, zstd-compressed\n");
    expect_line(out, "  program:    ./demo --fast\n");
    expect_line(out, "  duration:   0.200 s\n");
    expect_line(out, "  samples:    100 recorded, 100 ideal (100.0%)\n");
    expect_line(out, "  frequency:  500 Hz requested, 500.0 Hz achieved\n");
    expect_line(out, "  latency:    5.000 ms total, 50.000 us per sample\n");
    expect_line(out, "  threads:    2 (at most 2 at once)\n");
    expect_line(out, "    4242     /usr/bin/demo  exit 3\n");
    expect_line(out, "    package-0  W  power\n");
    expect_line(out, "  stacks:     dwarf, 2 distinct\n");
    expect_line(out, "  status:     complete\n");
    expect_line(out, "  format:     pperf (the original sampler's raw format)\n");
    expect_line(out, "  program:    unknown\n");
    expect_line(out, "  samples:    3 recorded, ideal unknown\n");
    expect_line(out, "  channels:   2\n");
    /* "demo-pie" and "[vdso]": the table ptprof 0.2.0 wrote. */
    expect_line(out,
                "  maps:       2, ptprof 0.2.0's form: one per loaded file, from its load base\n");
    free(out);
    free(err);

    const char *a2[] = {"info", killed, junk, cut, NULL};
    cr_assert_eq(run_ptprof(bin, a2, &out, &err), 2, "an unreadable file means exit 2");
    expect_line(err, junk);
    char want[128];
    snprintf(want, sizeof(want), "  status:     TRUNCATED at offset %zu (recorder killed?)", len);
    expect_line(out, want);
    expect_line(out, "  latency:    unknown (the recorder did not finish)\n");
    expect_line(out, "TRUNCATED at offset");
    expect_line(out, cut);
    free(out);
    free(err);

    const char *a3[] = {"info", "--help", NULL};
    cr_assert_eq(run_ptprof(bin, a3, &out, &err), 0);
    expect_line(out, "usage: ptprof info FILE...");
    free(out);
    free(err);
    const char *a4[] = {"info", NULL};
    cr_assert_eq(run_ptprof(bin, a4, &out, &err), 1);
    free(out);
    free(err);

    test_rmtree(dir);
    free(complete);
    free(killed);
    free(cut);
    free(pperf);
    free(junk);
    free(dir);
    free(bin);
}

Test(ptprof_cli, dump_prints_every_record)
{
    char *bin = ptprof_binary();
    if (!bin)
        cr_skip_test("no ptprof binary (set PTPROF_BUILD)");
    char *dir = test_mkdtemp();
    char *native = test_path(dir, "n.prof.gz");
    char *pperf = test_path(dir, "p.data");
    write_native(native, true);
    write_pperf(pperf, 3, 16);

    char *out, *err;
    const char *a1[] = {"dump", native, NULL};
    cr_assert_eq(run_ptprof(bin, a1, &out, &err), 0, "%s", err);
    expect_line(out, "@0 HEADER ptprof native 1.1 flags=0x0\n");
    expect_line(out, "@16 META \"command\" = \"./demo --fast\"\n");
    expect_line(out, " CHANNEL id=0 kind=3 (power) name=\"package-0\" unit=\"W\"\n");
    expect_line(out, " EXEC pid=4242 time=0.000001001 path=\"/usr/bin/demo\"\n");
    expect_line(out, " STACK id=1 parent=0 count=2 pcs=0x400100,0x400200\n");
    expect_line(out, " SAMPLE time=2.000000000 values=[0] threads=2\n"
                     "    pid=4242 tid=4242 pc=0x400100 cpu_ns=0 stack=1 syscall=-1 flags=0x0\n"
                     "    pid=4242 tid=4243 pc=0x400200 cpu_ns=0 stack=2 syscall=7 flags=0x1\n");
    expect_line(out, " EXIT pid=4242 time=3.000000000 status=0x300 (exit 3)\n");
    expect_line(out, " END wall_ns=200000000 latency_ns=5000000 samples=100 ideal_samples=100\n");
    size_t samples = 0;
    for (const char *s = out; (s = strstr(s, " SAMPLE ")); s++)
        samples++;
    cr_assert_eq(samples, 100);
    free(out);
    free(err);

    const char *a2[] = {"dump", pperf, NULL};
    cr_assert_eq(run_ptprof(bin, a2, &out, &err), 0, "%s", err);
    expect_line(out, "@0 HEADER pperf magic=3 (power) wall_us=3000 latency_us=42 samples=3 "
                     "pmu_size=16 maps=2\n");
    expect_line(out, "@36 SAMPLE wall_us=1700000000123456 pmu=[1.5,-2.25] threads=1\n"
                     "    tid=101 pc=0x555555555139 cpu_ns=123456789\n");
    expect_line(out, " MAP address=0x7ffff7fc1000 size=0x1000 label=\"[vdso]\"\n");
    free(out);
    free(err);

    const char *a3[] = {"dump", native, pperf, NULL};
    cr_assert_eq(run_ptprof(bin, a3, &out, &err), 1);
    free(out);
    free(err);

    test_rmtree(dir);
    free(native);
    free(pperf);
    free(dir);
    free(bin);
}
