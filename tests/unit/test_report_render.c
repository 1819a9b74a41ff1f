/*
 * test_report_render.c - report output (src/render): the documented CSV
 * header and columns, CSV quoting, JSON that parses (checked with
 * python3 when it is installed) and its string escaper, tables that fit a
 * terminal's width, the width itself (on a pseudo-terminal), call trees
 * and comparisons.
 */
#include "test_report_fake.h"

#include "analyze/calltree.h"
#include "analyze/compare.h"
#include "analyze/select.h"
#include "render/compare_render.h"
#include "render/csv.h"
#include "render/json.h"
#include "render/report_render.h"
#include "render/text_table.h"
#include "render/termwidth.h"
#include "render/tree_render.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* docs/report.md, "CSV". */
#define DOCUMENTED_COLUMNS                                                                         \
    "samples,cpu_time,cpu_time_pct,wall_time,wall_time_pct,energy,energy_pct,power,executions,"    \
    "self,self_pct,total,total_pct,total_samples,total_cpu_time,total_wall_time,total_energy,"     \
    "total_power,total_executions"

struct capture {
    FILE *f;
    char *buf;
    size_t len;
};

static void capture_open(struct capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    cr_assert_not_null(c->f);
}

static char *capture_close(struct capture *c)
{
    fclose(c->f);
    return c->buf;
}

static const char long_name[] =
    "a_function_with_a_very_long_name_that_goes_on_and_on_well_past_any_terminal";

/* A function name holding every character CSV and JSON must escape. */
static const struct sym_frame nasty = {
    "lib,\"odd\".so", "", "f(int, char)\t\"q\"\\\x01\xff", "", "", 0, false};
static const struct sym_frame longf = {"prog", "", long_name, "", "", 0, false};
static const struct sym_location nasty_loc = {0, 1, &nasty, false};
static const struct sym_location long_loc = {0, 1, &longf, false};

static const struct sym_location *render_resolve(void *ctx, uint32_t pid, uint64_t t, uint64_t pc,
                                                 bool ra)
{
    if (pc == 0x9000)
        return &nasty_loc;
    if (pc == 0x9100)
        return &long_loc;
    return fake_resolve(ctx, pid, t, pc, ra);
}

/* main, foo, the nasty and the long-named function, with a power channel. */
static void sample_report(struct report *r, bool energy)
{
    static struct prof_channel ch[] = {{"package-0", "W", PMU_KIND_POWER}};
    static double v0[] = {3}, v1[] = {4};
    static struct prof_thread_sample s0[] = {{1, 1, PC_MAIN, 0, 0, -1, 0},
                                             {1, 2, PC_FOO, 0, 0, -1, 0},
                                             {1, 3, 0x9000, 0, 0, -1, 0},
                                             {1, 4, 0x9100, 0, 0, -1, 0}};
    static struct prof_thread_sample s1[] = {{1, 1, PC_MAIN, 400000000, 0, -1, 0},
                                             {1, 2, PC_FOO, 300000000, 0, -1, 0},
                                             {1, 3, 0x9000, 200000000, 0, -1, 0},
                                             {1, 4, 0x9100, 50000000, 0, -1, 0}};
    static struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE(1000000000, s1)};
    samples[0].values = v0;
    samples[1].values = v1;
    struct profile p = {.samples = samples, .nsamples = 2, .frequency = 1000};
    if (energy) {
        p.channels = ch;
        p.nchannels = 1;
    }
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct aggregate *a = aggregate_new(kt, &wo.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct frame_resolver res = {render_resolve, NULL};
    struct walk_totals t;
    char *error = NULL;
    cr_assert_eq(walk_profile(&p, &res, &wo, kt, nt, &v, &t, &error), 0);
    aggregate_report(a, &t, metric_builtin(METRIC_CPU), r);
    aggregate_free(a);
    strtab_free(nt);
    strtab_free(kt);
}

