/*
 * test_perf_data.c - perf.data read directly (src/interop/perf_data_read.c)
 * against perf's own reading of the same file: `perf record` writes the
 * files (tests/workloads/callers.c, with and without -g, to a file and to
 * a pipe), `perf report --stdio` says what each function got, and
 * `ptprof report` must say the same; the header's build-ids reach the
 * profile's maps; damaged files are refused with the file and the offset.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/load.h"
#include "test_record_common.h"

/* The workload's own functions: perf and ptprof name them the same. */
static const char *const funcs[] = {"hot", "via_a", "via_b", "worker_main", "main", "weigh"};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))

struct perf_file {
    char *dir, *path, *perf, *callers;
    char *pipe; /* the same recording as perf writes it to a pipe, or NULL */
};

/* perf record OPTIONS... -F 2000 -o PATH -- WORKLOAD ARG. */
static void perf_record_with(struct perf_file *f, const char *const *options, const char *workload,
                             const char *arg)
{
    memset(f, 0, sizeof(*f));
    f->perf = test_need_tool("perf");
    f->callers = build_workload(workload);
    f->dir = test_mkdtemp();
    f->path = test_path(f->dir, "perf.data");
    const char *argv[24];
    size_t n = 0;
    argv[n++] = f->perf;
    argv[n++] = "record";
    argv[n++] = "-q";
    for (size_t i = 0; options[i]; i++)
        argv[n++] = options[i];
    argv[n++] = "-F";
    argv[n++] = "2000";
    argv[n++] = "-o";
    argv[n++] = f->path;
    argv[n++] = "--";
    argv[n++] = f->callers;
    argv[n++] = arg;
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, NULL, f->dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "perf record: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
}

/* perf record [-g] -e cpu-clock -F 2000 -o PATH -- callers 2; with PIPE
 * also the same recording in perf's pipe format (perf inject -o -). */
static void perf_record(struct perf_file *f, bool callchains, bool pipe)
{
    const char *with_g[] = {"-g", "-e", "cpu-clock", NULL}, *without[] = {"-e", "cpu-clock", NULL};
    perf_record_with(f, callchains ? with_g : without, "callers", "2");
    if (!pipe)
        return;
    struct spawn_result res;
    const char *inject[] = {f->perf, "inject", "-i", f->path, "-o", "-", NULL};
    run_argv(&res, inject, NULL, f->dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "perf inject: " RUN_FMT, RUN_ARGS(&res));
    f->pipe = test_path(f->dir, "perf.pipe");
    FILE *out = fopen(f->pipe, "wb");
    cr_assert(out && fwrite(res.out, 1, res.out_len, out) == res.out_len && fclose(out) == 0);
    spawn_result_free(&res);
}

static void perf_file_free(struct perf_file *f)
{
    test_rmtree(f->dir);
    free(f->dir);
    free(f->path);
    free(f->pipe);
    free(f->perf);
    free(f->callers);
}

/* perf report's percentage per symbol of FUNCS (N of them) in the section
 * of EVENT (NULL: the first): the self column, or with CHILDREN the
 * children column.  Lines: "  12.34%  [.] name" or "  56.78%  12.34%  [.] name". */
static void perf_report_of(const struct perf_file *f, bool children, const char *event,
                           const char *const *fns, size_t nfns, double *pct)
{
    const char *argv[] = {
        f->perf,  "report", "-i", f->path, "--stdio",
        "--sort", "sym",    "-g", "none",  children ? "--children" : "--no-children",
        NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, f->dir, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "perf report: " RUN_FMT, RUN_ARGS(&res));
    const char *section = res.out;
    if (event) {
        char header[128];
        snprintf(header, sizeof(header), "of event '%s'", event);
        section = strstr(res.out, header);
        cr_assert_not_null(section, "perf report has no section %s:\n%.2000s", header, res.out);
    }
    for (size_t i = 0; i < nfns; i++) {
        pct[i] = 0;
        int headers = event ? 1 : 0; /* the sections begun */
        for (const char *line = section; line && *line; line = strchr(line, '\n')) {
            if (*line == '\n')
                line++;
            const char *next = strstr(line, "of event '"), *end = strchr(line, '\n');
            if (*line == '#' && line != section && next && (!end || next < end) && ++headers > 1)
                break; /* the next event's section */
            if (*line == '#')
                continue;
            const char *sym = strstr(line, "[.] ");
            const char *eol = strchr(line, '\n');
            if (!sym || (eol && sym > eol))
                continue;
            sym += 4;
            size_t len = strlen(fns[i]);
            if (strncmp(sym, fns[i], len) != 0 ||
                !(sym[len] == '\n' || sym[len] == ' ' || sym[len] == '\0'))
                continue;
            pct[i] = strtod(line, NULL); /* the first column */
            break;
        }
    }
    spawn_result_free(&res);
}

