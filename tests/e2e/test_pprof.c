/*
 * test_pprof.c - pprof files with the real tools: a ptprof recording
 * converted for go tool pprof (decoded by protoc, the same top functions
 * and shares as ptprof report, inline frames), real pprof files from Go's
 * runtime/pprof and from `go tool pprof -proto` over a libprofiler profile
 * read by ptprof report with the same totals and per-function values as
 * go tool pprof, a round trip pprof -> ptprof -> pprof, every analysis
 * command on a pprof file, and damaged files as clean errors.  Needs go,
 * protoc, libprofiler (scripts/install-deps --test) and the workloads.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/corpus.h"
#include "../lib/spawn.h"
#include "symbol/build_id.h"
#include "util/slurp.h"

#define LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so"
/* Enough samples that one more or less somewhere is a small share. */
#define MIN_SAMPLES 300
#define MAX_SECONDS 16

/* --- tools ------------------------------------------------------------------ */

/* Go offline, with its caches in the test's directory. */
struct go_env {
    char *vars[4];
    const char *env[12];
};

static void go_env_init(struct go_env *g, const char *dir)
{
    cr_assert_geq(asprintf(&g->vars[0], "HOME=%s", dir), 0);
    cr_assert_geq(asprintf(&g->vars[1], "GOCACHE=%s/gocache", dir), 0);
    cr_assert_geq(asprintf(&g->vars[2], "GOPATH=%s/gopath", dir), 0);
    g->vars[3] = NULL;
    const char *fixed[] = {"GO111MODULE=off",   "GOFLAGS=",        "GOPROXY=off",
                           "GOTOOLCHAIN=local", "GOTELEMETRY=off", "PPROF_TMPDIR"};
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        g->env[n++] = g->vars[i];
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        g->env[n++] = fixed[i];
    g->env[n] = NULL;
}

static void go_env_free(struct go_env *g)
{
    for (int i = 0; i < 3; i++)
        free(g->vars[i]);
}

static void run_ok(const char *const *argv, const char *const *env, struct spawn_result *res)
{
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 150};
    spawn_run(&o, res);
    cr_assert_eq(spawn_exit_code(res->status), 0, "%s %s: %s\n%.3000s", argv[0], argv[1],
                 spawn_status_text(res->status), res->err);
}

/* --- per-function values --------------------------------------------------------- */

struct fn_value {
    char name[256];
    double v[2];
};

struct fn_values {
    struct fn_value *items;
    size_t n;
    double total[2];
};

static void fn_add(struct fn_values *c, const char *name, const double *v)
{
    size_t i = 0;
    while (i < c->n && strcmp(c->items[i].name, name) != 0)
        i++;
    if (i == c->n) {
        c->items = realloc(c->items, (c->n + 1) * sizeof(*c->items));
        memset(&c->items[i], 0, sizeof(c->items[i]));
        snprintf(c->items[i].name, sizeof(c->items[i].name), "%s", name);
        c->n++;
    }
    for (int k = 0; k < 2; k++) {
        c->items[i].v[k] += v[k];
        c->total[k] += v[k];
    }
}

static const double *fn_get(const struct fn_values *c, const char *name)
{
    static const double zero[2];
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].name, name) == 0)
            return c->items[i].v;
    return zero;
}

/* An address no one could name: pprof leaves its location without a line,
 * ptprof calls it BINARY+0xOFFSET (or [unmapped]). */
#define UNNAMED "[unnamed]"

static bool unnamed(const char *name)
{
    const char *plus = strstr(name, "+0x");
    return strcmp(name, "[unmapped]") == 0 ||
           (plus && plus[3] && strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3));
}

/* go tool pprof -raw FILE: per function of each sample's leaf (the first
 * line of its first location, as pprof's flat column counts), the sample
 * count and the CPU time in seconds. */
