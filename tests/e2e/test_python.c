/*
 * test_python.c - Python programs profiled by their Python functions
 * (record/interp/, docs/python.md), against the truth the workload
 * measures itself (tests/workloads/python/shares.py: each function's
 * inclusive CPU time, time.thread_time).  For each CPython present:
 * Debian's /usr/bin/python3.11, which embeds the interpreter, and the
 * builds under ~/.pyenv/versions/ linked to libpython (a version that is
 * absent is skipped with a message).
 *  - shares: each of four functions' inclusive share (40/30/20/10 %) within
 *    2 points of the truth, with --engine auto (which takes the ptrace
 *    engine for a Python program) and --engine ptrace; the C function
 *    zlib.compress runs under the Python function that called it; exports
 *    and a .pbin carry the names;
 *  - the perf engine reads frames at the tick: a sample whose frames moved
 *    since it was taken keeps its native frames only, and no zlib sample
 *    shows a wrong Python caller;
 *  - a thread sleeping in time.sleep: its wait (--wall) is charged to the
 *    Python function that sleeps, on both engines;
 *  - children forked (multiprocessing) and started anew (subprocess) are
 *    read like the first process;
 *  - three threads, each with its own functions; attaching to a running
 *    server and detaching (it goes on, and ends as it would have); a run
 *    by an unprivileged user; an older CPython (3.10) gets one warning and
 *    its native frames as before.
 */
#include "../lib/corpus.h"
#include "../lib/spawn.h"
#include "../unit/real_tools.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Percentage points a share may differ from the truth. */
#define SHARE_TOLERANCE 2.0
#define SECONDS "6"

struct python_param {
    char engine[8];
    char which[16]; /* "debian3.11", or a version under ~/.pyenv */
};

/* The interpreter PARAM names, or skip the test saying it is absent. */
static char *find_python(const char *which)
{
    if (strncmp(which, "debian", 6) == 0) {
        char *path = xasprintf("/usr/bin/python%s", which + 6);
        if (access(path, X_OK) != 0)
            cr_skip_test("no %s here", path);
        return path;
    }
    const char *home = getenv("HOME");
    char *pattern =
        xasprintf("%s/.pyenv/versions/%s*/bin/python%s", home ? home : "/root", which, which);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0)
        cr_skip_test("no CPython %s here (%s)", which, pattern);
    char *path = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
    free(pattern);
    return path;
}

static char *workload_script(void)
{
    char *dir = corpus_dir("tests/workloads/python");
    char *rel = xasprintf("%s/shares.py", dir), *abs = realpath(rel, NULL);
    cr_assert_not_null(abs, "no %s", rel);
    free(rel);
    free(dir);
    return abs;
}

/* ptprof record [ENGINE] -o OUT -- PYTHON shares.py ARGS... ; stderr kept in *ERR. */
static void record(const char *engine, const char *out, const char *python, const char *const *args,
                   char **err)
{
    char *ptprof = build_ptprof(), *script = workload_script();
    const char *argv[32] = {ptprof, "record", "-d", "--engine", engine,
                            "-o",   out,      "--", python,     script};
    size_t n = 10;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_result res;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record --engine %s %s: %s\n%s", engine, python,
                 spawn_status_text(res.status), res.err);
    if (err)
        *err = xstrdup(res.err);
    spawn_result_free(&res);
    free(script);
    free(ptprof);
}

/* One recording of shares.py, in a directory of its own. */
struct python_run {
    char *dir;        /* test_mkdtemp(), removed by python_run_free() */
    char *out;        /* DIR/py.data, the profile */
    char *truth_path; /* DIR/truth.txt, what the workload measured */
};

/* Record PYTHON shares.py MODE ARG TRUTH_PATH with ENGINE into a new R;
 * stderr kept in *ERR unless ERR is NULL. */
static void python_run_record(struct python_run *r, const char *engine, const char *python,
                              const char *mode, const char *arg, char **err)
{
    r->dir = test_mkdtemp();
    r->out = test_path(r->dir, "py.data");
    r->truth_path = test_path(r->dir, "truth.txt");
    const char *args[] = {mode, arg, r->truth_path, NULL};
    record(engine, r->out, python, args, err);
}

