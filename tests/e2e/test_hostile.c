/*
 * test_hostile.c - inputs an attacker, or bad luck, hands to ptprof, run
 * through the real binary (and so, in the ASan+UBSan pass of make check,
 * through the sanitizers): a profile with no rows and a stripped program
 * with no code symbols through every command.  Every run must end with
 * the documented exit code and no sanitizer report.
 */
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_FMT "status: %s\n--- stdout ---\n%.2000s\n--- stderr ---\n%.3000s"
#define RUN_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err

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

TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 300);

static char *path_in(const char *name)
{
    return test_path(dir, name);
}

/* ptprof ARGS... (NULL-terminated) with a time limit; the caller frees. */
static void ptprof(struct spawn_result *res, const char *const *args, double timeout_s)
{
    char *exe = build_ptprof();
    cr_assert(access(exe, X_OK) == 0, "%s is missing: run make", exe);
    const char *argv[40];
    size_t n = 0;
    argv[n++] = exe;
    for (size_t i = 0; args[i] && n < 39; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .timeout_s = timeout_s};
    spawn_run(&o, res);
    free(exe);
}

/* A sanitizer prints its report on stderr and ends the process with a
 * non-zero status; the status alone could be ptprof's own exit 2. */
static void expect_no_sanitizer_report(const struct spawn_result *res, const char *what)
{
    cr_expect_null(strstr(res->err, "runtime error"), "%s: UBSan: %s", what, res->err);
    cr_expect_null(strstr(res->err, "AddressSanitizer"), "%s: ASan: %s", what, res->err);
    cr_expect_null(strstr(res->err, "LeakSanitizer"), "%s: LSan: %s", what, res->err);
}

/* Run ptprof ARGS and require exit code WANT and no sanitizer report. */
static void expect_exit(int want, const char *const *args)
{
    struct spawn_result res;
    ptprof(&res, args, 120);
    char what[256];
    snprintf(what, sizeof(what), "ptprof %s %s %s", args[0], args[1] ? args[1] : "",
             args[1] && args[2] ? args[2] : "");
    cr_expect_eq(spawn_exit_code(res.status), want, "%s: " RUN_FMT, what, RUN_ARGS(&res));
    expect_no_sanitizer_report(&res, what);
    spawn_result_free(&res);
}

/* Every analysing command, every writer and every reader on PROFILE;
 * NO_CACHE adds --no-cache where symbols are read.  A flame graph of a
 * profile without CPU time has nothing to draw: exit FLAME_EXIT. */
static void every_command(const char *profile, bool no_cache, int flame_exit)
{
    const char *nc = no_cache ? "--no-cache" : NULL;
    char *html = path_in("r.html"), *svg = path_in("f.svg"), *tl = path_in("t.svg"),
         *pbin = path_in("p.pbin");
    expect_exit(0, (const char *[]){"report", profile, nc, NULL});
    expect_exit(0, (const char *[]){"report", "--format", "csv", profile, nc, NULL});
    expect_exit(0, (const char *[]){"report", "--format", "json", "--tree", profile, nc, NULL});
    expect_exit(0, (const char *[]){"report", "--html", html, profile, profile, nc, NULL});
    expect_exit(0, (const char *[]){"compare", profile, profile, nc, NULL});
    expect_exit(0, (const char *[]){"timeline", "-o", tl, profile, nc, NULL});
    expect_exit(flame_exit, (const char *[]){"flamegraph", "-o", svg, profile, nc, NULL});
    expect_exit(0, (const char *[]){"info", profile, NULL});
    expect_exit(0, (const char *[]){"dump", profile, NULL});
    expect_exit(0, (const char *[]){"postprocess", "-o", pbin, profile, nc, NULL});
    expect_exit(0, (const char *[]){"report", pbin, NULL});
    static const char *const formats[] = {"native", "gperftools", "gmon", "pprof", "folded", "csv"};
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "c.%s", formats[i]);
        char *out = path_in(name);
        expect_exit(0,
                    (const char *[]){"convert", profile, "-o", out, "--to", formats[i], nc, NULL});
        /* What we wrote is read back by every reader that reads it. */
        if (strcmp(formats[i], "csv") != 0 && strcmp(formats[i], "folded") != 0)
            expect_exit(0, (const char *[]){"info", out, NULL});
        free(out);
    }
    free(html);
    free(svg);
    free(tl);
    free(pbin);
}

Test(hostile, a_profile_without_rows_through_every_command)
{
    /* At 1 Hz /bin/true ends before the first sample: no rows at all. */
    char *prof = path_in("true.prof");
    struct spawn_result res;
    ptprof(&res, (const char *[]){"record", "-f", "1", "-o", prof, "--", "/bin/true", NULL}, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record: " RUN_FMT, RUN_ARGS(&res));
    expect_no_sanitizer_report(&res, "record");
    spawn_result_free(&res);

    ptprof(&res, (const char *[]){"report", "--format", "csv", prof, NULL}, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "report: " RUN_FMT, RUN_ARGS(&res));
    cr_assert_eq(strchr(res.out, '\n'), strrchr(res.out, '\n'),
                 "expected the header line only, no rows:\n%s", res.out);
    spawn_result_free(&res);
    every_command(prof, false, 2);
    free(prof);
}

Test(hostile, a_stripped_program_without_code_symbols)
{
    /* A copy of spin without .symtab; its .dynsym names only imports. */
    char *prog = build_workload("spin"), *copy = path_in("spin-stripped");
    char *strip = test_need_tool("strip"), *cp = test_need_tool("cp");
    struct spawn_result res;
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){cp, prog, copy, NULL}}, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "cp: %s", res.err);
    spawn_result_free(&res);
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){strip, "--strip-all", copy, NULL}},
              &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "strip: %s", res.err);
    spawn_result_free(&res);

    char *prof = path_in("stripped.prof");
    ptprof(&res, (const char *[]){"record", "-f", "200", "-o", prof, "--", copy, "1", NULL}, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);

    /* Reading the binary itself (not a cache) is where the empty symbol
     * table was sorted. */
    ptprof(&res, (const char *[]){"report", "--no-cache", "-k", "procedure", prof, NULL}, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "report: " RUN_FMT, RUN_ARGS(&res));
    expect_no_sanitizer_report(&res, "report --no-cache");
    cr_expect_not_null(strstr(res.out, "spin-stripped+0x"),
                       "code without symbols is named by its binary and offset:\n%s", res.out);
    spawn_result_free(&res);
    every_command(prof, true, 0);
    free(prof);
    free(copy);
    free(prog);
    free(strip);
    free(cp);
}
