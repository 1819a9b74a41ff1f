/*
 * test_record_counters.c - counters read with each sample (`record -e`,
 * the perf engine) become the profile's values: every thread sample
 * carries what each counter counted since the thread's previous sample, so
 * `report --metric page-faults` says which function took the faults
 * (tests/workloads/pagefaults.c touches a known number of fresh pages in
 * each function), and the values reach CSV, JSON, the HTML page and the
 * pprof export.  This VM has no hardware PMU: the software events are the
 * ones tested (the hardware path's error is tested in test_record_engine.c).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_native.h"
#include "report_csv.h"
#include "test_record_common.h"

/* Skips the test on a kernel that cannot read inherited counters with each
 * sample (before 6.12): record refuses -e there, which test_record_engine.c
 * checks. */
static void record_counters(struct recording *r, const char *const *args)
{
    record_native_engine(r, "perf", args, 0, 90);
}

static bool kernel_reads_counters(void)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof,      "record", "-e",   "page-faults", "-o",
                          "/dev/null", "--",     "true", NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 30};
    struct spawn_result res;
    spawn_run(&o, &res);
    bool ok = !(spawn_exit_code(res.status) == 1 && strstr(res.err, "Linux 6.12"));
    spawn_result_free(&res);
    free(ptprof);
    return ok;
}

/* The page faults of each of the workload's functions (the pages it says it
 * touched) are those its total says, within 5%; the function that touches
 * no new page gets next to none. */
Test(record_counters, page_faults_are_attributed_to_the_functions_that_take_them, .timeout = 120)
{
    if (!kernel_reads_counters())
        cr_skip_test("this kernel cannot read inherited counters with each sample");
    char *wl = build_workload("pagefaults");
    const char *args[] = {"-e", "page-faults", "-f", "2000", "--", wl, NULL};
    struct recording r;
    record_counters(&r, args);
    cr_assert_eq(r.prof.nvalue_types, 1, "value types: %zu\n" REC_FMT, r.prof.nvalue_types,
                 REC_ARGS(&r.run));
    cr_assert_str_eq(r.prof.value_types[0].name, "page-faults");
    double want_many = (double)parse_after(r.run.out, "fault_many ");
    double want_few = (double)parse_after(r.run.out, "fault_few ");

    const char *report[] = {r.path, "--metric", "page-faults", NULL};
    char *csv = report_csv(report);
    double many = report_csv_value(csv, "pagefaults:fault_many", "total_page-faults");
    double few = report_csv_value(csv, "pagefaults:fault_few", "total_page-faults");
    double none = report_csv_value(csv, "pagefaults:no_faults", "total_page-faults");
    double all = report_csv_value(csv, "pagefaults:main", "total_page-faults");
    cr_log_info("page faults: fault_many %.0f of %.0f, fault_few %.0f of %.0f, no_faults %.0f, "
                "main %.0f",
                many, want_many, few, want_few, none, all);
    cr_expect(fabs(many - want_many) <= 0.05 * want_many,
              "fault_many: %.0f page faults attributed, it took %.0f\n%.3000s", many, want_many,
              csv);
    cr_expect(fabs(few - want_few) <= 0.05 * want_few,
              "fault_few: %.0f page faults attributed, it took %.0f\n%.3000s", few, want_few, csv);
    cr_expect(isnan(none) || none <= 0.01 * (want_many + want_few),
              "no_faults: %.0f page faults attributed, it took none\n%.3000s", none, csv);
    free(csv);
    recording_free(&r);
    free(wl);
}

/* The values of a recording with counters reach every output: JSON, the
 * HTML page, the pprof export (one sample type per event, whose values read
 * back give each function the same page faults). */
