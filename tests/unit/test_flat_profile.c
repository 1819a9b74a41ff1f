/*
 * test_flat_profile.c - analyze/flat_profile.h on synthetic profiles
 * (format/profile.h) held in memory, resolved against programs built with
 * cc at test time: CPU time deltas, the first-appearance rule, maps as the
 * original raw format describes them (one per file, offset 0 at the load
 * base) and as the native format records them (one per segment, with file
 * offsets), maps replaced over time (exec) and per process, the vDSO read
 * from a captured image, threads blocked in system calls, the search path
 * and build-ids.  Addresses come from nm and readelf, never from constants.
 * ("ptprof report" itself is tested end to end in tests/e2e/test_report.c.)
 */
#include "analyze/flat_profile.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where the synthetic profiles pretend things were loaded. */
#define BASE 0x5555aaaa0000ULL
#define LIB_BASE 0x7f1234560000ULL
#define VDSO_BASE 0x7ffff7fc0000ULL
#define MAP_SIZE 0x100000ULL
#define PAGE 0x1000ULL

static const char prog_src[] = "__attribute__((noinline)) int fp_alpha(int x) { return x * 3; }\n"
                               "__attribute__((noinline)) int fp_gamma(int x) { return x + 9; }\n"
                               "int main(int argc, char **argv)\n"
                               "{ (void)argv; return fp_alpha(argc) + fp_gamma(argc); }\n";

static const char lib_src[] = "__attribute__((noinline)) int fp_lib_one(int x) { return x * 7; }\n"
                              "__attribute__((noinline)) int fp_lib_two(int x) { return x ^ 5; }\n";

static char *tmpdir;
static char *bindir; /* tmpdir/bin, holding "prog" (non-PIE) */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    cr_assert_geq(vasprintf(&cmd, fmt, ap), 0);
    va_end(ap);
    char *full = xasprintf("cd '%s' && %s", tmpdir, cmd);
    cr_assert_eq(system(full), 0, "command failed: %s", cmd);
    free(full);
    free(cmd);
}

static void write_file(const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

static char *tmp_path(const char *name)
{
    return xasprintf("%s/%s", tmpdir, name);
}

static uint64_t nm_addr(const char *file, const char *name)
{
    char *cmd = xasprintf("nm --defined-only '%s/%s'", tmpdir, file);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[1024], sym[512], type;
    unsigned long long addr;
    uint64_t found = 0;
    while (fgets(line, sizeof(line), p))
        if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0)
            found = addr;
    pclose(p);
    free(cmd);
    cr_assert_neq(found, 0, "nm finds no %s in %s", name, file);
    return found;
}

/* PT_LOAD headers as readelf shows them. */
struct seg {
    uint64_t offset, vaddr, filesz, memsz;
    bool exec;
};

static size_t load_segments(const char *file, struct seg *out, size_t max)
{
    char *cmd = xasprintf("readelf -lW '%s/%s'", tmpdir, file);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof(line), p)) {
        unsigned long long off, va, pa, fsz, msz;
        char flags[16] = "";
        if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %15[RWE ]", &off, &va, &pa, &fsz,
                   &msz, flags) >= 5 &&
            n < max)
            out[n++] = (struct seg){off, va, fsz, msz, strchr(flags, 'E') != NULL};
    }
    pclose(p);
    free(cmd);
    cr_assert_gt(n, 0, "readelf finds no PT_LOAD in %s", file);
    return n;
}

/* The link-time address of file offset 0 (the first segment's base). */
static uint64_t first_load_vaddr(const char *file)
{
    struct seg s[16];
    load_segments(file, s, 16);
    return s[0].vaddr - s[0].offset;
}

/* The build-id as readelf prints it, as bytes. */
static size_t read_build_id(const char *file, uint8_t *out)
{
    char *cmd = xasprintf("readelf -n '%s/%s'", tmpdir, file);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof(line), p)) {
        const char *h = strstr(line, "Build ID: ");
        if (!h)
            continue;
        h += strlen("Build ID: ");
        unsigned byte;
        while (n < PROF_BUILD_ID_MAX && sscanf(h, "%2x", &byte) == 1) {
            out[n++] = (uint8_t)byte;
            h += 2;
        }
    }
    pclose(p);
    free(cmd);
    cr_assert_gt(n, 0, "%s has no build-id", file);
    return n;
}

