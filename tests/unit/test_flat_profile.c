/*
 * test_flat_profile.c - analyze/flat_profile.h on synthetic profiles held
 * in memory, resolved against a program built with cc at test time: CPU
 * time deltas, the first-appearance rule, unmapped PCs, binaries that
 * cannot be found, and the search path order.
 */
#include "analyze/flat_profile.h"
#include "symbol/elf_symtab.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the synthetic profile pretends the program was loaded. */
#define BASE 0x5555aaaa0000ULL
#define MAP_SIZE 0x100000ULL

static const char prog_src[] = "__attribute__((noinline)) int fp_alpha(int x) { return x * 3; }\n"
                               "__attribute__((noinline)) int fp_gamma(int x) { return x + 9; }\n"
                               "int main(int argc, char **argv)\n"
                               "{ (void)argv; return fp_alpha(argc) + fp_gamma(argc); }\n";

static char *tmpdir;
static char *bindir; /* tmpdir/bin, holding "prog" */
static uint64_t load_vaddr;

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

static void setup(void)
{
    cr_redirect_stderr();
    char tmpl[] = "/tmp/ptprof-flat-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    tmpdir = xstrdup(tmpl);
    bindir = xasprintf("%s/bin", tmpdir);
    write_file("prog.c", prog_src);
    /* Non-PIE, so its load_vaddr is not 0 and must be applied. */
    sh("mkdir bin && cc -O1 -fno-pie -no-pie -o bin/prog prog.c");
    struct elf_symtab tab;
    char *path = xasprintf("%s/prog", bindir);
    cr_assert_eq(elf_symtab_load(path, &tab), 0);
    load_vaddr = tab.load_vaddr;
    elf_symtab_free(&tab);
    free(path);
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

/* A PC a little way inside FUNCTION of FILE (in tmpdir) loaded at BASE. */
static uint64_t pc_in(const char *file, const char *function)
{
    return BASE + (nm_addr(file, function) - load_vaddr) + 2;
}

static struct pperf_map map(const char *label, uint64_t address, uint64_t size)
{
    struct pperf_map m = {.address = address, .size = size};
    snprintf(m.label, sizeof(m.label), "%s", label);
    return m;
}

static const struct flat_row *row(const struct flat_profile *fp, const char *binary,
                                  const char *function)
{
    for (size_t i = 0; i < fp->count; i++)
        if (strcmp(fp->rows[i].binary, binary) == 0 && strcmp(fp->rows[i].function, function) == 0)
            return &fp->rows[i];
    cr_assert_fail("no row %s %s", binary, function);
    return NULL;
}

static bool has_row(const struct flat_profile *fp, const char *binary, const char *function)
{
    for (size_t i = 0; i < fp->count; i++)
        if (strcmp(fp->rows[i].binary, binary) == 0 && strcmp(fp->rows[i].function, function) == 0)
            return true;
    return false;
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

static void compute(const struct pperf_sample *s, size_t n, const struct pperf_map *maps,
                    size_t nmaps, const char *const *dirs, size_t ndirs, struct flat_profile *fp)
{
    struct flat_options o = {.search_dirs = dirs, .nsearch_dirs = ndirs};
    cr_assert_eq(flat_profile_compute(s, n, maps, nmaps, &o, fp), 0);
    expect_consistent(fp);
}

Test(flat_profile, cpu_time_since_previous_appearance_goes_to_the_later_pc)
{
    uint64_t alpha = pc_in("bin/prog", "fp_alpha"), gamma = pc_in("bin/prog", "fp_gamma");
    struct pperf_thread s0[] = {{10, alpha, 1000}};
    struct pperf_thread s1[] = {{10, gamma, 4000}};
    struct pperf_thread s2[] = {{10, alpha, 10000}};
    struct pperf_sample samples[] = {
        {.wall_us = 1, .nthreads = 1, .threads = s0},
        {.wall_us = 2, .nthreads = 1, .threads = s1},
        {.wall_us = 3, .nthreads = 1, .threads = s2},
    };
    struct pperf_map maps[] = {map("prog", BASE, MAP_SIZE)};
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
    struct pperf_thread s0[] = {{30, gamma, 100}, {40, gamma, 9000}};
    struct pperf_thread s1[] = {{20, alpha, 5000000000ULL}, {40, alpha, 50}};
    struct pperf_thread s2[] = {{20, gamma, 5000000700ULL}, {30, alpha, 600}, {40, alpha, 80}};
    struct pperf_sample samples[] = {
        {.wall_us = 1, .nthreads = 2, .threads = s0},
        {.wall_us = 2, .nthreads = 2, .threads = s1},
        {.wall_us = 3, .nthreads = 3, .threads = s2},
    };
    struct pperf_map maps[] = {map("prog", BASE, MAP_SIZE)};
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
    const uint64_t lib = 0x7f0000000000ULL, vdso = 0x7fff00000000ULL;
    struct pperf_thread s0[] = {{1, alpha, 0}, {2, 0x1234, 0}, {3, lib + 0x10, 0}};
    struct pperf_thread s1[] = {
        {1, BASE, 10}, {2, 0x1240, 20}, {3, lib + 0x9000, 30}, {4, vdso + 0x10, 0}};
    struct pperf_thread s2[] = {{1, alpha, 15}, {4, vdso + 0x20, 40}};
    struct pperf_sample samples[] = {
        {.nthreads = 3, .threads = s0},
        {.nthreads = 4, .threads = s1},
        {.nthreads = 2, .threads = s2},
    };
    struct pperf_map maps[] = {map("libmissing-xyz.so", lib, 0x10000), map("prog", BASE, MAP_SIZE),
                               map("[vdso]", vdso, 0x2000)};
    const char *dirs[] = {bindir};
    struct flat_profile fp;
    compute(samples, 3, maps, 3, dirs, 1, &fp);

    const struct flat_row *r = row(&fp, FLAT_UNMAPPED, FLAT_UNMAPPED);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 20);
    /* A binary that is nowhere: one row for all its PCs. */
    r = row(&fp, "libmissing-xyz.so", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 30);
    r = row(&fp, "[vdso]", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 2);
    cr_expect_eq(r->cpu_ns, 40);
    /* The program's load base is its ELF header, in no function. */
    r = row(&fp, "prog", FLAT_UNKNOWN);
    cr_expect_eq(r->samples, 1);
    cr_expect_eq(r->cpu_ns, 10);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 5);
    flat_profile_free(&fp);

    /* The missing binary is reported once, the pseudo file not at all. */
    fflush(stderr);
    char err[8192];
    size_t n = fread(err, 1, sizeof(err) - 1, cr_get_redirected_stderr());
    err[n] = '\0';
    const char *first = strstr(err, "libmissing-xyz.so");
    cr_assert_not_null(first);
    cr_expect_null(strstr(first + 1, "libmissing-xyz.so"));
    cr_expect_null(strstr(err, "vdso"));
}

