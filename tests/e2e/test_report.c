/*
 * test_report.c - "ptprof report" and "ptprof compare" on real recordings:
 * the shares workload's own measurement against the report in both raw
 * formats, callers and callees on the callers workload (70/30), a table
 * that fits an 80-column terminal, the mean of two runs, comparisons that
 * agree with the reports they come from, JSON that parses, energy on a
 * simulated RAPL tree, and exit codes.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fake_powercap.h"
#include "engines.h"
#include "../lib/spawn.h"
#include "util/xalloc.h"

/* --- running ptprof ---------------------------------------------------------- */

#define RUN_FMT "status: %s\n--- stdout ---\n%.3000s\n--- stderr ---\n%.3000s"
#define RUN_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err

static void run(struct spawn_result *res, const char *const *argv, const char *const *env,
                double timeout_s)
{
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = timeout_s};
    spawn_run(&o, res);
}

/* Run ptprof with ARGS (NULL-terminated, without the program) expecting
 * exit 0; its stdout, allocated. */
static char *ptprof_ok(const char *const *args)
{
    const char *argv[40];
    char *ptprof = build_ptprof();
    cr_assert(access(ptprof, X_OK) == 0, "%s is missing: run make", ptprof);
    size_t n = 0;
    argv[n++] = ptprof;
    for (; args[n - 1] && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct spawn_result res;
    run(&res, argv, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof %s %s: " RUN_FMT, args[0],
                 args[1] ? args[1] : "", RUN_ARGS(&res));
    char *out = xstrdup(res.out);
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

/* Record WORKLOAD ARGS into OUT with the record options OPTS. */
static void record(const char *out, const char *const *opts, const char *workload,
                   const char *const *args, const char *const *env)
{
    char *ptprof = build_ptprof(), *prog = build_workload(workload);
    cr_assert(access(prog, X_OK) == 0, "%s is missing: run make workloads", prog);
    const char *argv[40];
    size_t n = 0;
    argv[n++] = ptprof;
    argv[n++] = "record";
    argv[n++] = "-o";
    argv[n++] = out;
    for (size_t i = 0; opts && opts[i]; i++)
        argv[n++] = opts[i];
    argv[n++] = "--";
    argv[n++] = prog;
    for (size_t i = 0; args && args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_result res;
    run(&res, argv, env, 90);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record %s: " RUN_FMT, workload, RUN_ARGS(&res));
    spawn_result_free(&res);
    free(prog);
    free(ptprof);
}

/* --- CSV ------------------------------------------------------------------- */

#define MAX_FIELDS 32
#define MAX_ROWS 4096

struct csv {
    char *text;
    size_t ncols, nrows;
    char *header[MAX_FIELDS];
    char **rows[MAX_ROWS];
};

/* Fields of one line (RFC 4180 quoting), advancing *P past it. */
static size_t csv_line(char **p, char **fields, size_t max)
{
    size_t n = 0;
    char *s = *p;
    for (;;) {
        char *out = s, *start = s;
        if (*s == '"') {
            start = out = ++s;
            while (*s && !(*s == '"' && s[1] != '"')) {
                if (*s == '"')
                    s++;
                *out++ = *s++;
            }
            if (*s == '"')
                s++;
        } else {
            while (*s && *s != ',' && *s != '\n')
                *out++ = *s++;
        }
        char sep = *s;
        *out = '\0';
        if (n < max)
            fields[n++] = start;
        if (sep != ',') {
            *p = sep ? s + 1 : s;
            return n;
        }
        s++;
    }
}

static void csv_parse(struct csv *c, const char *text)
{
    memset(c, 0, sizeof(*c));
    c->text = xstrdup(text);
    char *p = c->text;
    c->ncols = csv_line(&p, c->header, MAX_FIELDS);
    while (*p && c->nrows < MAX_ROWS) {
        char **f = xcalloc(MAX_FIELDS, sizeof(*f));
        size_t n = csv_line(&p, f, MAX_FIELDS);
        cr_assert_eq(n, c->ncols, "row %zu has %zu fields, the header %zu", c->nrows, n, c->ncols);
        c->rows[c->nrows++] = f;
    }
}

static void csv_free(struct csv *c)
{
    for (size_t i = 0; i < c->nrows; i++)
        free(c->rows[i]);
    free(c->text);
}

static size_t csv_col(const struct csv *c, const char *name)
{
    for (size_t i = 0; i < c->ncols; i++)
        if (strcmp(c->header[i], name) == 0)
            return i;
    cr_assert_fail("no column %s", name);
    return 0;
}

/* Column NAME of the row whose key is KEY; NAN when there is no such row. */
static double csv_get(const struct csv *c, const char *key, const char *name)
{
    size_t col = csv_col(c, name);
    for (size_t i = 0; i < c->nrows; i++)
        if (strcmp(c->rows[i][0], key) == 0)
            return strtod(c->rows[i][col], NULL);
    return NAN;
}

static double csv_sum(const struct csv *c, const char *name)
{
    size_t col = csv_col(c, name);
    double s = 0;
    for (size_t i = 0; i < c->nrows; i++)
        s += strtod(c->rows[i][col], NULL);
    return s;
}

/* --- JSON validity ---------------------------------------------------------- */

static bool have_python(void)
{
    return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

/* A small JSON reader for what the tests look up: the number after the
 * first "NAME": in TEXT. */
static double json_number_after(const char *text, const char *name)
{
    char *pat = xasprintf("\"%s\":", name);
    const char *at = strstr(text, pat);
    cr_assert_not_null(at, "no %s in %.300s", pat, text);
    double v = strtod(at + strlen(pat), NULL);
    free(pat);
    return v;
}

static void expect_json(const char *dir, const char *text)
{
    if (!have_python()) {
        cr_log_warn("python3 is not installed: JSON validity not checked");
        return;
    }
    char *path = xasprintf("%s/out.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    char *cmd = xasprintf("python3 -m json.tool '%s' >/dev/null", path);
    cr_expect_eq(system(cmd), 0, "does not parse as JSON:\n%.2000s", text);
    free(cmd);
    free(path);
}

/* --- shares: report against the workload's own measurement ------------------- */

#define NFUNCS 4
static const char *const shares_funcs[NFUNCS] = {"work_heavy", "work_medium", "work_light",
                                                 "work_tiny"};

static void truth_shares(const char *path, double *pct)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", path);
    double ns[NFUNCS] = {0}, total = 0;
    for (int f = 0; f < NFUNCS; f++) {
        const char *at = strstr(text, shares_funcs[f]);
        cr_assert_not_null(at, "%s: no line for %s", path, shares_funcs[f]);
        ns[f] = strtod(at + strlen(shares_funcs[f]), NULL);
        total += ns[f];
    }
    cr_assert_gt(total, 0);
    for (int f = 0; f < NFUNCS; f++)
        pct[f] = 100.0 * ns[f] / total;
    free(text);
}

/* Record shares (1 thread, SECONDS) in FORMAT into DIR/NAME; the truth
 * shares into TRUTH when not NULL. */
static char *record_shares(const char *dir, const char *name, const char *format,
                           const char *seconds, double *truth)
{
    char *out = xasprintf("%s/%s", dir, name);
    char *truth_path = xasprintf("%s/%s.truth", dir, name);
    char *truth_env = xasprintf("SHARES_OUT=%s", truth_path);
    const char *env[] = {truth_env, NULL};
    const char *opts[] = {"--format", format, NULL};
    const char *args[] = {"1", seconds, NULL};
    record(out, opts, "shares", args, env);
    if (truth)
        truth_shares(truth_path, truth);
    free(truth_env);
    free(truth_path);
    return out;
}

/* The shares' CPU percentages in report CSV of PROFILE (with -s DIR). */
static void report_shares(const char *profile, const char *bindir, double *pct)
{
    const char *args[] = {"report", "--format", "csv", "-s", bindir, profile, NULL};
    char *out = ptprof_ok(args);
    struct csv c;
    csv_parse(&c, out);
    cr_assert_str_eq(c.header[0], "binary:procedure");
    for (int f = 0; f < NFUNCS; f++) {
        char *key = xasprintf("shares:%s", shares_funcs[f]);
        pct[f] = csv_get(&c, key, "total_pct");
        cr_assert(!isnan(pct[f]), "%s: no row %s in\n%s", profile, key, out);
        free(key);
    }
    csv_free(&c);
    free(out);
}

static char *workload_dir(void)
{
    char *prog = build_workload("shares");
    *strrchr(prog, '/') = '\0';
    return prog;
}

/* Percentage points a share may differ from the truth at ~1500 samples on
 * a machine that may be busy. */
#define SHARE_TOLERANCE 3.0

Test(report_cli, both_formats_report_the_measured_shares, .timeout = 180)
{
    char *dir = test_mkdtemp(), *bindir = workload_dir();
    double native[NFUNCS], pperf[NFUNCS], truth_n[NFUNCS], truth_p[NFUNCS];
    char *n = record_shares(dir, "shares.native", "native", "1.5", truth_n);
    char *p = record_shares(dir, "shares.pperf", "pperf", "1.5", truth_p);
    report_shares(n, bindir, native);
    report_shares(p, bindir, pperf);
    for (int f = 0; f < NFUNCS; f++) {
        const char *fn = shares_funcs[f];
        cr_expect(fabs(native[f] - truth_n[f]) <= SHARE_TOLERANCE,
                  "native: %s has %.1f%% of the CPU time, the run measured %.1f%%", fn, native[f],
                  truth_n[f]);
        cr_expect(fabs(pperf[f] - truth_p[f]) <= SHARE_TOLERANCE,
                  "pperf: %s has %.1f%% of the CPU time, the run measured %.1f%%", fn, pperf[f],
                  truth_p[f]);
    }
    free(n);
    free(p);
    test_rmtree(dir);
    free(dir);
    free(bindir);
}

/* --- callers ---------------------------------------------------------------- */

static void callers_split(const char *workload, const char *mode)
{
    char *dir = test_mkdtemp();
    char *out = xasprintf("%s/callers.data", dir);
    const char *opts[] = {"-g", mode, NULL};
    const char *args[] = {"2", NULL};
    record(out, opts, workload, args, NULL);

    const char *callers[] = {"report", "--callers", "hot", "--format", "csv", out, NULL};
    char *text = ptprof_ok(callers);
    struct csv c;
    csv_parse(&c, text);
    char *ka = xasprintf("%s:via_a", workload), *kb = xasprintf("%s:via_b", workload);
    double a = csv_get(&c, ka, "total_pct"), b = csv_get(&c, kb, "total_pct");
    cr_assert(!isnan(a) && !isnan(b), "%s -g %s: no via_a/via_b among the callers:\n%s", workload,
              mode, text);
    cr_expect(a + b >= 80, "%s -g %s: via_a and via_b call hot %.1f%% of its time:\n%s", workload,
              mode, a + b, text);
    double share = a / (a + b);
    cr_expect(share > 0.56 && share < 0.84,
              "%s -g %s: via_a has %.1f%% of hot's callers' time (expected ~70%%):\n%s", workload,
              mode, 100 * share, text);
    csv_free(&c);
    free(text);

    const char *callees[] = {"report", "--callees", "via_a", "--format", "csv", out, NULL};
    text = ptprof_ok(callees);
    csv_parse(&c, text);
    char *kh = xasprintf("%s:hot", workload);
    double hot = csv_get(&c, kh, "total_pct");
    cr_expect(hot >= 90, "%s -g %s: hot is %.1f%% of what via_a calls:\n%s", workload, mode, hot,
              text);
    cr_expect(fabs(csv_sum(&c, "total_pct") - 100) < 0.01, "callees and [self] make 100%%");
    csv_free(&c);
    free(text);
    free(kh);
    free(ka);
    free(kb);
    free(out);
    test_rmtree(dir);
    free(dir);
}

Test(report_callers, via_a_and_via_b_call_hot_70_30_fp, .timeout = 120)
{
    callers_split("callers", "fp");
}

Test(report_callers, via_a_and_via_b_call_hot_70_30_dwarf, .timeout = 120)
{
    callers_split("callers-nofp", "dwarf");
}

/* --- a table on a terminal ------------------------------------------------------ */

/* Run ptprof ARGS with stdout (and stderr) on a pseudo-terminal, COLUMNS
 * set to COLUMNS; what it printed, with the terminal's \r\n made \n. */
static char *run_on_pty(const char *const *args, const char *columns)
{
    char *ptprof = build_ptprof();
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    char *slave_name = xstrdup(ptsname(master));
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int slave = open(slave_name, O_RDWR | O_NOCTTY);
        if (slave < 0)
            _exit(126);
        dup2(slave, STDOUT_FILENO);
        dup2(slave, STDERR_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, STDIN_FILENO);
        setenv("COLUMNS", columns, 1);
        const char *argv[16];
        size_t n = 0;
        argv[n++] = ptprof;
        for (size_t i = 0; args[i] && n < 15; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(ptprof, (char *const *)argv);
        _exit(127);
    }
    char *out = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        char buf[4096];
        ssize_t k = read(master, buf, sizeof(buf));
        if (k <= 0)
            break; /* EIO once the child has closed the terminal */
        out = xgrow(out, &cap, len + (size_t)k + 1, 1);
        for (ssize_t i = 0; i < k; i++)
            if (buf[i] != '\r')
                out[len++] = buf[i];
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ptprof on a terminal: %s\n%s",
              spawn_status_text(status), out ? out : "");
    close(master);
    free(slave_name);
    free(ptprof);
    if (!out)
        out = xstrdup("");
    out[len] = '\0';
    return out;
}

static size_t widest_line(const char *text)
{
    size_t widest = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = 0;
        for (const char *p = line; p < (end ? end : line + strlen(line)); p++)
            n += ((unsigned char)*p & 0xc0) != 0x80;
        widest = n > widest ? n : widest;
        if (!end)
            break;
        line = end + 1;
    }
    return widest;
}

Test(report_cli, the_table_fits_an_80_column_terminal, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *out = xasprintf("%s/callers.data", dir);
    const char *args[] = {"1", NULL};
    record(out, NULL, "callers", args, NULL);
    /* -k file,procedure,line: long source paths */
    const char *rep[] = {"report", "-k", "file,procedure,line", out, NULL};
    char *on_tty = run_on_pty(rep, "80");
    cr_expect_leq(widest_line(on_tty), 80, "wider than the terminal:\n%s", on_tty);
    cr_expect_not_null(strstr(on_tty, "hot"), "%s", on_tty);
    cr_expect_not_null(strstr(on_tty, "samples"), "%s", on_tty);
    /* Into a pipe the same table is not cut. */
    char *piped = ptprof_ok(rep);
    cr_expect_gt(widest_line(piped), 80,
                 "nothing in this table is wider than 80 columns; the "
                 "test proves nothing:\n%s",
                 piped);
    free(piped);
    free(on_tty);
    free(out);
    test_rmtree(dir);
    free(dir);
}

/* --- several runs, and comparisons ----------------------------------------------- */

Test(report_cli, the_mean_of_two_runs_and_their_comparison, .timeout = 180)
{
    char *dir = test_mkdtemp();
    char *a = record_shares(dir, "a.data", "native", "1", NULL);
    char *b = record_shares(dir, "b.data", "native", "1", NULL);
    const char *ra[] = {"report", "--format", "csv", a, NULL};
    const char *rb[] = {"report", "--format", "csv", b, NULL};
    const char *rab[] = {"report", "--format", "csv", a, b, NULL};
    char *ta = ptprof_ok(ra), *tb = ptprof_ok(rb), *tab = ptprof_ok(rab);
    struct csv ca, cb, cab;
    csv_parse(&ca, ta);
    csv_parse(&cb, tb);
    csv_parse(&cab, tab);
    cr_assert_gt(cab.nrows, 3);
    static const char *const cols[] = {"samples", "cpu_time", "wall_time", "total_cpu_time"};
    for (size_t i = 0; i < cab.nrows; i++) {
        const char *key = cab.rows[i][0];
        for (size_t k = 0; k < 4; k++) {
            double va = csv_get(&ca, key, cols[k]), vb = csv_get(&cb, key, cols[k]);
            double mean = ((isnan(va) ? 0 : va) + (isnan(vb) ? 0 : vb)) / 2;
            double got = csv_get(&cab, key, cols[k]);
            cr_expect(fabs(got - mean) <= 1e-6 * (fabs(mean) + 1e-9),
                      "%s %s: %g in the mean, runs %g and %g", key, cols[k], got, va, vb);
        }
    }
    cr_expect(fabs(csv_sum(&cab, "cpu_time_pct") - 100) < 1e-3);

    const char *jab[] = {"report", "--format", "json", a, b, NULL};
    char *json = ptprof_ok(jab);
    cr_expect_eq(json_number_after(json, "runs"), 2);
    expect_json(dir, json);
    free(json);

    /* A profile against itself: every error 0. */
    const char *self[] = {"compare", "--format", "csv", "--error", "relative_error", a, a, NULL};
    char *t = ptprof_ok(self);
    struct csv cs;
    csv_parse(&cs, t);
    cr_assert_eq(cs.ncols, 4, "key, baseline, value, error: %s", t);
    for (size_t i = 0; i < cs.nrows; i++)
        cr_expect_eq(strtod(cs.rows[i][3], NULL), 0, "%s: %s", cs.rows[i][0], cs.rows[i][3]);
    csv_free(&cs);
    free(t);

    /* a against b: the absolute errors per key, and their sum, are what
     * the two reports say. */
    const char *cmp[] = {"compare", "--format", "csv", "--error", "absolute_error", a, b, NULL};
    const char *agg[] = {"compare",     "--format", "csv", "--error", "absolute_error",
                         "--aggregate", "sum",      a,     b,         NULL};
    t = ptprof_ok(cmp);
    csv_parse(&cs, t);
    double sum = 0;
    for (size_t i = 0; i < cs.nrows; i++) {
        const char *key = cs.rows[i][0];
        double va = csv_get(&ca, key, "cpu_time"), vb = csv_get(&cb, key, "cpu_time");
        double expected = fabs((isnan(vb) ? 0 : vb) - (isnan(va) ? 0 : va));
        double got = strtod(cs.rows[i][3], NULL);
        cr_expect(fabs(got - expected) <= 1e-6 * (expected + 1e-9), "%s: error %g, reports %g %g",
                  key, got, va, vb);
        sum += got;
    }
    csv_free(&cs);
    free(t);
    t = ptprof_ok(agg);
    csv_parse(&cs, t);
    cr_assert_eq(cs.nrows, 1);
    cr_expect_str_eq(cs.header[1], "sum");
    cr_expect(fabs(strtod(cs.rows[0][1], NULL) - sum) <= 1e-6 * (sum + 1e-9));
    csv_free(&cs);
    free(t);

    const char *cj[] = {"compare",      "--format", "json", "--aggregate", "wrmse", "--names",
                        "first,second", a,          b,      NULL};
    json = ptprof_ok(cj);
    cr_expect_not_null(strstr(json, "\"name\":\"second\""));
    expect_json(dir, json);
    free(json);
    const char *tree[] = {"report", "--tree", "--format", "json", a, NULL};
    json = ptprof_ok(tree);
    expect_json(dir, json);
    free(json);

    csv_free(&ca);
    csv_free(&cb);
    csv_free(&cab);
    free(ta);
    free(tb);
    free(tab);
    free(a);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* --- energy on a simulated RAPL tree -------------------------------------------- */

#define DOMAIN "intel-rapl:0"
/* 5 W in steps of a millisecond: the profile reads the counter every
 * 5 ms, and coarser steps would make an interval's energy 0 or double. */
#define STEP_UJ 5000u /* per 1 ms tick: 5 W */
#define TICK_NS 1000000L

struct advancer {
    struct fake_powercap *fp;
    atomic_bool stop;
};

static void *advance(void *arg)
{
    struct advancer *a = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&a->stop)) {
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        if (fake_powercap_advance(a->fp, DOMAIN, STEP_UJ) != 0)
            break;
    }
    return NULL;
}

/* 1.5 s of the shares workload at a steady 5 W, with either engine: the
 * rows add up to the energy measured over the profile; each function's
 * energy is its share of the CPU time (the energy of an interval is split
 * over the threads by their CPU time in it); what no thread used is the
 * [unattributed] row, in proportion to the time nothing ran. */
ENGINE_TEST(report_energy, rows_add_up_to_the_measured_energy, .timeout = 120)
{
    const char *engine = engine_p->name;
    static struct advancer adv;
    adv.fp = fake_powercap_create();
    cr_assert_not_null(adv.fp);
    cr_assert_eq(fake_powercap_add(adv.fp, DOMAIN, "package-0", 1000, 0), 0);
    atomic_store(&adv.stop, false);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, advance, &adv), 0);

    char *dir = test_mkdtemp();
    char *out = xasprintf("%s/energy.data", dir);
    char *env_root = xasprintf("PTPROF_SYSFS_ROOT=%s", fake_powercap_root(adv.fp));
    const char *env[] = {env_root, NULL};
    const char *opts[] = {"--engine", engine, "-p", "rapl", "-f", "200", NULL};
    const char *args[] = {"1", "1.5", NULL};
    record(out, opts, "shares", args, env);
    atomic_store(&adv.stop, true);
    pthread_join(thread, NULL);

    const char *rep[] = {"report", "--metric", "energy", "--format", "json", out, NULL};
    char *json = ptprof_ok(rep);
    expect_json(dir, json);
    double total = json_number_after(json, "energy");
    double duration = json_number_after(json, "duration");
    /* The time ptrace held the threads stopped is theirs (metrics.h). */
    double held = json_number_after(json, "latency");
    cr_expect(total > 0.8 * 5 * duration && total < 1.2 * 5 * duration,
              "%s engine: %.3f J in %.3f s at 5 W", engine, total, duration);
    free(json);

    const char *csvargs[] = {"report", "--metric", "energy", "--format", "csv", out, NULL};
    char *text = ptprof_ok(csvargs);
    struct csv c;
    csv_parse(&c, text);
    double rows = csv_sum(&c, "energy");
    cr_expect(fabs(rows - total) <= 0.001 * total, "%s engine: rows %.6f J, measured %.6f J",
              engine, rows, total);
    cr_expect(fabs(csv_sum(&c, "energy_pct") - 100) < 0.1);
    double un = csv_get(&c, "[unattributed]:[unattributed]", "energy");
    cr_expect(!isnan(un) && un > 0, "%s engine: no [unattributed] row:\n%s", engine, text);
    csv_free(&c);
    free(text);

    /* Each function's energy against its CPU time. */
    text = ptprof_ok(csvargs);
    csv_parse(&c, text);
    double cpu_total = csv_sum(&c, "cpu_time");
    static const char *const funcs[] = {"shares:work_heavy", "shares:work_medium",
                                        "shares:work_light"};
    for (size_t i = 0; i < 3; i++) {
        double e = csv_get(&c, funcs[i], "energy"), t = csv_get(&c, funcs[i], "cpu_time");
        double e_share = e / (total - un), t_share = t / cpu_total;
        cr_expect(fabs(e_share - t_share) < 0.03,
                  "%s engine: %s has %.1f%% of the attributed energy and %.1f%% of the CPU time",
                  engine, funcs[i], 100 * e_share, 100 * t_share);
    }
    /* At a steady power, the energy nobody used is the time nothing ran;
     * of the time the profiler held the thread (ptrace), the thread's is
     * the share it ran of the rest (metrics.h). */
    double idle = 1 - cpu_total / (duration - (isfinite(held) ? held : 0));
    cr_expect(fabs(un / total - idle) < 0.05,
              "%s engine: %.1f%% of the energy unattributed, nothing ran %.1f%% of the time",
              engine, 100 * un / total, 100 * idle);
    csv_free(&c);
    free(text);

    free(env_root);
    free(out);
    test_rmtree(dir);
    free(dir);
    fake_powercap_destroy(adv.fp);
}