static void setup(void)
{
    cr_redirect_stderr();
    char tmpl[] = "/tmp/ptprof-flat-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    tmpdir = xstrdup(tmpl);
    bindir = xasprintf("%s/bin", tmpdir);
    write_file("prog.c", prog_src);
    /* Non-PIE, so its load address is not 0 and must be applied. */
    sh("mkdir bin && cc -O1 -fno-pie -no-pie -o bin/prog prog.c");
}

static void teardown(void)
{
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
    free(cmd);
    free(bindir);
    free(tmpdir);
}

TestSuite(flat_profile, .init = setup, .fini = teardown);

/* --- building profiles --------------------------------------------------- */

/* A PC a little way inside FUNCTION of FILE whose offset 0 is at BASE_ADDR. */
static uint64_t pc_at(const char *file, const char *function, uint64_t base_addr)
{
    return base_addr + (nm_addr(file, function) - first_load_vaddr(file)) + 2;
}

static uint64_t pc_in(const char *file, const char *function)
{
    return pc_at(file, function, BASE);
}

/* A map as the original raw format gives it: the whole file from its load
 * base, offset 0, valid from the start. */
static struct prof_map whole_map(uint32_t pid, const char *path, uint64_t start, uint64_t size)
{
    return (struct prof_map){.pid = pid, .start = start, .end = start + size, .path = (char *)path};
}

/* The maps the kernel would make for FILE loaded with offset 0 at
 * BASE_ADDR: one per PT_LOAD, page aligned, each with its file offset. */
static size_t segment_maps(uint32_t pid, const char *file, const char *path, uint64_t base_addr,
                           uint64_t time, struct prof_map *out, size_t max)
{
    struct seg s[16];
    size_t n = load_segments(file, s, 16);
    uint64_t first = s[0].vaddr - s[0].offset;
    cr_assert_leq(n, max);
    for (size_t i = 0; i < n; i++) {
        uint64_t va = s[i].vaddr - first;
        out[i] = (struct prof_map){
            .pid = pid,
            .time_ns = time,
            .start = base_addr + (va & ~(PAGE - 1)),
            .end = base_addr + ((va + s[i].memsz + PAGE - 1) & ~(PAGE - 1)),
            .offset = s[i].offset & ~(PAGE - 1),
            .perms = s[i].exec ? 5 : 1,
            .path = (char *)path,
        };
    }
    return n;
}

static struct prof_thread_sample th(uint32_t tid, uint64_t pc, uint64_t cpu_ns)
{
    return (struct prof_thread_sample){
        .pid = 1, .tid = tid, .pc = pc, .cpu_ns = cpu_ns, .syscall = -1};
}

static struct prof_thread_sample th_pid(uint32_t pid, uint32_t tid, uint64_t pc, uint64_t cpu_ns)
{
    struct prof_thread_sample t = th(tid, pc, cpu_ns);
    t.pid = pid;
    return t;
}

#define SAMPLE(t, arr)                                                                             \
    {                                                                                              \
        .time_ns = (t), .nthreads = sizeof(arr) / sizeof((arr)[0]), .threads = (arr)               \
    }

/* --- checking results ---------------------------------------------------- */

static const struct flat_row *find_row(const struct flat_profile *fp, const char *binary,
                                       const char *function)
{
    for (size_t i = 0; i < fp->count; i++)
        if (strcmp(fp->rows[i].binary, binary) == 0 && strcmp(fp->rows[i].function, function) == 0)
            return &fp->rows[i];
    return NULL;
}

static const struct flat_row *row(const struct flat_profile *fp, const char *binary,
                                  const char *function)
{
    const struct flat_row *r = find_row(fp, binary, function);
    if (!r) {
        for (size_t i = 0; i < fp->count; i++)
            fprintf(stdout, "row %s %s\n", fp->rows[i].binary, fp->rows[i].function);
        cr_assert_fail("no row %s %s", binary, function);
    }
    return r;
}