Test(record_counters, counter_values_reach_json_html_and_pprof, .timeout = 120)
{
    if (!kernel_reads_counters())
        cr_skip_test("this kernel cannot read inherited counters with each sample");
    char *wl = build_workload("pagefaults"), *ptprof = build_ptprof();
    const char *args[] = {"-e", "page-faults,minor-faults", "--", wl, "4", NULL};
    struct recording r;
    record_counters(&r, args);

    const char *json_argv[] = {ptprof,     "report",       "--format", "json",
                               "--metric", "minor-faults", r.path,     NULL};
    struct spawn_opts jo = {.argv = json_argv, .timeout_s = 60};
    struct spawn_result json;
    spawn_run(&jo, &json);
    cr_assert_eq(spawn_exit_code(json.status), 0, REC_FMT, REC_ARGS(&json));
    cr_expect(strstr(json.out, "\"minor-faults\"") && strstr(json.out, "\"page-faults\""),
              "JSON without the counters' columns:\n%.3000s", json.out);
    spawn_result_free(&json);

    char *html = test_path(r.dir, "report.html");
    const char *html_argv[] = {ptprof,   "report", "--metric", "page-faults",
                               "--html", html,     r.path,     NULL};
    struct spawn_opts ho = {.argv = html_argv, .timeout_s = 60};
    struct spawn_result hres;
    spawn_run(&ho, &hres);
    cr_assert_eq(spawn_exit_code(hres.status), 0, REC_FMT, REC_ARGS(&hres));
    spawn_result_free(&hres);
    char *page = test_read_file(html, NULL);
    cr_assert_not_null(page);
    cr_expect(strstr(page, "page-faults"), "the HTML page does not show page-faults");
    free(page);

    char *pb = test_path(r.dir, "profile.pb.gz");
    const char *conv_argv[] = {ptprof, "convert", r.path, "-o", pb, NULL};
    struct spawn_opts co = {.argv = conv_argv, .timeout_s = 60};
    struct spawn_result conv;
    spawn_run(&co, &conv);
    cr_assert_eq(spawn_exit_code(conv.status), 0, REC_FMT, REC_ARGS(&conv));
    spawn_result_free(&conv);
    const char *native_args[] = {r.path, "--metric", "page-faults", NULL};
    const char *pprof_args[] = {pb, "--metric", "page-faults", NULL};
    char *native_csv = report_csv(native_args), *pprof_csv = report_csv(pprof_args);
    double native = report_csv_value(native_csv, "pagefaults:fault_many", "total_page-faults");
    double pprof = report_csv_value(pprof_csv, "pagefaults:fault_many", "total_page-faults");
    cr_log_info("fault_many: %.0f page faults in the profile, %.0f in its pprof export", native,
                pprof);
    cr_expect(native > 0 && pprof == native,
              "fault_many: %.0f page faults, %.0f after the pprof export\n%.2000s\n%.2000s", native,
              pprof, native_csv, pprof_csv);
    free(native_csv);
    free(pprof_csv);
    free(pb);
    free(html);
    recording_free(&r);
    free(ptprof);
    free(wl);
}

/* The scheduler's software counters reach a report too (counted in kernel
 * mode, which root may count): a thread that sleeps every 100 ms is
 * switched out at each sleep. */
Test(record_counters, context_switches_and_migrations_reach_a_report, .timeout = 120)
{
    if (!kernel_reads_counters())
        cr_skip_test("this kernel cannot read inherited counters with each sample");
    char *wl = build_workload("timeloop");
    const char *args[] = {"-e", "context-switches,cpu-migrations", "-f", "4000", "--", wl, "1.2",
                          NULL};
    struct recording r;
    record_counters(&r, args);
    const char *cs_args[] = {r.path, "--metric", "context-switches", NULL};
    char *csv = report_csv(cs_args);
    double cs = report_csv_value(csv, "timeloop:main", "total_context-switches");
    cr_log_info("context switches under timeloop's main: %.0f", cs);
    cr_expect(cs >= 5, "%.0f context switches under main (it sleeps 12 times)\n%.3000s", cs, csv);
    free(csv);
    const char *mig_args[] = {r.path, "--metric", "cpu-migrations", NULL};
    csv = report_csv(mig_args);
    cr_expect(strstr(csv, "total_cpu-migrations"), "no cpu-migrations column:\n%.2000s", csv);
    free(csv);
    recording_free(&r);
    free(wl);
}

/* As a user who may not count kernel events (kernel.perf_event_paranoid 2,
 * no CAP_PERFMON: a throwaway uid), an event the kernel counts in kernel
 * mode only would be a column of zeros: it is refused before the program
 * runs, in one line naming the setting.  (The tests run as root in CI.) */
Test(record_counters, kernel_only_events_are_refused_where_kernel_counting_is_not, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("not root: cannot switch to uid 65534 (the test needs CI's root)");
    char *dir = test_mkdtemp();
    cr_assert_eq(chmod(dir, 0777), 0);
    char *setpriv = test_need_tool("setpriv");
    char *built = build_ptprof(), *ptprof = test_path(dir, "ptprof");
    test_copy_executable(built, ptprof);
    char *profile = test_path(dir, "profile");
    const char *argv[] = {AS_NOBODY(setpriv), ptprof, "record", "-e",
                          "context-switches", "-o",   profile,  "--",
                          "/bin/echo",        "ran",  NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 30};
    struct spawn_result res;
    spawn_run(&o, &res);
    if (!strstr(res.err, "kernel mode only"))
        cr_skip_test("this user may count kernel events here (paranoid <= 1)");
    cr_expect_eq(spawn_exit_code(res.status), 1, REC_FMT, REC_ARGS(&res));
    cr_expect(strstr(res.err, "perf_event_paranoid") && !strchr(strchr(res.err, '\n') + 1, '\n'),
              "want one line naming kernel.perf_event_paranoid:\n" REC_FMT, REC_ARGS(&res));
    cr_expect(!strstr(res.out, "ran"), "the program ran");
    cr_expect(!test_file_exists(profile), "a profile was written");
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(ptprof);
    free(built);
    free(setpriv);
}