static void python_run_free(struct python_run *r)
{
    free(r->truth_path);
    free(r->out);
    test_rmtree(r->dir);
    free(r->dir);
}

/* The workload's truth file: NAME SECONDS per line. */
static void read_truth(const char *path, struct fn_counts *truth)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", path);
    memset(truth, 0, sizeof(*truth));
    char name[256];
    double seconds;
    int used;
    for (const char *p = text; sscanf(p, "%255s %lf%n", name, &seconds, &used) == 2; p += used) {
        fn_add(truth, name, seconds);
        truth->total += seconds;
    }
    free(text);
}

/* The shares of the N functions NAMES among themselves in TOTAL (report's
 * percentages) against the workload's TRUTH: they must be on over half of
 * the stacks, and each share within TOLERANCE points of the time the
 * workload measured for it.  WHAT starts every message. */
static void expect_shares(const struct fn_counts *total, const struct fn_counts *truth,
                          const char *const *names, size_t n, double tolerance, const char *what)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += fn_get(total, names[i]);
    cr_assert_gt(sum, 50, "%s: the %zu functions are on %.1f%% of the stacks", what, n, sum);
    for (size_t i = 0; i < n; i++) {
        double got = 100 * fn_get(total, names[i]) / sum;
        double want = 100 * fn_get(truth, names[i]) / truth->total;
        cr_expect(fabs(got - want) <= tolerance,
                  "%s: %s has %.1f%% of the %zu functions' time, it measured %.1f%%", what,
                  names[i], got, n, want);
    }
}

static const char *const functions[] = {"forty", "thirty", "twenty", "ten"};
/* The workload's own Python functions: what a folded line names them. */
static bool is_workload_function(const char *frame)
{
    static const char *const all[] = {"forty", "thirty", "twenty",   "ten",  "spin_until",
                                      "timed", "shares", "<module>", "main", NULL};
    for (size_t i = 0; all[i]; i++)
        if (strcmp(frame, all[i]) == 0)
            return true;
    return false;
}

/*
 * Every folded line through zlib's deflate: the nearest workload function
 * outside it is thirty, the only one that calls zlib.compress.  Sums the
 * lines' counts where it is (*RIGHT), where it is another (*WRONG), and
 * where there is none (*NONE: native frames only).
 */
static void deflate_callers(const char *folded, long *right, long *wrong, long *none)
{
    char *text = test_read_file(folded, NULL);
    cr_assert_not_null(text);
    *right = *wrong = *none = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *deflate = strstr(line, ";deflate;");
        if (!deflate && !(deflate = strstr(line, ";deflate ")))
            continue;
        long count = strtol(strrchr(deflate + 1, ' ') + 1, NULL, 10);
        *deflate = '\0';
        const char *nearest = NULL;
        for (char *frame = strrchr(line, ';'); frame; frame = strrchr(line, ';')) {
            if (is_workload_function(frame + 1)) {
                nearest = frame + 1;
                break;
            }
            *frame = '\0';
        }
        if (!nearest)
            *none += count;
        else if (strcmp(nearest, "thirty") == 0)
            *right += count;
        else
            *wrong += count;
    }
    free(text);
}

ParameterizedTestParameters(python, shares)
{
    static struct python_param params[] = {
        {"auto", "debian3.11"}, {"ptrace", "debian3.11"}, {"auto", "3.11"}, {"ptrace", "3.11"},
        {"auto", "3.12"},       {"ptrace", "3.12"},       {"auto", "3.13"}, {"ptrace", "3.13"},
        {"auto", "3.14"},       {"ptrace", "3.14"},
    };
    return cr_make_param_array(struct python_param, params, sizeof(params) / sizeof(*params));
}