/* Every result must add up to its totals, and keys must be unique. */
static void expect_consistent(const struct flat_profile *fp)
{
    uint64_t samples = 0, cpu = 0;
    for (size_t i = 0; i < fp->count; i++) {
        samples += fp->rows[i].samples;
        cpu += fp->rows[i].cpu_ns;
        for (size_t j = i + 1; j < fp->count; j++)
            cr_expect(strcmp(fp->rows[i].binary, fp->rows[j].binary) != 0 ||
                          strcmp(fp->rows[i].function, fp->rows[j].function) != 0,
                      "duplicate row %s %s", fp->rows[i].binary, fp->rows[i].function);
    }
    cr_expect_eq(samples, fp->thread_samples);
    cr_expect_eq(cpu, fp->cpu_ns);
}

static void compute(struct prof_sample *s, size_t n, struct prof_map *maps, size_t nmaps,
                    const char *const *dirs, size_t ndirs, struct flat_profile *fp)
{
    struct profile p = {.maps = maps, .nmaps = nmaps, .samples = s, .nsamples = n};
    struct flat_options o = {.search_dirs = dirs, .nsearch_dirs = ndirs};
    cr_assert_eq(flat_profile_compute(&p, &o, fp), 0);
    expect_consistent(fp);
}

static char *captured_stderr(void)
{
    fflush(stderr);
    static char err[16384];
    size_t n = fread(err, 1, sizeof(err) - 1, cr_get_redirected_stderr());
    err[n] = '\0';
    return err;
}

/* --- attribution --------------------------------------------------------- */

Test(flat_profile, cpu_time_since_previous_appearance_goes_to_the_later_pc)
{
    uint64_t alpha = pc_in("bin/prog", "fp_alpha"), gamma = pc_in("bin/prog", "fp_gamma");
    struct prof_thread_sample s0[] = {th(10, alpha, 1000)};
    struct prof_thread_sample s1[] = {th(10, gamma, 4000)};
    struct prof_thread_sample s2[] = {th(10, alpha, 10000)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1), SAMPLE(3, s2)};
    struct prof_map maps[] = {whole_map(1, "prog", BASE, MAP_SIZE)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 3, maps, 1, dirs, 1, &fp);
    cr_expect_eq(fp.samples, 3);
    cr_expect_eq(fp.thread_samples, 3);
    cr_expect_eq(fp.cpu_ns, 9000);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 6000);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->samples, 2);
    cr_expect_eq(row(&fp, "prog", "fp_gamma")->cpu_ns, 3000);
    cr_expect_eq(row(&fp, "prog", "fp_gamma")->samples, 1);
    flat_profile_free(&fp);
}

Test(flat_profile, first_appearance_and_gaps_and_backward_deltas)
{
    uint64_t alpha = pc_in("bin/prog", "fp_alpha"), gamma = pc_in("bin/prog", "fp_gamma");
    /* Thread 20 shows up late with a large CPU time already consumed: it
     * contributes nothing then.  Thread 30 is missing from the middle
     * sample; its delta spans the gap.  Thread 40's counter goes back (the
     * TID was reused): that delta counts 0. */
    struct prof_thread_sample s0[] = {th(30, gamma, 100), th(40, gamma, 9000)};
    struct prof_thread_sample s1[] = {th(20, alpha, 5000000000ULL), th(40, alpha, 50)};
    struct prof_thread_sample s2[] = {th(20, gamma, 5000000700ULL), th(30, alpha, 600),
                                      th(40, alpha, 80)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1), SAMPLE(3, s2)};
    struct prof_map maps[] = {whole_map(1, "prog", BASE, MAP_SIZE)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 3, maps, 1, dirs, 1, &fp);
    cr_expect_eq(fp.thread_samples, 7);
    /* alpha: 30's 500 over the gap + 40's 30 after the reset. */
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 530);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->samples, 4);
    /* gamma: only 20's 700; the first appearances add nothing. */
    cr_expect_eq(row(&fp, "prog", "fp_gamma")->cpu_ns, 700);
    cr_expect_eq(row(&fp, "prog", "fp_gamma")->samples, 3);
    flat_profile_free(&fp);
}