static void pprof_raw(const struct go_env *g, const char *file, struct fn_values *out)
{
    char *go = test_need_tool("go");
    struct spawn_result res;
    run_ok((const char *[]){go, "tool", "pprof", "-raw", file, NULL}, g->env, &res);
    memset(out, 0, sizeof(*out));
    char *types = strstr(res.out, "Samples:\n");
    cr_assert_not_null(types, "no samples in:\n%.2000s", res.out);
    types += strlen("Samples:\n");
    int col_count = -1, col_cpu = -1, col = 0;
    for (char *t = types; *t != '\n'; col++) {
        size_t w = strcspn(t, " \n");
        if (strncmp(t, "samples/count", 13) == 0)
            col_count = col;
        if (strncmp(t, "cpu/nanoseconds", 15) == 0)
            col_cpu = col;
        t += w;
        t += *t == ' ';
    }
    cr_assert(col_count >= 0 && col_cpu >= 0, "types: %.200s", types);
    char *locs = strstr(types, "\nLocations\n");
    cr_assert_not_null(locs);
    /* Locations: "  ID: 0xADDR M=N function file:line s=0", inlined
     * callers on the lines after it. */
    struct {
        unsigned long id;
        char name[256];
    } *names = NULL;
    size_t nnames = 0;
    for (char *line = locs + strlen("\nLocations\n"); *line && strncmp(line, "Mappings", 8);) {
        char *end = strchr(line, '\n');
        if (!end)
            break;
        *end = '\0';
        unsigned long id;
        int at = 0;
        if (sscanf(line, " %lu: %*s %n", &id, &at) == 1 && at > 0) {
            char *rest = line + at;
            if (strncmp(rest, "M=", 2) == 0)
                rest += strcspn(rest, " ") + (rest[strcspn(rest, " ")] == ' ');
            /* NAME FILE:LINE s=START, NAME possibly with spaces
             * ("[syscall read]"). */
            char *s = strstr(rest, " s=");
            if (s)
                *s = '\0';
            char *where = strrchr(rest, ' ');
            if (where && strchr(where, ':'))
                *where = '\0';
            names = realloc(names, (nnames + 1) * sizeof(*names));
            names[nnames].id = id;
            /* Code without a symbol is named by its FDE's start
             * (BINARY+0xSTART): counted as unnamed, as the report's side is. */
            snprintf(names[nnames].name, sizeof(names[nnames].name), "%s",
                     *rest && !unnamed(rest) ? rest : UNNAMED);
            nnames++;
        }
        line = end + 1;
    }
    /* Samples: "  V1 V2: LOC LOC ...", then label lines. */
    for (char *line = types + strcspn(types, "\n") + 1; line < locs;) {
        char *end = strchr(line, '\n');
        *end = '\0';
        char *colon = strchr(line, ':');
        if (colon && !strchr(line, '[')) {
            double vals[8];
            int nv = 0;
            for (char *v = line; v < colon && nv < 8;) {
                char *e;
                double x = strtod(v, &e);
                if (e == v)
                    break;
                vals[nv++] = x;
                v = e;
            }
            unsigned long leaf = strtoul(colon + 1, NULL, 10);
            const char *name = "[none]";
            for (size_t i = 0; i < nnames; i++)
                if (names[i].id == leaf)
                    name = names[i].name;
            cr_assert_gt(nv, col_cpu);
            double v[2] = {vals[col_count], vals[col_cpu] / 1e9};
            fn_add(out, name, v);
        }
        line = end + 1;
    }
    free(names);
    spawn_result_free(&res);
    free(go);
}

/* One CSV field from *AT (quotes as RFC 4180). */
static void csv_field(const char **at, char *buf, size_t size)
{
    const char *p = *at;
    size_t n = 0;
    bool quoted = *p == '"';
    p += quoted;
    for (; *p && *p != '\n' && (quoted || *p != ','); p++) {
        if (quoted && *p == '"') {
            if (p[1] != '"') {
                quoted = false;
                continue;
            }
            p++;
        }
        if (n + 1 < size)
            buf[n++] = *p;
    }
    buf[n] = '\0';
    *at = *p == ',' ? p + 1 : p;
}

/* ptprof report -k procedure: per function its self samples and CPU
 * seconds (and the CPU share in percent in SHARE, when not NULL). */
static void report_rows(const char *file, struct fn_values *out, struct fn_values *share)
{
    char *ptprof = build_ptprof();
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "report", "--format", "csv", "-k", "procedure", "--metric",
                            "cpu", "--limit", "100", "--threshold", "0", "--no-cache", file, NULL},
           NULL, &res);
    memset(out, 0, sizeof(*out));
    if (share)
        memset(share, 0, sizeof(*share));
    const char *line = res.out;
    int c_samples = -1, c_cpu = -1, c_pct = -1;
    char field[512];
    for (int i = 0; *line && *line != '\n'; i++) {
        csv_field(&line, field, sizeof(field));
        c_samples = strcmp(field, "samples") == 0 ? i : c_samples;
        c_cpu = strcmp(field, "cpu_time") == 0 ? i : c_cpu;
        c_pct = strcmp(field, "cpu_time_pct") == 0 ? i : c_pct;
    }
    cr_assert(c_samples > 0 && c_cpu > 0 && c_pct > 0, "columns: %.300s", res.out);
    while (*line == '\n' && line[1]) {
        line++;
        char key[512];
        csv_field(&line, key, sizeof(key));
        double v[2] = {0, 0}, pct = 0;
        for (int i = 1; *line && *line != '\n'; i++) {
            csv_field(&line, field, sizeof(field));
            if (i == c_samples)
                v[0] = strtod(field, NULL);
            if (i == c_cpu)
                v[1] = strtod(field, NULL);
            if (i == c_pct)
                pct = strtod(field, NULL);
        }
        if (v[0] == 0 && v[1] == 0)
            continue; /* callers only: no self */
        fn_add(out, unnamed(key) ? UNNAMED : key, v);
        if (share)
            fn_add(share, key, (double[]){pct, 0});
    }
    spawn_result_free(&res);
    free(ptprof);
}

