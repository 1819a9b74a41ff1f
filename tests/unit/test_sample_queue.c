/*
 * test_sample_queue.c - samples waiting for late stops (record/sample_queue.h):
 * written in order, each when its last placeholder is filled, with the
 * thread's copy in every sample that waited for it; gone threads dropped.
 * The queue writes through a real native output, read back with the loader.
 */
#include "format/load.h"
#include "record/output.h"
#include "record/ptrace/sample_queue.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static struct prof_thread_sample ts(uint32_t tid, uint64_t pc)
{
    return (struct prof_thread_sample){.pid = 1, .tid = tid, .pc = pc, .syscall = -1};
}

/* The samples written to PATH: time and, per thread, tid and pc. */
static void load(const char *path, struct profile *p)
{
    profile_init(p);
    cr_assert_eq(profile_load(path, p), 0, "%s does not load", path);
}

Test(sample_queue, samples_wait_for_late_threads_and_are_written_in_order)
{
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert(asprintf(&path, "%s/p.data", dir) > 0);
    struct output *out = output_open(path, OUTPUT_NATIVE, NULL);
    cr_assert_not_null(out);
    output_started(out);
    output_process(out, 1, 0, 1);
    output_thread(out, 1, 10, 1, "a");
    output_thread(out, 1, 11, 1, "b");
    struct sample_queue q;
    sample_queue_init(&q, 0, NULL);

    /* Sample 1: thread 10 copied, thread 11 on its way to a CPU. */
    struct open_sample *s1 = sample_queue_open(&q, 1000, NULL);
    struct prof_thread_sample a1 = ts(10, 0x100);
    sample_add(s1, &a1);
    sample_wait(s1, 1, 11);
    cr_assert_eq(sample_queue_flush(&q, out, false), 0, "a waiting sample was written");
    /* Sample 2: the same, thread 11 still owed. */
    struct open_sample *s2 = sample_queue_open(&q, 2000, NULL);
    struct prof_thread_sample a2 = ts(10, 0x200);
    sample_add(s2, &a2);
    sample_wait(s2, 1, 11);
    /* Sample 3: thread 11 is gone: no place for it. */
    struct open_sample *s3 = sample_queue_open(&q, 3000, NULL);
    struct prof_thread_sample a3 = ts(10, 0x300);
    sample_add(s3, &a3);
    cr_assert_eq(sample_queue_flush(&q, out, false), 0,
                 "samples behind a waiting one were written");
    /* Its copy comes: both samples that waited get it, in order. */
    struct prof_thread_sample b = ts(11, 0xb00);
    uint64_t first = 0, last = 0;
    cr_assert_eq(sample_queue_fill(&q, &b, &first, &last), 2);
    cr_assert_eq(first, 1000, "the earliest sample it went into");
    cr_assert_eq(last, 2000, "the latest sample it went into");
    cr_assert_eq(sample_queue_flush(&q, out, false), 3);
    cr_assert_eq(q.count, 0);

    /* Sample 4 waits for a thread that exits before it stops: dropped. */
    struct open_sample *s4 = sample_queue_open(&q, 4000, NULL);
    sample_add(s4, &a3);
    sample_wait(s4, 1, 12);
    sample_queue_forget(&q, 12);
    cr_assert_eq(sample_queue_flush(&q, out, false), 1);
    struct prof_totals totals = {.samples = 4};
    cr_assert_eq(output_finish(out, &totals, NULL), 0);
    sample_queue_free(&q);

    struct profile p;
    load(path, &p);
    cr_assert_eq(p.nsamples, 4);
    const uint32_t nthreads[] = {2, 2, 1, 1};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(p.samples[i].time_ns, 1000 * (i + 1), "sample %zu out of order", i);
        cr_assert_eq(p.samples[i].nthreads, nthreads[i], "sample %zu", i);
        for (uint32_t t = 0; t < p.samples[i].nthreads; t++) {
            const struct prof_thread_sample *x = &p.samples[i].threads[t];
            cr_assert_eq(x->pc, x->tid == 11 ? 0xb00u : 0x100u * (i < 3 ? i + 1 : 3),
                         "sample %zu thread %u pc %#llx", i, x->tid, (unsigned long long)x->pc);
            cr_assert_eq(x->flags, 0, "a placeholder's mark was written");
        }
    }
    profile_free(&p);
    test_rmtree(dir);
    free(dir);
    free(path);
}