Test(flat_profile, unmapped_unknown_and_pseudo_binaries_are_kept)
{
    uint64_t alpha = pc_in("bin/prog", "fp_alpha");
    const uint64_t lib = 0x7f0000000000ULL, stack = 0x7ffd00000000ULL;
    struct prof_thread_sample s0[] = {th(1, alpha, 0), th(2, 0x1234, 0), th(3, lib + 0x10, 0)};
    struct prof_thread_sample s1[] = {th(1, BASE, 10), th(2, 0x1240, 20), th(3, lib + 0x9000, 30),
                                      th(4, VDSO_BASE + 0x10, 0), th(5, stack + 8, 0)};
    struct prof_thread_sample s2[] = {th(1, alpha, 15), th(4, VDSO_BASE + 0x20, 40),
                                      th(5, stack + 16, 3)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1), SAMPLE(3, s2)};
    struct prof_map maps[] = {
        whole_map(1, "libmissing-xyz.so", lib, 0x10000), whole_map(1, "prog", BASE, MAP_SIZE),
        whole_map(1, "[vdso]", VDSO_BASE, 0x2000), whole_map(1, "[stack]", stack, 0x21000)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 3, maps, 4, dirs, 1, &fp);

    const struct flat_row *r = row(&fp, FLAT_UNMAPPED, FLAT_UNMAPPED);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 20);
    /* A binary that is nowhere: one row for all its PCs. */
    r = row(&fp, "libmissing-xyz.so", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 30);
    /* The vDSO without a captured image, and a pseudo file. */
    r = row(&fp, "[vdso]", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 40);
    cr_expect_eq(row(&fp, "[stack]", FLAT_UNKNOWN)->cpu_ns, 3);
    /* The program's load base is its ELF header, in no function. */
    r = row(&fp, "prog", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 1);
    cr_expect_eq(r->cpu_ns, 10);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 5);
    flat_profile_free(&fp);

    /* The missing binary is reported once, pseudo files not at all. */
    const char *err = captured_stderr();
    const char *first = strstr(err, "libmissing-xyz.so");
    cr_assert_not_null(first);
    cr_expect_null(strstr(first + 1, "libmissing-xyz.so"));
    cr_expect_null(strstr(err, "vdso"));
    cr_expect_null(strstr(err, "stack"));
}

/* --- finding binaries ---------------------------------------------------- */

/* A second build of "prog" with the same layout, where fp_alpha is called
 * fp_omega, in tmpdir/other. */
static void build_other_prog(void)
{
    char *other = xstrdup(prog_src);
    for (char *p = other; (p = strstr(p, "fp_alpha")) != NULL;)
        memcpy(p, "fp_omega", 8);
    write_file("other.c", other);
    free(other);
    sh("mkdir -p other && cc -O1 -fno-pie -no-pie -o other/prog other.c");
    cr_assert_eq(nm_addr("other/prog", "fp_omega"), nm_addr("bin/prog", "fp_alpha"));
}

Test(flat_profile, search_dirs_are_tried_in_order)
{
    build_other_prog();
    sh("mkdir notfile && mkdir notfile/prog");
    char *otherdir = tmp_path("other"), *notfile = tmp_path("notfile");
    struct prof_thread_sample s0[] = {th(1, pc_in("bin/prog", "fp_alpha"), 0)};
    struct prof_thread_sample s1[] = {th(1, pc_in("bin/prog", "fp_alpha"), 7)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1)};
    struct prof_map maps[] = {whole_map(1, "prog", BASE, MAP_SIZE)};
    struct flat_profile fp;

    /* A directory named like the binary is passed over. */
    const char *bin_first[] = {notfile, bindir, otherdir};
    compute(samples, 2, maps, 1, bin_first, 3, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 7);
    cr_expect_null(find_row(&fp, "prog", "fp_omega"));
    flat_profile_free(&fp);

    const char *other_first[] = {otherdir, bindir};
    compute(samples, 2, maps, 1, other_first, 2, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 7);
    cr_expect_null(find_row(&fp, "prog", "fp_alpha"));
    flat_profile_free(&fp);
    free(otherdir);
    free(notfile);
}