/* The same samples and CPU time, function by function, as pprof's flat. */
static void expect_same_values(const struct fn_values *report, const struct fn_values *pprof,
                               const char *what)
{
    cr_expect_float_eq(report->total[0], pprof->total[0], 1e-9, "%s: samples %.0f, pprof %.0f",
                       what, report->total[0], pprof->total[0]);
    cr_expect_float_eq(report->total[1], pprof->total[1], 1e-6, "%s: cpu %.6f s, pprof %.6f s",
                       what, report->total[1], pprof->total[1]);
    for (size_t i = 0; i < pprof->n; i++) {
        const char *name = pprof->items[i].name;
        const double *r = fn_get(report, name);
        cr_expect_float_eq(r[0], pprof->items[i].v[0], 1e-9, "%s: %s: %.0f samples, pprof %.0f",
                           what, name, r[0], pprof->items[i].v[0]);
        cr_expect_float_eq(r[1], pprof->items[i].v[1], 1e-6, "%s: %s: %.6f s, pprof %.6f s", what,
                           name, r[1], pprof->items[i].v[1]);
    }
    cr_expect_eq(report->n, pprof->n, "%s: %zu functions in the report, %zu in pprof", what,
                 report->n, pprof->n);
}

/* go tool pprof -top: each function's flat share of the CPU time. */
static void pprof_top(const struct go_env *g, const char *file, struct fn_values *out)
{
    char *go = test_need_tool("go");
    struct spawn_result res;
    run_ok((const char *[]){go, "tool", "pprof", "-top", "-nodecount=100000", "-sample_index=cpu",
                            file, NULL},
           g->env, &res);
    memset(out, 0, sizeof(*out));
    char *t = strstr(res.out, "flat  flat%");
    cr_assert_not_null(t, "%.2000s", res.out);
    for (char *line = strchr(t, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char flat[64], cum[64];
        double pct, sum, cpct;
        int at = 0;
        if (sscanf(line + 1, "%63s %lf%% %lf%% %63s %lf%% %n", flat, &pct, &sum, cum, &cpct, &at) !=
                5 ||
            at == 0)
            continue;
        char name[256];
        size_t len = strcspn(line + 1 + at, "\n");
        static const char inl[] = " (inline)";
        if (len >= sizeof(inl) - 1 &&
            strncmp(line + 1 + at + len - (sizeof(inl) - 1), inl, sizeof(inl) - 1) == 0)
            len -= sizeof(inl) - 1;
        snprintf(name, sizeof(name), "%.*s", (int)len, line + 1 + at);
        if (pct > 0)
            fn_add(out, name, (double[]){pct, 0});
    }
    spawn_result_free(&res);
    free(go);
}

static const struct fn_value *top_of(const struct fn_values *c)
{
    const struct fn_value *top = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (!top || c->items[i].v[0] > top->v[0])
            top = &c->items[i];
    cr_assert_not_null(top);
    return top;
}

static void fn_free(struct fn_values *c)
{
    free(c->items);
    memset(c, 0, sizeof(*c));
}

/* --- a recording for go tool pprof ------------------------------------------------- */

static size_t samples_in(const char *file)
{
    char *ptprof = build_ptprof();
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "info", file, NULL}, NULL, &res);
    unsigned long n = 0;
    const char *s = strstr(res.out, "samples:");
    cr_assert_not_null(s);
    sscanf(s, "samples: %lu", &n);
    spawn_result_free(&res);
    free(ptprof);
    return n;
}

/* Record WORKLOAD at 1 kHz into DIR/NAME.data, longer until it has
 * MIN_SAMPLES, and convert it to DIR/NAME.pb.gz. */
static void record_and_convert(const char *dir, const char *workload, char **data, char **pb)
{
    char *ptprof = build_ptprof(), *bin = build_workload(workload);
    cr_assert_geq(asprintf(data, "%s/%s.data", dir, workload), 0);
    cr_assert_geq(asprintf(pb, "%s/%s.pb.gz", dir, workload), 0);
    for (int seconds = 2;; seconds *= 2) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%d", seconds);
        struct spawn_result res;
        run_ok((const char *[]){ptprof, "record", "-f", "1000", "-o", *data, "--", bin, secs, NULL},
               NULL, &res);
        spawn_result_free(&res);
        if (samples_in(*data) >= MIN_SAMPLES || seconds >= MAX_SECONDS)
            break;
    }
    /* The name chooses the format; .gz is the only compression. */
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", *data, "-o", *pb, "--no-cache", NULL}, NULL, &res);
    spawn_result_free(&res);
    free(ptprof);
    free(bin);
}

static char *protoc_decode(const char *file)
{
    struct slurp s;
    cr_assert_eq(slurp_path(file, SLURP_DEFAULT_MAX, &s), 0);
    cr_expect_eq(s.compression, COMPRESSION_GZIP, "%s is not gzipped", file);
    cr_assert_gt(s.len, 0);
    cr_expect_eq(s.data[0], 0x0a, "%s: gzipped twice, or not a profile", file);
    char *protoc = test_need_tool("protoc"), *schema = corpus_dir("src/interop"), *path;
    cr_assert_geq(asprintf(&path, "--proto_path=%s", schema), 0);
    struct spawn_opts o = {.argv =
                               (const char *[]){protoc, path, "--decode=perftools.profiles.Profile",
                                                "pprof.proto", NULL},
                           .input = s.data,
                           .input_len = s.len,
                           .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "protoc: %s", res.err);
    char *out = strdup(res.out);
    spawn_result_free(&res);
    slurp_free(&s);
    free(protoc);
    free(schema);
    free(path);
    return out;
}

