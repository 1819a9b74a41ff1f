/*
 * test_perf_script.c - `perf script` text import (interop/perf_script.h):
 * hand-made texts in the layouts perf prints (call chains or not, pid/tid,
 * cpu, nanoseconds, source lines, inlined frames, C++ names, comms with
 * spaces, side-band events, other events than clocks), damaged texts and
 * detection; then real recordings: `perf record -g` of the callers
 * workload, its `perf script` read by ptprof against `perf report` on the
 * same perf.data, the callers of hot(), and the folded export.  Needs perf
 * (linux-perf: scripts/install-deps --test); the real tests are skipped,
 * with perf's reason, only where perf cannot record (perf_event_paranoid,
 * seccomp).
 */
#include "../lib/corpus.h"
#include "format/load.h"
#include "interop/perf_script.h"
#include "analyze/metric.h"
#include "export/folded_write.h"
#include "real_tools.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT(t) t, sizeof(t) - 1

static void load_ok(const char *text, size_t len, struct profile *p)
{
    int rc;
    char *msg = load_captured(perf_script_load_buffer, "t.txt", text, len, p, &rc);
    cr_assert_eq(rc, 0, "does not load: %s\n%s", msg, text);
    free(msg);
    cr_assert_str_eq(p->format, "perf-script");
}

/* The location of PC for PID, as a leaf or a caller's frame. */
static const struct prof_location *location(const struct profile *p, uint32_t pid, uint64_t pc,
                                            bool ra)
{
    for (size_t i = 0; i < p->nlocations; i++)
        if (p->locations[i].pid == pid && p->locations[i].pc == pc &&
            p->locations[i].return_address == ra)
            return &p->locations[i];
    cr_assert_fail("no location for pid %u pc 0x%llx", pid, (unsigned long long)pc);
    return NULL;
}

/* Sample I's frames as "function@binary" (inlined ones too, innermost
 * first), leaf first, joined by ';'. */
static void frames_of(const struct profile *p, size_t i, char *buf, size_t size)
{
    const struct prof_thread_sample *t = &p->samples[i].threads[0];
    cr_assert(t->stack > 0 && t->stack < p->nstacks);
    const struct prof_stack *s = &p->stacks[t->stack];
    cr_assert_eq(s->pcs[0], t->pc);
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < s->depth; d++) {
        const struct prof_location *l = location(p, t->pid, s->pcs[d], d > 0);
        for (uint32_t k = 0; k < l->nframes; k++)
            n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s@%s", n ? ";" : "",
                                  l->frames[k].function, l->frames[k].binary);
    }
}

static const struct prof_thread *thread_of(const struct profile *p, uint32_t tid)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid)
            return &p->threads[i];
    cr_assert_fail("no thread %u", tid);
    return NULL;
}

static const char default_text[] =
    "callers 23988 10672.285379:     250000 cpu-clock: \n"
    "\tffffffff81a8534a security_vm_enough_memory_mm+0x1a ([kernel.kallsyms])\n"
    "\t           20ca3 mmap64+0x13 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
    "\t    7f7371bdf8a8 [unknown] ([unknown])\n"
    "\n"
    "callers 23990 10672.286418:     250000 cpu-clock: \n"
    "\t            1487 hot+0x27 (/opt/w/callers)\n"
    "\t            14cd via_b+0xd (/opt/w/callers)\n"
    "\t            153b worker_main+0x5b (/opt/w/callers)\n"
    "\t           891f5 start_thread+0x305 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "callers 23990 10672.286664:     250000 cpu-clock: \n"
    "\t            1487 hot+0x27 (/opt/w/callers)\n"
    "\t            14ad via_a+0xd (/opt/w/callers)\n"
    "\t            1505 worker_main+0x25 (/opt/w/callers)\n"
    "\n";

Test(perf_script, default_output_with_call_chains)
{
    struct profile p;
    load_ok(TEXT(default_text), &p);
    cr_assert_eq(p.nsamples, 3);
    char f[1024];
    frames_of(&p, 0, f, sizeof(f));
    cr_expect_str_eq(f, "security_vm_enough_memory_mm@[kernel.kallsyms];"
                        "mmap64@ld-linux-x86-64.so.2;[unknown]@[unknown]");
    frames_of(&p, 1, f, sizeof(f));
    cr_expect_str_eq(f, "hot@callers;via_b@callers;worker_main@callers;start_thread@libc.so.6");
    frames_of(&p, 2, f, sizeof(f));
    cr_expect_str_eq(f, "hot@callers;via_a@callers;worker_main@callers");
    /* The same address and name is one location: both samples in hot. */
    cr_expect_eq(p.samples[1].threads[0].pc, p.samples[2].threads[0].pc);
    const struct prof_location *hot = location(&p, 23988, p.samples[1].threads[0].pc, false);
    cr_expect_eq(hot->offset, 0x1487, "the address perf printed");
    cr_expect_str_eq(hot->frames[0].path, "/opt/w/callers");
    /* perf's default prints the tid alone: one process named by comm. */
    cr_expect_eq(p.nprocesses, 1);
    cr_expect_eq(p.processes[0].pid, 23988);
    cr_expect_str_eq(p.processes[0].exe, "callers");
    cr_expect_eq(p.nthreads, 2);
    cr_expect_eq(thread_of(&p, 23990)->pid, 23988);
    /* Time and CPU time: the period of cpu-clock is nanoseconds. */
    cr_expect_eq(p.samples[0].time_ns, 10672285379000ull);
    cr_expect_eq(p.samples[1].threads[0].cpu_ns, 250000);
    cr_expect_eq(p.samples[2].threads[0].cpu_ns, 500000);
    cr_expect_float_eq(p.frequency, 4000, 1e-9);
    cr_expect_str_eq(profile_meta(&p, "stacks"), "perf call chains");
    profile_free(&p);
}

