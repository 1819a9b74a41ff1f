/*
 * test_flamegraph.c - "ptprof flamegraph" on real profiles, opened as a
 * person would: a recording of the callers workload and a libprofiler
 * (gperftools) profile give SVGs that xmllint accepts and that headless
 * Chromium draws (not blank) without a console message; the page's script
 * runs: a search (?s=) shows the same share as "ptprof report", a zoom
 * (?z=) stretches the chosen frame; a profile diffed against itself is
 * all neutral, and against a baseline with paths the profile lacks draws
 * them as removed time; hostile names cannot break the page; exit codes.
 */
#include "../lib/browser.h"
#include "../lib/spawn.h"
#include "../lib/xmlcheck.h"
#include "analyze/calltree.h"
#include "render/flamegraph_svg.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so"
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

TestSuite(flamegraph_e2e, .init = setup, .fini = teardown, .timeout = 400);

static char *path_in(const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

/* ptprof ARGS...; its result (caller frees). */
static void ptprof(struct spawn_result *res, const char *const *args, const char *const *env)
{
    char *exe = build_ptprof();
    cr_assert(access(exe, X_OK) == 0, "%s is missing: run make", exe);
    const char *argv[40];
    size_t n = 0;
    argv[n++] = exe;
    for (size_t i = 0; args[i] && n < 39; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 120};
    spawn_run(&o, res);
    free(exe);
}

static void ptprof_ok(struct spawn_result *res, const char *const *args)
{
    ptprof(res, args, NULL);
    cr_assert_eq(spawn_exit_code(res->status), 0, "ptprof %s: " RUN_FMT, args[0], RUN_ARGS(res));
}

static char *record_callers(const char *name)
{
    char *out = path_in(name), *prog = build_workload("callers");
    const char *args[] = {"record", "-o", out, "--", prog, "2", NULL};
    struct spawn_result r;
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    free(prog);
    return out;
}

static void expect_well_formed(const char *svg)
{
    cr_assert(xmlcheck_available(), "xmllint missing: scripts/install-deps --test");
    char *msg;
    cr_expect(xmlcheck_file(svg, &msg), "%s: xmllint: %s", svg, msg);
    free(msg);
}

/* Open SVG?SUFFIX in Chromium; the page must be clean (drawn, no message). */
static void open_clean(const char *svg, const char *suffix, struct browser_page *pg)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    struct browser_opts o = {.path = svg, .suffix = suffix, .width = 1200, .height = 700};
    browser_open(&o, pg);
    char *d = browser_page_describe(pg);
    cr_expect(browser_page_clean(pg), "%s%s: %s", svg, suffix ? suffix : "", d);
    free(d);
}

/* The depth-first index of the first frame named NAME in an SVG or DOM. */
static long frame_index(const char *svg, const char *name)
{
    const char *p = strstr(svg, "<g id=\"f\">");
    cr_assert_not_null(p);
    size_t nl = strlen(name);
    for (long i = 0; (p = strstr(p + 1, "<g")); i++) {
        const char *t = strstr(p, "<title>");
        if (!t)
            break;
        if (strncmp(t + 7, name, nl) == 0 && t[7 + nl] == '\n')
            return i;
    }
    return -1;
}

/* The rect of the first frame named NAME in the DOM: x, width, and the
 * frame's class attribute ("" when none). */
static bool frame_box(const char *dom, const char *name, double *x, double *w, char *cls,
                      size_t clen)
{
    char needle[256];
    snprintf(needle, sizeof(needle), "<title>%s\n", name);
    const char *t = strstr(dom, needle);
    if (!t)
        return false;
    const char *g = t;
    while (g > dom && strncmp(g, "<g", 2) != 0)
        g--;
    cls[0] = '\0';
    const char *end = strchr(g, '>'), *c = strstr(g, " class=\"");
    if (c && end && c < end)
        sscanf(c + 8, "%63[^\"]", cls);
    (void)clen;
    const char *r = strstr(t, "<rect ");
    return r && sscanf(r, "<rect x=\"%lf\" y=\"%*[^\"]\" width=\"%lf\"", x, w) == 2;
}