Test(flat_profile, absolute_path_needs_no_search_dir_and_rows_use_the_base_name)
{
    build_other_prog();
    char *abs = tmp_path("bin/prog");
    struct prof_thread_sample s0[] = {th(1, pc_in("bin/prog", "fp_alpha"), 0)};
    struct prof_thread_sample s1[] = {th(1, pc_in("bin/prog", "fp_alpha"), 3)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1)};
    struct prof_map maps[] = {whole_map(1, abs, BASE, MAP_SIZE)};
    struct flat_profile fp;
    compute(samples, 2, maps, 1, NULL, 0, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 3);
    flat_profile_free(&fp);

    /* The recorded path wins over a search directory holding another
     * "prog"; once it is gone, the search directory is used. */
    char *otherdir = tmp_path("other");
    const char *dirs[] = {otherdir};
    compute(samples, 2, maps, 1, dirs, 1, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 3);
    flat_profile_free(&fp);
    sh("rm bin/prog");
    compute(samples, 2, maps, 1, dirs, 1, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 3);
    flat_profile_free(&fp);
    free(otherdir);
    free(abs);
}

Test(flat_profile, the_recorded_build_id_picks_the_build_that_ran)
{
    build_other_prog();
    /* The map says other/prog, but with bin/prog's build-id: other/prog was
     * rebuilt since, and the build that ran is in the search directory. */
    char *abs = tmp_path("other/prog");
    struct prof_map maps[] = {whole_map(1, abs, BASE, MAP_SIZE)};
    maps[0].build_id_len = (uint8_t)read_build_id("bin/prog", maps[0].build_id);
    uint8_t other_id[PROF_BUILD_ID_MAX];
    size_t other_len = read_build_id("other/prog", other_id);
    cr_assert(other_len != maps[0].build_id_len ||
              memcmp(other_id, maps[0].build_id, other_len) != 0);

    struct prof_thread_sample s0[] = {th(1, pc_in("bin/prog", "fp_alpha"), 0)};
    struct prof_thread_sample s1[] = {th(1, pc_in("bin/prog", "fp_alpha"), 4)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 2, maps, 1, dirs, 1, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 4);
    flat_profile_free(&fp);

    /* Without the right build anywhere, the wrong one is used, with a
     * warning naming it. */
    compute(samples, 2, maps, 1, NULL, 0, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 4);
    flat_profile_free(&fp);
    cr_expect_not_null(strstr(captured_stderr(), "build-id"));
    free(abs);
}

/* --- native maps ---------------------------------------------------------- */

Test(flat_profile, segment_maps_with_file_offsets_resolve_pie_and_libraries)
{
    write_file("lib.c", lib_src);
    sh("cc -O1 -fPIE -pie -o bin/pie prog.c && cc -O1 -shared -fPIC -o bin/libfp.so lib.c");
    char *pie = tmp_path("bin/pie"), *lib = tmp_path("bin/libfp.so");
    struct prof_map maps[40];
    size_t n = segment_maps(1, "bin/pie", pie, BASE, 0, maps, 16);
    n += segment_maps(1, "bin/libfp.so", lib, LIB_BASE, 0, maps + n, 16);
    /* Anonymous memory right after the library, as the heap would be. */
    uint64_t heap = maps[n - 1].end;
    maps[n++] = (struct prof_map){.pid = 1, .start = heap, .end = heap + PAGE, .path = ""};
    /* The code is not in the first map: the file offsets matter. */
    bool exec_at_offset = false;
    for (size_t i = 0; i < n; i++)
        exec_at_offset |= (maps[i].perms & 4) && maps[i].offset != 0;
    cr_assert(exec_at_offset, "the linker put the code at file offset 0; nothing is tested");

    uint64_t alpha = pc_at("bin/pie", "fp_alpha", BASE);
    uint64_t gamma = pc_at("bin/pie", "fp_gamma", BASE);
    uint64_t one = pc_at("bin/libfp.so", "fp_lib_one", LIB_BASE);
    uint64_t two = pc_at("bin/libfp.so", "fp_lib_two", LIB_BASE);
    uint64_t anon = heap + 16;
    struct prof_thread_sample s0[] = {th(1, alpha, 0), th(2, one, 0)};
    struct prof_thread_sample s1[] = {th(1, gamma, 100), th(2, two, 1000)};
    struct prof_thread_sample s2[] = {th(1, alpha, 300), th(2, anon, 5000)};
    struct prof_sample samples[] = {SAMPLE(10, s0), SAMPLE(20, s1), SAMPLE(30, s2)};
    struct flat_profile fp;
    compute(samples, 3, maps, n, NULL, 0, &fp);
    cr_expect_eq(row(&fp, "pie", "fp_gamma")->cpu_ns, 100);
    cr_expect_eq(row(&fp, "pie", "fp_alpha")->cpu_ns, 200);
    cr_expect_eq(row(&fp, "pie", "fp_alpha")->samples, 2);
    cr_expect_eq(row(&fp, "libfp.so", "fp_lib_one")->samples, 1);
    cr_expect_eq(row(&fp, "libfp.so", "fp_lib_two")->cpu_ns, 1000);
    cr_expect_eq(row(&fp, FLAT_ANON, FLAT_UNKNOWN)->cpu_ns, 4000);
    flat_profile_free(&fp);
    free(pie);
    free(lib);
}