ParameterizedTest(struct python_param *param, python, shares, .timeout = 240)
{
    char *python = find_python(param->which);
    char *err;
    struct python_run r;
    python_run_record(&r, param->engine, python, "shares", SECONDS, &err);
    const char *label = python;
    cr_expect(strstr(err, "engine:      ptrace"), "%s, --engine %s: not the ptrace engine:\n%s",
              label, param->engine, err);
    cr_expect(strstr(err, "interpreter: CPython 3."), "%s: no interpreter found:\n%s", label, err);

    struct fn_counts truth, total;
    read_truth(r.truth_path, &truth);
    report_column(r.out, "cpu", "total_pct", NULL, &total);
    char *what = xasprintf("%s, --engine %s", label, param->engine);
    expect_shares(&total, &truth, functions, 4, SHARE_TOLERANCE, what);
    free(what);

    /* zlib.compress, a C function, sits under the Python function that
     * called it, in a folded export. */
    char *folded = test_path(r.dir, "py.folded");
    const char *convert[] = {"convert", r.out, "-o", folded, NULL};
    free(ptprof_stdout(convert));
    long right, wrong, none;
    deflate_callers(folded, &right, &wrong, &none);
    cr_expect_gt(right, 10, "%s: %ld zlib samples under thirty", label, right);
    cr_expect_eq(wrong, 0, "%s: %ld zlib samples under another function", label, wrong);
    cr_expect_leq(none, right / 20, "%s: %ld zlib samples without Python frames", label, none);

    /* A .pbin and pprof carry the names. */
    if (strcmp(param->engine, "auto") == 0) {
        char *pbin = test_path(r.dir, "py.pbin"), *pb = test_path(r.dir, "py.pb.gz");
        const char *c1[] = {"postprocess", r.out, "-o", pbin, NULL};
        const char *c2[] = {"convert", r.out, "-o", pb, NULL};
        free(ptprof_stdout(c1));
        free(ptprof_stdout(c2));
        struct fn_counts from_pbin, from_pb;
        report_column(pbin, "cpu", "total_pct", NULL, &from_pbin);
        report_column(pb, "samples", "total_pct", NULL, &from_pb);
        cr_expect(fabs(fn_get(&from_pbin, "forty") - fn_get(&total, "forty")) < 0.01,
                  ".pbin: forty %.2f%%, the recording %.2f%%", fn_get(&from_pbin, "forty"),
                  fn_get(&total, "forty"));
        cr_expect_gt(fn_get(&from_pb, "thirty"), 10, "pprof: thirty %.1f%%",
                     fn_get(&from_pb, "thirty"));
        const char *by_file[] = {
            "report", "-k", "binary,procedure,line", "--format", "csv", "--no-cache", pbin, NULL};
        char *csv = ptprof_stdout(by_file);
        cr_expect(strstr(csv, "shares.py:spin_until:"), "the binary of a Python frame:\n%.2000s",
                  csv);
        free(csv);
        by_file[6] = pb; /* pprof has no mapping for it: its file is its module */
        csv = ptprof_stdout(by_file);
        cr_expect(strstr(csv, "shares.py:spin_until:"),
                  "pprof: the binary of a Python frame:\n%.2000s", csv);
        free(csv);
        fn_free(&from_pbin);
        fn_free(&from_pb);
        free(pbin);
        free(pb);
        /* The pictures name them too: the flame graph's frames, the
         * timeline's thread lanes. */
        char *svg = test_path(r.dir, "fg.svg"), *lanes = test_path(r.dir, "tl.svg");
        const char *fg[] = {"flamegraph", r.out, "-o", svg, NULL};
        const char *tl[] = {"timeline", r.out, "-o", lanes, NULL};
        free(ptprof_stdout(fg));
        free(ptprof_stdout(tl));
        char *text = test_read_file(svg, NULL);
        cr_expect(text && strstr(text, "thirty"), "the flame graph has no thirty");
        free(text);
        text = test_read_file(lanes, NULL);
        cr_expect(text && strstr(text, "spin_until"), "the timeline's lanes have no spin_until");
        free(text);
        free(svg);
        free(lanes);
        /* info says what was read. */
        const char *info[] = {"info", r.out, NULL};
        text = ptprof_stdout(info);
        cr_expect(strstr(text, "frames of:  CPython 3."), "info:\n%s", text);
        free(text);
    }
    fn_free(&truth);
    fn_free(&total);
    free(folded);
    free(err);
    python_run_free(&r);
    free(python);
}

ParameterizedTestParameters(python, perf_engine_never_shows_a_wrong_caller)
{
    static struct python_param params[] = {
        {"perf", "debian3.11"}, {"perf", "3.12"}, {"perf", "3.13"}};
    return cr_make_param_array(struct python_param, params, sizeof(params) / sizeof(*params));
}