Test(sample_queue, a_full_queue_opens_nothing_and_force_writes_what_waits)
{
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert(asprintf(&path, "%s/p.data", dir) > 0);
    struct output *out = output_open(path, OUTPUT_NATIVE, NULL);
    output_started(out);
    output_process(out, 1, 0, 1);
    output_thread(out, 1, 10, 1, "a");
    struct sample_queue q;
    sample_queue_init(&q, 0, NULL);
    struct prof_thread_sample a = ts(10, 0x100);
    for (int i = 0; i < SAMPLE_QUEUE_MAX; i++) {
        struct open_sample *s = sample_queue_open(&q, (uint64_t)i + 1, NULL);
        cr_assert_not_null(s);
        sample_add(s, &a);
        sample_wait(s, 1, 99);
    }
    cr_assert(sample_queue_full(&q));
    cr_assert_null(sample_queue_open(&q, 1000, NULL));
    /* At the end, what still waits is written without the missing thread. */
    cr_assert_eq(sample_queue_flush(&q, out, true), SAMPLE_QUEUE_MAX);
    struct prof_totals totals = {.samples = SAMPLE_QUEUE_MAX};
    cr_assert_eq(output_finish(out, &totals, NULL), 0);
    sample_queue_free(&q);
    struct profile p;
    load(path, &p);
    cr_assert_eq(p.nsamples, SAMPLE_QUEUE_MAX);
    for (size_t i = 0; i < p.nsamples; i++)
        cr_assert_eq(p.samples[i].nthreads, 1);
    profile_free(&p);
    test_rmtree(dir);
    free(dir);
    free(path);
}

/* A cut's sample (ptrace/spells.h) goes in its place among the queued
 * samples, an energy counter's reading on the line between its
 * neighbours', a power reading (which stands for the interval up to it)
 * the next one's, or the one before's for a place that sample saw (a run
 * cut in its middle), and never before a sample already written. */
Test(sample_queue, an_inserted_sample_takes_its_place_and_its_share_of_the_readings)
{
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert(asprintf(&path, "%s/p.data", dir) > 0);
    struct pmu_channel ch[2] = {{.name = "energy", .unit = "J", .kind = PMU_KIND_ENERGY},
                                {.name = "power", .unit = "W", .kind = PMU_KIND_POWER}};
    struct pmu_source src = {.nchannels = 2, .channels = ch};
    struct output *out = output_open(path, OUTPUT_NATIVE, &src);
    cr_assert_not_null(out);
    output_started(out);
    output_process(out, 1, 0, 1);
    output_thread(out, 1, 10, 1, "a");
    output_thread(out, 1, 11, 1, "b");
    struct sample_queue q;
    const bool counter[2] = {true, false};
    sample_queue_init(&q, 2, counter);
    struct prof_thread_sample a = ts(10, 0x100), b = ts(11, 0xb00), cut = ts(11, 0xc00);
    double v1[2] = {10, 1}, v2[2] = {30, 2}, v3[2] = {50, 3};
    sample_add(sample_queue_open(&q, 1000, v1), &a);
    cr_assert_not(sample_queue_insert(&q, 1500, &cut, false),
                  "nothing after it: no line to read off");
    struct open_sample *s2 = sample_queue_open(&q, 2000, v2);
    sample_add(s2, &a);
    sample_wait(s2, 1, 11);
    sample_add(sample_queue_open(&q, 3000, v3), &a);
    cr_assert(sample_queue_insert(&q, 1500, &cut, false));
    cr_assert(sample_queue_insert(&q, 2250, &cut, true));
    cr_assert_eq(q.count, 5);
    /* The first three are complete; 2000 waits for thread 11. */
    cr_assert_eq(sample_queue_flush(&q, out, false), 2);
    cr_assert_not(sample_queue_insert(&q, 1200, &cut, false), "inserted before a written sample");
    sample_queue_fill(&q, &b, NULL, NULL);
    cr_assert_eq(sample_queue_flush(&q, out, false), 3);
    struct prof_totals totals = {.samples = 5};
    cr_assert_eq(output_finish(out, &totals, NULL), 0);
    sample_queue_free(&q);

    struct profile p;
    load(path, &p);
    cr_assert_eq(p.nsamples, 5);
    const uint64_t times[] = {1000, 1500, 2000, 2250, 3000};
    const double energy[] = {10, 20, 30, 35, 50}, power[] = {1, 2, 2, 2, 3};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(p.samples[i].time_ns, times[i], "sample %zu at %llu", i,
                     (unsigned long long)p.samples[i].time_ns);
        cr_assert_not_null(p.samples[i].values);
        cr_assert_float_eq(p.samples[i].values[0], energy[i], 1e-9, "sample %zu: %g J", i,
                           p.samples[i].values[0]);
        cr_assert_float_eq(p.samples[i].values[1], power[i], 1e-9, "sample %zu: %g W", i,
                           p.samples[i].values[1]);
    }
    cr_assert_eq(p.samples[1].nthreads, 1);
    cr_assert_eq(p.samples[1].threads[0].pc, 0xc00u);
    profile_free(&p);
    test_rmtree(dir);
    free(dir);
    free(path);
}
