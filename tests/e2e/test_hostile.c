/*
 * test_hostile.c - inputs an attacker, or bad luck, hands to ptprof, run
 * through the real binary (and so, in the ASan+UBSan pass of make check,
 * through the sanitizers): a profile with no rows and a stripped program
 * with no code symbols through every command; decompression bombs and
 * endless inputs, stopped early (within the time limit, and under a memory
 * cap where the build allows one); files no reader claims, each answered
 * by the format it most resembles.  Every run must end with the documented
 * exit code, one message naming the file and the offset or line, and no
 * sanitizer report.
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
    char *prof = path_in("true.data");
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

    char *prof = path_in("stripped.data");
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

/* --- bombs and endless inputs ---------------------------------------------- */

/* The shell line that runs ptprof ARGS (a string for sh -c): under a
 * 512 MiB address-space cap when this build can start under one (not with
 * AddressSanitizer, which reserves terabytes). */
static char *capped(const char *args)
{
    char *exe = build_ptprof(), *sh = test_need_tool("sh"), *probe = NULL, *line = NULL;
    cr_assert_geq(asprintf(&probe, "ulimit -v 524288 && exec '%s' --version", exe), 0);
    struct spawn_result res;
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){sh, "-c", probe, NULL}}, &res);
    bool can_cap = spawn_exit_code(res.status) == 0;
    spawn_result_free(&res);
    cr_assert_geq(
        asprintf(&line, "(%sexec '%s' %s)", can_cap ? "ulimit -v 524288 && " : "", exe, args), 0);
    free(probe);
    free(sh);
    free(exe);
    return line;
}

/* sh -c SCRIPT must end with exit 2 within 60 s, its stderr holding each
 * of WANT (NULL-terminated) and no sanitizer report. */
static void expect_refused(const char *script, const char *const *want)
{
    char *sh = test_need_tool("sh");
    struct spawn_result res;
    spawn_run(
        &(struct spawn_opts){.argv = (const char *[]){sh, "-c", script, NULL}, .timeout_s = 60},
        &res);
    cr_expect_eq(spawn_exit_code(res.status), 2, "%s: " RUN_FMT, script, RUN_ARGS(&res));
    for (size_t i = 0; want[i]; i++)
        cr_expect_not_null(strstr(res.err, want[i]), "%s: no '%s' in: %s", script, want[i],
                           res.err);
    cr_expect_null(strstr(res.err, "out of memory"), "%s: %s", script, res.err);
    expect_no_sanitizer_report(&res, script);
    spawn_result_free(&res);
    free(sh);
}