/* Split one CSV line into fields (RFC 4180), returning how many. */
static size_t csv_split(const char *line, char fields[][256], size_t max)
{
    size_t n = 0;
    const char *p = line;
    for (;;) {
        char *f = fields[n];
        size_t len = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                if (len < 255)
                    f[len++] = *p;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\n')
                if (len < 255)
                    f[len++] = *p++;
        }
        f[len] = '\0';
        n++;
        if (*p != ',' || n == max)
            break;
        p++;
    }
    return n;
}

Test(report_render, csv_header_and_columns_as_documented)
{
    struct report r;
    sample_report(&r, true);
    report_select(&r, -1, -1);
    struct capture c;
    capture_open(&c);
    cr_assert_eq(render_report(c.f, &r, RENDER_CSV, 0, NULL, 0), 0);
    char *out = capture_close(&c);
    const char *header = "binary:procedure," DOCUMENTED_COLUMNS "\n";
    cr_assert(strncmp(out, header, strlen(header)) == 0, "header: %.400s", out);

    /* One line per row, 20 fields each, in the report's order. */
    char fields[32][256];
    size_t lines = 0;
    double cpu_pct_sum = 0, energy_sum = 0;
    bool saw_nasty = false;
    for (const char *line = strchr(out, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        cr_assert_eq(csv_split(line, fields, 32), 20, "line %zu: %.200s", lines, line);
        double cpu = strtod(fields[2], NULL), cpu_pct = strtod(fields[3], NULL);
        cr_expect(fabs(cpu_pct - 100 * cpu / r.totals.cpu_s) < 1e-6);
        cr_expect_str_eq(fields[11], fields[3], "self_pct is cpu_time_pct for --metric cpu");
        cr_expect_str_eq(fields[13], fields[11], "no stacks: total_pct = self_pct");
        cpu_pct_sum += cpu_pct;
        energy_sum += strtod(fields[6], NULL);
        if (strcmp(fields[0], "lib,\"odd\".so:f(int, char)\t\"q\"\\\x01\xff") == 0)
            saw_nasty = true;
        lines++;
    }
    cr_expect_eq(lines, r.nrows);
    cr_expect(saw_nasty, "quoting must round-trip:\n%s", out);
    cr_expect(fabs(cpu_pct_sum - 100) < 1e-5);
    cr_expect(fabs(energy_sum - r.totals.energy_j) < 1e-6 * r.totals.energy_j,
              "energy rows (with [unattributed]) add up: %g vs %g", energy_sum, r.totals.energy_j);
    free(out);
    report_free(&r);

    /* Without a measurement, energy and power are empty, not 0. */
    sample_report(&r, false);
    capture_open(&c);
    cr_assert_eq(render_report(c.f, &r, RENDER_CSV, 0, NULL, 0), 0);
    out = capture_close(&c);
    const char *line = strchr(out, '\n') + 1;
    cr_assert_eq(csv_split(line, fields, 32), 20);
    cr_expect_str_eq(fields[6], "");
    cr_expect_str_eq(fields[8], "");
    cr_expect_str_eq(fields[17], "");
    free(out);
    report_free(&r);
}

Test(report_render, csv_fields_and_numbers)
{
    struct capture c;
    capture_open(&c);
    csv_field(c.f, "plain");
    fputc('|', c.f);
    csv_field(c.f, "a,b");
    fputc('|', c.f);
    csv_field(c.f, "say \"hi\"");
    fputc('|', c.f);
    csv_field(c.f, "two\nlines");
    fputc('|', c.f);
    csv_number(c.f, 0.125);
    fputc('|', c.f);
    csv_number(c.f, -0.0);
    fputc('|', c.f);
    csv_number(c.f, INFINITY);
    char *out = capture_close(&c);
    cr_expect_str_eq(out, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|0.125|0|inf");
    free(out);
}

Test(report_render, json_strings_are_escaped)
{
    struct capture c;
    capture_open(&c);
    json_string(c.f, "q\"b\\n\n\t\x01\x7f é \xff \xc3 \xed\xa0\x80 \xf0\x9f\x98\x80");
    fputc(' ', c.f);
    json_number(c.f, NAN);
    fputc(' ', c.f);
    json_number(c.f, 2.5);
    char *out = capture_close(&c);
    cr_expect_str_eq(out,
                     "\"q\\\"b\\\\n\\n\\t\\u0001\\u007f é \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd "
                     "\xf0\x9f\x98\x80\" null 2.5");
    free(out);
}

/* Run python3 -m json.tool on TEXT; false when python3 is not there. */
static bool python_validates(const char *text, bool *valid)
{
    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0)
        return false;
    char path[] = "/tmp/ptprof-json-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char *cmd = xasprintf("python3 -m json.tool '%s' >/dev/null", path);
    *valid = system(cmd) == 0;
    free(cmd);
    unlink(path);
    return true;
}

Test(report_render, json_report_tree_and_comparison_parse)
{
    struct report r;
    sample_report(&r, true);
    report_select(&r, -1, -1);
    struct capture c;
    capture_open(&c);
    const char *files[] = {"run \"1\".pbin"};
    cr_assert_eq(render_report(c.f, &r, RENDER_JSON, 0, files, 1), 0);
    char *report_json = capture_close(&c);
    cr_expect_not_null(strstr(report_json, "\"total_pct\":"));
    cr_expect_not_null(
        strstr(report_json, "\"fields\":{\"binary\":\"prog\",\"procedure\":\"main\"}"));

    /* A comparison of the report with itself, and without energy (nulls). */
    struct report plain;
    sample_report(&plain, false);
    const struct report *others[] = {&plain};
    struct compare_options o = {.metric = *metric_builtin(METRIC_ENERGY),
                                .error = ERR_RELATIVE,
                                .aggregate = AGG_RMSE,
                                .limit_pct = -1,
                                .threshold_pct = -1};
    struct compare_result res;
    compare_reports(&r, others, 1, &o, &res);
    capture_open(&c);
    const char *names[] = {"base", "plain \"x\""};
    cr_assert_eq(render_compare(c.f, &res, names, RENDER_JSON, 0), 0);
    char *compare_json = capture_close(&c);
    compare_free(&res);

    bool valid;
    if (!python_validates(report_json, &valid)) {
        cr_log_warn("python3 is not installed: JSON validity not checked");
    } else {
        cr_expect(valid, "report JSON does not parse:\n%s", report_json);
        cr_expect(python_validates(compare_json, &valid) && valid,
                  "compare JSON does not parse:\n%s", compare_json);
    }
    free(report_json);
    free(compare_json);
    report_free(&plain);
    report_free(&r);
}

static void expect_fits(const char *text, int width)
{
    size_t lines = 0;
    for (const char *line = text; *line; lines++) {
        const char *end = strchr(line, '\n');
        cr_assert_not_null(end);
        char *l = xasprintf("%.*s", (int)(end - line), line);
        cr_expect_leq(text_width(l), (size_t)width, "line wider than %d: %s", width, l);
        free(l);
        line = end + 1;
    }
    cr_expect_gt(lines, 3);
}

Test(report_render, tables_fit_the_width)
{
    struct report r;
    sample_report(&r, true);
    report_select(&r, -1, -1);
    struct capture c;
    capture_open(&c);
    cr_assert_eq(render_report(c.f, &r, RENDER_TABLE, 80, NULL, 0), 0);
    char *out = capture_close(&c);
    expect_fits(out, 80);
    cr_expect_not_null(strstr(out, "a_function_with"), "the start of a long name stays");
    cr_expect_not_null(strstr(out, "..."), "a shortened name says so");
    cr_expect_not_null(strstr(out, "samples 2"), "totals on top:\n%s", out);
    cr_expect_not_null(strstr(out, "frequency"));
    cr_expect_not_null(strstr(out, "energy 4.000 J"));
    free(out);

    /* Not a terminal: nothing is cut. */
    capture_open(&c);
    cr_assert_eq(render_report(c.f, &r, RENDER_TABLE, 0, NULL, 0), 0);
    out = capture_close(&c);
    cr_expect_not_null(strstr(out, long_name));
    free(out);
    report_free(&r);
}

Test(report_render, text_table_shrinks_the_widest_shrinkable_column)
{
    struct text_table *t = text_table_new();
    text_table_column(t, "n", ALIGN_RIGHT, false);
    text_table_column(t, "name", ALIGN_LEFT, true);
    text_table_column(t, "where", ALIGN_LEFT, true);
    text_table_row(t);
    text_table_cell(t, "12345");
    text_table_cell(t, "abcdefghijklmnopqrstuvwxyz");
    text_table_cell(t, "short");
    struct capture c;
    capture_open(&c);
    cr_assert_eq(text_table_print(t, c.f, 30), 0);
    char *out = capture_close(&c);
    cr_expect_str_eq(out, "    n  name              where\n"
                          "12345  abcdefghijklm...  short\n");
    free(out);
    text_table_free(t);

    /* A path keeps its end. */
    t = text_table_new();
    text_table_column(t, "file", ALIGN_LEFT, true);
    text_table_keep_end(t);
    text_table_column(t, "line", ALIGN_RIGHT, false);
    text_table_row(t);
    text_table_cell(t, "/usr/src/project/lib/source.c");
    text_table_cell(t, "42");
    capture_open(&c);
    cr_assert_eq(text_table_print(t, c.f, 20), 0);
    out = capture_close(&c);
    cr_expect_str_eq(out, "file            line\n"
                          "...ib/source.c    42\n");
    free(out);
    text_table_free(t);
}

Test(report_render, terminal_width)
{
    cr_expect_eq(term_width_choose(false, "80", 120), 0, "not a terminal: no limit");
    cr_expect_eq(term_width_choose(true, "80", 120), 80, "$COLUMNS wins");
    cr_expect_eq(term_width_choose(true, NULL, 120), 120);
    cr_expect_eq(term_width_choose(true, "junk", 0), 80);
    cr_expect_eq(term_width_choose(true, "-5", 100), 100);

    /* A pseudo-terminal that says it is 100 columns wide. */
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    cr_assert_geq(slave, 0);
    struct winsize ws = {.ws_row = 24, .ws_col = 100};
    cr_assert_eq(ioctl(slave, TIOCSWINSZ, &ws), 0);
    char *saved = getenv("COLUMNS") ? xstrdup(getenv("COLUMNS")) : NULL;
    unsetenv("COLUMNS");
    cr_expect_eq(term_width(slave), 100);
    setenv("COLUMNS", "80", 1);
    cr_expect_eq(term_width(slave), 80);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_expect_eq(term_width(fds[1]), 0);
    if (saved)
        setenv("COLUMNS", saved, 1);
    else
        unsetenv("COLUMNS");
    free(saved);
    close(fds[0]);
    close(fds[1]);
    close(slave);
    close(master);
}

Test(report_render, call_tree_as_text_and_csv)
{
    uint64_t chain[] = {PC_BAR + 1, PC_FOO + 0x10, PC_MAIN + 0x10};
    uint64_t other[] = {PC_FOO + 1, PC_MAIN + 0x10};
    struct prof_stack st[] = {{0, NULL}, {3, chain}, {2, other}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 300)};
    struct prof_thread_sample s2[] = {fake_ths(1, 2, 400)};
    struct prof_sample sm[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1), FAKE_SAMPLE(3, s2)};
    struct profile p = {.samples = sm, .nsamples = 3, .stacks = st, .nstacks = 3};
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct calltree *t = calltree_new(kt, &wo.keys);
    struct walk_visitor v = calltree_visitor(t);
    struct frame_resolver res = {fake_resolve, NULL};
    struct walk_totals wt;
    char *error = NULL;
    cr_assert_eq(walk_profile(&p, &res, &wo, kt, nt, &v, &wt, &error), 0);
    calltree_add_run(t, &wt);
    calltree_finish(t, metric_builtin(METRIC_CPU));

    struct capture c;
    capture_open(&c);
    cr_assert_eq(render_tree(c.f, t, metric_builtin(METRIC_CPU), 0, RENDER_CSV, 0), 0);
    char *out = capture_close(&c);
    cr_expect_str_eq(out, "path,depth,self,self_pct,total,total_pct\n"
                          "prog:main,0,0,0,4e-07,100\n"
                          "prog:main;prog:foo,1,1e-07,25,4e-07,100\n"
                          "prog:main;prog:foo;prog:bar,2,3e-07,75,3e-07,75\n");
    free(out);

    capture_open(&c);
    cr_assert_eq(render_tree(c.f, t, metric_builtin(METRIC_CPU), 80, RENDER_TABLE, 80), 0);
    out = capture_close(&c);
    cr_expect_not_null(strstr(out, "prog:main\n"));
    cr_expect_null(strstr(out, "prog:bar"), "under the threshold:\n%s", out);
    cr_expect_not_null(strstr(out, "not shown"));
    free(out);
    calltree_free(t);
    strtab_free(nt);
    strtab_free(kt);
}