/* --- exit codes ------------------------------------------------------------------ */

Test(report_cli, exit_codes)
{
    char *ptprof = build_ptprof();
    cr_assert(access(ptprof, X_OK) == 0, "%s is missing: run make", ptprof);
    char *dir = test_mkdtemp();
    char *garbage = xasprintf("%s/garbage", dir);
    FILE *f = fopen(garbage, "w");
    cr_assert_not_null(f);
    fputs("not a profile at all\n", f);
    fclose(f);
    char *missing = xasprintf("%s/missing", dir);
    struct {
        const char *argv[8];
        int code;
    } cases[] = {
        {{ptprof, "report", "--help", NULL}, 0},
        {{ptprof, "compare", "--help", NULL}, 0},
        /* "report" alone reads ptprof.data (new_user tests it in a directory of its own). */
        {{ptprof, "report", "--format", "xml", garbage, NULL}, 1},
        {{ptprof, "report", "--limit", "-3", garbage, NULL}, 1},
        {{ptprof, "report", "--threshold", "101", garbage, NULL}, 1},
        {{ptprof, "report", "-k", "binary,colour", garbage, NULL}, 1},
        /* Which metrics exist depends on the profile: it is read first. */
        {{ptprof, "report", "--metric", "heat", garbage, NULL}, 2},
        {{ptprof, "report", "--metric", "", garbage, NULL}, 1},
        {{ptprof, "report", "--tree", "--callers", "f", garbage, NULL}, 1},
        {{ptprof, "report", "--bogus", garbage, NULL}, 1},
        {{ptprof, "report", missing, NULL}, 2},
        {{ptprof, "report", garbage, NULL}, 2},
        {{ptprof, "compare", garbage, NULL}, 1},
        {{ptprof, "compare", "--error", "square", garbage, garbage, NULL}, 1},
        {{ptprof, "compare", "--aggregate", "median", garbage, garbage, NULL}, 1},
        {{ptprof, "compare", "--names", "a,b,c", garbage, garbage, NULL}, 1},
        {{ptprof, "compare", garbage, missing, NULL}, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct spawn_result res;
        run(&res, cases[i].argv, NULL, 30);
        cr_expect_eq(spawn_exit_code(res.status), cases[i].code, "case %zu (%s %s): " RUN_FMT, i,
                     cases[i].argv[1], cases[i].argv[2] ? cases[i].argv[2] : "", RUN_ARGS(&res));
        spawn_result_free(&res);
    }
    test_rmtree(dir);
    free(dir);
    free(garbage);
    free(missing);
    free(ptprof);
}

/* --limit 100 keeps every row, the caller of 0 % self included, whether
 * the self shares' sum rounds over 100 (915, 856 and 30 of 1801:
 * 100.00000000000001) or under it (786, 781 and 3 of 1570): the rows a
 * report showed once depended on that rounding (analyze/select.h). */
Test(report_cli, limit_100_keeps_every_row_however_the_shares_round)
{
    static const char *const files[] = {"main;a 915\nmain;b 856\nmain;c 30\n",
                                        "main;a 786\nmain;b 781\nmain;c 3\n"};
    char *dir = test_mkdtemp(), *path = xasprintf("%s/shares.folded", dir);
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(files[i], f);
        cr_assert_eq(fclose(f), 0);
        char *out =
            ptprof_ok((const char *[]){"report", "--format", "csv", "-k", "procedure", "--metric",
                                       "samples", "--limit", "100", path, NULL});
        struct csv c;
        csv_parse(&c, out);
        cr_expect_eq(c.nrows, 4, "file %zu:\n%s", i, out);
        cr_expect_float_eq(csv_get(&c, "main", "total_samples"), csv_sum(&c, "samples"), 1e-9,
                           "file %zu:\n%s", i, out);
        csv_free(&c);
        free(out);
    }
    test_rmtree(dir);
    free(path);
    free(dir);
}