Test(perf_script, without_call_chains_the_header_has_the_frame)
{
    static const char text[] =
        "         callers 24382 10683.618007:     250000 cpu-clock:      7f3db927d8c8 "
        "get_common_indices.constprop.0+0xc8 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
        "         callers 24382 10683.618510:     250000 cpu-clock:  ffffffff8158fd62 "
        "filemap_get_entry+0x92 ([kernel.kallsyms])\n"
        "         callers 24384 10683.619305:     250000 cpu-clock:      559aeff05487 hot+0x27 "
        "(/opt/w/callers)\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nsamples, 3);
    char f[512];
    frames_of(&p, 0, f, sizeof(f));
    cr_expect_str_eq(f, "get_common_indices.constprop.0@ld-linux-x86-64.so.2");
    frames_of(&p, 1, f, sizeof(f));
    cr_expect_str_eq(f, "filemap_get_entry@[kernel.kallsyms]");
    frames_of(&p, 2, f, sizeof(f));
    cr_expect_str_eq(f, "hot@callers");
    cr_expect_str_eq(profile_meta(&p, "stacks"), "none (perf script without -g)");
    profile_free(&p);
}

Test(perf_script, pid_tid_cpu_and_nanoseconds)
{
    static const char text[] = "app 100/100 [001] 5.000000001:        100 task-clock:u: \n"
                               "\t  1000 main+0x10 (/bin/app)\n"
                               "\n"
                               "worker 100/101 [000] 5.000000101:        100 task-clock:u: \n"
                               "\t  1010 work+0x1 (/bin/app)\n"
                               "\n"
                               "app 200/200 [001] 5.000000201:        300 task-clock:u: \n"
                               "\t  1000 main+0x10 (/bin/app)\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nsamples, 3);
    cr_expect_eq(p.samples[0].time_ns, 5000000001ull);
    cr_expect_eq(p.samples[2].time_ns, 5000000201ull);
    cr_expect_eq(p.nprocesses, 2);
    cr_expect_eq(thread_of(&p, 101)->pid, 100);
    cr_expect_str_eq(thread_of(&p, 101)->name, "worker");
    cr_expect_eq(p.samples[2].threads[0].pid, 200);
    /* main of process 200 is not main of process 100. */
    cr_expect_neq(p.samples[0].threads[0].pc, p.samples[2].threads[0].pc);
    cr_expect_eq(p.samples[2].threads[0].cpu_ns, 300);
    cr_expect_float_eq(p.frequency, 0, 1e-9, "periods differ: no single frequency");
    profile_free(&p);
}

Test(perf_script, comms_with_spaces_and_digits)
{
    static const char text[] = "Web Content 1234 10.000001: 250000 cpu-clock: \n"
                               "\t 1000 f (/bin/x)\n\n"
                               "foo 123 4567 10.5: 250000 cpu-clock: \n"
                               "\t 1000 f (/bin/x)\n\n"
                               "kworker/0:1-events 77 10.6: 250000 cpu-clock: \n"
                               "\t ffffffff81000000 g ([kernel.kallsyms])\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nsamples, 3);
    cr_expect_str_eq(thread_of(&p, 1234)->name, "Web Content");
    cr_expect_str_eq(thread_of(&p, 4567)->name, "foo 123");
    cr_expect_str_eq(thread_of(&p, 77)->name, "kworker/0:1-events");
    cr_expect_eq(p.samples[1].time_ns, 10500000000ull);
    profile_free(&p);
}

Test(perf_script, cpp_names_deleted_objects_and_odd_symbols)
{
    static const char text[] =
        "app 1 1.0: 1 cpu-clock: \n"
        "\t 1000 std::vector<int, std::allocator<int> >::push_back(int const&)+0x1c (/tmp/lib.so "
        "(deleted))\n"
        "\t 2000 operator+(A const&, A const&)+0x12 (/bin/app)\n"
        "\t 3000 no_offset (/bin/app)\n"
        "\t 4000 bare_symbol\n"
        "\t 5000\n"
        "\t 6000 [unknown] (/usr/lib/libc.so.6)\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    char f[1024];
    frames_of(&p, 0, f, sizeof(f));
    cr_expect_str_eq(f, "std::vector<int, std::allocator<int> >::push_back(int const&)@lib.so "
                        "(deleted);operator+(A const&, A const&)@app;no_offset@app;"
                        "bare_symbol@[unknown];[unknown]@[unknown];[unknown]@libc.so.6");
    profile_free(&p);
}