Test(report_render, comparison_csv)
{
    struct report r;
    sample_report(&r, false);
    const struct report *others[] = {&r, &r};
    struct compare_options o = {.metric = *metric_builtin(METRIC_CPU),
                                .error = ERR_ABSOLUTE,
                                .limit_pct = -1,
                                .threshold_pct = -1};
    struct compare_result res;
    compare_reports(&r, others, 2, &o, &res);
    const char *names[] = {"base", "x,1", "y"};
    struct capture c;
    capture_open(&c);
    cr_assert_eq(render_compare(c.f, &res, names, RENDER_CSV, 0), 0);
    char *out = capture_close(&c);
    cr_expect(strncmp(out, "binary:procedure,baseline,\"x,1\",\"x,1_error\",y,y_error\n", 53) == 0,
              "%s", out);
    char fields[16][256];
    const char *line = strchr(out, '\n') + 1;
    cr_assert_eq(csv_split(line, fields, 16), 6);
    cr_expect_str_eq(fields[2], fields[1]);
    cr_expect_str_eq(fields[3], "0", "a profile against itself");
    free(out);
    compare_free(&res);

    o.aggregate = AGG_MAX;
    compare_reports(&r, others, 2, &o, &res);
    capture_open(&c);
    cr_assert_eq(render_compare(c.f, &res, names, RENDER_CSV, 0), 0);
    out = capture_close(&c);
    cr_expect_str_eq(out, "profile,max\n\"x,1\",0\ny,0\n");
    free(out);
    compare_free(&res);
    report_free(&r);
}

