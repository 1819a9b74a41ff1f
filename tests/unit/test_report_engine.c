/*
 * test_report_engine.c - the flat report with self and total
 * (analyze/walk.h, analyze/aggregate.h) on synthetic profiles and a fake
 * resolver: CPU and wall time per thread sample, stacks, recursion,
 * inlined frames, threads blocked in system calls, executions, every key,
 * and paths that change with the process's maps.
 */
#include "test_report_fake.h"

#include <sys/syscall.h>

static const double NS = 1e-9;

Test(report_engine, cpu_time_since_previous_appearance_goes_to_the_later_sample)
{
    struct prof_thread_sample s0[] = {fake_th(10, PC_MAIN, 1000)};
    struct prof_thread_sample s1[] = {fake_th(10, PC_FOO, 4000)};
    struct prof_thread_sample s2[] = {fake_th(10, PC_MAIN, 10000)};
    struct prof_sample samples[] = {FAKE_SAMPLE(100, s0), FAKE_SAMPLE(200, s1),
                                    FAKE_SAMPLE(300, s2)};
    struct profile p = {.samples = samples, .nsamples = 3};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    /* The thread was born inside the recording: its first appearance is
     * worth the 1000 ns it used until then. */
    cr_expect(fake_close(r.totals.cpu_s, 10000 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:main")->self[Q_CPU], 7000 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:foo")->self[Q_CPU], 3000 * NS));
    cr_expect_eq(fake_row(&r, "prog:main")->self[Q_SAMPLES], 2);
    cr_expect_eq(fake_row(&r, "prog:foo")->self[Q_SAMPLES], 1);
    /* No stacks: total is self. */
    cr_expect_eq(fake_row(&r, "prog:main")->total[Q_CPU], fake_row(&r, "prog:main")->self[Q_CPU]);
    cr_expect_eq(r.totals.samples, 3);
    cr_expect_not(r.totals.has_stacks);
    report_free(&r);
}

Test(report_engine, first_appearance_gaps_and_backward_counters)
{
    /* Attached to a running process: 20 shows up with CPU time used
     * before we came, which counts nothing (nor do 30's and 40's first
     * appearances).  30 is missing from the middle sample: its delta spans
     * the gap.  40's counter goes back (tid reused): that delta counts 0. */
    struct prof_meta attached[] = {{(char *)"attached", (char *)"1"}};
    struct prof_thread_sample s0[] = {fake_th(30, PC_FOO, 100), fake_th(40, PC_FOO, 9000)};
    struct prof_thread_sample s1[] = {fake_th(20, PC_MAIN, 5000000000ULL),
                                      fake_th(40, PC_MAIN, 50)};
    struct prof_thread_sample s2[] = {fake_th(20, PC_FOO, 5000000700ULL), fake_th(30, PC_MAIN, 600),
                                      fake_th(40, PC_MAIN, 80)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1), FAKE_SAMPLE(3, s2)};
    struct profile p = {.samples = samples, .nsamples = 3, .meta = attached, .nmeta = 1};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect_eq(r.totals.thread_samples, 7);
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_CPU], 530 * NS));
    cr_expect_eq(fake_row(&r, "main")->self[Q_SAMPLES], 4);
    cr_expect(fake_close(fake_row(&r, "foo")->self[Q_CPU], 700 * NS));
    report_free(&r);
}

Test(report_engine, wall_time_counts_every_thread_and_latency_can_be_taken_out)
{
    /* Thread 2 sleeps (no CPU) but is there: its wall time counts.  Thread
     * 3 misses the middle sample: its interval spans two. */
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0), fake_th(2, PC_FOO, 0),
                                      fake_th(3, PC_BAR, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, 900), fake_th(2, PC_FOO, 0)};
    struct prof_thread_sample s2[] = {fake_th(1, PC_MAIN, 1800), fake_th(2, PC_FOO, 0),
                                      fake_th(3, PC_BAR, 10)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1000, s0), FAKE_SAMPLE(2000, s1),
                                    FAKE_SAMPLE(3000, s2)};
    struct profile p = {.samples = samples, .nsamples = 3, .has_totals = true};
    /* 300 ns of latency over 3 samples: 100 ns per sample. */
    p.totals = (struct prof_totals){.wall_ns = 2500, .latency_ns = 300, .samples = 3};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_WALL], 2000 * NS));
    cr_expect(fake_close(fake_row(&r, "foo")->self[Q_WALL], 2000 * NS));
    cr_expect(fake_close(fake_row(&r, "bar")->self[Q_WALL], 2000 * NS));
    cr_expect(fake_close(r.totals.wall_s, 6000 * NS));
    cr_expect(fake_close(r.totals.duration_s, 2500 * NS), "recorder's wall time");
    cr_expect(fake_close(r.totals.latency_s, 300 * NS));
    report_free(&r);

    struct metrics_options mo = {.account_latency = true};
    char *error = NULL;
    cr_assert_eq(fake_analyze_opts(&p, "procedure", METRIC_WALL, &mo, &r, &error), 0);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_WALL], 1800 * NS));
    cr_expect(fake_close(fake_row(&r, "bar")->self[Q_WALL], 1800 * NS), "two samples spanned");
    report_free(&r);
}

