/*
 * test_timeline.c - "ptprof timeline" on real recordings: workloads
 * recorded with a simulated RAPL tree (tests/lib/fake_powercap.h) whose
 * counter runs at a known, varying rate, drawn as SVG and as HTML; every
 * document well-formed (xmllint) and drawn by headless Chromium without a
 * console message; the power chart's mean is the power the test applied;
 * a .pbin full of hostile names is drawn safely; options and exit codes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/browser.h"
#include "../lib/fake_powercap.h"
#include "../lib/spawn.h"
#include "../lib/xmlcheck.h"
#include "format/pbin.h"
#include "model/profile.h"
#include "util/xalloc.h"

#define RUN_FMT "status: %s\n--- stdout ---\n%.2000s\n--- stderr ---\n%.3000s"
#define RUN_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err

/* Run ptprof with ARGS (NULL-terminated, without the program); the exit code. */
static int ptprof(const char *const *args, struct spawn_result *res, const char *const *env)
{
    const char *argv[48];
    char *bin = build_ptprof();
    cr_assert(access(bin, X_OK) == 0, "%s is missing: run make", bin);
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args[i] && n < 47; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 120};
    spawn_run(&o, res);
    free(bin);
    return spawn_exit_code(res->status);
}

static void ptprof_ok(const char *const *args, const char *const *env)
{
    struct spawn_result res;
    int rc = ptprof(args, &res, env);
    cr_assert_eq(rc, 0, "ptprof %s %s: " RUN_FMT, args[0], args[1] ? args[1] : "", RUN_ARGS(&res));
    spawn_result_free(&res);
}

/* --- the simulated power source ------------------------------------------------- */

#define DOMAIN "intel-rapl:0"
#define STEP_UJ 50000u    /* per 10 ms tick: 5 W */
#define TICK_NS 10000000L /* every fourth quarter second runs at 4 steps a tick: 20 W */

struct advancer {
    struct fake_powercap *fp;
    atomic_bool stop;
    uint64_t total_uj;
    double first_s, last_s; /* CLOCK_REALTIME of the first and last tick */
};

static double realtime_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *advance(void *arg)
{
    struct advancer *a = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned tick = 0; !atomic_load(&a->stop); tick++) {
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        uint64_t step = (tick / 25) % 4 == 3 ? 4 * STEP_UJ : STEP_UJ;
        if (fake_powercap_advance(a->fp, DOMAIN, step) != 0)
            break;
        a->total_uj += step;
        a->last_s = realtime_s();
        if (tick == 0)
            a->first_s = a->last_s;
    }
    return NULL;
}

struct recording {
    char *dir;
    char *profile;
    double applied_w; /* the mean power the test put into the counter */
};

/* Record WORKLOAD ARGS at 500 Hz with -p rapl on a fake tree. */
static void record(struct recording *r, const char *workload, const char *const *args)
{
    static struct advancer adv;
    memset(&adv, 0, sizeof(adv));
    adv.fp = fake_powercap_create();
    cr_assert_not_null(adv.fp);
    cr_assert_eq(fake_powercap_add(adv.fp, DOMAIN, "package-0", 1000, 0), 0);
    atomic_store(&adv.stop, false);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, advance, &adv), 0);

    r->dir = test_mkdtemp();
    r->profile = xasprintf("%s/%s.data", r->dir, workload);
    char *env_root = xasprintf("PTPROF_SYSFS_ROOT=%s", fake_powercap_root(adv.fp));
    const char *env[] = {env_root, NULL};
    char *prog = build_workload(workload);
    cr_assert(access(prog, X_OK) == 0, "%s is missing: run make workloads", prog);
    const char *argv[24] = {"record", "-o", r->profile, "-f", "500", "-p", "rapl", "--", prog};
    size_t n = 9;
    for (size_t i = 0; args && args[i] && n < 23; i++)
        argv[n++] = args[i];
    struct spawn_result res;
    int rc = ptprof(argv, &res, env);
    atomic_store(&adv.stop, true);
    pthread_join(thread, NULL);
    cr_assert_eq(rc, 0, "record %s: " RUN_FMT, workload, RUN_ARGS(&res));
    spawn_result_free(&res);
    double span = adv.last_s - adv.first_s;
    r->applied_w = span > 0 ? (double)adv.total_uj / 1e6 / span : 0;
    fake_powercap_destroy(adv.fp);
    free(env_root);
    free(prog);
}