/* "ptprof report" share of FUNCTION's total in FILE, in percent. */
static double report_total_pct(const char *file, const char *function)
{
    const char *args[] = {"report", "-k",          "procedure", "--format", "csv", "--limit",
                          "100",    "--threshold", "0",         file,       NULL};
    struct spawn_result r;
    ptprof_ok(&r, args);
    int col = -1, i = 0;
    const char *line = r.out;
    for (const char *p = line; *p && *p != '\n'; i++) {
        size_t n = strcspn(p, ",\n");
        if (n == 9 && strncmp(p, "total_pct", 9) == 0)
            col = i;
        p += n;
        if (*p == ',')
            p++;
    }
    cr_assert_geq(col, 0, "%s", r.out);
    double pct = -1;
    size_t fl = strlen(function);
    for (line = strchr(line, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *p = line + 1;
        if (strncmp(p, function, fl) != 0 || p[fl] != ',')
            continue;
        for (int c = 0; c < col; c++)
            p = strchr(p, ',') + 1;
        pct = strtod(p, NULL);
        break;
    }
    spawn_result_free(&r);
    cr_assert_geq(pct, 0, "%s not in the report of %s", function, file);
    return pct;
}

Test(flamegraph_e2e, recording_draws_and_its_script_searches_and_zooms)
{
    char *prof = record_callers("callers.pbin"), *svg = path_in("callers.svg");
    const char *args[] = {"flamegraph", prof, "-o", svg, NULL};
    struct spawn_result r;
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    expect_well_formed(svg);
    size_t len;
    char *text = test_read_file(svg, &len);
    cr_assert_not_null(text);

    struct browser_page pg;
    open_clean(svg, NULL, &pg);
    cr_expect_gt(pg.stats.nonbg, 0.2, "frames cover the page: %.3f", pg.stats.nonbg);
    cr_expect_geq(pg.stats.colours, 8, "a colour per function");
    browser_page_free(&pg);

    /* Search: the share shown is hot's share in the report (nested matches
     * counted once: hot does not call itself, so its total). */
    double want = report_total_pct(prof, "hot");
    open_clean(svg, "?s=%5Ehot%24", &pg); /* ^hot$ */
    const char *m = strstr(pg.dom, "Matched: ");
    cr_assert_not_null(m, "no match share in the DOM:\n%.3000s", pg.dom);
    double shown = strtod(m + 9, NULL);
    cr_expect_float_eq(shown, want, 0.2, "search shows %.2f%%, report %.2f%%", shown, want);
    double x, w;
    char cls[64];
    cr_assert(frame_box(pg.dom, "hot", &x, &w, cls, sizeof(cls)));
    cr_expect(strstr(cls, "m"), "hot highlighted: class '%s'", cls);
    cr_assert(frame_box(pg.dom, "main", &x, &w, cls, sizeof(cls)));
    cr_expect_null(strstr(cls, "m"), "main not highlighted: class '%s'", cls);
    browser_page_free(&pg);

    /* Zoom on worker_main: it spans the width, a frame beside it is hidden,
     * its caller dimmed, and the reset button shows. */
    long k = frame_index(text, "worker_main");
    cr_assert_gt(k, 0, "no worker_main frame");
    char suffix[32];
    snprintf(suffix, sizeof(suffix), "?z=%ld", k);
    open_clean(svg, suffix, &pg);
    cr_assert(frame_box(pg.dom, "worker_main", &x, &w, cls, sizeof(cls)), "%.2000s", pg.dom);
    cr_expect_float_eq(x, 10, 0.05);
    cr_expect_float_eq(w, 1180, 0.05, "zoomed frame spans the width");
    cr_assert(frame_box(pg.dom, "main", &x, &w, cls, sizeof(cls)));
    cr_expect_str_eq(cls, "h", "main is beside worker_main: hidden");
    cr_assert(frame_box(pg.dom, "start_thread", &x, &w, cls, sizeof(cls)));
    cr_expect_str_eq(cls, "a", "start_thread called it: dimmed");
    cr_expect(strstr(pg.dom, "id=\"un\" x=\"10\" y=\"22\" style=\"display: inline;\""),
              "reset zoom shown");
    browser_page_free(&pg);
    free(text);
    free(svg);
    free(prof);
}

Test(flamegraph_e2e, diff_against_itself_is_neutral_and_icicle_to_stdout)
{
    char *prof = record_callers("a.pbin"), *svg = path_in("diff.svg");
    const char *args[] = {"flamegraph", prof, "--diff", prof, "-o", svg, NULL};
    struct spawn_result r;
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    expect_well_formed(svg);
    char *text = test_read_file(svg, NULL);
    size_t frames = 0, neutral = 0;
    for (const char *p = text; (p = strstr(p, "height=\"15\" fill=\"")); p++, frames++)
        neutral += strncmp(p + 18, "#f0f0f0", 7) == 0;
    cr_expect_gt(frames, 10);
    cr_expect_eq(neutral, frames, "every frame unchanged: %zu of %zu", neutral, frames);
    cr_expect(strstr(text, "Differential Flame Graph"));
    free(text);
    struct browser_page pg;
    open_clean(svg, NULL, &pg);
    browser_page_free(&pg);

    const char *args2[] = {"flamegraph", prof, "--icicle", "--metric", "wall", "-o", "-", NULL};
    ptprof_ok(&r, args2);
    char *msg;
    cr_expect(xmlcheck_string(r.out, r.out_len, &msg), "stdout: %s", msg);
    free(msg);
    cr_expect(strstr(r.out, "s wall, "), "wall time in the tooltips");
    cr_expect(strstr(r.out, ">Icicle Graph<"));
    spawn_result_free(&r);
    free(svg);
    free(prof);
}

static char *write_text(const char *name, const char *text)
{
    char *p = path_in(name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    cr_assert_geq(fputs(text, f), 0);
    cr_assert_eq(fclose(f), 0);
    return p;
}

/* Frames only in the baseline are drawn where they were, as removed time:
 * blue, dotted, as wide as their share of the baseline applied to the new
 * profile, and the search counts only the new profile's time. */
Test(flamegraph_e2e, diff_draws_what_only_the_baseline_has_as_removed_time)
{
    /* Baseline: gone (with a callee) holds half; now: fresh took a fifth. */
    char *base = write_text("base.folded", "main;a 50\nmain;gone;deeper 30\nmain;gone 20\n");
    char *now = write_text("now.folded", "main;a 80\nmain;fresh 20\n");
    char *svg = path_in("removed.svg");
    const char *args[] = {"flamegraph", now, "--diff", base, "-k", "procedure", "-o", svg, NULL};
    struct spawn_result r;
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    expect_well_formed(svg);
    char *text = test_read_file(svg, NULL);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "dotted: only in the baseline (removed time)"), "the legend says so");

    struct browser_page pg;
    open_clean(svg, NULL, &pg);
    double ax, aw, x, w, mx, mw;
    char cls[64];
    cr_assert(frame_box(pg.dom, "all", &ax, &aw, cls, sizeof(cls)), "%.2000s", pg.dom);
    cr_assert(frame_box(pg.dom, "gone", &x, &w, cls, sizeof(cls)), "gone is drawn: %.3000s",
              pg.dom);
    cr_expect_str_eq(cls, "rm", "gone is marked removed");
    /* 100 samples now, plus gone's 50 % of the baseline as 50 removed. */
    cr_expect_float_eq(w / aw, 50.0 / 150, 0.002, "gone: %g of %g px", w, aw);
    cr_assert(frame_box(pg.dom, "main", &mx, &mw, cls, sizeof(cls)));
    cr_expect_float_eq(x + w, mx + mw, 0.15, "gone ends where main ends, after its children");
    cr_assert(frame_box(pg.dom, "deeper", &x, &w, cls, sizeof(cls)), "gone's callee too");
    cr_expect_float_eq(w / aw, 30.0 / 150, 0.002);
    cr_assert(frame_box(pg.dom, "fresh", &x, &w, cls, sizeof(cls)));
    cr_expect_str_eq(cls, "", "fresh is in the new profile");
    cr_expect_float_eq(w / aw, 20.0 / 150, 0.002);
    /* What a person sees: a blue box in the screenshot. */
    cr_expect_geq(pg.stats.colours, 4, "red, blue and grey frames");
    const char *g = strstr(pg.dom, "<title>gone\n");
    cr_assert_not_null(g);
    cr_expect(strstr(g, "only in the baseline: 50 samples") == g + 12, "%.200s", g);
    const char *fill = strstr(g, "fill=\"#");
    cr_assert_not_null(fill);
    unsigned rr, gg, bb;
    cr_assert_eq(sscanf(fill + 7, "%2x%2x%2x", &rr, &gg, &bb), 3);
    cr_expect(bb == 255 && rr < 255, "removed time is blue: %.13s", fill);
    browser_page_free(&pg);

    /* The search counts the new profile's time only: fresh 20 %, gone 0. */
    open_clean(svg, "?s=fresh", &pg);
    const char *m = strstr(pg.dom, "Matched: ");
    cr_assert_not_null(m, "%.2000s", pg.dom);
    cr_expect_float_eq(strtod(m + 9, NULL), 20.0, 0.05, "%.20s", m);
    browser_page_free(&pg);
    open_clean(svg, "?s=gone", &pg);
    m = strstr(pg.dom, "Matched: ");
    cr_assert_not_null(m);
    cr_expect_float_eq(strtod(m + 9, NULL), 0.0, 0.01, "%.20s", m);
    browser_page_free(&pg);

    /* Zoom on the removed frame: it spans the width like any other. */
    long k = frame_index(text, "gone");
    cr_assert_gt(k, 0);
    char suffix[32];
    snprintf(suffix, sizeof(suffix), "?z=%ld", k);
    open_clean(svg, suffix, &pg);
    cr_assert(frame_box(pg.dom, "gone", &x, &w, cls, sizeof(cls)));
    cr_expect_float_eq(w, 1180, 0.05, "zoomed removed frame spans the width");
    cr_assert(frame_box(pg.dom, "fresh", &x, &w, cls, sizeof(cls)));
    cr_expect_str_eq(cls, "h", "fresh is beside it: hidden");
    browser_page_free(&pg);
    free(text);
    free(svg);
    free(now);
    free(base);
}

