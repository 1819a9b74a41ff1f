/*
 * test_jit.c - JIT-compiled code named end to end: the jitcode workload
 * (machine code in anonymous memory, named in a perf map or a jitdump
 * file) in both stack modes, against its own measurement, through a JIT
 * frame between native functions, in the exports and in a .pbin; and node
 * --perf-basic-prof on a script whose hot JavaScript function is known.
 * The JIT's files are removed as soon as the recording ends: every answer
 * must come from what the profile copied.  Each test runs on both engines
 * (engines.h).
 */
#include "../lib/spawn.h"
#include "../unit/real_tools.h"
#include "engines.h"
#include "test_record_common.h"
#include "format/load.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Percentage points a share may differ from the truth on a busy machine. */
#define SHARE_TOLERANCE 3.0

/* Record ARGV (NULL-terminated) with ENGINE and -g MODE into DIR/NAME,
 * then remove the JIT's files of the recorded process; returns the
 * profile's path. */
static char *record_jit(const char *dir, const char *name, const char *engine, const char *mode,
                        const char *const *argv, const char *const *env)
{
    char *ptprof = build_ptprof(), *out = test_path(dir, name);
    const char *args[32] = {ptprof, "record", "--engine", engine, "-g", mode, "-o", out, "--"};
    size_t n = 9;
    for (size_t i = 0; argv[i] && n < 31; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    struct spawn_result res;
    struct spawn_opts o = {.argv = args, .env = env, .cwd = dir, .timeout_s = 120};
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record --engine %s %s: %s\n%s", engine, argv[0],
                 spawn_status_text(res.status), res.err);
    spawn_result_free(&res);
    struct profile p;
    cr_assert_eq(profile_load(out, &p), 0);
    cr_assert_gt(p.nprocesses, 0);
    char *map = xasprintf("/tmp/perf-%u.map", p.processes[0].pid);
    char *dump = xasprintf("/tmp/jit-%u.dump", p.processes[0].pid);
    unlink(map);
    unlink(dump);
    free(dump);
    free(map);
    profile_free(&p);
    free(ptprof);
    return out;
}

static double truth_pct(const char *path, const char *fn)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", path);
    double spin = strtod(strstr(text, "jit_spin") + 8, NULL);
    double native = strtod(strstr(text, "native_work") + 11, NULL);
    free(text);
    return 100 * (strcmp(fn, "jit_spin") == 0 ? spin : native) / (spin + native);
}

static void check_jitcode(const char *engine, const char *how, const char *mode,
                          const char *workload)
{
    char *dir = test_mkdtemp(), *w = build_workload(workload);
    char *truth = test_path(dir, "truth.txt"), *env_out = xasprintf("JITCODE_OUT=%s", truth);
    const char *argv[] = {w, "1.5", how, NULL};
    const char *env[] = {env_out, NULL};
    char *data = record_jit(dir, "jit.data", engine, mode, argv, env);
    /* What failure messages call this run. */
    char *label = xasprintf("%s engine, %s", engine, how);

    struct fn_counts self, total;
    report_column(data, "cpu", "cpu_time_pct", NULL, &self);
    report_column(data, "cpu", "total_pct", NULL, &total);
    double want = truth_pct(truth, "jit_spin");
    cr_expect(fabs(fn_get(&self, "jit_spin") - want) <= build_tolerance(SHARE_TOLERANCE),
              "%s, -g %s: jit_spin %.1f%%, the run measured %.1f%%", label, mode,
              fn_get(&self, "jit_spin"), want);
    /* Native code called from a JIT frame: the JIT frame is on its stack,
     * and main above it. */
    double native = fn_get(&total, "native_step");
    cr_expect_gt(native, 50, "%s, -g %s: native_step %.1f%%", label, mode, native);
    cr_expect_geq(fn_get(&total, "jit_call"), 0.9 * native,
                  "%s, -g %s: jit_call on %.1f%% of stacks, native_step %.1f%%", label, mode,
                  fn_get(&total, "jit_call"), native);
    const char *callers[] = {"report", "--callers", "jit_call",   "--format", "csv",
                             "-k",     "procedure", "--no-cache", data,       NULL};
    char *csv = ptprof_stdout(callers);
    cr_expect_not_null(strstr(csv, "\nmain,"), "%s, -g %s: main calls jit_call:\n%s", label, mode,
                       csv);
    free(csv);
    const char *by_binary[] = {"report", "-k", "binary,procedure", "--format", "csv", data, NULL};
    csv = ptprof_stdout(by_binary);
    cr_expect_not_null(strstr(csv, "[jit]:jit_spin,"), "the binary of JIT code:\n%s", csv);
    free(csv);

    /* Exports and a .pbin carry the names. */
    char *folded = test_path(dir, "jit.folded"), *pb = test_path(dir, "jit.pb.gz");
    char *pbin = test_path(dir, "jit.pbin");
    const char *c1[] = {"convert", data, "-o", folded, NULL};
    const char *c2[] = {"convert", data, "-o", pb, NULL};
    const char *c3[] = {"postprocess", data, "-o", pbin, NULL};
    free(ptprof_stdout(c1));
    free(ptprof_stdout(c2));
    free(ptprof_stdout(c3));
    char *text = test_read_file(folded, NULL);
    cr_expect(text && strstr(text, ";jit_call;"), "folded: a JIT frame inside stacks");
    cr_expect(text && strstr(text, ";jit_spin "), "folded: a JIT leaf");
    free(text);
    struct fn_counts from_pb, from_pbin;
    report_column(pb, "samples", "samples", NULL, &from_pb);
    report_column(pbin, "samples", "samples", NULL, &from_pbin);
    cr_expect_gt(fn_get(&from_pb, "jit_spin"), 0, "pprof names jit_spin");
    cr_expect_gt(fn_get(&from_pbin, "jit_spin"), 0, ".pbin names jit_spin");

    fn_free(&from_pb);
    fn_free(&from_pbin);
    fn_free(&self);
    fn_free(&total);
    free(pbin);
    free(pb);
    free(folded);
    free(data);
    free(env_out);
    free(truth);
    free(label);
    free(w);
    test_rmtree(dir);
    free(dir);
}