Test(flat_profile, maps_follow_exec_and_belong_to_their_process)
{
    build_other_prog();
    char *prog = tmp_path("bin/prog"), *other = tmp_path("other/prog");
    /* Non-PIE: loaded where it was linked. */
    uint64_t base = first_load_vaddr("bin/prog");
    uint64_t pc = pc_at("bin/prog", "fp_alpha", base);
    struct prof_map maps[40];
    /* Process 1 runs bin/prog until it execs other/prog at time 50;
     * process 2 runs other/prog all along. */
    size_t n = segment_maps(1, "bin/prog", prog, base, 0, maps, 16);
    for (size_t i = 0; i < n; i++)
        maps[i].unmap_ns = 50;
    n += segment_maps(1, "other/prog", other, base, 50, maps + n, 16);
    n += segment_maps(2, "other/prog", other, base, 0, maps + n, 16);

    struct prof_thread_sample s0[] = {th_pid(1, 1, pc, 0), th_pid(2, 2, pc, 0)};
    struct prof_thread_sample s1[] = {th_pid(1, 1, pc, 10), th_pid(2, 2, pc, 1)};
    struct prof_thread_sample s2[] = {th_pid(1, 1, pc, 30), th_pid(2, 2, pc, 2)};
    struct prof_thread_sample s3[] = {th_pid(1, 1, pc, 70), th_pid(2, 2, pc, 3)};
    struct prof_sample samples[] = {SAMPLE(10, s0), SAMPLE(49, s1), SAMPLE(50, s2), SAMPLE(60, s3)};
    struct flat_profile fp;
    compute(samples, 4, maps, n, NULL, 0, &fp);
    /* Process 1: 10 before the exec, 20 + 40 after it; process 2: 3. */
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 10);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->samples, 2);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 63);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->samples, 6);
    flat_profile_free(&fp);

    /* A sample of a process with no maps, and one from before any map. */
    struct prof_thread_sample t0[] = {th_pid(3, 3, pc, 0), th_pid(2, 2, pc, 0)};
    struct prof_thread_sample t1[] = {th_pid(3, 3, pc, 5), th_pid(2, 2, pc, 6)};
    struct prof_sample early[] = {SAMPLE(0, t0), SAMPLE(0, t1)};
    for (size_t i = 0; i < n; i++)
        maps[i].time_ns += 1;
    compute(early, 2, maps, n, NULL, 0, &fp);
    cr_expect_eq(row(&fp, FLAT_UNMAPPED, FLAT_UNMAPPED)->cpu_ns, 11);
    flat_profile_free(&fp);
    free(prog);
    free(other);
}