Test(flamegraph_e2e, gperftools_profile_from_libprofiler)
{
    cr_assert_eq(access(LIBPROFILER, R_OK), 0, "%s missing (scripts/install-deps)", LIBPROFILER);
    char *prof = path_in("callers.prof"), *svg = path_in("gperf.svg");
    char *env_out = NULL, *bin = build_workload("callers");
    cr_assert_geq(asprintf(&env_out, "CPUPROFILE=%s", prof), 0);
    const char *env[] = {"LD_PRELOAD=" LIBPROFILER, env_out, "CPUPROFILE_FREQUENCY=250", NULL};
    const char *argv[] = {bin, "2", NULL};
    struct spawn_opts so = {.argv = argv, .env = env, .timeout_s = 60};
    struct spawn_result r;
    spawn_run(&so, &r);
    cr_assert_eq(spawn_exit_code(r.status), 0, RUN_FMT, RUN_ARGS(&r));
    spawn_result_free(&r);

    const char *args[] = {"flamegraph", prof, "-o", svg, "-s", dir, NULL};
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    expect_well_formed(svg);
    char *text = test_read_file(svg, NULL);
    cr_expect_geq(frame_index(text, "hot"), 0, "hot drawn from the gperftools profile");
    cr_expect_geq(frame_index(text, "via_a"), 0, "with its caller");
    free(text);
    struct browser_page pg;
    open_clean(svg, "?s=via_", &pg);
    cr_expect(strstr(pg.dom, "Matched: "), "search ran");
    browser_page_free(&pg);
    free(env_out);
    free(bin);
    free(svg);
    free(prof);
}