Test(flat_profile, search_dirs_are_tried_in_order)
{
    /* Two builds of "prog" with the same layout but other names. */
    char *other = xstrdup(prog_src);
    for (char *p = other; (p = strstr(p, "fp_alpha")) != NULL;)
        memcpy(p, "fp_omega", 8);
    write_file("other.c", other);
    free(other);
    sh("mkdir other notfile && mkdir notfile/prog && cc -O1 -fno-pie -no-pie -o other/prog "
       "other.c");
    cr_assert_eq(nm_addr("other/prog", "fp_omega"), nm_addr("bin/prog", "fp_alpha"));

    char *otherdir = xasprintf("%s/other", tmpdir);
    char *notfile = xasprintf("%s/notfile", tmpdir);
    struct pperf_thread s0[] = {{1, pc_in("bin/prog", "fp_alpha"), 0}};
    struct pperf_thread s1[] = {{1, pc_in("bin/prog", "fp_alpha"), 7}};
    struct pperf_sample samples[] = {{.nthreads = 1, .threads = s0},
                                     {.nthreads = 1, .threads = s1}};
    struct pperf_map maps[] = {map("prog", BASE, MAP_SIZE)};
    struct flat_profile fp;

    /* A directory named like the binary is passed over. */
    const char *bin_first[] = {notfile, bindir, otherdir};
    compute(samples, 2, maps, 1, bin_first, 3, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_alpha")->cpu_ns, 7);
    cr_expect_not(has_row(&fp, "prog", "fp_omega"));
    flat_profile_free(&fp);

    const char *other_first[] = {otherdir, bindir};
    compute(samples, 2, maps, 1, other_first, 2, &fp);
    cr_expect_eq(row(&fp, "prog", "fp_omega")->cpu_ns, 7);
    cr_expect_not(has_row(&fp, "prog", "fp_alpha"));
    flat_profile_free(&fp);
    free(otherdir);
    free(notfile);
}

Test(flat_profile, absolute_label_needs_no_search_dir)
{
    char *abs = xasprintf("%s/prog", bindir);
    struct pperf_thread s0[] = {{1, pc_in("bin/prog", "fp_gamma"), 0}};
    struct pperf_thread s1[] = {{1, pc_in("bin/prog", "fp_gamma"), 3}};
    struct pperf_sample samples[] = {{.nthreads = 1, .threads = s0},
                                     {.nthreads = 1, .threads = s1}};
    struct pperf_map maps[] = {map(abs, BASE, MAP_SIZE)};
    struct flat_profile fp;
    compute(samples, 2, maps, 1, NULL, 0, &fp);
    cr_expect_eq(row(&fp, abs, "fp_gamma")->cpu_ns, 3);
    flat_profile_free(&fp);
    free(abs);
}

Test(flat_profile, header_times_come_from_the_raw_profile)
{
    struct pperf_thread s0[] = {{1, 0x10, 0}};
    struct pperf_thread s1[] = {{1, 0x10, 5}};
    struct pperf_sample samples[] = {{.wall_us = 1000000, .nthreads = 1, .threads = s0},
                                     {.wall_us = 3500000, .nthreads = 1, .threads = s1}};
    struct pperf_profile p = {
        .wall_us = 4000000, .latency_us = 300, .nsamples = 2, .samples = samples};
    struct flat_profile fp;
    cr_assert_eq(flat_profile_from_pperf(&p, NULL, &fp), 0);
    cr_expect_eq(fp.wall_us, 4000000);
    cr_expect_eq(fp.latency_us, 300);
    cr_expect_eq(fp.samples, 2);
    cr_expect_eq(row(&fp, FLAT_UNMAPPED, FLAT_UNMAPPED)->cpu_ns, 5);
    flat_profile_free(&fp);

    /* No wall time in the header: the span of the samples' time stamps. */
    p.wall_us = 0;
    cr_assert_eq(flat_profile_from_pperf(&p, NULL, &fp), 0);
    cr_expect_eq(fp.wall_us, 2500000);
    flat_profile_free(&fp);
}
