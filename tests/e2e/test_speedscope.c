/*
 * test_speedscope.c - `ptprof convert -o OUT.speedscope.json` opened in
 * the real viewer: the speedscope web app from the npm registry
 * (installed by scripts/install-deps --test), served with the exported
 * profile on the loopback and loaded through its #profileURL= in
 * headless Chromium, as a person would load it.  For a native recording
 * of callers (two threads), of shares with four threads, and of a Go
 * program's own runtime/pprof profile: the page draws (screenshot not
 * blank), reports no error, names every thread's profile, and its
 * "Sandwich" table lists the workload's functions; the file has one
 * evented profile per thread with properly nested events, in the unit of
 * the profile's metric, frames with file and line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/browser.h"
#include "../lib/corpus.h"
#include "../lib/http_serve.h"
#include "test_record_common.h"
#include "util/xalloc.h"

#define SPEEDSCOPE_DEFAULT "/usr/local/lib/ptprof-test/node_modules/speedscope/dist/release"

/* The speedscope app: $PTPROF_SPEEDSCOPE, else where install-deps puts it. */
static const char *speedscope_dir(void)
{
    const char *dir = getenv("PTPROF_SPEEDSCOPE");
    dir = dir && *dir ? dir : SPEEDSCOPE_DEFAULT;
    char *index = xasprintf("%s/index.html", dir);
    cr_assert(access(index, R_OK) == 0,
              "%s missing: the speedscope app is installed by scripts/install-deps --test", index);
    free(index);
    return dir;
}

static void ptprof_ok(const char *const *args, const char *const *env)
{
    char *exe = build_ptprof();
    const char *argv[24] = {exe};
    size_t n = 1;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 180);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof %s: " RUN_CONTEXT(&res), args[0]);
    spawn_result_free(&res);
    free(exe);
}

/* DIR/NAME.speedscope.json from IN, checked for what the viewer relies on. */
static char *export(const char *dir, const char *in, const char *name)
{
    char *out = xasprintf("%s/%s.speedscope.json", dir, name);
    ptprof_ok((const char *[]){"convert", in, "-o", out, NULL}, NULL);
    return out;
}

/* How many evented profiles the file has; fails unless every profile's
 * events are in order and properly nested (python3's json, independent of
 * ours), with UNIT and frames that have a name. */
static int check_file(const char *path, const char *unit)
{
    char *py = test_need_tool("python3");
    static const char script[] =
        "import json,sys\n"
        "d=json.load(open(sys.argv[1]))\n"
        "fr=d['shared']['frames']\n"
        "assert all(f['name'] for f in fr)\n"
        "for p in d['profiles']:\n"
        "  assert p['type']=='evented' and p['unit']==sys.argv[2], p['unit']\n"
        "  st=[];last=0\n"
        "  for e in p['events']:\n"
        "    assert e['at']>=last;last=e['at']\n"
        "    if e['type']=='O': st.append(e['frame'])\n"
        "    else: assert st.pop()==e['frame']\n"
        "  assert not st and abs(last-p['endValue'])<=1e-9*max(1,last)\n"
        "print(len(d['profiles']))\n";
    const char *argv[] = {py, "-c", script, path, unit, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s is not what speedscope reads: " RUN_FMT, path,
                 RUN_ARGS(&res));
    int n = atoi(res.out);
    spawn_result_free(&res);
    free(py);
    return n;
}

/* Serve the app and PROFILE from one root; open it in VIEW ("sandwich",
 * "time-ordered"); the page must be drawn and quiet. */
