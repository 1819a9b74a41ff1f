/*
 * test_folded.c - folded stacks (interop/folded.h, interop/folded_write.h):
 * hand-made files (counts, decimals, limits, google-pprof's addresses,
 * depth), damaged files and detection; a real folded file from
 * `google-pprof --collapsed` against `google-pprof --text` on the same
 * profile; ptprof's own export of a recording against `ptprof report`;
 * energy with its unattributed line; the kept fuzz corpus.  Needs
 * google-pprof and libprofiler (scripts/install-deps --test) and the
 * workloads under $PTPROF_BUILD (default build/).
 */
#include "../lib/corpus.h"
#include "interop/folded.h"
#include "format/load.h"
#include "interop/perf_script.h"
#include "export/folded_write.h"
#include "real_tools.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so"
#define MS 1000000u

static void load_ok(const char *text, struct profile *p)
{
    int rc = folded_load_buffer("t.folded", text, strlen(text), p);
    cr_assert_eq(rc, 0, "does not load:\n%s", text);
    cr_assert_str_eq(p->format, "folded");
}

/* The same with its messages (warnings) captured. */
static char *load_noting(const char *text, struct profile *p)
{
    char *msg = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&msg, &size);
    FILE *saved = stderr;
    stderr = mem;
    load_ok(text, p);
    stderr = saved;
    fclose(mem);
    return msg;
}

/* The function names of STACK, leaf first, joined by ';'. */
static void stack_names(const struct profile *p, uint32_t stack, char *buf, size_t size)
{
    cr_assert(stack > 0 && stack < p->nstacks);
    const struct prof_stack *s = &p->stacks[stack];
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->depth; i++) {
        const char *name = location_name(p, 0, s->pcs[i], i > 0);
        cr_assert_not_null(name, "frame %u of stack %u has no location", i, stack);
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", i ? ";" : "", name);
    }
}

Test(folded, counts_become_samples_of_one_stack_each)
{
    struct profile p;
    load_ok("main;a;b 3\nmain;a 2\n\n  main;a;b 4  \n", &p);
    cr_assert_eq(p.nstacks, 3, "the empty stack and two distinct ones");
    cr_expect_eq(p.nprocesses, 1);
    cr_expect_str_eq(p.processes[0].exe, "");
    cr_expect_float_eq(p.frequency, 1000, 1e-9);
    /* The two lines of main;a;b add up and come first: one sample of it
     * (the thread's first appearance), then one standing for the other 6,
     * then main;a standing for 2.  Every count is 1 ms of CPU, and the
     * thread is always on it. */
    const struct {
        const char *names;
        uint64_t weight, counts_so_far;
    } want[] = {{"b;a;main", 1, 1}, {"b;a;main", 6, 7}, {"a;main", 2, 9}};
    cr_assert_eq(p.nsamples, 3);
    char names[256];
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_thread_sample *t = &p.samples[i].threads[0];
        stack_names(&p, t->stack, names, sizeof(names));
        cr_expect_str_eq(names, want[i].names, "sample %zu", i);
        cr_expect_eq(t->pc, p.stacks[t->stack].pcs[0]);
        cr_expect_eq(prof_weight(&p.samples[i], 0), want[i].weight, "sample %zu", i);
        cr_expect_eq(t->cpu_ns, want[i].counts_so_far * MS, "sample %zu", i);
        cr_expect_eq(p.samples[i].time_ns, t->cpu_ns);
    }
    cr_expect_eq(p.totals.samples, 9);
    profile_free(&p);
}

Test(folded, decimal_counts_keep_their_cpu_time)
{
    struct profile p;
    load_ok("x;y 0.5\nz 2.25\n", &p);
    /* x;y: at least one sample; z: round(2.25) = 2; CPU time exact. */
    cr_assert_eq(p.nsamples, 2);
    cr_expect_eq(prof_weight(&p.samples[0], 0), 1);
    cr_expect_eq(prof_weight(&p.samples[1], 0), 2);
    cr_expect_eq(p.samples[0].threads[0].cpu_ns, MS / 2);
    cr_expect_eq(p.samples[1].threads[0].cpu_ns, 2750000);
    cr_expect_eq(p.totals.samples, 3);
    profile_free(&p);
}