Test(pprof_e2e, recording_converts_for_protoc_and_go_tool_pprof, .timeout = 300)
{
    char *dir = test_mkdtemp(), *data, *pb;
    struct go_env g;
    go_env_init(&g, dir);
    record_and_convert(dir, "callers", &data, &pb);

    /* protoc decodes it with the schema: types, strings, the program's
     * mapping with its build-id, names. */
    char *text = protoc_decode(pb);
    cr_expect_not_null(strstr(text, "string_table: \"\"\n"));
    const char *first = strstr(text, "string_table: ");
    cr_expect(first && strncmp(first, "string_table: \"\"\n", 17) == 0, "\"\" is not first");
    static const char *const strings[] = {"samples", "count", "cpu", "nanoseconds", "wall",
                                          "pid",     "tid",   "hot", "via_a",       "main"};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        char want[64];
        snprintf(want, sizeof(want), "string_table: \"%s\"\n", strings[i]);
        cr_expect_not_null(strstr(text, want), "no %s", want);
    }
    char *bin = build_workload("callers");
    uint8_t id[64];
    int n = build_id_read(bin, id, sizeof(id));
    cr_assert_gt(n, 0, "%s has no build-id", bin);
    char hex[129], want[200];
    build_id_hex(id, (size_t)n, hex);
    snprintf(want, sizeof(want), "string_table: \"%s\"\n", hex);
    cr_expect_not_null(strstr(text, want), "no build-id %s", hex);
    cr_expect_not_null(strstr(text, "has_functions: true"));
    cr_expect_not_null(strstr(text, "period: 1000000\n"), "period of 1 kHz");

    /* go tool pprof: the same top function, and every function with 2 % or
     * more has the share ptprof report gives it, within 1 point. */
    struct fn_values theirs, ours, ours_share;
    pprof_top(&g, pb, &theirs);
    report_rows(data, &ours, &ours_share);
    cr_expect_str_eq(top_of(&theirs)->name, top_of(&ours_share)->name);
    size_t compared = 0;
    for (size_t i = 0; i < ours_share.n; i++) {
        const char *name = ours_share.items[i].name;
        double a = ours_share.items[i].v[0], b = fn_get(&theirs, name)[0];
        if (a < 2 && b < 2)
            continue;
        cr_expect_leq(fabs(a - b), 1.0, "%s: report %.2f %%, go tool pprof %.2f %%", name, a, b);
        compared++;
    }
    cr_expect_geq(compared, 2);
    /* And exactly the same values, read back by -raw, and by ptprof from
     * the pprof file. */
    struct fn_values raw, back;
    pprof_raw(&g, pb, &raw);
    expect_same_values(&ours, &raw, "recording");
    report_rows(pb, &back, NULL);
    expect_same_values(&back, &ours, "recording read back");
    fn_free(&back);

    fn_free(&theirs);
    fn_free(&ours);
    fn_free(&ours_share);
    fn_free(&raw);
    free(text);
    free(bin);
    free(data);
    free(pb);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}

Test(pprof_e2e, inline_frames_reach_pprof, .timeout = 300)
{
    char *dir = test_mkdtemp(), *data, *pb;
    struct go_env g;
    go_env_init(&g, dir);
    record_and_convert(dir, "inlines", &data, &pb);
    /* mix() has no code of its own: pprof sees it as the first line of
     * locations in caller_a and caller_b. */
    char *go = test_need_tool("go");
    struct spawn_result res;
    run_ok((const char *[]){go, "tool", "pprof", "-raw", pb, NULL}, g.env, &res);
    bool a = false, b = false;
    for (char *line = strstr(res.out, "\nLocations\n"); line && *line;
         line = strchr(line + 1, '\n')) {
        if (!strstr(line + 1, " mix ") || strstr(line + 1, " mix ") > strchr(line + 1, '\n'))
            continue;
        char *next = strchr(line + 1, '\n');
        a |= next && strncmp(next + 1 + strspn(next + 1, " "), "caller_a ", 9) == 0;
        b |= next && strncmp(next + 1 + strspn(next + 1, " "), "caller_b ", 9) == 0;
    }
    cr_expect(a && b, "mix inlined into caller_a and caller_b not found:\n%.4000s", res.out);
    spawn_result_free(&res);
    /* The mapping says so. */
    char *text = protoc_decode(pb);
    cr_expect_not_null(strstr(text, "has_inline_frames: true"));
    free(text);
    free(go);
    free(data);
    free(pb);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}

/* --- real pprof files ------------------------------------------------------------------ */

