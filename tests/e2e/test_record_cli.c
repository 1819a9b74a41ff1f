/*
 * test_record_cli.c - the command lines of "ptprof record" and "sampler":
 * where the profile goes (or does not), the target's own stdio, the -d
 * summary, -h, and refusal of bad input before anything runs.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_record_common.h"

/* Names in DIR other than "." and "..", comma-separated into BUF. */
static int list_dir(const char *dir, char *buf, size_t size)
{
    DIR *d = opendir(dir);
    cr_assert(d, "cannot list %s", dir);
    int n = 0;
    size_t used = 0;
    buf[0] = '\0';
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        n++;
        if (used < size) {
            int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", de->d_name);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    closedir(d);
    return n;
}

/* --- the target's stdio -------------------------------------------------- */

static void check_echo(bool sampler, bool with_output)
{
    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile", dir) > 0);
    char *bin = sampler ? build_sampler() : build_ptprof(), *echo = build_workload("echo");

    /* More than a pipe holds, so stdin and stdout must really stream. */
    size_t len = 200000;
    char *input = malloc(len + 1);
    cr_assert(input);
    for (size_t i = 0; i < len; i++)
        input[i] = (i % 61 == 60) ? '\n' : (char)('a' + i % 26);
    input[len] = '\0';

    const char *argv[10];
    size_t n = 0;
    argv[n++] = bin;
    if (!sampler) {
        argv[n++] = "record";
        argv[n++] = "--format";
        argv[n++] = "pperf";
    }
    if (with_output) {
        argv[n++] = "-o";
        argv[n++] = profile;
    }
    argv[n++] = "--";
    argv[n++] = echo;
    argv[n] = NULL;
    struct spawn_opts opts = {.argv = argv, .input = input, .input_len = len, .cwd = dir};
    struct spawn_result res;
    spawn_run(&opts, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert_eq(res.out_len, len, "stdout has %zu bytes, stdin had %zu", res.out_len, len);
    cr_assert(memcmp(res.out, input, len) == 0, "stdout differs from stdin");
    char marker[64];
    snprintf(marker, sizeof(marker), "echo: %zu bytes\n", len);
    cr_assert(strstr(res.err, marker), "the target's stderr is missing; " RUN_CONTEXT(&res));
    if (with_output) {
        struct pperf_profile prof;
        load_valid_profile(profile, &prof);
        pperf_free(&prof);
    }
    free(input);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(bin);
    free(echo);
}

Test(record_cli, record_keeps_the_targets_stdin_stdout_stderr)
{
    check_echo(false, true);
}

Test(record_cli, sampler_keeps_the_targets_stdin_stdout_stderr)
{
    check_echo(true, false);
}

/* --- where the profile goes ---------------------------------------------- */

Test(record_cli, sampler_without_output_writes_no_file)
{
    char *dir = test_mkdtemp(), *sampler = build_sampler(), *wl = build_workload("exitcode");
    const char *argv[] = {sampler, "--", wl, "0", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    char names[512];
    cr_assert_eq(list_dir(dir, names, sizeof(names)), 0, "files written: %s", names);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(sampler);
    free(wl);
}

Test(record_cli, sampler_with_output_writes_a_valid_profile)
{
    char *dir = test_mkdtemp(), *sampler = build_sampler(), *wl = build_workload("spin");
    char *profile = NULL;
    cr_assert(asprintf(&profile, "%s/out.pperf", dir) > 0);
    const char *argv[] = {sampler, "-o", profile, "-f", "500", "--", wl, "0.5", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    struct pperf_profile prof;
    load_valid_profile(profile, &prof);
    /* 0.5 s at 500 Hz is 250 samples; a fifth is proof enough of sampling. */
    cr_assert_geq(prof.nsamples, 50, "only %" PRIu64 " samples", prof.nsamples);
    cr_assert(prof.magic == 3 && prof.pmu_size == 8,
              "no PMU was asked for: the original's dummy (power, one double)");
    cr_assert(profile_map_for(&prof, "spin", prof.samples[prof.nsamples / 2].threads[0].pc),
              "the middle sample's PC is not inside the 'spin' map");
    pperf_free(&prof);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(sampler);
    free(wl);
}

Test(record_cli, sampler_help_prints_usage_and_succeeds)
{
    char *sampler = build_sampler();
    const char *argv[] = {sampler, "-h", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert(strstr(res.out, "-o") && strstr(res.out, "-f") && strstr(res.out, "-p"),
              "the usage text does not list -o, -f and -p; " RUN_CONTEXT(&res));
    spawn_result_free(&res);
    free(sampler);
}

Test(record_cli, record_without_output_writes_ptprof_data_in_the_working_directory)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *wl = build_workload("exitcode");
    char *profile = NULL;
    cr_assert(asprintf(&profile, "%s/ptprof.data", dir) > 0);
    const char *argv[] = {ptprof, RECORD_PPERF, "--", wl, "0", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    char names[512];
    int n = list_dir(dir, names, sizeof(names));
    cr_assert(n == 1 && strcmp(names, "ptprof.data") == 0, "want only ptprof.data, found: %s",
              names);
    struct pperf_profile prof;
    load_valid_profile(profile, &prof);
    cr_assert_gt(prof.nsamples, 0, "no samples");
    pperf_free(&prof);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(ptprof);
    free(wl);
}

/* --- -d ------------------------------------------------------------------ */

static const char *debug_line(const struct spawn_result *res, const char *key)
{
    const char *line = strstr(res->err, key);
    cr_assert(line, "no '%s' line in the -d summary; " RUN_FMT, key, RUN_ARGS(res));
    return line + strlen(key);
}

Test(record_cli, debug_summary_agrees_with_the_profile)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *wl = build_workload("signals");
    char *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile", dir) > 0);
    const char *argv[] = {ptprof, RECORD_PPERF, "-d", "-o",  profile, "-f",
                          "1000", "--",         wl,   "200", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    struct pperf_profile prof;
    load_valid_profile(profile, &prof);

    double wall, latency, per_sample, ideal, actual, requested, achieved, threads, signals;
    cr_assert_eq(sscanf(debug_line(&res, "[debug] wall time:"), "%lf s", &wall), 1);
    cr_assert_eq(sscanf(debug_line(&res, "[debug] latency:"), "%lf s total, %lf us per sample",
                        &latency, &per_sample),
                 2, RUN_CONTEXT(&res));
    cr_assert_eq(
        sscanf(debug_line(&res, "[debug] samples:"), "%lf ideal, %lf actual", &ideal, &actual), 2,
        RUN_CONTEXT(&res));
    cr_assert_eq(sscanf(debug_line(&res, "[debug] frequency:"), "%lf Hz requested, %lf Hz achieved",
                        &requested, &achieved),
                 2, RUN_CONTEXT(&res));
    cr_assert_eq(sscanf(debug_line(&res, "[debug] threads:"), "%lf seen", &threads), 1);
    cr_assert_eq(sscanf(debug_line(&res, "[debug] signals:"), "%lf passed", &signals), 1);

    double prof_wall = (double)prof.wall_us / 1e6;
    cr_assert(fabs(wall - prof_wall) <= 0.01 * prof_wall + 0.002,
              "summary wall %.3f s, profile %.3f s", wall, prof_wall);
    cr_assert(fabs(latency - (double)prof.latency_us / 1e6) <= 0.01 * latency + 0.002,
              "summary latency %.4f s, profile %.4f s", latency, (double)prof.latency_us / 1e6);
    cr_assert_eq((uint64_t)actual, prof.nsamples, "summary %.0f actual, profile %" PRIu64, actual,
                 prof.nsamples);
    cr_assert(fabs(ideal - wall * 1000) <= 0.02 * ideal + 2, "%.0f ideal for %.3f s at 1000 Hz",
              ideal, wall);
    cr_assert(fabs(requested - 1000) < 0.5, "requested %.1f Hz", requested);
    cr_assert(fabs(achieved - actual / wall) <= 0.02 * achieved + 1,
              "achieved %.1f Hz, but %.0f samples in %.3f s", achieved, actual, wall);
    cr_assert_eq((int)threads, 1, "one thread seen; " RUN_CONTEXT(&res));
    /* SIGUSR1 200 times; the blocked SIGUSR2 and SIGALRM are never delivered. */
    cr_assert_eq((int)signals, 200, "signals passed; " RUN_CONTEXT(&res));

    pperf_free(&prof);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(ptprof);
    free(wl);
}

/* --- bad input ----------------------------------------------------------- */

/* Run BIN (ptprof record or sampler) with OPTIONS ("@DIR" stands for the
 * test's temporary directory) before "-- exitcode 0 MARKER".  Unless OPTIONS names its own -o, "-o
 * EXISTING" comes first and must survive.  Expect exit 1, one stderr line naming PROBLEM (and ALSO,
 * when given), and no trace of the target having run. */
static void check_refused(bool sampler, const char *const *options, const char *problem,
                          const char *also)
{
    char *dir = test_mkdtemp(), *bin = sampler ? build_sampler() : build_ptprof();
    char *wl = build_workload("exitcode"), *marker = NULL, *existing = NULL;
    cr_assert(asprintf(&marker, "%s/marker", dir) > 0);
    cr_assert(asprintf(&existing, "%s/existing.pperf", dir) > 0);
    FILE *f = fopen(existing, "w");
    cr_assert(f);
    fputs("precious\n", f);
    fclose(f);

    bool own_output = false;
    for (size_t i = 0; options[i]; i++)
        own_output |= strcmp(options[i], "-o") == 0;
    const char *argv[24];
    size_t n = 0;
    argv[n++] = bin;
    if (!sampler) {
        argv[n++] = "record";
        argv[n++] = "--format";
        argv[n++] = "pperf";
    }
    if (!own_output) {
        argv[n++] = "-o";
        argv[n++] = existing;
    }
    for (size_t i = 0; options[i] && n < 18; i++)
        argv[n++] = strcmp(options[i], "@DIR") == 0 ? dir : options[i];
    argv[n++] = "--";
    argv[n++] = wl;
    argv[n++] = "0";
    argv[n++] = marker;
    argv[n] = NULL;

    struct spawn_result res;
    run_argv(&res, argv, NULL, dir, 30);
    cr_assert_eq(spawn_exit_code(res.status), 1, "want usage error 1; " RUN_CONTEXT(&res));
    cr_assert_eq(count_lines(res.err), 1, "want one line on stderr; " RUN_CONTEXT(&res));
    if (strcmp(problem, "@DIR") == 0)
        problem = dir;
    cr_assert(strstr(res.err, problem), "stderr does not name '%s'; " RUN_FMT, problem,
              RUN_ARGS(&res));
    if (also)
        cr_assert(strcasestr(res.err, also), "stderr does not mention '%s'; " RUN_FMT, also,
                  RUN_ARGS(&res));
    cr_assert_not(test_file_exists(marker), "the target ran despite the error");
    char *kept = test_read_file(existing, NULL);
    cr_assert(kept && strcmp(kept, "precious\n") == 0, "the existing output file was changed");
    char names[512];
    cr_assert_eq(list_dir(dir, names, sizeof(names)), 1, "files left behind: %s", names);

    free(kept);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(bin);
    free(wl);
    free(marker);
    free(existing);
}

Test(record_cli, unknown_option_is_refused)
{
    const char *opts[] = {"--bogus-option", NULL};
    check_refused(false, opts, "--bogus-option", NULL);
}

Test(record_cli, zero_frequency_is_refused)
{
    const char *opts[] = {"-f", "0", NULL};
    check_refused(false, opts, "0", "freq");
}

Test(record_cli, negative_frequency_is_refused)
{
    const char *opts[] = {"-f", "-5", NULL};
    check_refused(false, opts, "-5", "freq");
}

Test(record_cli, non_numeric_frequency_is_refused)
{
    const char *opts[] = {"-f", "abc", NULL};
    check_refused(false, opts, "abc", "freq");
}

Test(record_cli, too_high_frequency_is_refused)
{
    const char *opts[] = {"-f", "1e9", NULL};
    check_refused(false, opts, "1e9", "freq");
}

Test(record_cli, nan_frequency_is_refused)
{
    const char *opts[] = {"-f", "nan", NULL};
    check_refused(false, opts, "nan", "freq");
}

Test(record_cli, unknown_pmu_is_refused)
{
    const char *opts[] = {"-p", "nosuchpmu", NULL};
    check_refused(false, opts, "nosuchpmu", NULL);
}

Test(record_cli, unwritable_output_is_refused)
{
    const char *opts[] = {"-o", "/nonexistent-dir/x", NULL};
    check_refused(false, opts, "/nonexistent-dir/x", NULL);
}

Test(record_cli, output_that_is_a_directory_is_refused)
{
    const char *opts[] = {"-o", "@DIR", NULL};
    check_refused(false, opts, "@DIR", NULL);
}

Test(record_cli, sampler_refuses_unknown_option)
{
    const char *opts[] = {"--bogus-option", NULL};
    check_refused(true, opts, "--bogus-option", NULL);
}

Test(record_cli, sampler_refuses_bad_frequency)
{
    const char *opts[] = {"-f", "abc", NULL};
    check_refused(true, opts, "abc", "freq");
}

Test(record_cli, sampler_refuses_unknown_pmu)
{
    const char *opts[] = {"-p", "nosuchpmu", NULL};
    check_refused(true, opts, "nosuchpmu", NULL);
}