/* Memory and time follow the file, not its counts: counts of 10^11 (three
 * years of CPU at 1 kHz each) are a sample each, with exact totals. */
Test(folded, huge_counts_cost_nothing_and_add_up_exactly)
{
    test_limit_address_space();
    const char *text = "main;a 100000000000\nmain;b 100000000001\nmain;a 300000000000\n";
    size_t before = test_heap_in_use();
    struct profile p;
    load_ok(text, &p);
    cr_expect_lt(test_heap_in_use() - before, 1u << 20, "kept %zu bytes",
                 test_heap_in_use() - before);
    cr_expect_leq(p.nsamples, 3);
    uint64_t samples = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        samples += prof_weight(&p.samples[i], 0);
    cr_expect_eq(samples, 500000000001ull);
    cr_expect_eq(p.totals.samples, 500000000001ull);
    cr_expect_eq(p.samples[p.nsamples - 1].threads[0].cpu_ns, 500000000001ull * MS);
    profile_free(&p);
}

/* google-pprof --collapsed marks a function inlined at the sampled address
 * "[inline]" (its --text counts it under the function's name), FlameGraph's
 * stackcollapse-perf.pl --inline "_[i]": the function's name, an inlined
 * frame.  A mark alone, or elsewhere in a name, is part of the name. */
Test(folded, inline_marks_name_the_function_and_mark_the_frame)
{
    struct profile p;
    load_ok("main;work;now[inline] 3\nmain;work;now 1\nmain;clock_[i] 1\n[inline] 1\n"
            "a[inline]b 1\n",
            &p);
    char names[256];
    stack_names(&p, p.samples[0].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "now;work;main");
    stack_names(&p, p.samples[p.nsamples - 3].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "clock;main");
    stack_names(&p, p.samples[p.nsamples - 2].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "[inline]");
    stack_names(&p, p.samples[p.nsamples - 1].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "a[inline]b");
    size_t inlined = 0, plain = 0;
    for (size_t i = 0; i < p.nlocations; i++) {
        const struct prof_location *l = &p.locations[i];
        if (l->nframes != 1)
            continue;
        if (strcmp(l->frames[0].function, "now") == 0 ||
            strcmp(l->frames[0].function, "clock") == 0)
            inlined += l->frames[0].inlined;
        if (strcmp(l->frames[0].function, "now") == 0)
            plain += !l->frames[0].inlined;
    }
    cr_expect_gt(inlined, 0, "now[inline] and clock_[i] are inlined frames");
    cr_expect_gt(plain, 0, "now without the mark is a frame of its own");
    profile_free(&p);
}

Test(folded, google_pprof_addresses_are_not_part_of_names)
{
    struct profile p;
    load_ok("_start<0000000000001370>;main<00000000000010e0>;hot<0000000000001460> 4\n"
            "main;hot 1\nf<0000000000001zzz> 1\n",
            &p);
    char names[256];
    stack_names(&p, p.samples[0].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "hot;main;_start");
    bool found = false;
    for (size_t i = 0; i < p.nlocations; i++)
        if (strcmp(p.locations[i].frames[0].function, "hot") == 0 && p.locations[i].offset)
            found = p.locations[i].offset == 0x1460;
    cr_expect(found, "hot keeps its address as its offset");
    /* Samples: the first stack's first, its other 3, then one per stack. */
    cr_assert_eq(p.nsamples, 4);
    stack_names(&p, p.samples[2].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "hot;main");
    /* Not 16 hex digits: part of the name. */
    stack_names(&p, p.samples[3].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "f<0000000000001zzz>");
    profile_free(&p);
}