static void recording_free(struct recording *r)
{
    test_rmtree(r->dir);
    free(r->dir);
    free(r->profile);
}

/* --- checking a document --------------------------------------------------------- */

static char *read_text(const char *path)
{
    size_t len;
    char *s = test_read_file(path, &len);
    cr_assert_not_null(s, "%s was not written", path);
    return s;
}

/* Well-formed, and Chromium draws it without a complaint; its DOM, allocated. */
static char *check_document(const char *path)
{
    char *msg = NULL;
    cr_expect(xmlcheck_file(path, &msg), "%s: xmllint: %s", path, msg);
    free(msg);
    struct browser_opts o = {.path = path, .width = 1700, .height = 900};
    struct browser_page pg;
    browser_open(&o, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(browser_page_clean(&pg), "%s: %s", path, d);
    char *dom = xstrdup(pg.dom ? pg.dom : "");
    free(d);
    browser_page_free(&pg);
    return dom;
}

/* Draw R's profile as SVG and HTML, check both; the SVG's text. */
static char *draw(const struct recording *r, const char *const *extra)
{
    char *svg = xasprintf("%s/t.svg", r->dir), *html = xasprintf("%s/t.html", r->dir);
    const char *args[24] = {"timeline", r->profile, "-o", svg};
    size_t n = 4;
    for (size_t i = 0; extra && extra[i] && n < 22; i++)
        args[n++] = extra[i];
    ptprof_ok(args, NULL);
    args[3] = html;
    ptprof_ok(args, NULL);
    char *dom = check_document(svg);
    free(dom);
    dom = check_document(html);
    cr_expect(strstr(dom, "<svg"), "the page holds the picture");
    free(dom);
    char *text = read_text(svg);
    free(svg);
    free(html);
    return text;
}

/* The number after the first NEEDLE in TEXT, or NaN. */
static double number_after(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p ? strtod(p + strlen(needle), NULL) : NAN;
}

/* The title's achieved frequency is the one report gives, per the same
 * second (of CPU time for the perf engine, record's default here). */
static void check_rate_as_report(const struct recording *r, const char *svg)
{
    const char *args[] = {"report", r->profile, NULL};
    struct spawn_result res;
    cr_assert_eq(ptprof(args, &res, NULL), 0, "report: " RUN_FMT, RUN_ARGS(&res));
    double reported = number_after(res.out, "frequency ");
    bool per_cpu = strstr(res.out, "Hz per CPU s") != NULL;
    const char *title = strstr(svg, " samples), ");
    cr_assert_not_null(title, "no title line");
    double drawn = strtod(title + strlen(" samples), "), NULL);
    cr_expect(fabs(drawn - reported) < 0.15, "timeline %.1f Hz achieved, report %.1f Hz", drawn,
              reported);
    cr_expect_eq(strstr(svg, "Hz achieved per CPU s") != NULL, per_cpu,
                 "the timeline and report disagree on what the rate is per:\n%.300s", res.out);
    spawn_result_free(&res);
}

/* --- the workloads ------------------------------------------------------------------ */

TestSuite(timeline_e2e, .timeout = 300);

Test(timeline_e2e, shares_power_chart_and_a_lane_per_thread)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    struct recording r;
    const char *args[] = {"2", "2", NULL};
    record(&r, "shares", args);
    char *svg = draw(&r, NULL);
    cr_expect(strstr(svg, "package-0 (intel-rapl:0)"), "the channel's chart");
    cr_expect(strstr(svg, "power (W)"), "its quantity and unit");
    /* The chart's time-weighted mean is the power the counter ran at. */
    double mean = number_after(svg, ", mean ");
    cr_expect(fabs(mean - r.applied_w) <= 0.3 * r.applied_w, "chart mean %.3f W, applied %.3f W",
              mean, r.applied_w);
    /* The 20 W quarters reach the band's top. */
    double max = number_after(svg, ", max ");
    cr_expect_geq(max, 15, "max %.3f W", max);
    cr_expect(strstr(svg, ">shares#1<") && strstr(svg, ">shares#2<"), "a lane per thread");
    cr_expect(strstr(svg, "work_heavy"), "the functions in the lanes and legend");
    cr_expect(strstr(svg, "Hz achieved"), "the title line");
    check_rate_as_report(&r, svg);
    free(svg);
    recording_free(&r);
}