static void perf_report(const struct perf_file *f, bool children, double *pct)
{
    perf_report_of(f, children, NULL, funcs, NFUNCS, pct);
}

/* ptprof report -k procedure --metric METRIC on PATH: FUNCS' (N of them)
 * self_pct, or total_pct. */
static void ptprof_report_of(const struct perf_file *f, const char *path, bool total,
                             const char *metric, const char *const *fns, size_t nfns, double *pct)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof,     "report", path,       "-k",   "procedure",
                          "--format", "csv",    "--metric", metric, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, f->dir, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof report: " RUN_FMT, RUN_ARGS(&res));
    /* The header names the columns; find the one asked for. */
    const char *want = total ? "total_pct" : "self_pct";
    int col = -1, k = 0;
    const char *end = strchr(res.out, '\n');
    for (const char *c = res.out; c && c < end; k++) {
        size_t len = strcspn(c, ",\n");
        if (len == strlen(want) && strncmp(c, want, len) == 0)
            col = k;
        c = c[len] == ',' ? c + len + 1 : NULL;
    }
    cr_assert_geq(col, 0, "no %s column:\n%.500s", want, res.out);
    for (size_t i = 0; i < nfns; i++) {
        pct[i] = 0;
        size_t len = strlen(fns[i]);
        for (const char *line = strchr(res.out, '\n'); line && line[1];
             line = strchr(line + 1, '\n')) {
            if (strncmp(line + 1, fns[i], len) != 0 || line[1 + len] != ',')
                continue;
            const char *field = line + 1;
            for (int c = 0; c < col && field; c++) {
                field = strchr(field, ',');
                field = field ? field + 1 : NULL;
            }
            pct[i] = field ? strtod(field, NULL) : NAN;
            break;
        }
    }
    spawn_result_free(&res);
    free(ptprof);
}

static void ptprof_report(const struct perf_file *f, const char *path, bool total, double *pct)
{
    ptprof_report_of(f, path, total, "cpu", funcs, NFUNCS, pct);
}

/* perf report and ptprof report of F (its pipe stream with PIPE) give the
 * workload's functions the same self shares, and with call stacks
 * (STACKS, named WHAT in messages) the same total shares. */
static void compare_reports(struct perf_file *f, bool stacks, bool pipe, const char *what)
{
    for (int total = 0; total <= (stacks ? 1 : 0); total++) {
        double theirs[NFUNCS], ours[NFUNCS];
        perf_report(f, total, theirs);
        /* perf reads the file; ptprof the file, or the pipe stream. */
        ptprof_report(f, pipe ? f->pipe : f->path, total, ours);
        double sum = 0;
        for (size_t i = 0; i < NFUNCS; i++) {
            cr_log_info("%s%s %s: perf report %.2f%%, ptprof report %.2f%%", what,
                        pipe ? ", pipe" : "", total ? "children" : "self", theirs[i], ours[i]);
            sum += theirs[i];
            /* The same samples, weighted alike: only rounding and the odd
             * return address at a function's end may differ. */
            cr_expect_leq(fabs(theirs[i] - ours[i]), 0.5,
                          "%s (%s, %s): perf report %.2f%%, ptprof report %.2f%%", funcs[i], what,
                          total ? "children" : "self", theirs[i], ours[i]);
        }
        cr_assert_gt(sum, 50, "perf report found the workload's functions in only %.1f%%", sum);
    }
}

static void check_same_report(bool callchains, bool pipe)
{
    struct perf_file f;
    perf_record(&f, callchains, pipe);
    compare_reports(&f, callchains, pipe, callchains ? "-g" : "no -g");
    perf_file_free(&f);
}

/* perf record --call-graph dwarf keeps each sample's user registers and
 * stack copy: ptprof unwinds them with the recorder's own libdwfl code, and
 * each function's total share is perf report's, on a build without frame
 * pointers (whose stacks only CFI unwinds). */
Test(perf_data, dwarf_call_graphs_are_unwound_like_perf_report, .timeout = 120)
{
    struct perf_file f;
    const char *options[] = {"--call-graph", "dwarf", "-e", "cpu-clock", NULL};
    perf_record_with(&f, options, "callers-nofp", "2");
    compare_reports(&f, true, false, "--call-graph dwarf");
    perf_file_free(&f);
}

Test(perf_data, report_matches_perf_report_without_call_graphs, .timeout = 120)
{
    check_same_report(false, false);
}

Test(perf_data, report_matches_perf_report_with_call_graphs, .timeout = 120)
{
    check_same_report(true, false);
}

Test(perf_data, pipe_stream_reads_like_the_file, .timeout = 120)
{
    check_same_report(true, true);
}