static void open_in_speedscope(const char *dir, const char *profile, const char *view,
                               struct browser_page *pg)
{
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
    char *root = xasprintf("%s/www", dir), *app = xasprintf("%s/app", root);
    if (access(root, F_OK) != 0) {
        cr_assert_eq(mkdir(root, 0755), 0);
        cr_assert_eq(symlink(speedscope_dir(), app), 0);
    }
    const char *base = strrchr(profile, '/') + 1;
    char *served = xasprintf("%s/%s", root, base);
    unlink(served);
    cr_assert_eq(symlink(profile, served), 0);
    struct http_server srv;
    cr_assert(http_serve_start(root, &srv), "cannot listen on the loopback");
    char *url =
        xasprintf("http://127.0.0.1:%d/app/index.html#profileURL=http%%3A%%2F%%2F127.0.0.1%%3A"
                  "%d%%2F%s&view=%s",
                  srv.port, srv.port, base, view);
    /* Virtual time runs on while the app's timers wait on a slow, busy
     * machine: 8 s once ended before it drew (a full run beside two
     * CPU-bound jobs); an idle page uses up the rest at once. */
    struct browser_opts o = {.path = url, .width = 1400, .height = 900, .virtual_time_ms = 30000};
    browser_open(&o, pg);
    http_serve_stop(&srv);
    /* Kept with the test's directory when it fails. */
    char *dom = xasprintf("%s/dom-%s.html", dir, view);
    FILE *f = fopen(dom, "w");
    if (f) {
        fputs(pg->dom ? pg->dom : "", f);
        fclose(f);
    }
    free(dom);
    char *d = browser_page_describe(pg);
    cr_assert(pg->ran && !pg->blank, "%s: %s", url, d);
    /* speedscope logs its progress; none of it may be a complaint, and it
     * must have taken the file for what it is. */
    bool imported = false;
    for (size_t i = 0; i < pg->nconsole; i++) {
        const char *m = pg->console[i];
        imported |= strstr(m, "Importing as speedscope json file") != NULL;
        cr_expect(!strstr(m, "Uncaught") && !strstr(m, "rror") && !strstr(m, "nvalid") &&
                      !strstr(m, "ailed"),
                  "%s: the app complained: %s", url, m);
    }
    cr_expect(imported, "%s: speedscope did not import the file as its own format: %s", url, d);
    free(d);
    free(url);
    free(served);
    free(app);
    free(root);
}

static void expect_in_dom(const struct browser_page *pg, const char *what, const char *file)
{
    cr_assert(strstr(pg->dom, what), "%s: speedscope does not show %s", file, what);
}

static char *record(const char *dir, const char *name, const char *workload,
                    const char *const *args)
{
    char *out = xasprintf("%s/%s.data", dir, name), *prog = build_workload(workload);
    const char *argv[16] = {"record", "-o", out, "--", prog};
    size_t n = 5;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    ptprof_ok(argv, NULL);
    free(prog);
    return out;
}

Test(speedscope, a_native_recording_in_the_viewer, .timeout = 400)
{
    char *dir = test_mkdtemp();
    char *data = record(dir, "callers", "callers", (const char *[]){"2", NULL});
    char *json = export(dir, data, "callers");
    cr_assert_eq(check_file(json, "seconds"), 2, "callers runs two threads");
    char *text = test_read_file(json, NULL);
    cr_expect(strstr(text, "\"name\":\"hot\",\"file\":\"") && strstr(text, "callers.c\",\"line\":"),
              "frames lack file and line:\n%.1500s", text);
    free(text);

    struct browser_page pg;
    open_in_speedscope(dir, json, "sandwich", &pg);
    /* The table shows the first thread's (main's) functions. */
    static const char *const functions[] = {"hot", "via_a", "via_b", "main"};
    for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
        char *cell = xasprintf(">%s<", functions[i]);
        expect_in_dom(&pg, cell, json);
        free(cell);
    }
    browser_page_free(&pg);
    open_in_speedscope(dir, json, "time-ordered", &pg);
    expect_in_dom(&pg, "callers#", json); /* the thread's profile is named */
    expect_in_dom(&pg, "(1/2)", json);    /* and its neighbour is there */
    browser_page_free(&pg);
    free(json);
    free(data);
    test_rmtree(dir);
    free(dir);
}