Test(perf_script, source_lines_and_inlined_frames)
{
    static const char text[] = "app 1 1.0: 250000 cpu-clock: \n"
                               "\t 1262 inner (inlined)\n"
                               "  inner.h:7\n"
                               "\t 1262 caller_a+0x22 (/bin/app)\n"
                               "  app.c:42\n"
                               "\t 2724a __libc_start_call_main+0x7a (/usr/lib/libc.so.6)\n"
                               "  /src/my project/start.c:9\n"
                               "\tffffffff81000130 entry+0x76 ([kernel.kallsyms])\n"
                               "  [kernel.kallsyms][ffffffff81000130]\n"
                               "\t 1 f (/bin/app)\n"
                               "  ??:0\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    const struct prof_stack *s = &p.stacks[p.samples[0].threads[0].stack];
    cr_assert_eq(s->depth, 4, "the inlined frame joins its caller's location");
    const struct prof_location *l = location(&p, 1, s->pcs[0], false);
    cr_assert_eq(l->nframes, 2);
    cr_expect_str_eq(l->frames[0].function, "inner");
    cr_expect(l->frames[0].inlined);
    cr_expect_str_eq(l->frames[0].binary, "app");
    cr_expect_str_eq(l->frames[0].file, "inner.h");
    cr_expect_eq(l->frames[0].line, 7);
    cr_expect_str_eq(l->frames[1].function, "caller_a");
    cr_expect_not(l->frames[1].inlined);
    cr_expect_str_eq(l->frames[1].file, "app.c");
    cr_expect_eq(l->frames[1].line, 42);
    cr_expect_eq(l->offset, 0x1262);
    l = location(&p, 1, s->pcs[1], true);
    cr_expect_str_eq(l->frames[0].file, "/src/my project/start.c", "a path with a blank");
    cr_expect_eq(l->frames[0].line, 9);
    l = location(&p, 1, s->pcs[2], true);
    cr_expect_str_eq(l->frames[0].function, "entry");
    cr_expect_str_eq(l->frames[0].file, "");
    l = location(&p, 1, s->pcs[3], true);
    cr_expect_str_eq(l->frames[0].file, "", "??:0 says nothing");
    profile_free(&p);
}

Test(perf_script, threads_without_pid_join_processes_by_comm)
{
    static const char text[] = "sh 10 1.0: 1 cpu-clock: \n\t 1 a (/bin/sh)\n\n"
                               "make 20 1.1: 1 cpu-clock: \n\t 1 a (/bin/make)\n\n"
                               "make 21 1.2: 1 cpu-clock: \n\t 1 a (/bin/make)\n\n"
                               "cc1 10 1.3: 1 cpu-clock: \n\t 1 a (/bin/cc1)\n\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_expect_eq(p.nprocesses, 2);
    cr_expect_eq(thread_of(&p, 21)->pid, 20, "a second make thread joins the first");
    cr_expect_eq(p.samples[3].threads[0].pid, 10, "a tid keeps its process after exec");
    cr_expect_str_eq(thread_of(&p, 10)->name, "cc1");
    /* The process is named by its main thread's last comm. */
    for (size_t i = 0; i < p.nprocesses; i++)
        if (p.processes[i].pid == 10)
            cr_expect_str_eq(p.processes[i].exe, "cc1");
    profile_free(&p);
}

Test(perf_script, other_events_take_their_time_from_sample_intervals)
{
    /* page-faults every 1 ms of one thread, 10 faults a sample: 1 ms of
     * CPU per sample; instructions are samples only. */
    static const char text[] = "app 1 1.000: 10 page-faults: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.001: 10 page-faults: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.0015: 1 instructions: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.002: 10 page-faults: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.003: 20 page-faults: \n\t 1 a (/bin/app)\n\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nsamples, 5);
    const uint64_t cpu[] = {1000000, 2000000, 2000000, 3000000, 5000000};
    for (size_t i = 0; i < 5; i++)
        cr_expect_eq(p.samples[i].threads[0].cpu_ns, cpu[i], "sample %zu: %llu", i,
                     (unsigned long long)p.samples[i].threads[0].cpu_ns);
    cr_expect_str_eq(profile_meta(&p, "perf.event"), "page-faults");
    profile_free(&p);

    /* With a clock in the file, CPU time comes from the clock alone. */
    static const char mixed[] = "app 1 1.000: 3 page-faults: \n\t 1 a (/bin/app)\n\n"
                                "app 1 1.001: 1000000 cpu-clock: \n\t 1 a (/bin/app)\n\n"
                                "app 1 1.002: 5 page-faults: \n\t 1 a (/bin/app)\n\n";
    load_ok(TEXT(mixed), &p);
    cr_expect_eq(p.samples[0].threads[0].cpu_ns, 0);
    cr_expect_eq(p.samples[1].threads[0].cpu_ns, 1000000);
    cr_expect_eq(p.samples[2].threads[0].cpu_ns, 1000000);
    profile_free(&p);
}

/* Every event is a value type carrying its periods, by its name without
 * perf's modifiers: instructions and cycles make ipc a metric. */