/* A stack deeper than the limit keeps its innermost frames, the reader
 * says so (naming the first such line), and `info` can count them. */
Test(folded, deep_stacks_keep_their_innermost_frames_and_say_so)
{
    size_t cap = 200000 * 8 + 64, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n, "main;shallow 1\n");
    for (int i = 0; i < 200000; i++)
        n += (size_t)snprintf(text + n, cap - n, "%sf%d", i ? ";" : "", i);
    snprintf(text + n, cap - n, " 2\n");
    struct profile p;
    char *msg = load_noting(text, &p);
    cr_expect_not_null(strstr(msg, "t.folded:2: 1 stack deeper than 4096 frames kept only its "
                                   "innermost 4096"),
                       "%s", msg);
    const struct prof_sample *deep = &p.samples[p.nsamples - 1];
    const struct prof_stack *s = &p.stacks[deep->threads[0].stack];
    cr_assert_eq(s->depth, FOLDED_MAX_DEPTH);
    cr_expect_str_eq(location_name(&p, 0, s->pcs[0], false), "f199999");
    cr_expect_str_eq(location_name(&p, 0, s->pcs[s->depth - 1], true), "f195904");
    cr_expect_eq(deep->threads[0].flags, PROF_THREAD_STACK_TRUNCATED);
    cr_expect_eq(p.samples[0].threads[0].flags, 0, "the shallow stack is whole");
    cr_expect_eq(profile_truncated_stacks(&p), 1);
    profile_free(&p);
    free(msg);

    /* info counts it. */
    expect_info_counts_one_cut("deep.folded", text, strlen(text), "deeper than 4096 frames");
    free(text);
}

Test(folded, empty_frames_are_unknown)
{
    struct profile p;
    load_ok("a;;b 1\n", &p);
    char names[256];
    stack_names(&p, p.samples[0].threads[0].stack, names, sizeof(names));
    cr_expect_str_eq(names, "b;[unknown];a");
    profile_free(&p);
}

/* A string literal with its length (some hold NUL bytes). */
#define TEXT(t) t, sizeof(t) - 1

Test(folded, malformed_lines_name_the_file_and_line)
{
    static const struct rejected_text cases[] = {
        {TEXT("a 1\nb 2\nno_count\n"), "t.folded:3: no count"},
        {TEXT("a 1\n\nb x\n"), "t.folded:3: the count 'x'"},
        {TEXT("a -1\n"), "t.folded:1: the count '-1'"},
        {TEXT("a 1e3\n"), "t.folded:1: the count '1e3'"},
        {TEXT("a 1.2.3\n"), "t.folded:1: the count '1.2.3'"},
        {TEXT("a 1\na;b\x01 1\n"), "t.folded:2: not text"},
        {TEXT("a 1\na\0b 1\n"), "t.folded:2: not text"},
        {TEXT("a 600000000000\nb 600000000000\n"), "t.folded:2: the counts add up"},
    };
    expect_rejected(folded_load_buffer, "t.folded", cases, sizeof(cases) / sizeof(cases[0]));
}