ParameterizedTest(struct python_param *param, python, perf_engine_never_shows_a_wrong_caller,
                  .timeout = 240)
{
    char *python = find_python(param->which);
    char *err;
    struct python_run r;
    python_run_record(&r, "perf", python, "shares", "3", &err);
    if (!strstr(err, "engine:      perf"))
        cr_skip_test("the perf engine is not permitted here:\n%s", err);
    /* Frames that moved since their sample are counted, not shown. */
    cr_expect(strstr(err, "moved since the sample") || strstr(err, "nothing to check"), "-d:\n%s",
              err);
    char *folded = test_path(r.dir, "py.folded");
    const char *convert[] = {"convert", r.out, "-o", folded, NULL};
    free(ptprof_stdout(convert));
    long right, wrong, none;
    deflate_callers(folded, &right, &wrong, &none);
    cr_expect_eq(wrong, 0, "%s, perf engine: %ld zlib samples under another function (%ld right)",
                 python, wrong, right);
    cr_expect_gt(right + none, 10, "%s: %ld zlib samples", python, right + none);
    free(folded);
    free(err);
    python_run_free(&r);
    free(python);
}

/* The newest CPython present. */
static char *newest_python(void)
{
    static const char *const order[] = {"3.14", "3.13", "3.12", "3.11", NULL};
    const char *home = getenv("HOME");
    for (size_t i = 0; order[i]; i++) {
        char *pattern = xasprintf("%s/.pyenv/versions/%s*/bin/python%s", home ? home : "/root",
                                  order[i], order[i]);
        glob_t g;
        bool found = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
        char *path = found ? xstrdup(g.gl_pathv[g.gl_pathc - 1]) : NULL;
        if (found)
            globfree(&g);
        free(pattern);
        if (path)
            return path;
    }
    if (access("/usr/bin/python3", X_OK) == 0)
        return xstrdup("/usr/bin/python3");
    cr_skip_test("no CPython 3.11 or later here");
    return NULL;
}

Test(python, three_threads_with_their_own_functions, .timeout = 240)
{
    char *python = newest_python();
    struct python_run r;
    python_run_record(&r, "auto", python, "threads", "3", NULL);
    struct fn_counts truth, total;
    read_truth(r.truth_path, &truth);
    report_column(r.out, "cpu", "total_pct", NULL, &total);
    static const char *const steps[] = {"alpha_step", "beta_step", "gamma_step"};
    expect_shares(&total, &truth, steps, 3, 3.0, "three threads, each its own function");
    /* Each function in one thread, each thread its own. */
    const char *by_thread[] = {"report", "-k", "thread,procedure", "--format", "csv", "--no-cache",
                               r.out,    NULL};
    char *csv = ptprof_stdout(by_thread);
    char threads[3][128] = {"", "", ""};
    for (const char *line = csv; (line = strchr(line, '\n')) != NULL;) {
        line++;
        const char *colon = strchr(line, ':'), *comma = strchr(line, ',');
        if (!colon || !comma || colon > comma)
            continue;
        for (size_t i = 0; i < 3; i++) {
            size_t n = strlen(steps[i]);
            if ((size_t)(comma - colon - 1) != n || strncmp(colon + 1, steps[i], n) != 0)
                continue;
            cr_expect(threads[i][0] == '\0', "%s in two threads:\n%s", steps[i], csv);
            snprintf(threads[i], sizeof(threads[i]), "%.*s", (int)(colon - line), line);
        }
    }
    for (size_t i = 0; i < 3; i++)
        cr_expect(threads[i][0], "%s in no thread:\n%s", steps[i], csv);
    cr_expect(strcmp(threads[0], threads[1]) && strcmp(threads[1], threads[2]) &&
                  strcmp(threads[0], threads[2]),
              "two functions in one thread: %s %s %s", threads[0], threads[1], threads[2]);
    free(csv);
    fn_free(&truth);
    fn_free(&total);
    python_run_free(&r);
    free(python);
}

ParameterizedTestParameters(python, a_sleeping_thread_shows_the_python_function_that_waits)
{
    static struct python_param params[] = {{"auto", ""}, {"perf", ""}};
    return cr_make_param_array(struct python_param, params, sizeof(params) / sizeof(*params));
}

/* --wall: time.sleep's wait is charged to the Python function sleeping,
 * on both engines (the perf engine reads a blocked thread as it waits). */