/* A file of several events: each event is a metric whose values are its
 * samples' periods, so `report --metric page-faults` gives each function
 * the share `perf report` gives it in that event's section (the workload's
 * page faults are taken in functions inlining the loop that faults: their
 * total here, perf's symbol). */
Test(perf_data, each_event_of_a_file_is_a_metric, .timeout = 120)
{
    static const char *const fns[] = {"fault_many", "fault_few", "no_faults"};
    const size_t n = sizeof(fns) / sizeof(fns[0]);
    struct perf_file f;
    const char *options[] = {"-e", "task-clock,page-faults", NULL};
    perf_record_with(&f, options, "pagefaults", "4");
    static const char *const events[] = {"page-faults", "task-clock"};
    for (size_t e = 0; e < 2; e++) {
        double theirs[3], ours[3];
        perf_report_of(&f, false, events[e], fns, n, theirs);
        ptprof_report_of(&f, f.path, true, events[e], fns, n, ours);
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            cr_log_info("%s, %s: perf report %.2f%%, ptprof report %.2f%%", events[e], fns[i],
                        theirs[i], ours[i]);
            sum += theirs[i];
            cr_expect_leq(fabs(theirs[i] - ours[i]), 0.5,
                          "%s, %s: perf report %.2f%%, ptprof report --metric %s %.2f%%", events[e],
                          fns[i], theirs[i], events[e], ours[i]);
        }
        cr_assert_gt(sum, 20, "perf report found the workload's functions in only %.1f%% of %s",
                     sum, events[e]);
    }
    perf_file_free(&f);
}

/* perf keeps the build-ids of the files it sampled in its header. */
Test(perf_data, header_build_ids_reach_the_maps, .timeout = 120)
{
    struct perf_file f;
    perf_record(&f, false, false);
    const char *argv[] = {f.perf, "buildid-list", "-i", f.path, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, f.dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "perf buildid-list: " RUN_FMT, RUN_ARGS(&res));
    char *real = realpath(f.callers, NULL);
    cr_assert(real);
    const char *line = strstr(res.out, real);
    cr_assert(line, "perf lists no build-id for %s:\n%s", real, res.out);
    while (line > res.out && line[-1] != '\n')
        line--;
    char want[64] = "";
    cr_assert_eq(sscanf(line, "%63s", want), 1);

    struct profile p;
    cr_assert_eq(profile_load(f.path, &p), 0);
    size_t found = 0;
    for (size_t i = 0; i < p.nmaps; i++) {
        const struct prof_map *m = &p.maps[i];
        if (strcmp(m->path, real) != 0)
            continue;
        char hex[2 * PROF_BUILD_ID_MAX + 1] = "";
        for (uint8_t k = 0; k < m->build_id_len; k++)
            snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
        cr_assert_str_eq(hex, want, "map of %s: build-id %s, perf says %s", real, hex, want);
        found++;
    }
    cr_assert_gt(found, 0, "no map of %s in the profile", real);
    profile_free(&p);
    spawn_result_free(&res);
    free(real);
    perf_file_free(&f);
}

/* Cut short, or with a header pointing outside the file: exit 2, the
 * file and an offset named, nothing else printed. */
Test(perf_data, damaged_files_are_refused_with_the_offset, .timeout = 120)
{
    struct perf_file f;
    perf_record(&f, true, false);
    size_t len;
    char *data = test_read_file(f.path, &len);
    cr_assert(data && len > 4096);
    char *ptprof = build_ptprof();
    struct {
        const char *what;
        size_t keep;
        size_t poke_at;
        unsigned char poke;
    } cases[] = {
        {"cut in the header", 60, 0, 0},
        {"cut in the data", len / 2, 0, 0},
        {"a record size of 0", len, 0, 0},
    };
    /* The third: the first record of the data section gets size 0. */
    uint64_t data_off;
    memcpy(&data_off, data + 40, 8);
    cases[2].poke_at = (size_t)data_off + 6;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *bad = test_path(f.dir, "bad.data");
        FILE *out = fopen(bad, "wb");
        cr_assert(out);
        if (cases[i].poke_at) {
            data[cases[i].poke_at] = 0;
            data[cases[i].poke_at + 1] = 0;
        }
        cr_assert_eq(fwrite(data, 1, cases[i].keep, out), cases[i].keep);
        fclose(out);
        const char *argv[] = {ptprof, "report", bad, NULL};
        struct spawn_result res;
        run_argv(&res, argv, NULL, f.dir, 60);
        cr_assert_eq(spawn_exit_code(res.status), 2, "%s: " RUN_FMT, cases[i].what, RUN_ARGS(&res));
        cr_assert(strstr(res.err, "bad.data") && strstr(res.err, "offset"), "%s: " RUN_FMT,
                  cases[i].what, RUN_ARGS(&res));
        spawn_result_free(&res);
        free(bad);
    }
    free(ptprof);
    free(data);
    perf_file_free(&f);
}