Test(report_render, stacks_keep_self_and_total_columns_where_they_agree)
{
    /* Keyed by thread, a thread is on every frame of its own stack: self
     * and total agree, and the table still shows both for a profile with
     * stacks (and only "%" without). */
    uint64_t chain[] = {PC_BAR + 1, PC_FOO + 0x10, PC_MAIN + 0x10};
    struct prof_stack st[] = {{0, NULL}, {3, chain}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 40)};
    struct prof_sample sm[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = sm, .nsamples = 2, .stacks = st, .nstacks = 2};
    for (int stacked = 0; stacked < 2; stacked++) {
        s0[0].stack = s1[0].stack = (uint32_t)stacked;
        s0[0].pc = s1[0].pc = PC_BAR + 1;
        struct report r;
        fake_analyze(&p, "thread", &r);
        struct capture c;
        capture_open(&c);
        cr_assert_eq(render_report(c.f, &r, RENDER_TABLE, 0, NULL, 0), 0);
        char *out = capture_close(&c);
        if (stacked) {
            cr_expect_not_null(strstr(out, "self %"), "%s", out);
            cr_expect_not_null(strstr(out, "total %"), "%s", out);
        } else {
            cr_expect_null(strstr(out, "total %"), "no stacks, no total column:\n%s", out);
        }
        free(out);
        report_free(&r);
    }
}