ParameterizedTest(struct python_param *param, python,
                  a_sleeping_thread_shows_the_python_function_that_waits, .timeout = 240)
{
    char *python = newest_python();
    char *err;
    struct python_run r;
    python_run_record(&r, param->engine, python, "naps", "3", &err);
    if (strcmp(param->engine, "perf") == 0 && !strstr(err, "engine:      perf"))
        cr_skip_test("the perf engine is not permitted here");
    struct fn_counts truth, total;
    read_truth(r.truth_path, &truth);
    const char *wall[] = {"--wall", NULL};
    report_column(r.out, "wall", "total_pct", wall, &total);
    double work = fn_get(&total, "work"), nap = fn_get(&total, "nap");
    double want = 100 * fn_get(&truth, "nap") / truth.total;
    if (strcmp(param->engine, "perf") == 0) {
        /* A running thread's frames may be dropped there (docs/python.md):
         * only the sleeping thread's are sure.  Against the whole run,
         * start-up included, nap's share is near the loop's. */
        cr_expect(nap > 0.85 * want && nap < 1.15 * want,
                  "--engine perf: nap has %.1f%% of the wall time, it measured %.1f%% of the "
                  "loop's",
                  nap, want);
    } else {
        cr_assert_gt(work + nap, 50, "work %.1f%%, nap %.1f%%", work, nap);
        double got = 100 * nap / (work + nap);
        cr_expect(fabs(got - want) <= 3.0, "nap has %.1f%% of the wall time, it measured %.1f%%",
                  got, want);
    }
    const char *callees[] = {"report",   "--wall", "--callees",  "nap", "-k", "procedure",
                             "--format", "csv",    "--no-cache", r.out, NULL};
    char *csv = ptprof_stdout(callees);
    cr_expect(strstr(csv, "time_sleep") || strstr(csv, "clock_nanosleep"),
              "nap calls no sleep:\n%s", csv);
    free(csv);
    fn_free(&truth);
    fn_free(&total);
    free(err);
    python_run_free(&r);
    free(python);
}

Test(python, forked_and_executed_children_are_read, .timeout = 240)
{
    char *python = newest_python();
    struct python_run r;
    python_run_record(&r, "auto", python, "children", "0.6", NULL);
    struct fn_counts truth, total;
    read_truth(r.truth_path, &truth);
    report_column(r.out, "cpu", "total_pct", NULL, &total);
    /* The truth holds these two alone: parent_work's share is the rest. */
    static const char *const works[] = {"child_work", "parent_work"};
    expect_shares(&total, &truth, works, 2, 3.0, "two forked children, one executed");
    fn_free(&truth);
    fn_free(&total);
    python_run_free(&r);
    free(python);
}

Test(python, attach_to_a_running_server_and_detach, .timeout = 120)
{
    char *python = newest_python(), *dir = test_mkdtemp(), *script = workload_script();
    char *stop = test_path(dir, "stop");
    const char *server_argv[] = {python, script, "serve", stop, NULL};
    struct spawn_opts so = {.argv = server_argv, .timeout_s = 90};
    struct spawn_proc server;
    spawn_start(&so, &server);
    spawn_pump_until(&server, "ready", 20);
    char *out = test_path(dir, "attached.data"), *pid = xasprintf("%d", (int)server.pid);
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "record", "-d", "--pid", pid, "-o", out, "--duration", "1", NULL};
    struct spawn_result res;
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    spawn_run(&o, &res);
    cr_expect_eq(spawn_exit_code(res.status), 0, "record --pid: %s\n%s",
                 spawn_status_text(res.status), res.err);
    cr_expect(strstr(res.err, "interpreter: CPython 3."), "%s", res.err);
    spawn_result_free(&res);
    /* Detached: the server still works, and ends as it would have. */
    cr_expect_eq(kill(server.pid, 0), 0, "the server is gone after the detach");
    struct fn_counts total;
    report_column(out, "cpu", "total_pct", NULL, &total);
    cr_expect_gt(fn_get(&total, "Handler.handle"), 50, "Handler.handle on %.1f%% of the stacks",
                 fn_get(&total, "Handler.handle"));
    cr_expect_gt(fn_get(&total, "serve"), 50, "serve on %.1f%% of the stacks",
                 fn_get(&total, "serve"));
    FILE *f = fopen(stop, "w");
    cr_assert_not_null(f);
    fclose(f);
    struct spawn_result sres;
    spawn_finish(&server, &sres);
    cr_expect_eq(spawn_exit_code(sres.status), 0, "the server after the detach: %s\n%s",
                 spawn_status_text(sres.status), sres.err);
    cr_expect(strstr(sres.out, "served "), "the server's output: %s", sres.out);
    spawn_result_free(&sres);
    fn_free(&total);
    free(ptprof);
    free(pid);
    free(out);
    free(stop);
    free(script);
    test_rmtree(dir);
    free(dir);
    free(python);
}