Test(flamegraph_e2e, exit_codes)
{
    char *svg = path_in("x.svg"), *missing = path_in("missing.pbin");
    struct spawn_result r;
    const char *a1[] = {"flamegraph", missing, "-o", svg, NULL};
    ptprof(&r, a1, NULL);
    cr_expect_eq(spawn_exit_code(r.status), 2, RUN_FMT, RUN_ARGS(&r));
    cr_expect_not(test_file_exists(svg), "nothing written");
    spawn_result_free(&r);
    const char *a2[] = {"flamegraph", missing, "--metric", "power", NULL};
    ptprof(&r, a2, NULL);
    cr_expect_eq(spawn_exit_code(r.status), 1, RUN_FMT, RUN_ARGS(&r));
    cr_expect(strstr(r.err, "does not add up"), "%s", r.err);
    spawn_result_free(&r);
    const char *a3[] = {"flamegraph", NULL};
    ptprof(&r, a3, NULL);
    cr_expect_eq(spawn_exit_code(r.status), 1, RUN_FMT, RUN_ARGS(&r));
    spawn_result_free(&r);

    char *prof = record_callers("c.pbin");
    const char *a4[] = {"flamegraph", prof, "--metric", "energy", "-o", svg, NULL};
    ptprof(&r, a4, NULL);
    cr_expect_eq(spawn_exit_code(r.status), 2, RUN_FMT, RUN_ARGS(&r));
    cr_expect(strstr(r.err, "energy"), "%s", r.err);
    cr_expect_not(test_file_exists(svg), "nothing written");
    spawn_result_free(&r);
    const char *a5[] = {"flamegraph", prof, "--diff", missing, "-o", svg, NULL};
    ptprof(&r, a5, NULL);
    cr_expect_eq(spawn_exit_code(r.status), 2, RUN_FMT, RUN_ARGS(&r));
    spawn_result_free(&r);
    free(prof);
    free(missing);
    free(svg);
}