/* Stacks: pcs[0] is the PC, the rest return addresses. */
Test(report_engine, self_goes_to_the_innermost_frame_total_to_every_frame)
{
    uint64_t chain[] = {PC_BAR + 4, PC_FOO + 0x10, PC_MAIN + 0x10};
    uint64_t shallow[] = {PC_FOO + 8, PC_MAIN + 0x20};
    struct prof_stack stacks[] = {{0, NULL}, {3, chain}, {2, shallow}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 100)};
    struct prof_thread_sample s2[] = {fake_ths(1, 2, 130)};
    struct prof_thread_sample s3[] = {fake_ths(1, 1, 200)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1), FAKE_SAMPLE(3, s2),
                                    FAKE_SAMPLE(4, s3)};
    struct profile p = {.samples = samples, .nsamples = 4, .stacks = stacks, .nstacks = 3};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(r.totals.has_stacks);
    const struct report_row *bar = fake_row(&r, "prog:bar"), *foo = fake_row(&r, "prog:foo"),
                            *main_ = fake_row(&r, "prog:main");
    cr_expect(fake_close(bar->self[Q_CPU], 170 * NS));
    cr_expect(fake_close(bar->total[Q_CPU], 170 * NS));
    cr_expect(fake_close(foo->self[Q_CPU], 30 * NS));
    cr_expect(fake_close(foo->total[Q_CPU], 200 * NS));
    cr_expect_eq(main_->self[Q_CPU], 0);
    cr_expect(fake_close(main_->total[Q_CPU], 200 * NS));
    cr_expect_eq(main_->total[Q_SAMPLES], 4);
    cr_expect_eq(bar->self[Q_SAMPLES], 3);
    report_free(&r);
}

Test(report_engine, return_addresses_name_the_call_not_the_next_function)
{
    /* A call as the last instruction of main returns to the first byte
     * after it, which is foo's: looked up at pc - 1 it is main's. */
    uint64_t chain[] = {PC_BAR + 4, PC_FOO};
    struct prof_stack stacks[] = {{0, NULL}, {2, chain}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0)};
    struct profile p = {.samples = samples, .nsamples = 1, .stacks = stacks, .nstacks = 2};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    cr_expect_eq(fake_row(&r, "main")->total[Q_SAMPLES], 1);
    cr_expect_null(fake_find(&r, "foo"));
    report_free(&r);
}

Test(report_engine, a_recursive_function_counts_once_per_stack)
{
    uint64_t chain[] = {PC_REC + 1, PC_REC + 0x11, PC_REC + 0x11, PC_MAIN + 0x10};
    struct prof_stack stacks[] = {{0, NULL}, {4, chain}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 500)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = samples, .nsamples = 2, .stacks = stacks, .nstacks = 2};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    const struct report_row *rec = fake_row(&r, "rec");
    cr_expect_eq(rec->total[Q_SAMPLES], 2);
    cr_expect(fake_close(rec->total[Q_CPU], 500 * NS));
    cr_expect(fake_close(rec->self[Q_CPU], 500 * NS));
    cr_expect(fake_close(report_pct(&r, rec, metric_builtin(METRIC_CPU), true), 100));
    report_free(&r);
}