ENGINE_TEST(jit, perf_map_frame_pointers, .timeout = 180)
{
    check_jitcode(engine_p->name, "map", "fp", "jitcode");
}

ENGINE_TEST(jit, perf_map_dwarf, .timeout = 180)
{
    check_jitcode(engine_p->name, "map", "dwarf", "jitcode-nofp");
}

ENGINE_TEST(jit, jitdump_frame_pointers, .timeout = 180)
{
    check_jitcode(engine_p->name, "dump", "fp", "jitcode");
}

ENGINE_TEST(jit, jitdump_dwarf, .timeout = 180)
{
    check_jitcode(engine_p->name, "dump", "dwarf", "jitcode-nofp");
}

/* Sum of COUNTS over the names containing PART. */
static double containing(const struct fn_counts *c, const char *part)
{
    double sum = 0;
    for (size_t i = 0; i < c->n; i++)
        if (strstr(c->items[i].name, part))
            sum += c->items[i].value;
    return sum;
}

/* JIT code mapped where a file was mapped read-only a moment before (the
 * loader's ld.so.cache, often): maps read while the file was there must
 * not name the code after the file.  Until its next look at the maps, the
 * ptrace engine named a fifth of jit_spin's time "jitcode+0x49", the page
 * of the program file mapped there before. */
ENGINE_TEST(jit, code_where_a_file_was_mapped_is_named, .timeout = 180)
{
    char *dir = test_mkdtemp(), *w = build_workload("jitcode");
    char *truth = test_path(dir, "truth.txt"), *env_out = xasprintf("JITCODE_OUT=%s", truth);
    const char *argv[] = {w, "1.5", "map", "reuse", NULL};
    const char *env[] = {env_out, NULL};
    char *data = record_jit(dir, "jit.data", engine_p->name, "dwarf", argv, env);
    struct fn_counts self;
    report_column(data, "cpu", "cpu_time_pct", NULL, &self);
    double named = fn_get(&self, "jit_spin"), stale = containing(&self, "jitcode+0x");
    cr_expect_gt(named, 0, "%s engine: no jit_spin", engine_p->name);
    cr_expect_leq(stale, 0.02 * named,
                  "%s engine: %.1f%% of the CPU time named after the file mapped where the JIT's "
                  "code is, jit_spin %.1f%%",
                  engine_p->name, stale, named);
    fn_free(&self);
    free(data);
    free(env_out);
    free(truth);
    free(w);
    test_rmtree(dir);
    free(dir);
}

ENGINE_TEST(jit, node_names_its_hot_javascript_function, .timeout = 180)
{
    static const char script[] =
        "function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; "
        "return s; }\n"
        "function coldLoop(n) { let s = 1; for (let i = 0; i < n; i++) s = (s * 17 + i) | 0; "
        "return s; }\n"
        "let t = 0; const end = Date.now() + 2000;\n"
        "while (Date.now() < end) { t += hotLoop(4000000); t += coldLoop(500000); }\n"
        "console.log(t !== 0.5);\n";
    char *node = test_need_tool("node"), *dir = test_mkdtemp();
    char *js = test_path(dir, "hot.js");
    FILE *f = fopen(js, "w");
    cr_assert_not_null(f);
    fputs(script, f);
    fclose(f);
    const char *argv[] = {node, "--perf-basic-prof", js, NULL};
    char *data = record_jit(dir, "node.data", engine_p->name, "dwarf", argv, NULL);

    struct fn_counts self, callers;
    report_column(data, "cpu", "cpu_time_pct", NULL, &self);
    double hot = containing(&self, "hotLoop"), cold = containing(&self, "coldLoop");
    cr_expect_gt(hot, 50, "%s engine: hotLoop has %.1f%% of the CPU time", engine_p->name, hot);
    cr_expect_gt(hot, 3 * cold, "%s engine: hotLoop %.1f%%, coldLoop %.1f%%", engine_p->name, hot,
                 cold);
    cr_expect_gt(containing(&self, "hot.js"), hot - 0.01, "the JIT's name has the script");
    const char *by_binary[] = {"report", "-k", "binary", "--format", "csv", data, NULL};
    char *csv = ptprof_stdout(by_binary);
    cr_expect_not_null(strstr(csv, "\n[jit],"), "JavaScript is [jit] code:\n%s", csv);
    free(csv);
    /* DWARF mode unwinds from the JavaScript frame into node's own. */
    const char *opts[] = {"--callers", "*hotLoop*", NULL};
    report_column(data, "samples", "self_pct", opts, &callers);
    double unknown = fn_get(&callers, "[no caller]");
    cr_expect_lt(unknown, 50, "hotLoop has no caller in %.1f%% of its samples", unknown);
    fn_free(&callers);
    fn_free(&self);
    free(data);
    free(js);
    test_rmtree(dir);
    free(dir);
    free(node);
}