Test(perf_script, events_are_values_and_make_derived_metrics)
{
    static const char text[] = "app 1 1.000: 3000 instructions:u: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.001: 2000 cycles:u: \n\t 1 a (/bin/app)\n\n"
                               "app 1 1.002: 5000 instructions:u: \n\t 2 b (/bin/app)\n\n"
                               "app 1 1.003: 1000 cycles:u: \n\t 2 b (/bin/app)\n\n"
                               "app 1 1.004: 4000 cycles:u: \n\t 1 a (/bin/app)\n\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nvalue_types, 2);
    cr_expect_str_eq(p.value_types[0].name, "instructions");
    cr_expect_str_eq(p.value_types[0].unit, "count");
    cr_expect_str_eq(p.value_types[1].name, "cycles");
    const uint64_t want[5][2] = {{3000, 0}, {0, 2000}, {5000, 0}, {0, 1000}, {0, 4000}};
    cr_assert_eq(p.nsamples, 5);
    for (size_t i = 0; i < 5; i++) {
        const uint64_t *v = prof_thread_values(&p, &p.samples[i], 0);
        cr_assert_not_null(v, "sample %zu", i);
        cr_expect_eq(v[0], want[i][0], "sample %zu", i);
        cr_expect_eq(v[1], want[i][1], "sample %zu", i);
    }
    struct value_columns cols = {p.value_types, p.nvalue_types};
    struct metric m;
    cr_assert_eq(metric_resolve("ipc", &cols, &m), 0);
    cr_expect_eq(m.kind, METRIC_RATIO);
    double q[Q_COUNT] = {0}, v[2] = {8000, 7000};
    cr_expect_float_eq(metric_of(&m, q, v, 0), 8.0 / 7.0, 1e-12);
    profile_free(&p);

    /* One clock event alone: its periods are the CPU time, no values. */
    static const char clock[] = "app 1 1.000: 250000 cpu-clock: \n\t 1 a (/bin/app)\n\n";
    load_ok(TEXT(clock), &p);
    cr_expect_eq(p.nvalue_types, 0);
    cr_expect_null(prof_all_thread_values(&p.samples[0]));
    profile_free(&p);
}

/* An event that repeats its thread's last one exactly, time included, is
 * one more of that sample's weight, its period counted as often; events
 * that differ in time, event, stack or thread, and events without a time,
 * stay samples of their own. */
Test(perf_script, repeated_events_are_one_weighted_sample)
{
    static const char text[] = "app 7 5.000000: 100 cycles: \n\t 10 hot (/bin/app)\n\n"
                               "app 7 5.000000: 100 cycles: \n\t 10 hot (/bin/app)\n\n"
                               "app 8 5.000000: 100 cycles: \n\t 10 hot (/bin/app)\n\n"
                               "app 7 5.000000: 100 cycles: \n\t 10 hot (/bin/app)\n\n"
                               "app 7 5.000000: 100 cycles: \n\t 20 cold (/bin/app)\n\n"
                               "app 7 5.000100: 100 cycles: \n\t 20 cold (/bin/app)\n\n"
                               "app 7 5.000100: 300 instructions: \n\t 20 cold (/bin/app)\n\n"
                               "app 7 5.000100: 300 instructions: \n\t 20 cold (/bin/app)\n\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_assert_eq(p.nvalue_types, 2);
    static const struct {
        uint32_t tid;
        uint64_t weight, cycles, instructions;
    } want[] = {{7, 3, 300, 0}, {8, 1, 100, 0}, {7, 1, 100, 0}, {7, 1, 100, 0}, {7, 2, 0, 600}};
    cr_assert_eq(p.nsamples, 5);
    for (size_t i = 0; i < 5; i++) {
        const uint64_t *v = prof_thread_values(&p, &p.samples[i], 0);
        cr_expect_eq(p.samples[i].threads[0].tid, want[i].tid, "sample %zu", i);
        cr_expect_eq(prof_weight(&p.samples[i], 0), want[i].weight, "sample %zu", i);
        cr_assert_not_null(v, "sample %zu", i);
        cr_expect_eq(v[0], want[i].cycles, "sample %zu", i);
        cr_expect_eq(v[1], want[i].instructions, "sample %zu", i);
    }
    cr_expect_eq(p.totals.samples, 8);
    /* cycles is the CPU event: 1 ms a sample when nothing says (the one
     * gap between thread 7's samples is 100 us over one period of 100). */
    cr_expect_eq(p.samples[0].threads[0].cpu_ns, 3 * 100000);
    cr_expect_eq(p.samples[3].threads[0].cpu_ns, 5 * 100000);
    profile_free(&p);

    static const char untimed[] = "app 7 cycles: 10 hot (/bin/app)\n"
                                  "app 7 cycles: 10 hot (/bin/app)\n";
    load_ok(TEXT(untimed), &p);
    cr_expect_eq(p.nsamples, 2, "events without a time are 1 ms apart");
    cr_expect_null(prof_weights(&p.samples[0]));
    profile_free(&p);
}

Test(perf_script, comments_and_side_band_events_are_skipped)
{
    static const char text[] =
        "# ========\n# captured on    : Sun Nov 22 13:49:26 2026\n# ========\n#\n"
        "perf-exec     0/0         0.000000: PERF_RECORD_COMM: perf-exec:16892/16892\n"
        "forker 16892/16892 11283.781002: PERF_RECORD_COMM exec: forker:16892/16892\n"
        "forker 16892/16892 11283.781243:     250000 cpu-clock: \n"
        "\t           1469e handle_amd+0x7e (/usr/lib/ld-linux-x86-64.so.2)\n"
        "\n"
        "forker 16892/16892 11283.781811: PERF_RECORD_FORK(16894:16894):(16892:16892)\n"
        "forker 16894/16894 11283.790000: PERF_RECORD_EXIT(16894:16894):(16892:16892)\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    cr_expect_eq(p.nsamples, 1);
    cr_expect_eq(p.nprocesses, 1);
    profile_free(&p);
}