Test(folded, detection_claims_folded_files_only)
{
    static const struct {
        const char *text;
        size_t len;
    } yes[] =
        {
            {TEXT("a;b 1\n")},
            {TEXT("a 1")},
            {TEXT("\n\nmain;x 3\r\n")},
            {TEXT("java-1234;start_thread;run_[j];memcpy_[k] 5\nperl;main::foo 0.5\n")},
            {TEXT("std::vector<int, std::allocator<int> >::push_back(int const&) 7\n")},
        },
      no[] = {
          {TEXT("")},
          {TEXT("\n\n \n")},
          {TEXT("time,power\n0.1,2.5\n")},
          {TEXT("0.1, 2.5\n0.2, 2.5\n")},
          {TEXT("callers 23988 10672.285130:     250000 cpu-clock: \n"
                "\t            1487 hot+0x27 (/opt/callers)\n")},
          {TEXT("a;b 1\nsome prose without a count\n")},
          {TEXT("# a comment 1\na;b 1\n")},
          {TEXT("\x89PTPROF\n\x01\0\0\0")},
          {TEXT("gmon\x01\0\0\0 1\n")},
      };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        cr_expect(folded_detect(yes[i].text, yes[i].len), "not recognised: %s", yes[i].text);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        cr_expect_not(folded_detect(no[i].text, no[i].len), "claimed: %s", no[i].text);
    /* A line cut by the detection window is not judged. */
    size_t big = FOLDED_DETECT_BYTES + 100;
    char *text = malloc(big);
    memset(text, 'x', big);
    memcpy(text, "a;b 1\n", 6);
    cr_expect(folded_detect(text, big));
    free(text);
}

Test(folded, profile_load_recognises_it_by_content)
{
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert_geq(asprintf(&path, "%s/profile.data", dir), 0);
    const char text[] = "main;a;b 3\nmain;a 2\n";
    write_file(path, text, strlen(text));
    struct profile_file pf;
    cr_assert_eq(profile_file_read(path, &pf), 0);
    cr_expect_str_eq(profile_file_format(&pf), "folded");
    profile_file_free(&pf);
    struct profile p;
    cr_assert_eq(profile_load(path, &p), 0);
    cr_expect_eq(p.totals.samples, 5);
    profile_free(&p);
    /* Held whole (convert --from), it reads the same. */
    cr_assert_eq(profile_file_read(path, &pf), 0);
    cr_assert_eq(profile_file_hold(&pf), 0);
    cr_expect_str_eq(profile_file_format(&pf), "folded");
    cr_assert_eq(profile_parse(&pf, &p), 0);
    cr_expect_eq(p.totals.samples, 5);
    profile_free(&p);
    profile_file_free(&pf);
    free(path);
    test_rmtree(dir);
    free(dir);
}

/* A compressed folded file cut short loads up to its last whole line. */
Test(folded, a_damaged_compressed_file_loads_up_to_its_last_line)
{
    char *dir = test_mkdtemp(), *plain = NULL, *gz = NULL;
    cr_assert_geq(asprintf(&plain, "%s/big.folded", dir), 0);
    cr_assert_geq(asprintf(&gz, "%s/big.folded.gz", dir), 0);
    size_t cap = 400000, n = 0;
    char *text = malloc(cap);
    unsigned seed = 1;
    for (int i = 0; n + 100 < cap; i++) {
        seed = seed * 1103515245u + 12345u;
        n += (size_t)snprintf(text + n, cap - n, "main;f%u;g%d %d\n", seed % 1000, i, i % 7 + 1);
    }
    write_file(plain, text, n);
    struct profile whole, part;
    load_whole_and_cut_gzip(plain, gz, &whole, &part);
    cr_expect(part.truncated);
    cr_expect_gt(part.totals.samples, 0);
    cr_expect_lt(part.totals.samples, whole.totals.samples);
    profile_free(&whole);
    profile_free(&part);
    free(text);
    free(plain);
    free(gz);
    test_rmtree(dir);
    free(dir);
}

/* --- export -------------------------------------------------------------- */

static void export_quiet(const struct profile *p, const char *path, const char *m, int *rc,
                         char **msg)
{
    struct export_options eo = {.metric = m};
    key_spec_default(&eo.session.walk.keys);
    size_t size = 0;
    FILE *mem = open_memstream(msg, &size);
    FILE *saved = stderr;
    stderr = mem;
    *rc = folded_export("in.folded", p, path, &eo);
    stderr = saved;
    fclose(mem);
}