Test(report_engine, inlined_functions_are_frames_with_their_own_lines)
{
    struct prof_thread_sample s0[] = {fake_th(1, PC_INL + 2, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_INL + 2, 100)};
    struct prof_thread_sample s2[] = {fake_th(1, PC_BAR + 2, 150)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1), FAKE_SAMPLE(3, s2)};
    struct profile p = {.samples = samples, .nsamples = 3};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "inl")->self[Q_CPU], 100 * NS));
    cr_expect(fake_close(fake_row(&r, "bar")->self[Q_CPU], 50 * NS));
    cr_expect(fake_close(fake_row(&r, "bar")->total[Q_CPU], 150 * NS));
    report_free(&r);

    fake_analyze(&p, "file,line", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "inl.h:5")->self[Q_CPU], 100 * NS));
    cr_expect(fake_close(fake_row(&r, "bar.c:33")->total[Q_CPU], 100 * NS), "the call site");
    cr_expect(fake_close(fake_row(&r, "bar.c:30")->self[Q_CPU], 50 * NS));
    report_free(&r);

    /* By symbol, inl's code is bar's, as perf and gprof count it; and an
     * inline chain is one frame, so bar does not call itself. */
    fake_analyze(&p, "symbol", &r);
    fake_expect_consistent(&r);
    cr_expect_null(fake_find(&r, "inl"));
    cr_expect(fake_close(fake_row(&r, "bar")->self[Q_CPU], 150 * NS));
    cr_expect(fake_close(fake_row(&r, "bar")->total[Q_CPU], 150 * NS));
    cr_expect_eq(r.nrows, 1);
    report_free(&r);
    fake_analyze(&p, "binary,symbol,procedure", &r);
    cr_expect(fake_close(fake_row(&r, "prog:bar:inl")->self[Q_CPU], 100 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:bar:bar")->self[Q_CPU], 50 * NS));
    report_free(&r);
}

Test(report_engine, threads_blocked_in_a_system_call_are_in_the_kernel)
{
    struct prof_thread_sample rd = fake_th(1, PC_READ + 2, 100);
    rd.flags = PROF_THREAD_IN_SYSCALL;
    rd.syscall = SYS_read;
    struct prof_thread_sample unnamed = fake_th(2, PC_READ + 2, 40);
    unnamed.flags = PROF_THREAD_IN_SYSCALL;
    unnamed.syscall = 9999;
    /* The flag without a number: just the PC. */
    struct prof_thread_sample no_number = fake_th(3, PC_READ + 2, 9);
    no_number.flags = PROF_THREAD_IN_SYSCALL;
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0), fake_th(2, PC_MAIN, 0),
                                      fake_th(3, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {rd, unnamed, no_number};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = samples, .nsamples = 2};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    const struct report_row *k = fake_row(&r, "[kernel]:[syscall read]");
    cr_expect(fake_close(k->self[Q_CPU], 100 * NS));
    cr_expect(fake_close(fake_row(&r, "[kernel]:[syscall 9999]")->self[Q_CPU], 40 * NS));
    /* The wrapper the thread was in holds it inclusively. */
    const struct report_row *w = fake_row(&r, "libc.so.6:read");
    cr_expect(fake_close(w->self[Q_CPU], 9 * NS));
    cr_expect(fake_close(w->total[Q_CPU], 149 * NS));
    report_free(&r);
}

Test(report_engine, executions_count_entries_into_a_key)
{
    /* Thread 1's leaf: main main foo main foo foo; under main the whole time. */
    uint64_t at_main[] = {PC_MAIN + 1};
    uint64_t at_foo[] = {PC_FOO + 1, PC_MAIN + 0x10};
    struct prof_stack stacks[] = {{0, NULL}, {1, at_main}, {2, at_foo}};
    const uint32_t seq[] = {1, 1, 2, 1, 2, 2};
    struct prof_thread_sample th[6][1];
    struct prof_sample samples[6];
    for (int i = 0; i < 6; i++) {
        th[i][0] = fake_ths(1, seq[i], (uint64_t)i * 10);
        samples[i] =
            (struct prof_sample){.time_ns = (uint64_t)i + 1, .nthreads = 1, .threads = th[i]};
    }
    struct profile p = {.samples = samples, .nsamples = 6, .stacks = stacks, .nstacks = 3};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect_eq(fake_row(&r, "main")->self[Q_EXECUTIONS], 2);
    cr_expect_eq(fake_row(&r, "foo")->self[Q_EXECUTIONS], 2);
    cr_expect_eq(fake_row(&r, "foo")->total[Q_EXECUTIONS], 2);
    cr_expect_eq(fake_row(&r, "main")->total[Q_EXECUTIONS], 1, "never left");
    cr_expect_eq(r.totals.executions, 4);
    report_free(&r);
}