Test(timeline_e2e, callers_signal_handler_and_keys_by_binary)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    struct recording r;
    const char *args[] = {"1.5", NULL};
    record(&r, "callers", args);
    char *svg = draw(&r, NULL);
    cr_expect(strstr(svg, ">hot"), "%s", "hot() in the legend");
    free(svg);
    const char *by_binary[] = {"-k", "binary", "--width", "900", NULL};
    svg = draw(&r, by_binary);
    cr_expect(strstr(svg, "width=\"900\""));
    cr_expect(strstr(svg, ">callers"), "the binary as the key");
    cr_expect_null(strstr(svg, ">hot"), "no function names with -k binary");
    free(svg);
    recording_free(&r);
}

Test(timeline_e2e, threads1000_keeps_the_busiest_lanes)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    struct recording r;
    record(&r, "threads1000", NULL);
    const char *cap[] = {"--max-threads", "20", NULL};
    char *svg = draw(&r, cap);
    size_t lanes = 0;
    for (const char *p = svg; (p = strstr(p, "<title>threads1000#")) != NULL; p++)
        lanes++;
    cr_expect_leq(lanes, 20, "%zu lanes", lanes);
    cr_expect_gt(lanes, 0);
    if (strstr(svg, "with the most CPU time of") == NULL)
        cr_log_warn("threads1000: every thread fit in 20 lanes");
    free(svg);
    recording_free(&r);
}

Test(timeline_e2e, forked_children_and_a_zoomed_range)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    struct recording r;
    const char *args[] = {"spin", "1", "0", NULL};
    record(&r, "forker", args);
    const char *zoom[] = {"--start", "0.25", "--end", "0.5", NULL};
    char *svg = draw(&r, zoom);
    cr_expect(strstr(svg, "Time 0.25\u20130.5 s"), "the view in the subtitle");
    free(svg);
    recording_free(&r);
}

/* --- hostile names, through a .pbin ------------------------------------------------ */

Test(timeline_e2e, hostile_names_in_a_pbin_are_drawn_safely)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    static const char *const names[] = {
        "<script>alert(1)</script>",
        "</svg></body><img src=x onerror=alert(2)>",
        "]]>&amp;\"'<!--",
        "ctl\x01\x1b\x7f end",
        "utf8 \xff\xc0\xaf\xed\xa0\x80",
    };
    enum { NN = sizeof(names) / sizeof(names[0]), NS = 50 };
    char *longest = xmalloc(5001);
    memset(longest, 'L', 5000);
    longest[0] = '<';
    longest[5000] = '\0';
    struct profile p;
    profile_init(&p);
    p.format = xstrdup("native");
    p.meta = xcalloc(1, sizeof(*p.meta));
    p.meta[0] = (struct prof_meta){xstrdup("command"), xstrdup(names[1])};
    p.nmeta = 1;
    p.channels = xcalloc(1, sizeof(*p.channels));
    p.channels[0] = (struct prof_channel){xstrdup(names[0]), xstrdup("<W>"), PMU_KIND_POWER};
    p.nchannels = 1;
    p.processes = xcalloc(1, sizeof(*p.processes));
    p.processes[0] = (struct prof_process){.pid = 1, .exe = xstrdup(names[2])};
    p.nprocesses = 1;
    p.threads = xcalloc(NN + 1, sizeof(*p.threads));
    p.locations = xcalloc(NN + 1, sizeof(*p.locations));
    for (size_t k = 0; k <= NN; k++) {
        const char *name = k < NN ? names[k] : longest;
        p.threads[k] = (struct prof_thread){1, (uint32_t)(100 + k), 0, 0, xstrdup(name)};
        struct prof_sym_frame *f = xcalloc(1, sizeof(*f));
        *f = (struct prof_sym_frame){
            xstrdup(name), xstrdup(name), xstrdup(name), xstrdup(name), xstrdup(name), 1, false};
        p.locations[k] = (struct prof_location){1, 0x400000 + k * 16, false, k * 16, 1, f};
    }
    p.nthreads = p.nlocations = NN + 1;
    p.samples = xcalloc(NS, sizeof(*p.samples));
    for (size_t i = 0; i < NS; i++) {
        struct prof_sample *s = &p.samples[i];
        s->time_ns = 1700000000000000000ull + i * 2000000ull;
        s->values = xcalloc(1, sizeof(double));
        s->values[0] = (double)(i % 9);
        s->nthreads = NN + 1;
        s->threads = xcalloc(NN + 1, sizeof(*s->threads));
        for (size_t k = 0; k <= NN; k++)
            s->threads[k] = (struct prof_thread_sample){
                .pid = 1,
                .tid = (uint32_t)(100 + k),
                .pc = 0x400000 + ((k + i / 10) % (NN + 1)) * 16,
                .cpu_ns = i * 1000000ull,
                .syscall = -1,
            };
    }
    p.nsamples = NS;
    char *dir = test_mkdtemp();
    char *pbin = xasprintf("%s/hostile.pbin", dir);
    cr_assert_eq(native_write_profile(pbin, &p), 0);
    profile_free(&p);

    struct recording r = {.dir = dir, .profile = pbin};
    char *svg = draw(&r, NULL);
    cr_expect(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"), "the names, escaped");
    cr_expect_null(strstr(svg, longest), "a 5000-character name is cut");
    free(svg);
    char *html = xasprintf("%s/t.html", dir);
    char *page = read_text(html);
    cr_expect_null(strstr(page, "<script"), "no script element");
    cr_expect_null(strstr(page, "<img"), "no element from a name");
    free(page);
    free(html);
    free(longest);
    recording_free(&r);
}