Test(perf_script, malformed_lines_name_the_file_and_line)
{
    static const struct rejected_text cases[] = {
        {TEXT("app 1 1.0: 1 cpu-clock: \n\t zzz not hex\n"), "t.txt:2: call-chain line"},
        {TEXT("\t 1234 f (/bin/x)\n"), "t.txt:1: a call-chain line outside an event"},
        {TEXT("app 1 1.0: 1 cpu-clock: \n\t 1 f\n\nhello world\n"), "t.txt:4: not an event"},
        {TEXT("app 1 1.0: 1 cpu-clock: \n\t 1 f\x01\n"), "t.txt:2: not text"},
        {TEXT("app 1 1.0: 1 cpu-clock: \n\t 1 f\0\n"), "t.txt:2: not text"},
        {TEXT("app 1 1.0: 1 cpu-clock: \n\t 12345678901234567 f\n"), "t.txt:2: call-chain"},
        {TEXT("cpu-clock: 1 2\n"), "t.txt:1: not an event"},
    };
    expect_rejected(perf_script_load_buffer, "t.txt", cases, sizeof(cases) / sizeof(cases[0]));
}

/* A chain of 5000 frames after a shallow event: the innermost 4096 kept,
 * a warning naming the deep event's header line, its sample flagged as
 * cut, and info counting it. */
Test(perf_script, deep_call_chains_keep_their_innermost_frames_and_say_so)
{
    size_t cap = 5000 * 32 + 256, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text, cap,
                          "app 1 0.5: 1 cpu-clock: \n\t 10 main (/bin/app)\n\n"
                          "app 1 1.0: 1 cpu-clock: \n");
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(text + n, cap - n, "\t %x f%d (/bin/app)\n", i + 1, i);
    struct profile p;
    int rc;
    char *msg = load_captured(perf_script_load_buffer, "t.txt", text, n, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_not_null(strstr(msg, "t.txt:4: 1 call chain deeper than 4096 frames kept only its "
                                   "innermost 4096"),
                       "%s", msg);
    free(msg);
    cr_assert_eq(p.nsamples, 2);
    const struct prof_stack *s = &p.stacks[p.samples[1].threads[0].stack];
    cr_assert_eq(s->depth, PERF_SCRIPT_MAX_DEPTH);
    cr_expect_str_eq(location(&p, 1, s->pcs[0], false)->frames[0].function, "f0");
    cr_expect_str_eq(location(&p, 1, s->pcs[s->depth - 1], true)->frames[0].function, "f4095");
    cr_expect_eq(p.samples[1].threads[0].flags, PROF_THREAD_STACK_TRUNCATED);
    cr_expect_eq(p.samples[0].threads[0].flags, 0, "the shallow chain is whole");
    cr_expect_eq(profile_truncated_stacks(&p), 1);
    profile_free(&p);

    /* info counts it. */
    expect_info_counts_one_cut("deep.txt", text, n,
                               "deep.txt:4: 1 call chain deeper than 4096 frames");
    free(text);
}

/* A gzip cut in half: the events up to its last whole line, marked
 * truncated there, and no line cut by the damage read as one. */
Test(perf_script, a_damaged_compressed_text_loads_up_to_its_last_line)
{
    char *dir = test_mkdtemp(), *plain = test_path(dir, "big.txt"),
         *gz = test_path(dir, "big.txt.gz");
    size_t cap = 600000, n = 0;
    char *text = malloc(cap);
    unsigned seed = 1;
    for (int i = 0; n + 200 < cap; i++) {
        seed = seed * 1103515245u + 12345u;
        n += (size_t)snprintf(text + n, cap - n,
                              "app 1 %d.%06d: 250000 cpu-clock: \n\t %x f%u (/bin/app)\n"
                              "\t %x main (/bin/app)\n\n",
                              i / 1000, i % 1000 * 1000, seed % 100000 + 0x1000, seed % 1000,
                              0x500 + i % 7);
    }
    write_file(plain, text, n);
    struct profile whole, part;
    load_whole_and_cut_gzip(plain, gz, &whole, &part);
    cr_expect(part.truncated);
    cr_assert_gt(part.truncated_at, 0);
    cr_assert_lt(part.truncated_at, n);
    cr_expect_eq(text[part.truncated_at - 1], '\n', "truncated at %llu, not after a line",
                 (unsigned long long)part.truncated_at);
    cr_expect_gt(part.nsamples, 0);
    cr_expect_lt(part.nsamples, whole.nsamples);
    /* Every event read is the one the whole file has, but the last, which
     * the damage may have cut: its frames are the first of the whole
     * event's (none, "[unknown]", when it stopped after the header), and
     * it is flagged as cut. */
    size_t last = part.nsamples - 1;
    for (size_t i = 0; i <= last; i++) {
        char a[256], b[256];
        frames_of(&part, i, a, sizeof(a));
        frames_of(&whole, i, b, sizeof(b));
        if (i < last) {
            cr_assert_str_eq(a, b, "event %zu", i);
            cr_assert_eq(part.samples[i].threads[0].flags, 0, "event %zu", i);
        } else {
            cr_assert(strcmp(a, "[unknown]@[unknown]") == 0 || strncmp(a, b, strlen(a)) == 0,
                      "event %zu: %s of %s", i, a, b);
            cr_assert_eq(part.samples[i].threads[0].flags, PROF_THREAD_STACK_TRUNCATED);
        }
    }
    profile_free(&whole);
    profile_free(&part);
    free(text);
    free(plain);
    free(gz);
    test_rmtree(dir);
    free(dir);
}