/* Energy: a 5 W reading while the one thread is on CPU half the time. */
Test(folded, energy_export_adds_the_unattributed_line)
{
    struct profile p;
    load_ok("main;work 10\nmain;idle 10\n", &p);
    p.channels = calloc(1, sizeof(*p.channels));
    p.channels[0] = (struct prof_channel){strdup("pkg"), strdup("W"), PMU_KIND_POWER};
    p.nchannels = 1;
    for (size_t i = 0; i < p.nsamples; i++) {
        p.samples[i].time_ns *= 2;
        p.samples[i].values = malloc(sizeof(double));
        p.samples[i].values[0] = 5;
    }
    char *dir = test_mkdtemp(), *path = NULL, *msg = NULL;
    cr_assert_geq(asprintf(&path, "%s/e.folded", dir), 0);
    int rc;
    export_quiet(&p, path, "energy", &rc, &msg);
    cr_assert_eq(rc, 0, "%s", msg);
    free(msg);
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text);
    /* 19 intervals of 2 ms at 5 W: 10 mJ each, half of it unattributed;
     * no process frame (the input names no program). */
    unsigned long long work = 0, idle = 0, un = 0;
    cr_assert_eq(
        sscanf(text, "[unattributed] %llu\nmain;idle %llu\nmain;work %llu\n", &un, &idle, &work), 3,
        "%s", text);
    cr_expect_eq(un + idle + work, 190000, "%s", text);
    cr_expect_eq(un, 95000, "%s", text);
    /* The first sample ends no interval: work has 9 of them, idle 10. */
    cr_expect_eq(work, 45000, "%s", text);
    cr_expect_eq(idle, 50000, "%s", text);
    free(text);

    /* Energy from a profile without it is an error, not an empty file. */
    struct profile plain;
    load_ok("a 1\n", &plain);
    export_quiet(&plain, path, "energy", &rc, &msg);
    cr_expect_eq(rc, -1);
    cr_expect_not_null(strstr(msg, "no energy"), "%s", msg);
    free(msg);
    profile_free(&plain);
    profile_free(&p);
    free(path);
    test_rmtree(dir);
    free(dir);
}

/* A folded file through convert is itself again: same lines, no process
 * frame added. */
Test(folded, a_folded_file_converts_to_itself)
{
    char *dir = test_mkdtemp(), *in = NULL, *out = NULL, *ptprof = build_ptprof();
    cr_assert_geq(asprintf(&in, "%s/in.collapsed", dir), 0);
    cr_assert_geq(asprintf(&out, "%s/out.collapsed", dir), 0);
    const char text[] = "main;a 2\nmain;a:b;c 7\nmain;d 1\nmain;hot 40\nother 3\n";
    write_file(in, text, strlen(text));
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", in, "-o", out, "--no-cache", NULL}, NULL, &res);
    spawn_result_free(&res);
    char *back = test_read_file(out, NULL);
    cr_assert_not_null(back);
    cr_expect_str_eq(back, text);
    free(back);
    free(in);
    free(out);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}

/* FOLDED (in its units: SCALE per report unit) against REPORT, within
 * MAX_ERROR report units (plus the CSV's 9 significant digits). */
static void compare_tallies(const char *what, const struct fn_counts *folded,
                            const struct fn_counts *report, double scale, double max_error)
{
    size_t compared = 0;
    for (size_t i = 0; i < report->n; i++) {
        const struct fn_count *r = &report->items[i];
        double f = fn_get(folded, r->name) / scale;
        cr_expect(fabs(f - r->value) <= max_error + 1e-8 * r->value,
                  "%s: %s: folded %.6f, report %.6f", what, r->name, f, r->value);
        compared += r->value > 0;
    }
    for (size_t i = 0; i < folded->n; i++)
        cr_expect(fn_get(report, folded->items[i].name) > 0 || folded->items[i].value == 0,
                  "%s: %s is in the folded file only", what, folded->items[i].name);
    cr_expect_geq(compared, 3, "%s: too few functions", what);
}