Test(hostile, bombs_and_endless_inputs_stop_early)
{
    char *info_zero = capped("info /dev/zero"), *gz = NULL, *zst = NULL, *native = NULL;
    expect_refused(info_zero, (const char *[]){"/dev/zero: offset 0:", "zero bytes", NULL});

    /* 2 GiB of zeros, gzip-compressed on the fly into a pipe. */
    char *info_stdin = capped("info -");
    cr_assert_geq(asprintf(&gz, "head -c 2147483648 /dev/zero | gzip -1 | %s", info_stdin), 0);
    expect_refused(gz, (const char *[]){"<stdin>: decompressed offset 0:", "zero bytes", NULL});

    /* A small zstd file of 2 GiB of zeros. */
    char *bomb = path_in("bomb.zst"), *report_bomb = NULL;
    cr_assert_geq(asprintf(&report_bomb, "report '%s'", bomb), 0);
    char *run_bomb = capped(report_bomb);
    cr_assert_geq(
        asprintf(&zst, "head -c 2147483648 /dev/zero | zstd -q -1 -c > '%s' && %s", bomb, run_bomb),
        0);
    expect_refused(zst, (const char *[]){bomb, "decompressed offset 0:", NULL});

    /* A real profile's header, then endless zeros: no profile at all. */
    char *prof = path_in("true.data");
    struct spawn_result res;
    ptprof(&res, (const char *[]){"record", "-f", "1", "-o", prof, "--", "/bin/true", NULL}, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    char *report_stdin = capped("report -");
    cr_assert_geq(
        asprintf(&native, "(head -c 16 '%s'; cat /dev/zero) | zstd -q -1 | %s", prof, report_stdin),
        0);
    expect_refused(native, (const char *[]){"<stdin>: offset 16:", "type 0", NULL});

    free(info_zero);
    free(info_stdin);
    free(report_bomb);
    free(run_bomb);
    free(report_stdin);
    free(bomb);
    free(prof);
    free(gz);
    free(zst);
    free(native);
}

/* --- files no reader claims ------------------------------------------------- */

static char *write_in(const char *name, const void *data, size_t len)
{
    char *p = path_in(name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    return p;
}

static void expect_message(const char *file, const char *const *want, const char *const * not )
{
    struct spawn_result res;
    ptprof(&res, (const char *[]){"report", file, NULL}, 60);
    cr_expect_eq(spawn_exit_code(res.status), 2, "report %s: " RUN_FMT, file, RUN_ARGS(&res));
    for (size_t i = 0; want[i]; i++)
        cr_expect_not_null(strstr(res.err, want[i]), "%s: no '%s' in: %s", file, want[i], res.err);
    for (size_t i = 0; not &&not [i]; i++)
        cr_expect_null(strstr(res.err, not [i]), "%s: '%s' in: %s", file, not [i], res.err);
    expect_no_sanitizer_report(&res, file);
    spawn_result_free(&res);
}

Test(hostile, unclaimed_files_get_their_own_formats_error)
{
    /* Folded stacks with one bad line: the folded reader names the line. */
    static const char folded[] = "main;work;hot 70\nmain;work;cold 30\nmain;this line is bad\n";
    char *f = write_in("bad.folded", folded, sizeof(folded) - 1), *want_line = NULL;
    cr_assert_geq(asprintf(&want_line, "%s:3:", f), 0);
    expect_message(f, (const char *[]){want_line, NULL}, (const char *[]){"PMU", NULL});

    /* A pprof file whose first field is damaged: the pprof reader's offset. */
    char *prof = path_in("rec.data"), *pb = path_in("rec.pb.gz");
    struct spawn_result res;
    ptprof(&res,
           (const char *[]){"record", "-f", "500", "-o", prof, "--", "/bin/sh", "-c",
                            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", NULL},
           60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    ptprof(&res, (const char *[]){"convert", prof, "-o", pb, "--to", "pprof", NULL}, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "convert: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    char *gzip = test_need_tool("gzip");
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){gzip, "-dc", pb, NULL}}, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "gzip -dc: %s", res.err);
    cr_assert_gt(res.out_len, 64);
    cr_assert_eq((unsigned char)res.out[0], 0x0a, "pprof starts with its sample types");
    res.out[1] = 0x7f; /* the first sample type's length: past its end */
    char *damaged = write_in("damaged.pb", res.out, res.out_len);
    spawn_result_free(&res);
    expect_message(damaged, (const char *[]){"damaged.pb: offset ", "ValueType", NULL},
                   (const char *[]){"PMU", NULL});

    /* perf.data is read (interop/perf_data.h): a damaged one is named, with
     * where its reader stopped. */
    unsigned char perfdata[512] = "PERFILE2";
    perfdata[8] = 0x68;
    char *pd = write_in("perf.data", perfdata, sizeof(perfdata)), *how = NULL;
    cr_assert_geq(asprintf(&how, "%s: offset ", pd), 0);
    expect_message(pd, (const char *[]){"perf.data file", how, NULL},
                   (const char *[]){"trailing garbage", NULL});

    /* Text of no kind, and noise: resembles nothing. */
    static const char prose[] = "Dear reader,\nthis is a letter, not a profile.\n";
    char *letter = write_in("letter.txt", prose, sizeof(prose) - 1);
    expect_message(letter, (const char *[]){"offset 0: not a profile", NULL}, NULL);

    free(f);
    free(want_line);
    free(prof);
    free(pb);
    free(gzip);
    free(damaged);
    free(pd);
    free(how);
    free(letter);
}