Test(python, an_unprivileged_user_sees_python_frames, .timeout = 120)
{
    if (geteuid() != 0)
        cr_skip_test("not root: cannot switch to uid 65534 (the test needs CI's root)");
    /* A Python the throwaway user can run: ~/.pyenv under /root is not. */
    const char *python = "/usr/bin/python3";
    if (access(python, X_OK) != 0)
        cr_skip_test("no %s here", python);
    char *dir = test_mkdtemp();
    cr_assert_eq(chmod(dir, 0777), 0);
    char *setpriv = test_need_tool("setpriv"), *built = build_ptprof(), *script = workload_script();
    char *ptprof = test_path(dir, "ptprof"), *copy = test_path(dir, "shares.py");
    const char *const pairs[][2] = {{built, ptprof}, {script, copy}};
    for (size_t i = 0; i < 2; i++)
        test_copy_executable(pairs[i][0], pairs[i][1]);
    char *out = test_path(dir, "py.data"), *truth = test_path(dir, "truth.txt");
    const char *argv[] = {AS_NOBODY(setpriv), ptprof, "record", "-d", "-o", out, "--", python, copy,
                          "shares",           "2",    truth,    NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s\n%s", spawn_status_text(res.status), res.err);
    cr_expect(strstr(res.err, "interpreter: CPython 3."), "%s", res.err);
    spawn_result_free(&res);
    struct fn_counts total;
    report_column(out, "cpu", "total_pct", NULL, &total);
    cr_expect_gt(fn_get(&total, "forty"), 20, "forty on %.1f%% of the stacks",
                 fn_get(&total, "forty"));
    fn_free(&total);
    free(truth);
    free(out);
    free(copy);
    free(ptprof);
    free(script);
    free(built);
    free(setpriv);
    test_rmtree(dir);
    free(dir);
}

Test(python, an_older_python_gets_one_warning_and_native_frames, .timeout = 120)
{
    const char *home = getenv("HOME");
    char *pattern = xasprintf("%s/.pyenv/versions/3.10*/bin/python3.10", home ? home : "/root");
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0)
        cr_skip_test("no CPython 3.10 here (%s)", pattern);
    char *dir = test_mkdtemp(), *out = test_path(dir, "py.data"), *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "record",      "-o", out,
                          "--",   g.gl_pathv[0], "-c", "x = 0\nfor i in range(3000000): x += i",
                          NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_expect_eq(spawn_exit_code(res.status), 0, "%s\n%s", spawn_status_text(res.status), res.err);
    cr_expect(strstr(res.err, "CPython 3.10 is not supported"), "%s", res.err);
    const char *second = strstr(res.err, "warning");
    cr_expect(second && !strstr(second + 1, "warning"), "more than one warning:\n%s", res.err);
    spawn_result_free(&res);
    struct fn_counts total;
    report_column(out, "cpu", "total_pct", NULL, &total);
    cr_expect_gt(fn_get(&total, "_PyEval_EvalFrameDefault"), 50, "native frames as before");
    fn_free(&total);
    globfree(&g);
    free(ptprof);
    free(out);
    test_rmtree(dir);
    free(dir);
    free(pattern);
}

/* --switch-output: every file names the Python frames alone (its LOCATION
 * records repeated with what else it repeats). */