/* A Go program's own CPU profile (runtime/pprof), built and run offline. */
static char *go_profile(const char *dir, const struct go_env *g)
{
    char *go = test_need_tool("go"), *src_dir = corpus_dir("tests/workloads/go"), *src, *bin, *out;
    cr_assert_geq(asprintf(&src, "%s/cpuburn.go", src_dir), 0);
    cr_assert_geq(asprintf(&bin, "%s/cpuburn", dir), 0);
    cr_assert_geq(asprintf(&out, "%s/go.pb.gz", dir), 0);
    struct spawn_result res;
    run_ok((const char *[]){go, "build", "-o", bin, src, NULL}, g->env, &res);
    spawn_result_free(&res);
    run_ok((const char *[]){bin, out, "2", NULL}, NULL, &res);
    spawn_result_free(&res);
    free(go);
    free(src_dir);
    free(src);
    free(bin);
    return out;
}

Test(pprof_e2e, go_runtime_profile_reads_as_go_tool_pprof_reads_it, .timeout = 300)
{
    char *dir = test_mkdtemp();
    struct go_env g;
    go_env_init(&g, dir);
    char *file = go_profile(dir, &g);
    struct fn_values theirs, ours;
    pprof_raw(&g, file, &theirs);
    cr_assert_geq(theirs.total[0], 20, "too few samples: %.0f", theirs.total[0]);
    report_rows(file, &ours, NULL);
    expect_same_values(&ours, &theirs, "runtime/pprof");
    cr_expect_gt(fn_get(&ours, "main.spinner")[0], 0);
    cr_expect_gt(fn_get(&ours, "main.mix")[0] + fn_get(&ours, "main.heavy")[0], 0);

    /* Round trip: converted by ptprof, pprof sees the same values. */
    char *back;
    cr_assert_geq(asprintf(&back, "%s/back.pb.gz", dir), 0);
    char *ptprof = build_ptprof();
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", file, "-o", back, "--no-cache", NULL}, NULL, &res);
    spawn_result_free(&res);
    struct fn_values again;
    pprof_raw(&g, back, &again);
    expect_same_values(&again, &theirs, "round trip");

    fn_free(&theirs);
    fn_free(&ours);
    fn_free(&again);
    free(ptprof);
    free(back);
    free(file);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}

Test(pprof_e2e, libprofiler_profile_through_go_tool_pprof_proto, .timeout = 300)
{
    cr_assert_eq(access(LIBPROFILER, R_OK), 0, "%s is missing (scripts/install-deps)", LIBPROFILER);
    char *dir = test_mkdtemp();
    struct go_env g;
    go_env_init(&g, dir);
    char *bin = build_workload("callers"), *prof, *pb, *env_out;
    cr_assert_geq(asprintf(&prof, "%s/callers.prof", dir), 0);
    cr_assert_geq(asprintf(&pb, "%s/callers.pb.gz", dir), 0);
    cr_assert_geq(asprintf(&env_out, "CPUPROFILE=%s", prof), 0);
    struct spawn_result res;
    run_ok((const char *[]){bin, "2", NULL},
           (const char *[]){"LD_PRELOAD=" LIBPROFILER, env_out, "CPUPROFILE_FREQUENCY=250", NULL},
           &res);
    spawn_result_free(&res);
    /* pprof symbolizes it from the binary and writes profile.proto. */
    char *go = test_need_tool("go");
    struct spawn_opts o = {
        .argv = (const char *[]){go, "tool", "pprof", "-proto", "-output", pb, bin, prof, NULL},
        .env = g.env,
        .timeout_s = 150};
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "go tool pprof -proto: %s", res.err);
    spawn_result_free(&res);

    struct fn_values theirs, ours;
    pprof_raw(&g, pb, &theirs);
    cr_assert_geq(theirs.total[0], 20, "too few samples: %.0f", theirs.total[0]);
    report_rows(pb, &ours, NULL);
    expect_same_values(&ours, &theirs, "gperftools via pprof");
    cr_expect_gt(fn_get(&ours, "hot")[0], 0);

    fn_free(&theirs);
    fn_free(&ours);
    free(go);
    free(bin);
    free(prof);
    free(pb);
    free(env_out);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}

/* --- profiles of other things than time ----------------------------------------------------- */

static int run_ptprof(const char *const *args, struct spawn_result *res);

/* Go's own heap and mutex profiles (runtime/pprof), built and run offline:
 * DIR/heap.pb.gz and DIR/mutex.pb.gz. */
static void go_heap_mutex(const char *dir, const struct go_env *g, char **heap, char **mutex)
{
    char *go = test_need_tool("go"), *src_dir = corpus_dir("tests/workloads/go"), *src, *bin;
    cr_assert_geq(asprintf(&src, "%s/heapmutex.go", src_dir), 0);
    cr_assert_geq(asprintf(&bin, "%s/heapmutex", dir), 0);
    cr_assert_geq(asprintf(heap, "%s/heap.pb.gz", dir), 0);
    cr_assert_geq(asprintf(mutex, "%s/mutex.pb.gz", dir), 0);
    struct spawn_result res;
    run_ok((const char *[]){go, "build", "-o", bin, src, NULL}, g->env, &res);
    spawn_result_free(&res);
    run_ok((const char *[]){bin, *heap, *mutex, NULL}, NULL, &res);
    spawn_result_free(&res);
    free(go);
    free(src_dir);
    free(src);
    free(bin);
}