Test(perf_script, detection_claims_perf_script_only)
{
    static const struct {
        const char *text;
        size_t len;
    } yes[] =
        {
            {TEXT(default_text)},
            {TEXT("# comment\n\n   callers 1 1.0: 250000 cpu-clock:   1487 hot+0x27 (/bin/c)\n")},
            {TEXT("app 1/2 [003] 1.000000001: 1 cycles:u: \n\t 1 f (/bin/app)\n")},
            {TEXT("perf-exec 0/0 0.000000: PERF_RECORD_COMM: perf-exec:1/1\n"
                  "app 1 1.0: 1 cpu-clock: \n\t 1 f\n")},
        },
      no[] = {
          {TEXT("")},
          {TEXT("main;a;b 3\nmain;a 2\n")},
          {TEXT("time,power\n0.1,2.5\n")},
          {TEXT("app 1 1.0: 1 cpu-clock: \nsome prose\n")},
          {TEXT("\t 1487 hot+0x27 (/bin/c)\n")},
          {TEXT("Total: 10 samples\n")},
          {TEXT("\x89PTPROF\n\x01\0\0\0")},
          {TEXT("app 1 cpu-clock: \n\t 1 f\n")}, /* neither a time nor a frame */
      };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        cr_expect(perf_script_detect(yes[i].text, yes[i].len), "not recognised: %s", yes[i].text);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        cr_expect_not(perf_script_detect(no[i].text, no[i].len), "claimed: %s", no[i].text);
}

/* Several processes: each line starts with NAME-PID; a ';' inside a name
 * does not split it. */
Test(perf_script, folded_export_names_each_process)
{
    static const char text[] = "app 100/100 1.000: 250000 cpu-clock: \n"
                               "\t 10 leaf;odd+0x1 (/bin/app)\n\t 20 main+0x2 (/bin/app)\n\n"
                               "app 100/100 1.001: 250000 cpu-clock: \n"
                               "\t 10 leaf;odd+0x1 (/bin/app)\n\t 20 main+0x2 (/bin/app)\n\n"
                               "tool 200/201 1.002: 250000 cpu-clock: \n"
                               "\t 30 run+0x3 (/bin/tool)\n\n";
    struct profile p;
    load_ok(TEXT(text), &p);
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert_geq(asprintf(&path, "%s/out.folded", dir), 0);
    struct export_options eo = {.metric = NULL};
    key_spec_default(&eo.session.walk.keys);
    cr_assert_eq(folded_export("t.txt", &p, path, &eo), 0);
    char *out = test_read_file(path, NULL);
    cr_assert_not_null(out);
    cr_expect_str_eq(out, "app-100;main;leaf:odd 2\ntool-200;run 1\n");
    free(out);
    eo.metric = "cpu";
    cr_assert_eq(folded_export("t.txt", &p, path, &eo), 0);
    out = test_read_file(path, NULL);
    cr_assert_not_null(out);
    cr_expect_str_eq(out, "app-100;main;leaf:odd 500\ntool-200;run 250\n");
    free(out);
    free(path);
    test_rmtree(dir);
    free(dir);
    profile_free(&p);
}

/* --- real recordings ----------------------------------------------------- */

struct recording {
    char *dir, *perf, *bin, *data, *text;
};

/* perf record -g of the callers workload (2 s), and its perf script text.
 * Skips the test when perf cannot record here, with perf's reason. */
static void record_callers_of(struct recording *r, const char *const *script_args,
                              const char *const events[2])
{
    r->perf = test_need_tool("perf");
    r->dir = test_mkdtemp();
    r->bin = build_workload("callers");
    cr_assert_geq(asprintf(&r->data, "%s/callers.perf.data", r->dir), 0);
    cr_assert_geq(asprintf(&r->text, "%s/callers.txt", r->dir), 0);
    char why[512] = "";
    bool recorded = false;
    for (size_t i = 0; i < 2 && !recorded; i++) {
        const char *argv[] = {r->perf, "record", "-e",   events[i], "-g", "-o",
                              r->data, "--",     r->bin, "2",       NULL};
        struct spawn_opts o = {.argv = argv, .timeout_s = 120};
        struct spawn_result res;
        spawn_run(&o, &res);
        recorded = spawn_exit_code(res.status) == 0 && test_file_exists(r->data);
        if (!recorded)
            snprintf(why, sizeof(why), "%s", res.err);
        spawn_result_free(&res);
    }
    if (!recorded)
        cr_skip_test("perf cannot record here: %.300s", why);
    const char *argv[16] = {r->perf, "script", "-i", r->data};
    size_t n = 4;
    for (size_t i = 0; script_args && script_args[i] && n < 15; i++)
        argv[n++] = script_args[i];
    argv[n] = NULL;
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    write_file(r->text, res.out, res.out_len);
    spawn_result_free(&res);
}

static void record_callers(struct recording *r, const char *const *script_args)
{
    /* Kernel samples need perf_event_paranoid <= 1 or root; user space
     * alone works up to 2. */
    static const char *const events[] = {"cpu-clock", "cpu-clock:u"};
    record_callers_of(r, script_args, events);
}