Test(report_engine, every_key_and_combinations)
{
    struct prof_thread prof_threads[] = {{.pid = 1, .tid = 7, .name = "main"},
                                         {.pid = 1, .tid = 9, .name = "worker"}};
    struct prof_thread_sample s0[] = {fake_th(9, PC_CXX + 3, 0), fake_th(7, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(9, PC_CXX + 3, 30), fake_th(7, 0xdead0, 20)};
    struct prof_sample samples[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = samples, .nsamples = 2, .threads = prof_threads, .nthreads = 2};
    struct report r;
    fake_analyze(&p, "thread,procedure,procedure_mangled", &r);
    fake_expect_consistent(&r);
    /* Threads are numbered by first appearance. */
    cr_expect(fake_close(fake_row(&r, "worker#1:ns::f(int):_ZN2ns1fEi")->self[Q_CPU], 30 * NS));
    cr_expect(fake_close(fake_row(&r, "main#2:[unknown]:[unknown]")->self[Q_CPU], 20 * NS));
    report_free(&r);

    fake_analyze(&p, "pc,binary,file,line", &r);
    fake_expect_consistent(&r);
    cr_expect_not_null(fake_find(&r, "0x1400:prog:ns.cc:50"));
    cr_expect_not_null(fake_find(&r, "0x1000:prog:main.c:10"));
    cr_expect_not_null(fake_find(&r, "0xdead0:[unknown]:[unknown]:0"));
    report_free(&r);

    char err[160];
    struct key_spec ks;
    cr_expect_eq(key_spec_parse("binary,nope", &ks, err, sizeof(err)), -1);
    cr_expect_not_null(strstr(err, "nope"));
    cr_expect_eq(key_spec_parse("line,line", &ks, err, sizeof(err)), -1);
    cr_expect_eq(key_spec_parse("", &ks, err, sizeof(err)), -1);
    cr_assert_eq(key_spec_parse("line,pc,thread", &ks, err, sizeof(err)), 0);
    char *h = key_spec_header(&ks);
    cr_expect_str_eq(h, "line:pc:thread");
    free(h);
}

/* A resolver whose answer depends on time: the program was replaced at
 * t = 100 (an exec).  The analysis must not reuse the old path. */
static const struct sym_frame before_exec = {"old", "", "old_fn", "", "", 0, false};
static const struct sym_frame after_exec = {"new", "", "new_fn", "", "", 0, false};
static const struct sym_location loc_before = {0x10, 1, &before_exec, false};
static const struct sym_location loc_after = {0x10, 1, &after_exec, false};

static const struct sym_location *exec_resolve(void *ctx, uint32_t pid, uint64_t time_ns,
                                               uint64_t pc, bool ra)
{
    (void)ctx;
    (void)pid;
    (void)pc;
    (void)ra;
    return time_ns < 100 ? &loc_before : &loc_after;
}

Test(report_engine, paths_follow_map_changes)
{
    struct prof_map maps[] = {
        {.pid = 1, .time_ns = 0, .start = 0, .end = 0x100000, .unmap_ns = 100, .path = "old"},
        {.pid = 1, .time_ns = 100, .start = 0, .end = 0x100000, .path = "new"}};
    struct prof_thread_sample s0[] = {fake_th(1, 0x42, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, 0x42, 10)};
    struct prof_thread_sample s2[] = {fake_th(1, 0x42, 30)};
    struct prof_sample samples[] = {FAKE_SAMPLE(10, s0), FAKE_SAMPLE(50, s1), FAKE_SAMPLE(150, s2)};
    struct profile p = {.samples = samples, .nsamples = 3, .maps = maps, .nmaps = 2};
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct aggregate *a = aggregate_new(kt, &wo.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct frame_resolver res = {exec_resolve, NULL};
    struct walk_totals t;
    char *error = NULL;
    cr_assert_eq(walk_profile(&p, &res, &wo, kt, nt, &v, &t, &error), 0);
    struct report r;
    aggregate_report(a, &t, metric_builtin(METRIC_CPU), &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "old:old_fn")->self[Q_CPU], 10 * NS));
    cr_expect(fake_close(fake_row(&r, "new:new_fn")->self[Q_CPU], 20 * NS));
    report_free(&r);
    aggregate_free(a);
    strtab_free(nt);
    strtab_free(kt);
}