Test(folded, export_of_a_recording_matches_report, .timeout = 240)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *bin = build_workload("callers");
    char *data = NULL, *samples = NULL, *cpu = NULL, *again = NULL;
    cr_assert_geq(asprintf(&data, "%s/callers.data", dir), 0);
    cr_assert_geq(asprintf(&samples, "%s/callers.folded", dir), 0);
    cr_assert_geq(asprintf(&cpu, "%s/callers-cpu.collapsed", dir), 0);
    cr_assert_geq(asprintf(&again, "%s/again.folded", dir), 0);
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "record", "-o", data, "--", bin, "2", NULL}, NULL, &res);
    spawn_result_free(&res);
    /* The name chooses the format; samples by default. */
    run_ok((const char *[]){ptprof, "convert", data, "-o", samples, "--no-cache", NULL}, NULL,
           &res);
    spawn_result_free(&res);
    run_ok(
        (const char *[]){ptprof, "convert", data, "-o", cpu, "--metric", "cpu", "--no-cache", NULL},
        NULL, &res);
    spawn_result_free(&res);
    run_ok((const char *[]){ptprof, "convert", data, "-o", again, "--to", "folded", "--no-cache",
                            NULL},
           NULL, &res);
    spawn_result_free(&res);

    char *s_text = test_read_file(samples, NULL), *c_text = test_read_file(cpu, NULL);
    char *a_text = test_read_file(again, NULL);
    cr_assert(s_text && c_text && a_text);
    cr_expect_str_eq(a_text, s_text, "the same profile gives the same file");
    /* One process: every line starts with the program's name. */
    for (const char *l = s_text; *l; l = strchr(l, '\n') + 1) {
        cr_expect_eq(strncmp(l, "callers;", 8), 0, "line without the process: %.80s", l);
        if (!strchr(l, '\n'))
            break;
    }

    struct fn_counts self, total, r_self, r_total;
    folded_tally(s_text, 1, &self, &total);
    report_column(data, "samples", "samples", NULL, &r_self);
    report_column(data, "samples", "total_samples", NULL, &r_total);
    cr_expect_eq(self.total, r_self.total, "samples: folded %.0f, report %.0f", self.total,
                 r_self.total);
    compare_tallies("self samples", &self, &r_self, 1, 0);
    compare_tallies("total samples", &total, &r_total, 1, 0);
    cr_expect_gt(fn_get(&self, "hot"), self.total / 2, "hot is the hot spot");
    fn_free(&self);
    fn_free(&total);
    fn_free(&r_self);
    fn_free(&r_total);

    /* CPU time in microseconds, each line rounded on its own. */
    folded_tally(c_text, 1, &self, &total);
    report_column(data, "cpu", "cpu_time", NULL, &r_self);
    report_column(data, "cpu", "total_cpu_time", NULL, &r_total);
    size_t lines = 0;
    for (const char *c = c_text; *c; c++)
        lines += *c == '\n';
    /* Each line is rounded to a microsecond on its own. */
    compare_tallies("self cpu", &self, &r_self, 1e6, 0.5e-6 * (double)lines);
    compare_tallies("total cpu", &total, &r_total, 1e6, 0.5e-6 * (double)lines);
    fn_free(&self);
    fn_free(&total);
    fn_free(&r_self);
    fn_free(&r_total);

    /* Read back, the export's counts are samples again. */
    struct fn_counts back;
    folded_tally(s_text, 1, &self, &total);
    report_column(samples, "samples", "samples", NULL, &back);
    for (size_t i = 0; i < self.n; i++)
        cr_expect_eq(fn_get(&back, self.items[i].name), self.items[i].value, "%s",
                     self.items[i].name);
    fn_free(&back);
    fn_free(&self);
    fn_free(&total);

    free(s_text);
    free(c_text);
    free(a_text);
    free(data);
    free(samples);
    free(cpu);
    free(again);
    free(bin);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}

/* --- a real folded file: google-pprof --collapsed ------------------------ */