static void recording_free(struct recording *r)
{
    test_rmtree(r->dir);
    free(r->dir);
    free(r->perf);
    free(r->bin);
    free(r->data);
    free(r->text);
}

/* perf report's own count of samples per symbol (the leaf, --no-children),
 * by name; rows of bare addresses (no symbol) count in OUT->total only. */
static void perf_report_counts(const struct recording *r, struct fn_counts *out)
{
    const char *argv[] = {r->perf,   "report",
                          "-i",      r->data,
                          "--stdio", "--no-children",
                          "--sort",  "sym",
                          "-F",      "overhead,sample,sym",
                          "-g",      "none",
                          NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    memset(out, 0, sizeof(*out));
    for (char *save = NULL, *line = strtok_r(res.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        double pct;
        unsigned long long n;
        int at = 0;
        if (line[0] == '#' || sscanf(line, " %lf%% %llu [%*c] %n", &pct, &n, &at) != 2 || !at)
            continue;
        char *name = line + at;
        size_t len = strlen(name);
        while (len && name[len - 1] == ' ')
            name[--len] = '\0';
        out->total += (double)n;
        if (strncmp(name, "0x", 2) != 0)
            fn_add(out, name, (double)n);
    }
    cr_assert_gt(out->total, 0, "perf report shows no samples:\n%s", res.err);
    spawn_result_free(&res);
}

static void expect_same_counts(const struct fn_counts *perf, const struct fn_counts *ours,
                               const char *what)
{
    cr_expect_eq(ours->total, perf->total, "%s: samples: ptprof %.0f, perf report %.0f", what,
                 ours->total, perf->total);
    for (size_t i = 0; i < perf->n; i++)
        cr_expect_eq(fn_get(ours, perf->items[i].name), perf->items[i].value,
                     "%s: %s: ptprof %.0f, perf report %.0f", what, perf->items[i].name,
                     fn_get(ours, perf->items[i].name), perf->items[i].value);
    for (size_t i = 0; i < ours->n; i++)
        cr_expect(ours->items[i].value == 0 || strcmp(ours->items[i].name, "[unknown]") == 0 ||
                      fn_get(perf, ours->items[i].name) > 0,
                  "%s: %s: ptprof %.0f, not in perf report", what, ours->items[i].name,
                  ours->items[i].value);
    cr_expect_gt(fn_get(ours, "hot"), ours->total / 2, "%s: hot is the hot spot", what);
}

Test(perf_script, perf_recording_matches_perf_report, .timeout = 240)
{
    struct recording r;
    record_callers(&r, NULL);
    struct profile p;
    cr_assert_eq(profile_load(r.text, &p), 0);
    cr_expect_str_eq(p.format, "perf-script");
    cr_expect_eq(p.nprocesses, 1);
    cr_expect_geq(p.nthreads, 2, "main and worker");
    cr_expect_str_eq(profile_meta(&p, "stacks"), "perf call chains");
    profile_free(&p);

    struct fn_counts perf, ours;
    perf_report_counts(&r, &perf);
    report_column(r.text, "samples", "samples", NULL, &ours);
    expect_same_counts(&perf, &ours, "perf script");
    fn_free(&ours);

    /* The call chains: hot() is called through via_a 7 times out of 10. */
    const char *const callers[] = {"--callers", "hot", NULL};
    report_column(r.text, "samples", "samples", callers, &ours);
    double a = fn_get(&ours, "via_a"), b = fn_get(&ours, "via_b");
    cr_assert_gt(a + b, 100, "too few samples in hot through via_a/via_b");
    cr_expect(a / (a + b) >= 0.56 && a / (a + b) <= 0.84, "via_a's share %.3f (%.0f / %.0f)",
              a / (a + b), a, a + b);
    fn_free(&ours);

    /* The folded export of it: leaves count what perf report counts. */
    char *folded = NULL, *ptprof = build_ptprof();
    cr_assert_geq(asprintf(&folded, "%s/callers.folded", r.dir), 0);
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "convert", r.text, "-o", folded, "--no-cache", NULL}, NULL,
           &res);
    spawn_result_free(&res);
    char *text = test_read_file(folded, NULL);
    cr_assert_not_null(text);
    struct fn_counts self, total;
    folded_tally(text, 1, &self, &total);
    cr_expect_eq(strncmp(text, "callers;", 8), 0, "the process frame: %.40s", text);
    expect_same_counts(&perf, &self, "folded export");
    fn_free(&self);
    fn_free(&total);
    free(text);
    free(folded);
    free(ptprof);
    fn_free(&perf);
    recording_free(&r);
}

/* perf report's period per symbol (the leaf) for EVENT of a recording of
 * several events; OUT->total the event's count. */