/* go tool pprof -top -sample_index=INDEX -unit=UNIT FILE, nothing dropped:
 * each function's flat (v[0]) and cum (v[1]) in UNIT; *TOTAL the whole. */
static void pprof_top_index(const struct go_env *g, const char *file, const char *index,
                            const char *unit, struct fn_values *out, double *total)
{
    char *go = test_need_tool("go"), *si, *un;
    cr_assert_geq(asprintf(&si, "-sample_index=%s", index), 0);
    cr_assert_geq(asprintf(&un, "-unit=%s", unit), 0);
    struct spawn_result res;
    run_ok((const char *[]){go, "tool", "pprof", "-top", "-nodecount=100000", "-nodefraction=0",
                            "-edgefraction=0", si, un, file, NULL},
           g->env, &res);
    memset(out, 0, sizeof(*out));
    char *of = strstr(res.out, "% of ");
    cr_assert_not_null(of, "%.2000s", res.out);
    *total = strtod(of + 5, NULL);
    char *t = strstr(res.out, "flat  flat%");
    cr_assert_not_null(t, "%.2000s", res.out);
    for (char *line = strchr(t, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char flat[64], cum[64];
        double pct, sum, cpct;
        int at = 0;
        if (sscanf(line + 1, "%63s %lf%% %lf%% %63s %lf%% %n", flat, &pct, &sum, cum, &cpct, &at) !=
                5 ||
            at == 0)
            continue;
        size_t len = strcspn(line + 1 + at, "\n");
        static const char inl[] = " (inline)";
        if (len >= sizeof(inl) - 1 &&
            strncmp(line + 1 + at + len - (sizeof(inl) - 1), inl, sizeof(inl) - 1) == 0)
            len -= sizeof(inl) - 1;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)len, line + 1 + at);
        double v[2] = {strtod(flat, NULL), strtod(cum, NULL)};
        if (v[0] != 0 || v[1] != 0)
            fn_add(out, name, v);
    }
    spawn_result_free(&res);
    free(si);
    free(un);
    free(go);
}

/* ptprof report --metric METRIC -k procedure: each function's self (v[0])
 * and total (v[1]) times SCALE; *TOTAL (unless NULL) the value metric's
 * whole (JSON). */
static void report_metric(const char *file, const char *metric, double scale, struct fn_values *out,
                          double *total)
{
    char *ptprof = build_ptprof();
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "report", "--format", "csv", "-k", "procedure", "--metric",
                            metric, "--threshold", "0", "--no-cache", file, NULL},
           NULL, &res);
    memset(out, 0, sizeof(*out));
    const char *line = res.out;
    int c_self = -1, c_total = -1;
    char field[512];
    for (int i = 0; *line && *line != '\n'; i++) {
        csv_field(&line, field, sizeof(field));
        c_self = strcmp(field, "self") == 0 ? i : c_self;
        c_total = strcmp(field, "total") == 0 ? i : c_total;
    }
    cr_assert(c_self > 0 && c_total > 0, "columns: %.300s", res.out);
    while (*line == '\n' && line[1]) {
        line++;
        char key[512];
        csv_field(&line, key, sizeof(key));
        double v[2] = {0, 0};
        for (int i = 1; *line && *line != '\n'; i++) {
            csv_field(&line, field, sizeof(field));
            if (i == c_self)
                v[0] = strtod(field, NULL) * scale;
            if (i == c_total)
                v[1] = strtod(field, NULL) * scale;
        }
        if (v[0] != 0 || v[1] != 0)
            fn_add(out, key, v);
    }
    spawn_result_free(&res);
    if (!total) {
        free(ptprof);
        return;
    }
    run_ok((const char *[]){ptprof, "report", "--format", "json", "--metric", metric, "--no-cache",
                            file, NULL},
           NULL, &res);
    char want[160];
    snprintf(want, sizeof(want), "\"metric\":\"%s\"", metric);
    cr_expect_not_null(strstr(res.out, want), "%.300s", res.out);
    snprintf(want, sizeof(want), "\"%s\":", metric);
    const char *values = strstr(res.out, "\"values\":{");
    cr_assert_not_null(values, "%.1000s", res.out);
    const char *v = strstr(values, want);
    cr_assert_not_null(v, "no total of %s: %.1000s", metric, values);
    *total = strtod(v + strlen(want), NULL) * scale;
    spawn_result_free(&res);
    free(ptprof);
}

/* Every function with a value on either side has the same flat and cum
 * (self and total), within TOLERANCE (a unit's rounding). */
static void expect_same_top(const struct fn_values *ours, double our_total,
                            const struct fn_values *theirs, double their_total, double tolerance,
                            const char *what)
{
    cr_expect_float_eq(our_total, their_total, tolerance, "%s: total %.0f, pprof %.0f", what,
                       our_total, their_total);
    for (size_t i = 0; i < theirs->n; i++) {
        const char *name = theirs->items[i].name;
        const double *r = fn_get(ours, name), *p = theirs->items[i].v;
        cr_expect_float_eq(r[0], p[0], tolerance, "%s: %s: self %.0f, pprof flat %.0f", what, name,
                           r[0], p[0]);
        cr_expect_float_eq(r[1], p[1], tolerance, "%s: %s: total %.0f, pprof cum %.0f", what, name,
                           r[1], p[1]);
    }
    for (size_t i = 0; i < ours->n; i++)
        cr_expect(fn_get(theirs, ours->items[i].name)[1] != 0, "%s: %s is not in pprof's top", what,
                  ours->items[i].name);
}