/* google-pprof --text's flat column per function ("F (inline)" is F). */
static void pprof_flat(const char *pprof, const char *binary, const char *file,
                       struct fn_counts *out, double *total)
{
    const char *argv[] = {pprof, "--text", "--nodecount=100000", binary, file, NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    const char *t = strstr(res.out, "Total: ");
    cr_assert_not_null(t, "google-pprof printed no total:\n%s\n%s", res.out, res.err);
    cr_assert_eq(sscanf(t, "Total: %lf samples", total), 1);
    memset(out, 0, sizeof(*out));
    for (const char *line = strchr(t, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        unsigned long long flat, cum;
        double p1, p2, p3;
        int at = 0;
        if (sscanf(line + 1, "%llu %lf%% %lf%% %llu %lf%% %n", &flat, &p1, &p2, &cum, &p3, &at) !=
                5 ||
            at == 0)
            continue;
        const char *name = line + 1 + at;
        size_t len = strcspn(name, "\n");
        static const char inl[] = " (inline)";
        if (len >= sizeof(inl) - 1 &&
            strncmp(name + len - (sizeof(inl) - 1), inl, sizeof(inl) - 1) == 0)
            len -= sizeof(inl) - 1;
        char buf[256];
        snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
        if (flat)
            fn_add(out, buf, (double)flat);
    }
    spawn_result_free(&res);
}

Test(folded, google_pprof_collapsed_matches_google_pprof_text, .timeout = 180)
{
    cr_assert_eq(access(LIBPROFILER, R_OK), 0, "%s is missing (scripts/install-deps --test)",
                 LIBPROFILER);
    char *pprof = test_need_tool("google-pprof");
    char *dir = test_mkdtemp(), *bin = build_workload("callers");
    char *prof = NULL, *folded = NULL, *env_out = NULL;
    cr_assert_geq(asprintf(&prof, "%s/callers.prof", dir), 0);
    cr_assert_geq(asprintf(&folded, "%s/callers.txt", dir), 0);
    cr_assert_geq(asprintf(&env_out, "CPUPROFILE=%s", prof), 0);
    const char *env[] = {"LD_PRELOAD=" LIBPROFILER, env_out, "CPUPROFILE_FREQUENCY=250", NULL};
    double total = 0;
    struct fn_counts theirs = {0};
    for (int seconds = 2;; seconds *= 2) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%d", seconds);
        struct spawn_result res;
        run_ok((const char *[]){bin, secs, NULL}, env, &res);
        spawn_result_free(&res);
        fn_free(&theirs);
        pprof_flat(pprof, bin, prof, &theirs, &total);
        if (total >= 300 || seconds >= 16)
            break;
    }
    cr_assert_geq(total, 300, "too few ticks: %.0f", total);
    struct spawn_result res;
    run_ok((const char *[]){pprof, "--collapsed", bin, prof, NULL}, NULL, &res);
    write_file(folded, res.out, res.out_len);
    spawn_result_free(&res);

    /* By content, whatever its name (.txt). */
    struct profile p;
    cr_assert_eq(profile_load(folded, &p), 0);
    cr_expect_str_eq(p.format, "folded");
    cr_expect_eq(p.totals.samples, total);
    profile_free(&p);

    /* Every analysis command takes it as it is. */
    char *ptprof = build_ptprof(), *svg = NULL;
    cr_assert_geq(asprintf(&svg, "%s/out.svg", dir), 0);
    const char *const commands[][8] = {
        {ptprof, "info", folded, NULL},
        {ptprof, "flamegraph", folded, "-o", svg, NULL},
        {ptprof, "timeline", folded, "-o", svg, NULL},
        {ptprof, "compare", folded, folded, NULL},
    };
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        run_ok(commands[i], NULL, &res);
        spawn_result_free(&res);
    }
    free(svg);
    free(ptprof);