/* --- options and exit codes ---------------------------------------------------------- */

Test(timeline_e2e, options_and_exit_codes)
{
    struct recording r;
    const char *args[] = {"0.5", NULL};
    record(&r, "spin", args);
    char *out = xasprintf("%s/x.svg", r.dir), *gz = xasprintf("%s/x.svg.gz", r.dir);
    struct spawn_result res;

    const char *bad_range[] = {"timeline", r.profile, "-o", out, "--start",
                               "2",        "--end",   "1",  NULL};
    cr_expect_eq(ptprof(bad_range, &res, NULL), 1, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    const char *late[] = {"timeline", r.profile, "-o", out, "--start", "100", NULL};
    cr_expect_eq(ptprof(late, &res, NULL), 2, RUN_FMT, RUN_ARGS(&res));
    cr_expect(strstr(res.err, "past the profile's end"), "%s", res.err);
    spawn_result_free(&res);
    cr_expect_not(test_file_exists(out), "nothing written on failure");
    const char *width[] = {"timeline", r.profile, "-o", out, "--width", "50", NULL};
    cr_expect_eq(ptprof(width, &res, NULL), 1, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    const char *thread_key[] = {"timeline", r.profile, "-o", out, "-k", "thread", NULL};
    cr_expect_eq(ptprof(thread_key, &res, NULL), 1, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    const char *missing[] = {"timeline", "/nonexistent/profile", "-o", out, NULL};
    cr_expect_eq(ptprof(missing, &res, NULL), 2, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);

    /* timeline.svg in the current directory by default. */
    char *bin = build_ptprof();
    const char *plain[] = {bin, "timeline", r.profile, NULL};
    struct spawn_opts so = {.argv = plain, .cwd = r.dir, .timeout_s = 120};
    spawn_run(&so, &res);
    cr_expect_eq(spawn_exit_code(res.status), 0, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    free(bin);
    char *dflt = xasprintf("%s/timeline.svg", r.dir);
    char *msg = NULL;
    cr_expect(xmlcheck_file(dflt, &msg), "%s: %s", dflt, msg);
    free(msg);
    free(dflt);

    /* To standard output with --format, and compressed by name. */
    const char *to_stdout[] = {"timeline", r.profile, "-o", "-", "--format", "html", NULL};
    cr_assert_eq(ptprof(to_stdout, &res, NULL), 0, RUN_FMT, RUN_ARGS(&res));
    cr_expect(strncmp(res.out, "<!DOCTYPE html>", 15) == 0, "%.100s", res.out);
    cr_expect(xmlcheck_string(res.out, res.out_len, &msg), "xmllint: %s", msg);
    free(msg);
    spawn_result_free(&res);
    const char *compressed[] = {"timeline", r.profile, "-o", gz, NULL};
    ptprof_ok(compressed, NULL);
    size_t len;
    char *bytes = test_read_file(gz, &len);
    cr_assert(bytes && len > 2 && (unsigned char)bytes[0] == 0x1f &&
                  (unsigned char)bytes[1] == 0x8b,
              "gzip magic");
    free(bytes);

    free(out);
    free(gz);
    recording_free(&r);
}