Test(flat_profile, the_latest_of_overlapping_maps_wins)
{
    build_other_prog();
    char *prog = tmp_path("bin/prog"), *other = tmp_path("other/prog");
    /* Never unmapped, but recorded again at time 30 for another file (a
     * reader that did not see the replacement): from then on the later
     * record holds. */
    struct prof_map maps[] = {whole_map(1, prog, BASE, MAP_SIZE),
                              whole_map(1, other, BASE, MAP_SIZE)};
    maps[1].time_ns = 30;
    uint64_t pc = pc_in("bin/prog", "fp_alpha");
    struct prof_thread_sample s0[] = {th(1, pc, 0)};
    struct prof_thread_sample s1[] = {th(1, pc, 2)};
    struct prof_thread_sample s2[] = {th(1, pc, 7)};
    struct prof_sample samples[] = {SAMPLE(10, s0), SAMPLE(20, s1), SAMPLE(40, s2)};
    struct flat_profile fp;
    compute(samples, 3, maps, 2, NULL, 0, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 2);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 5);
    flat_profile_free(&fp);
    free(prog);
    free(other);
}

/* --- the vDSO ------------------------------------------------------------- */

static uint8_t *slurp(const char *name, size_t *size)
{
    char *path = tmp_path(name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    struct stat st;
    cr_assert_eq(fstat(fileno(f), &st), 0);
    uint8_t *data = xmalloc((size_t)st.st_size);
    cr_assert_eq(fread(data, 1, (size_t)st.st_size, f), (size_t)st.st_size);
    fclose(f);
    free(path);
    *size = (size_t)st.st_size;
    return data;
}

Test(flat_profile, vdso_symbols_come_from_the_captured_image)
{
    /* A shared object stands in for the kernel's vDSO image. */
    write_file("vdso.c", "__attribute__((noinline)) long fake_vdso_gettime(long x)"
                         " { return x * 11; }\n"
                         "__attribute__((noinline)) long fake_vdso_getcpu(long x)"
                         " { return x - 1; }\n");
    sh("cc -O1 -shared -fPIC -nostdlib -o vdso.so vdso.c");
    size_t size;
    uint8_t *data = slurp("vdso.so", &size);
    uint64_t gettime = VDSO_BASE + nm_addr("vdso.so", "fake_vdso_gettime") + 1;
    uint64_t getcpu = VDSO_BASE + nm_addr("vdso.so", "fake_vdso_getcpu") + 1;

    /* Process 1's image is found by pid and start; process 2's vDSO (at
     * another address) has no image of its own and uses process 1's. */
    const uint64_t other_base = VDSO_BASE + 0x100000;
    struct prof_image images[] = {
        {.pid = 1, .start = VDSO_BASE, .name = "[vdso]", .data = data, .size = size}};
    struct prof_map maps[] = {whole_map(1, "[vdso]", VDSO_BASE, 0x10000),
                              whole_map(2, "[vdso]", other_base, 0x10000)};
    struct prof_thread_sample s0[] = {th(1, gettime, 0),
                                      th_pid(2, 2, getcpu - VDSO_BASE + other_base, 0)};
    struct prof_thread_sample s1[] = {th(1, gettime, 25),
                                      th_pid(2, 2, getcpu - VDSO_BASE + other_base, 8)};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1)};
    struct profile p = {.maps = maps,
                        .nmaps = 2,
                        .images = images,
                        .nimages = 1,
                        .samples = samples,
                        .nsamples = 2};
    struct flat_profile fp;
    cr_assert_eq(flat_profile_compute(&p, NULL, &fp), 0);
    expect_consistent(&fp);
    cr_expect_eq(row(&fp, "[vdso]", "fake_vdso_gettime")->cpu_ns, 25);
    cr_expect_eq(row(&fp, "[vdso]", "fake_vdso_getcpu")->cpu_ns, 8);
    flat_profile_free(&fp);

    /* An image that is not ELF names nothing, but its samples stay. */
    memset(data, 0, 16);
    cr_assert_eq(flat_profile_compute(&p, NULL, &fp), 0);
    expect_consistent(&fp);
    cr_expect_eq(row(&fp, "[vdso]", FLAT_UNKNOWN)->cpu_ns, 33);
    flat_profile_free(&fp);
    free(data);
}