    struct fn_counts ours;
    report_column(folded, "samples", "samples", NULL, &ours);
    cr_expect_eq(ours.total, total, "samples: ptprof %.0f, google-pprof %.0f", ours.total, total);
    for (size_t i = 0; i < theirs.n; i++)
        cr_expect_eq(fn_get(&ours, theirs.items[i].name), theirs.items[i].value,
                     "%s: ptprof %.0f, google-pprof %.0f", theirs.items[i].name,
                     fn_get(&ours, theirs.items[i].name), theirs.items[i].value);
    for (size_t i = 0; i < ours.n; i++)
        cr_expect(ours.items[i].value == 0 || fn_get(&theirs, ours.items[i].name) > 0,
                  "%s: ptprof %.0f, not in google-pprof", ours.items[i].name, ours.items[i].value);
    cr_expect_geq(theirs.n, 2);
    fn_free(&ours);
    fn_free(&theirs);
    free(pprof);
    free(bin);
    free(prof);
    free(folded);
    free(env_out);
    test_rmtree(dir);
    free(dir);
}

/* --- the kept fuzz corpus ------------------------------------------------ */

static void replay_one(const struct corpus_file *f, void *ctx)
{
    size_t *valid = ctx;
    struct profile p;
    int rc = folded_load_buffer(f->name, f->data, f->len, &p);
    cr_expect(rc == 0 || !f->must_load, "%s does not load", f->path);
    if (rc == 0) {
        cr_expect_str_eq(p.format, "folded");
        for (size_t i = 0; i < p.nsamples; i++) {
            const struct prof_thread_sample *t = &p.samples[i].threads[0];
            cr_assert(t->stack > 0 && t->stack < p.nstacks, "%s", f->path);
            cr_assert_eq(t->pc, p.stacks[t->stack].pcs[0]);
        }
        *valid += f->must_load;
        /* What detection claims loads; what loads is claimed, unless it
         * is blank or its first lines are not like other tools'. */
        if (folded_detect(f->data, f->len))
            cr_expect_eq(rc, 0, "%s is detected but does not load", f->path);
    } else {
        cr_expect_null(p.format);
        cr_expect_eq(p.nsamples, 0);
    }
    if (f->must_load)
        cr_expect(folded_detect(f->data, f->len), "%s is not recognised", f->path);
    profile_free(&p);
}

Test(folded, corpus_inputs_load_or_fail_cleanly)
{
    size_t valid = 0;
    corpus_replay("tests/fuzz/corpus/folded", replay_one, &valid);
    cr_expect_geq(valid, 4);
}

/* Detection by content must never take another format's file for a folded
 * or perf script one: every kept file of the other readers, valid or
 * damaged (CSV timelines included), and each of the two text formats'
 * valid files against the other's detector. */
static void claim_none(const struct corpus_file *f, void *ctx)
{
    const char *corpus = ctx;
    /* Damaged text of one text format may well be the other's. */
    bool text = strcmp(corpus, "folded") == 0 || strcmp(corpus, "perf_script") == 0;
    if (text && !f->must_load)
        return;
    if (strcmp(corpus, "folded") != 0)
        cr_expect_not(folded_detect(f->data, f->len), "%s is taken for folded stacks", f->path);
    if (strcmp(corpus, "perf_script") != 0)
        cr_expect_not(perf_script_detect(f->data, f->len), "%s is taken for perf script text",
                      f->path);
}

Test(folded, no_other_formats_file_is_claimed)
{
    static const char *const corpora[] = {"csv_timeline", "gmon",       "gperftools", "native",
                                          "pbin",         "pperf",      "pprof",      "slurp",
                                          "folded",       "perf_script"};
    for (size_t i = 0; i < sizeof(corpora) / sizeof(corpora[0]); i++) {
        char dir[64];
        snprintf(dir, sizeof(dir), "tests/fuzz/corpus/%s", corpora[i]);
        corpus_replay(dir, claim_none, (void *)corpora[i]);
    }
}