static const struct {
    const char *index, *unit;
    double scale; /* from report's unit to pprof's */
} go_indexes[] = {
    {"alloc_objects", "count", 1}, {"alloc_space", "B", 1},     {"inuse_objects", "count", 1},
    {"inuse_space", "B", 1},       {"contentions", "count", 1}, {"delay", "ns", 1e9},
};

/* The heap and mutex profiles of Go's runtime/pprof: every sample type is
 * a metric of its own name, each reported as go tool pprof -top
 * -sample_index=... reports it (flat = self, cum = total), the default
 * being the profile's own; converted by ptprof to pprof and to folded
 * stacks, the values stay exact. */
Test(pprof_e2e, go_heap_and_mutex_profiles_report_like_go_tool_pprof_top, .timeout = 300)
{
    char *dir = test_mkdtemp(), *heap, *mutex;
    struct go_env g;
    go_env_init(&g, dir);
    go_heap_mutex(dir, &g, &heap, &mutex);
    char *ptprof = build_ptprof(), *heap_back, *mutex_back, *folded;
    cr_assert_geq(asprintf(&heap_back, "%s/heap.back.pb.gz", dir), 0);
    cr_assert_geq(asprintf(&mutex_back, "%s/mutex.back.pb.gz", dir), 0);
    cr_assert_geq(asprintf(&folded, "%s/alloc.folded", dir), 0);
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", heap, "-o", heap_back, "--no-cache", NULL}, NULL,
           &res);
    spawn_result_free(&res);
    run_ok((const char *[]){ptprof, "convert", mutex, "-o", mutex_back, "--no-cache", NULL}, NULL,
           &res);
    spawn_result_free(&res);

    for (size_t i = 0; i < sizeof(go_indexes) / sizeof(go_indexes[0]); i++) {
        const char *index = go_indexes[i].index;
        bool is_heap = i < 4;
        const char *file = is_heap ? heap : mutex, *back = is_heap ? heap_back : mutex_back;
        struct fn_values theirs, ours, again;
        double their_total, our_total, again_total;
        pprof_top_index(&g, file, index, go_indexes[i].unit, &theirs, &their_total);
        cr_expect_gt(their_total, 0, "%s: nothing in %s", index, file);
        report_metric(file, index, go_indexes[i].scale, &ours, &our_total);
        /* Nanoseconds come back from seconds printed with 9 decimals. */
        double tolerance = go_indexes[i].scale > 1 ? 2 : 0;
        expect_same_top(&ours, our_total, &theirs, their_total, tolerance, index);
        /* Round trip: what ptprof writes, pprof reads as it read the original. */
        pprof_top_index(&g, back, index, go_indexes[i].unit, &again, &again_total);
        expect_same_top(&again, again_total, &theirs, their_total, 0, "round trip");
        fn_free(&theirs);
        fn_free(&ours);
        fn_free(&again);
    }

    /* Without --metric, the profile's default: inuse_space, and delay (the
     * last sample type: Go's mutex profile names none), as pprof shows. */
    run_ok((const char *[]){ptprof, "report", "--format", "json", "--no-cache", heap, NULL}, NULL,
           &res);
    cr_expect_not_null(strstr(res.out, "\"metric\":\"inuse_space\""), "%.300s", res.out);
    spawn_result_free(&res);
    run_ok((const char *[]){ptprof, "report", "--format", "json", "--no-cache", mutex, NULL}, NULL,
           &res);
    cr_expect_not_null(strstr(res.out, "\"metric\":\"delay\""), "%.300s", res.out);
    spawn_result_free(&res);
    /* A metric the profile lacks is a clear error listing those it has. */
    cr_expect_eq(
        run_ptprof((const char *[]){"report", "--metric", "heat", "--no-cache", heap, NULL}, &res),
        2);
    cr_expect_not_null(strstr(res.err, "no metric 'heat'"), "%s", res.err);
    cr_expect_not_null(strstr(res.err, "alloc_space"), "%s", res.err);
    spawn_result_free(&res);

    /* Folded stacks of alloc_space: each stack's bytes, exactly: read back,
     * their samples are pprof's alloc_space, function by function. */
    run_ok((const char *[]){ptprof, "convert", heap, "-o", folded, "--metric", "alloc_space",
                            "--no-cache", NULL},
           NULL, &res);
    spawn_result_free(&res);
    struct fn_values theirs, ours;
    double their_total;
    pprof_top_index(&g, heap, "alloc_space", "B", &theirs, &their_total);
    report_metric(folded, "samples", 1, &ours, NULL);
    for (size_t i = 0; i < theirs.n; i++)
        cr_expect_float_eq(fn_get(&ours, theirs.items[i].name)[0], theirs.items[i].v[0], 0,
                           "folded: %s: %.0f samples, pprof flat %.0f B", theirs.items[i].name,
                           fn_get(&ours, theirs.items[i].name)[0], theirs.items[i].v[0]);
    fn_free(&theirs);
    fn_free(&ours);

    free(folded);
    free(heap_back);
    free(mutex_back);
    free(ptprof);
    free(heap);
    free(mutex);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}

