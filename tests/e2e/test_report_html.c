/*
 * test_report_html.c - "ptprof report --html" on real recordings: the page
 * is well-formed (xmllint), renders in headless Chromium without a console
 * message, shows what the text report shows, sorts its table in the
 * browser, and with two runs compares them; one walk per file feeds the
 * table and both figures, so a profile on standard input gets them all.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/browser.h"
#include "../lib/spawn.h"
#include "../lib/xmlcheck.h"
#include "record_native.h"
#include "test_record_common.h"

static struct recording runs[2];
static char *dir;

static void record_two(void)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    char *workload = build_workload("callers");
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"-f", "500", "--", workload, "1", NULL};
        record_native(&runs[i], args, 0, 60);
    }
    free(workload);
    dir = test_mkdtemp();
}

static void cleanup(void)
{
    for (int i = 0; i < 2; i++)
        recording_free(&runs[i]);
    test_rmtree(dir);
    free(dir);
}

/* ptprof ARGS... must exit 0; returns its stdout (allocated). */
static char *ptprof_ok(const char *const *args)
{
    const char *argv[16];
    char *ptprof = build_ptprof();
    size_t n = 0;
    argv[n++] = ptprof;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof %s: %s\n%s", args[0],
                 spawn_status_text(res.status), res.err);
    char *out = strdup(res.out);
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

TestSuite(report_html, .init = record_two, .fini = cleanup, .timeout = 600);

Test(report_html, page_renders_and_shows_the_report)
{
    char *page = test_path(dir, "report.html");
    const char *args[] = {"report",    runs[0].path, runs[1].path, "-k",
                          "procedure", "--html",     page,         NULL};
    free(ptprof_ok(args));

    char *messages = NULL;
    cr_assert(xmlcheck_file(page, &messages), "%s is not well-formed: %s", page, messages);
    free(messages);
    size_t len;
    char *html = test_read_file(page, &len);
    cr_assert_not_null(html);
    /* The hot function, both files, the comparison of the second with the first. */
    cr_expect_not_null(strstr(html, ">hot</td>"), "no row for hot()");
    cr_expect_not_null(strstr(html, "<section id=\"comparison\">"));
    cr_expect_not_null(strstr(html, "mean of 2 runs"));
    /* The flame graph and the timeline, each a whole SVG document. */
    cr_expect_not_null(strstr(html, "<section id=\"flame\">"));
    cr_expect_not_null(strstr(html, "<section id=\"timeline\">"));
    cr_expect_eq(count_occurrences(html, "data:image/svg+xml;base64,PD94bWwg"), 2,
                 "two embedded SVG documents starting with <?xml");

    struct browser_opts o = {.path = page, .width = 1200, .height = 900};
    struct browser_page pg;
    browser_open(&o, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(browser_page_clean(&pg), "%s", d);
    cr_expect_not_null(strstr(pg.dom, "hot"), "%s", d);
    free(d);
    browser_page_free(&pg);
    free(html);
    free(page);
}

/* The table's script runs: #sort=3 sorts by samples, descending. */
Test(report_html, table_sorts_in_the_browser)
{
    char *page = test_path(dir, "sorted.html");
    const char *args[] = {"report", runs[0].path, "--html", page, NULL};
    free(ptprof_ok(args));
    struct browser_opts o = {.path = page, .suffix = "#sort=3"};
    struct browser_page pg;
    browser_open(&o, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(browser_page_clean(&pg), "%s", d);
    cr_assert_not_null(pg.dom, "%s", d);
    cr_expect_not_null(strstr(pg.dom, "aria-sort=\"descending\">samples</th>"),
                       "the samples column is not sorted: %s", d);
    cr_expect_null(strstr(pg.dom, "aria-sort=\"descending\">self %</th>"), "%s", d);
    /* Rows in descending order of their samples' data-v. */
    const char *body = strstr(pg.dom, "<tbody>");
    cr_assert_not_null(body, "%s", d);
    const char *end = strstr(body, "</tbody>");
    cr_assert_not_null(end);
    char *rows_text = strndup(body, (size_t)(end - body));
    double last = 1e300;
    int rows = 0;
    for (char *tr = strstr(rows_text, "<tr>"); tr; tr = strstr(tr + 4, "<tr>"), rows++) {
        char *cell = tr;
        for (int c = 0; c < 4; c++)
            cell = strstr(cell + 1, "<td");
        cr_assert_not_null(cell, "row %d has fewer than 4 cells", rows);
        const char *v = strstr(cell, "data-v=\"");
        cr_assert_not_null(v);
        double x = strtod(v + 8, NULL);
        cr_expect_leq(x, last, "row %d: %g after %g", rows, x, last);
        last = x;
    }
    free(rows_text);
    cr_expect_gt(rows, 2, "%s", d);
    free(d);
    browser_page_free(&pg);
    free(page);
}

Test(report_html, unwritable_destination_fails_and_leaves_nothing)
{
    const char *args[] = {"report", runs[0].path, "--html", "/nonexistent-dir/r.html", NULL};
    char *ptprof = build_ptprof();
    const char *argv[8] = {ptprof};
    for (int i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_expect_neq(spawn_exit_code(res.status), 0);
    cr_expect_not_null(strstr(res.err, "/nonexistent-dir/r.html"), "%s", res.err);
    spawn_result_free(&res);
    free(ptprof);
}

/* Each file is read once for the table, the flame graph and the timeline:
 * a profile piped in (it cannot be read twice) gets the whole page. */
Test(report_html, a_profile_on_standard_input_gets_every_figure)
{
    size_t len;
    char *profile = test_read_file(runs[0].path, &len);
    cr_assert_not_null(profile);
    char *page = test_path(dir, "stdin.html"), *exe = build_ptprof();
    struct spawn_opts o = {
        .argv = (const char *[]){exe, "report", "-", "-k", "procedure", "--html", page, NULL},
        .input = profile,
        .input_len = len,
        .timeout_s = 120,
    };
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s\n%s", spawn_status_text(res.status), res.err);
    cr_expect_eq(res.err_len, 0, "no message expected: %s", res.err);
    spawn_result_free(&res);
    char *html = test_read_file(page, NULL);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, ">hot</td>"), "no row for hot()");
    cr_expect_not_null(strstr(html, "<section id=\"flame\">"), "no flame graph");
    cr_expect_not_null(strstr(html, "<section id=\"timeline\">"), "no timeline");
    cr_expect_eq(count_occurrences(html, "data:image/svg+xml;base64,PD94bWwg"), 2,
                 "two embedded SVG documents");
    free(html);
    free(exe);
    free(page);
    free(profile);
}