Test(speedscope, one_timeline_per_thread, .timeout = 400)
{
    char *dir = test_mkdtemp();
    char *data = record(dir, "shares", "shares", (const char *[]){"4", "2", NULL});
    char *json = export(dir, data, "shares");
    cr_assert_eq(check_file(json, "seconds"), 4, "shares ran four threads");
    struct browser_page pg;
    open_in_speedscope(dir, json, "sandwich", &pg);
    /* The first thread's table (on a busy machine a thread may have run
     * too little for the short calls: work_heavy is half of every thread),
     * and the list of profiles names every thread. */
    expect_in_dom(&pg, ">work_heavy<", json);
    for (int t = 1; t <= 4; t++) {
        char *thread = xasprintf("shares#%d (tid ", t);
        expect_in_dom(&pg, thread, json);
        free(thread);
    }
    /* speedscope numbers the profiles it holds: the first of four. */
    expect_in_dom(&pg, "(1/4)", json);
    browser_page_free(&pg);
    free(json);
    free(data);
    test_rmtree(dir);
    free(dir);
}

Test(speedscope, a_go_pprof_profile_in_the_viewer, .timeout = 600)
{
    char *dir = test_mkdtemp();
    char *go = test_need_tool("go"), *src_dir = corpus_dir("tests/workloads/go");
    char *src = xasprintf("%s/cpuburn.go", src_dir), *bin = xasprintf("%s/cpuburn", dir);
    char *pb = xasprintf("%s/go.pb.gz", dir);
    char *home = xasprintf("HOME=%s", dir), *cache = xasprintf("GOCACHE=%s/gocache", dir);
    char *gopath = xasprintf("GOPATH=%s/gopath", dir);
    const char *env[] = {home,
                         cache,
                         gopath,
                         "GO111MODULE=off",
                         "GOFLAGS=",
                         "GOPROXY=off",
                         "GOTOOLCHAIN=local",
                         "GOTELEMETRY=off",
                         NULL};
    struct spawn_result res;
    run_argv(&res, (const char *[]){go, "build", "-o", bin, src, NULL}, env, NULL, 300);
    cr_assert_eq(spawn_exit_code(res.status), 0, "go build: " RUN_CONTEXT(&res));
    spawn_result_free(&res);
    run_argv(&res, (const char *[]){bin, pb, "2", NULL}, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "cpuburn: " RUN_CONTEXT(&res));
    spawn_result_free(&res);

    char *json = export(dir, pb, "go");
    cr_assert_geq(check_file(json, "seconds"), 1);
    struct browser_page pg;
    open_in_speedscope(dir, json, "sandwich", &pg);
    static const char *const functions[] = {"main.heavy", "main.light", "main.spinner"};
    for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
        char *cell = xasprintf(">%s<", functions[i]);
        expect_in_dom(&pg, cell, json);
        free(cell);
    }
    browser_page_free(&pg);
    free(json);
    free(pb);
    free(bin);
    free(src);
    free(src_dir);
    free(go);
    free(home);
    free(cache);
    free(gopath);
    test_rmtree(dir);
    free(dir);
}

/* speedscope opens on the first profile: the program's main thread, even
 * where a worker was sampled first (a `perf script` text of two threads,
 * the worker's sample before main's), and the worker keeps its place
 * after it. */
Test(speedscope, the_main_thread_is_the_profile_it_opens_on)
{
    char *dir = test_mkdtemp();
    char *script = xasprintf("%s/two.perf.txt", dir),
         *json = xasprintf("%s/two.speedscope.json", dir);
    FILE *f = fopen(script, "w");
    cr_assert(f);
    for (int i = 0; i < 3; i++)
        fprintf(f, "app 100/%d 1.00%d000: 1000000 cpu-clock:\n\t401%d00 %s+0x0 (/usr/bin/app)\n\n",
                i == 1 ? 100 : 101, i, i, i == 1 ? "main" : "worker_fn");
    cr_assert_eq(fclose(f), 0);
    ptprof_ok((const char *[]){"convert", script, "-o", json, NULL}, NULL);
    char *text = test_read_file(json, NULL);
    cr_assert(text);
    const char *main_thread = strstr(text, "(tid 100)"), *worker = strstr(text, "(tid 101)");
    cr_assert(main_thread && worker, "%s", text);
    cr_expect_lt(main_thread, worker, "the worker's profile comes first:\n%s", text);
    cr_expect(strstr(text, "\"activeProfileIndex\":0"), "%s", text);
    free(text);
    free(script);
    free(json);
    test_rmtree(dir);
    free(dir);
}