static void perf_report_periods(const struct recording *r, const char *event, struct fn_counts *out)
{
    const char *argv[] = {r->perf,   "report",
                          "-i",      r->data,
                          "--stdio", "--no-children",
                          "--sort",  "sym",
                          "-F",      "overhead,period,sym",
                          "-g",      "none",
                          NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    memset(out, 0, sizeof(*out));
    char want[128];
    snprintf(want, sizeof(want), "of event '%s'", event);
    char *section = strstr(res.out, want);
    cr_assert_not_null(section, "no %s in:\n%.2000s", want, res.out);
    char *end = strstr(section + 1, "# Samples:");
    if (end)
        *end = '\0';
    for (char *save = NULL, *line = strtok_r(section, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        double pct;
        unsigned long long n;
        int at = 0;
        if (line[0] == '#' || sscanf(line, " %lf%% %llu [%*c] %n", &pct, &n, &at) != 2 || !at)
            continue;
        char *name = line + at;
        size_t len = strlen(name);
        while (len && name[len - 1] == ' ')
            name[--len] = '\0';
        out->total += (double)n;
        fn_add(out, name, (double)n);
    }
    spawn_result_free(&res);
}

/* A recording of a clock and a software counter: each event is a metric
 * of its own name, weighed by its periods as perf report weighs it. */
Test(perf_script, every_event_is_a_metric_weighed_as_perf_report_does, .timeout = 240)
{
    static const char *const events[] = {"task-clock,page-faults", "task-clock:u,page-faults:u"};
    struct recording r;
    record_callers_of(&r, NULL, events);
    const char *const names[] = {"page-faults", "task-clock"};
    for (size_t e = 0; e < 2; e++) {
        struct fn_counts perf, ours;
        perf_report_periods(&r, names[e], &perf);
        cr_assert_gt(perf.total, 0, "no %s", names[e]);
        /* task-clock is in nanoseconds: report shows seconds. */
        double scale = e == 1 ? 1e9 : 1;
        report_column(r.text, names[e], "self", NULL, &ours);
        cr_expect_float_eq(ours.total * scale, perf.total, 0.5 + perf.total * 1e-12,
                           "%s: ptprof %.0f, perf report %.0f", names[e], ours.total * scale,
                           perf.total);
        for (size_t i = 0; i < perf.n; i++) {
            double a = fn_get(&ours, perf.items[i].name) * scale, b = perf.items[i].value;
            if (strncmp(perf.items[i].name, "0x", 2) == 0)
                continue; /* a bare address: ptprof names it by its binary */
            cr_expect_float_eq(a, b, 0.5 + b * 1e-12, "%s: %s: ptprof %.0f, perf report %.0f",
                               names[e], perf.items[i].name, a, b);
        }
        fn_free(&perf);
        fn_free(&ours);
    }
    recording_free(&r);
}

Test(perf_script, perf_script_with_pids_and_nanoseconds, .timeout = 240)
{
    const char *const args[] = {"-F", "+pid", "--ns", NULL};
    struct recording r;
    record_callers(&r, args);
    struct profile p;
    cr_assert_eq(profile_load(r.text, &p), 0);
    cr_expect_str_eq(p.format, "perf-script");
    cr_expect_eq(p.nprocesses, 1);
    profile_free(&p);
    struct fn_counts perf, ours;
    perf_report_counts(&r, &perf);
    report_column(r.text, "samples", "samples", NULL, &ours);
    expect_same_counts(&perf, &ours, "perf script -F +pid --ns");
    /* Every analysis command takes it as it is. */
    char *ptprof = build_ptprof();
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "info", r.text, NULL}, NULL, &res);
    cr_expect_not_null(strstr(res.out, "perf-script"), "%s", res.out);
    spawn_result_free(&res);
    run_ok((const char *[]){ptprof, "compare", r.text, r.text, "--no-cache", NULL}, NULL, &res);
    spawn_result_free(&res);
    char *svg = NULL;
    cr_assert_geq(asprintf(&svg, "%s/out.svg", r.dir), 0);
    run_ok((const char *[]){ptprof, "flamegraph", r.text, "-o", svg, "--no-cache", NULL}, NULL,
           &res);
    spawn_result_free(&res);
    cr_expect(test_file_exists(svg));
    run_ok((const char *[]){ptprof, "timeline", r.text, "-o", svg, "--no-cache", NULL}, NULL, &res);
    spawn_result_free(&res);
    free(svg);
    free(ptprof);
    fn_free(&perf);
    fn_free(&ours);
    recording_free(&r);
}

/* --- the kept fuzz corpus ------------------------------------------------ */

static void replay_one(const struct corpus_file *f, void *ctx)
{
    size_t *valid = ctx;
    struct profile p;
    int rc = perf_script_load_buffer(f->name, f->data, f->len, &p);
    cr_expect(rc == 0 || !f->must_load, "%s does not load", f->path);
    if (rc == 0) {
        cr_expect_str_eq(p.format, "perf-script");
        for (size_t i = 0; i < p.nsamples; i++) {
            const struct prof_thread_sample *t = &p.samples[i].threads[0];
            cr_assert(t->stack > 0 && t->stack < p.nstacks, "%s", f->path);
            cr_assert_eq(t->pc, p.stacks[t->stack].pcs[0]);
        }
        *valid += f->must_load;
    } else {
        cr_expect_null(p.format);
        cr_expect_eq(p.nsamples, 0);
    }
    if (f->must_load) {
        cr_expect(perf_script_detect(f->data, f->len), "%s is not recognised", f->path);
        cr_expect_gt(p.nsamples, 0, "%s has no samples", f->path);
    }
    profile_free(&p);
}

Test(perf_script, corpus_inputs_load_or_fail_cleanly)
{
    size_t valid = 0;
    corpus_replay("tests/fuzz/corpus/perf_script", replay_one, &valid);
    cr_expect_geq(valid, 6);
}