Test(python, each_switched_file_names_python_frames, .timeout = 120)
{
    char *python = newest_python(), *dir = test_mkdtemp(), *script = workload_script();
    char *out = test_path(dir, "py.data"), *truth = test_path(dir, "truth.txt");
    char *ptprof = build_ptprof();
    const char *argv[] = {
        ptprof, "record", "--switch-output=1s", "-o", out, "--", python, script, "shares", "3.5",
        truth,  NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s\n%s", spawn_status_text(res.status), res.err);
    spawn_result_free(&res);
    char *pattern = xasprintf("%s.*", out);
    glob_t g;
    cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no %s", pattern);
    cr_expect_geq(g.gl_pathc, 3, "%zu files", g.gl_pathc);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct fn_counts total;
        report_column(g.gl_pathv[i], "cpu", "total_pct", NULL, &total);
        cr_expect_gt(fn_get(&total, "forty"), 20, "%s: forty on %.1f%% of the stacks",
                     g.gl_pathv[i], fn_get(&total, "forty"));
        fn_free(&total);
    }
    globfree(&g);
    free(pattern);
    free(ptprof);
    free(truth);
    free(out);
    free(script);
    test_rmtree(dir);
    free(dir);
    free(python);
}

/* Energy per Python function: shares.py meters its own power (each of
 * three functions writes its power into the file `-p file:PATH,mW` reads
 * as it starts) and measures each one's energy as its power times its CPU
 * time; each function's share of the profile's energy must be its own.
 * The ptrace engine (as auto picks for Python) reads the file at every
 * tick, with the frames. */
ParameterizedTestParameters(python, each_python_function_gets_its_own_energy)
{
    static struct python_param params[] = {
        {"auto", "debian3.11"}, {"auto", "3.12"}, {"auto", "3.13"}};
    return cr_make_param_array(struct python_param, params, sizeof(params) / sizeof(*params));
}

ParameterizedTest(struct python_param *param, python, each_python_function_gets_its_own_energy,
                  .timeout = 240)
{
    static const char *const phases[] = {"phase_9w", "phase_3w", "phase_1w"};
    char *python = find_python(param->which);
    char *dir = test_mkdtemp(), *power = test_path(dir, "power"),
         *truth_path = test_path(dir, "truth");
    char *out = test_path(dir, "py.data"), *spec = xasprintf("file:%s,mW", power);
    FILE *f = fopen(power, "w");
    cr_assert_not_null(f);
    fputs("  1000\n", f);
    fclose(f);
    char *ptprof = build_ptprof(), *script = workload_script();
    const char *argv[] = {ptprof, "record", "--engine", param->engine, "-p",   spec,
                          "-o",   out,      "--",       python,        script, "metered",
                          power,  "4",      truth_path, NULL};
    struct spawn_result res;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record %s: %s\n%s", python,
                 spawn_status_text(res.status), res.err);
    spawn_result_free(&res);

    struct fn_counts truth, energy;
    read_truth(truth_path, &truth);
    report_column(out, "energy", "total_pct", NULL, &energy);
    /* On a busy machine the program waits for a CPU now and then, and the
     * energy measured meanwhile is nobody's ([unattributed]): the three
     * functions must hold most of the rest, and share it by their own. */
    double attributed = 100 - fn_get(&energy, "[unattributed]"), sum = 0;
    for (size_t i = 0; i < 3; i++)
        sum += fn_get(&energy, phases[i]);
    cr_expect_gt(sum, 0.8 * attributed,
                 "%s: the phases have %.1f%% of the energy, %.1f%% is "
                 "attributed",
                 python, sum, attributed);
    for (size_t i = 0; i < 3; i++) {
        double got = 100 * fn_get(&energy, phases[i]) / sum;
        double want = 100 * fn_get(&truth, phases[i]) / truth.total;
        cr_expect(fabs(got - want) <= SHARE_TOLERANCE,
                  "%s: %s has %.1f%% of the phases' energy, its power times its CPU time %.1f%%",
                  python, phases[i], got, want);
    }
    for (size_t i = 0; i < 3; i++)
        cr_log_info("%s: %s %.1f%% of the energy in the profile, %.2f J measured", python,
                    phases[i], fn_get(&energy, phases[i]), fn_get(&truth, phases[i]));
    fn_free(&truth);
    fn_free(&energy);
    free(script);
    free(ptprof);
    free(spec);
    free(out);
    free(truth_path);
    free(power);
    test_rmtree(dir);
    free(dir);
    free(python);
}