Test(flamegraph_e2e, hostile_names_cannot_break_the_page)
{
    /* Names as a hostile profile could carry them, through the renderer. */
    static const char *const names[] = {
        "</script><script>document.documentElement.setAttribute('data-pwned','1')</script>",
        "]]><script>document.documentElement.setAttribute('data-pwned','1')</script><![CDATA[",
        "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">",
        "a & b \" ' < >",
        "ctl\x01\x02\x1b bad\xff\xfe",
        "nl\nname",
    };
    struct key_spec spec;
    char err[64];
    cr_assert_eq(key_spec_parse("procedure", &spec, err, sizeof(err)), 0);
    struct strtab *keys = strtab_new();
    struct calltree *t = calltree_new(keys, &spec);
    struct walk_visitor v = calltree_visitor(t);
    uint32_t root = strtab_intern_str(keys, "main");
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        struct path_frame fr[2] = {{.key = strtab_intern_str(keys, names[i])}, {.key = root}};
        struct path p = {.nframes = 2, .frames = fr};
        double q[Q_COUNT] = {[Q_SAMPLES] = 1, [Q_CPU] = 0.1};
        struct walk_event e = {.path = &p, .q = q};
        v.sample(v.ctx, &e);
    }
    struct walk_totals wt = {0};
    calltree_add_run(t, &wt);
    calltree_finish(t, metric_builtin(METRIC_CPU));
    char *svg = path_in("hostile.svg");
    FILE *f = fopen(svg, "w");
    cr_assert_not_null(f);
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_CPU), .title = names[0]};
    cr_assert_eq(flamegraph_svg(f, t, NULL, &o), 0);
    fclose(f);
    calltree_free(t);
    strtab_free(keys);

    expect_well_formed(svg);
    struct browser_page pg;
    open_clean(svg, "?s=%3C", &pg); /* "<": every hostile name but two */
    cr_expect_null(strstr(pg.dom, "data-pwned=\"1\""), "no name ran as script");
    const char *m = strstr(pg.dom, "Matched: ");
    cr_assert_not_null(m);
    cr_expect_float_eq(strtod(m + 9, NULL), 400.0 / 6, 0.1, "%.20s", m);
    browser_page_free(&pg);
    free(svg);
}

Test(flamegraph_e2e, inlined_functions_are_marked_in_a_recording)
{
    /* inlines: mix() is always_inline into caller_a() and caller_b(); only
     * DWARF knows it, and the graph must show it as such. */
    char *prof = path_in("inlines.pbin"), *prog = build_workload("inlines");
    char *svg = path_in("inlines.svg");
    const char *rec[] = {"record", "-o", prof, "--", prog, "2", NULL};
    struct spawn_result r;
    ptprof_ok(&r, rec);
    spawn_result_free(&r);
    const char *args[] = {"flamegraph", prof, "-o", svg, NULL};
    ptprof_ok(&r, args);
    spawn_result_free(&r);
    expect_well_formed(svg);
    char *text = test_read_file(svg, NULL);
    cr_expect(strstr(text, "<g class=\"i\"><title>mix\n"), "mix() drawn as inlined");
    cr_expect(strstr(text, "<g><title>caller_a\n"), "caller_a() drawn as a real frame");
    cr_expect_null(strstr(text, "<g class=\"i\"><title>caller_a\n"));
    free(text);
    free(svg);
    free(prog);
    free(prof);
}