/* --- every command, and damage ----------------------------------------------------------- */

static int run_ptprof(const char *const *args, struct spawn_result *res)
{
    const char *argv[16];
    char *ptprof = build_ptprof();
    size_t n = 0;
    argv[n++] = ptprof;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    spawn_run(&o, res);
    free(ptprof);
    return spawn_exit_code(res->status);
}

Test(pprof_e2e, every_command_reads_it_and_damage_is_a_clean_error, .timeout = 300)
{
    char *dir = test_mkdtemp();
    struct go_env g;
    go_env_init(&g, dir);
    char *file = go_profile(dir, &g);
    char *svg, *html, *plain, *cut, *bad, *out;
    cr_assert_geq(asprintf(&svg, "%s/flame.svg", dir), 0);
    cr_assert_geq(asprintf(&html, "%s/timeline.html", dir), 0);
    cr_assert_geq(asprintf(&plain, "%s/plain.pb", dir), 0);
    cr_assert_geq(asprintf(&cut, "%s/cut.pb", dir), 0);
    cr_assert_geq(asprintf(&bad, "%s/bad.pb.gz", dir), 0);
    cr_assert_geq(asprintf(&out, "%s/out.data", dir), 0);
    struct spawn_result res;
    const char *const *cmds[] = {
        (const char *[]){"report", "--no-cache", file, NULL},
        (const char *[]){"info", file, NULL},
        (const char *[]){"compare", "--no-cache", file, file, NULL},
        (const char *[]){"flamegraph", "--no-cache", file, "-o", svg, NULL},
        (const char *[]){"timeline", "--no-cache", file, "-o", html, NULL},
        (const char *[]){"convert", file, "-o", out, NULL},
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        int rc = run_ptprof(cmds[i], &res);
        cr_expect_eq(rc, 0, "ptprof %s: %s", cmds[i][0], res.err);
        spawn_result_free(&res);
    }
    cr_expect(test_file_exists(svg) && test_file_exists(html) && test_file_exists(out));
    run_ptprof((const char *[]){"info", file, NULL}, &res);
    cr_expect_not_null(strstr(res.out, "pprof"), "%s", res.out);
    spawn_result_free(&res);

    /* Plain, then cut short: an error naming the file and the offset. */
    struct slurp s;
    cr_assert_eq(slurp_path(file, SLURP_DEFAULT_MAX, &s), 0);
    FILE *f = fopen(plain, "wb");
    cr_assert_eq(fwrite(s.data, 1, s.len, f), s.len);
    fclose(f);
    f = fopen(cut, "wb");
    cr_assert_eq(fwrite(s.data, 1, s.len * 2 / 3, f), s.len * 2 / 3);
    fclose(f);
    slurp_free(&s);
    cr_expect_eq(run_ptprof((const char *[]){"report", "--no-cache", plain, NULL}, &res), 0);
    spawn_result_free(&res);
    cr_expect_eq(run_ptprof((const char *[]){"report", "--no-cache", cut, NULL}, &res), 2);
    cr_expect_not_null(strstr(res.err, cut), "%s", res.err);
    cr_expect_not_null(strstr(res.err, ": offset "), "%s", res.err);
    spawn_result_free(&res);

    /* A file of the kept corpus with a location that does not exist,
     * gzipped: convert refuses it and writes nothing. */
    char *corpus = corpus_dir("tests/fuzz/corpus/pprof"), *src, *gz;
    cr_assert_geq(asprintf(&src, "%s/bad-location-id", corpus), 0);
    cr_assert_geq(asprintf(&gz, "%s/bad.pb", dir), 0);
    size_t len;
    char *data = test_read_file(src, &len);
    cr_assert_not_null(data);
    f = fopen(gz, "wb");
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    char *gzip = test_need_tool("gzip");
    run_ok((const char *[]){gzip, "-f", gz, NULL}, NULL, &res);
    spawn_result_free(&res);
    char *never;
    cr_assert_geq(asprintf(&never, "%s/never.pb", dir), 0);
    cr_expect_eq(run_ptprof((const char *[]){"convert", bad, "-o", never, NULL}, &res), 2);
    cr_expect_not_null(strstr(res.err, "location 9"), "%s", res.err);
    cr_expect_not_null(strstr(res.err, ": offset "), "%s", res.err);
    cr_expect(!test_file_exists(never), "convert wrote %s from a damaged input", never);
    spawn_result_free(&res);
    free(never);

    free(gzip);
    free(data);
    free(src);
    free(gz);
    free(corpus);
    free(svg);
    free(html);
    free(plain);
    free(cut);
    free(bad);
    free(out);
    free(file);
    go_env_free(&g);
    test_rmtree(dir);
    free(dir);
}