/* --- system calls ---------------------------------------------------------- */

Test(flat_profile, threads_blocked_in_a_system_call_are_the_kernels)
{
    uint64_t alpha = pc_in("bin/prog", "fp_alpha");
    struct prof_thread_sample futex = th(1, alpha, 100);
    futex.flags = PROF_THREAD_IN_SYSCALL;
    futex.syscall = SYS_futex;
    struct prof_thread_sample nanosleep = th(2, alpha, 40);
    nanosleep.flags = PROF_THREAD_IN_SYSCALL;
    nanosleep.syscall = SYS_nanosleep;
    struct prof_thread_sample unnamed = th(3, alpha, 9);
    unnamed.flags = PROF_THREAD_IN_SYSCALL;
    unnamed.syscall = 99999;
    /* The flag without a number, and a number without the flag: the PC. */
    struct prof_thread_sample no_number = th(4, alpha, 5);
    no_number.flags = PROF_THREAD_IN_SYSCALL;
    struct prof_thread_sample no_flag = th(5, alpha, 6);
    no_flag.syscall = SYS_futex;

    struct prof_thread_sample s0[] = {th(1, alpha, 0), th(2, alpha, 0), th(3, alpha, 0),
                                      th(4, alpha, 0), th(5, alpha, 0)};
    struct prof_thread_sample s1[] = {futex, nanosleep, unnamed, no_number, no_flag};
    struct prof_sample samples[] = {SAMPLE(1, s0), SAMPLE(2, s1)};
    struct prof_map maps[] = {whole_map(1, "prog", BASE, MAP_SIZE)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 2, maps, 1, dirs, 1, &fp);
    cr_expect_eq(row(&fp, FLAT_KERNEL, "[syscall futex]")->cpu_ns, 100);
    cr_expect_eq(row(&fp, FLAT_KERNEL, "[syscall nanosleep]")->cpu_ns, 40);
    cr_expect_eq(row(&fp, FLAT_KERNEL, "[syscall 99999]")->cpu_ns, 9);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 11);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->samples, 7);
    flat_profile_free(&fp);
}

/* --- totals --------------------------------------------------------------- */

Test(flat_profile, totals_come_from_the_recorder_or_the_samples)
{
    struct prof_thread_sample s0[] = {th(1, 0x10, 0)};
    struct prof_thread_sample s1[] = {th(1, 0x10, 5)};
    struct prof_sample samples[] = {SAMPLE(1000000000, s0), SAMPLE(3500000000, s1)};
    struct profile p = {.samples = samples, .nsamples = 2, .frequency = 250};
    p.totals = (struct prof_totals){
        .wall_ns = 4000000000, .latency_ns = 300000, .samples = 3, .ideal_samples = 1000};
    p.has_totals = true;
    struct flat_profile fp;
    cr_assert_eq(flat_profile_compute(&p, NULL, &fp), 0);
    cr_expect(fp.has_totals);
    cr_expect_eq(fp.wall_ns, p.totals.wall_ns);
    cr_expect_eq(fp.latency_ns, p.totals.latency_ns);
    cr_expect_eq(fp.recorded_samples, p.totals.samples);
    cr_expect_eq(fp.ideal_samples, p.totals.ideal_samples);
    cr_expect_eq(fp.samples, 2);
    cr_expect(fabs(fp.frequency - p.frequency) < 1e-9);
    cr_expect_eq(row(&fp, FLAT_UNMAPPED, FLAT_UNMAPPED)->cpu_ns, 5);
    flat_profile_free(&fp);

    /* A recorder that never finished: the span of the samples' times. */
    p.has_totals = false;
    p.truncated = true;
    cr_assert_eq(flat_profile_compute(&p, NULL, &fp), 0);
    cr_expect_not(fp.has_totals);
    cr_expect(fp.truncated);
    cr_expect_eq(fp.wall_ns, samples[1].time_ns - samples[0].time_ns);
    cr_expect_eq(fp.latency_ns, 0);
    cr_expect_eq(fp.recorded_samples, 2);
    flat_profile_free(&fp);
}
