/*
 * test_report_energy.c - energy and power per key (analyze/metrics.h):
 * each interval's energy (power x time, or an energy counter's increase,
 * or current x voltage) split over the threads by their CPU time, the
 * rest as the "[unattributed]" row, rows adding up to the measured total;
 * channel choice; damaged readings.
 */
#include "test_report_fake.h"

static const double S = 1000000000.0; /* ns per second */

static struct prof_channel power_ch[] = {{"package-0", "W", PMU_KIND_POWER}};

/* One thread: 0.5 s of CPU in main over the first second (10 W), then a
 * full second in foo (20 W). */
Test(report_energy, power_times_interval_split_by_cpu_with_the_rest_unattributed)
{
    double v0[] = {99}, v1[] = {10}, v2[] = {20};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, (uint64_t)(0.5 * S))};
    struct prof_thread_sample s2[] = {fake_th(1, PC_FOO, (uint64_t)(1.5 * S))};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE((uint64_t)S, s1),
                                    FAKE_SAMPLE((uint64_t)(2 * S), s2)};
    samples[0].values = v0;
    samples[1].values = v1;
    samples[2].values = v2;
    struct profile p = {.samples = samples, .nsamples = 3, .channels = power_ch, .nchannels = 1};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(r.totals.has_energy);
    cr_expect(fake_close(r.totals.energy_j, 30), "the first reading has no interval: %g",
              r.totals.energy_j);
    cr_expect(fake_close(fake_row(&r, "prog:main")->self[Q_ENERGY], 5));
    cr_expect(fake_close(fake_row(&r, "prog:foo")->self[Q_ENERGY], 20));
    const struct report_row *u = fake_row(&r, "[unattributed]:[unattributed]");
    cr_expect(u->unattributed);
    cr_expect(fake_close(u->self[Q_ENERGY], 5));
    cr_expect_eq(u->self[Q_SAMPLES], 0);
    cr_expect(fake_close(r.totals.unattributed_j, 5));
    /* Power: energy over the time that used it. */
    cr_expect(fake_close(
        report_value(fake_row(&r, "prog:main"), metric_builtin(METRIC_POWER), false), 10));
    cr_expect(fake_close(
        report_value(fake_row(&r, "prog:foo"), metric_builtin(METRIC_POWER), false), 20));
    cr_expect(fake_close(report_value(u, metric_builtin(METRIC_POWER), false), 10), "idle power");
    cr_expect(fake_close(report_mean_power(&r.totals), 15));
    cr_expect(fake_close(report_pct(&r, u, metric_builtin(METRIC_ENERGY), false), 100.0 / 6));
    report_free(&r);
}

Test(report_energy, energy_counters_count_their_increase)
{
    struct prof_channel ch[] = {{"counter", "J", PMU_KIND_ENERGY}};
    double v0[] = {100}, v1[] = {103}, v2[] = {110};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0), fake_th(2, PC_FOO, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, 250), fake_th(2, PC_FOO, 750)};
    struct prof_thread_sample s2[] = {fake_th(1, PC_MAIN, 250), fake_th(2, PC_FOO, 1750)};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE(1000, s1),
                                    FAKE_SAMPLE(2000, s2)};
    samples[0].values = v0;
    samples[1].values = v1;
    samples[2].values = v2;
    struct profile p = {.samples = samples, .nsamples = 3, .channels = ch, .nchannels = 1};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(r.totals.energy_j, 10));
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_ENERGY], 0.75));
    cr_expect(fake_close(fake_row(&r, "foo")->self[Q_ENERGY], 2.25 + 7));
    cr_expect_null(fake_find(&r, "[unattributed]"), "every interval was fully used");
    report_free(&r);
}

Test(report_energy, threads_running_in_parallel_share_the_interval)
{
    /* Two threads each busy the whole second: 10 J, half each. */
    double v0[] = {10}, v1[] = {10};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0), fake_th(2, PC_FOO, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, (uint64_t)S),
                                      fake_th(2, PC_FOO, (uint64_t)S)};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE((uint64_t)S, s1)};
    samples[0].values = v0;
    samples[1].values = v1;
    struct profile p = {.samples = samples, .nsamples = 2, .channels = power_ch, .nchannels = 1};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_ENERGY], 5));
    cr_expect(fake_close(fake_row(&r, "foo")->self[Q_ENERGY], 5));
    const struct report_row *u = fake_find(&r, "[unattributed]");
    cr_expect(!u || fake_close(u->self[Q_ENERGY], 0));
    report_free(&r);
}

Test(report_energy, damaged_readings_count_nothing)
{
    /* A NaN power reading and an energy counter that goes back (a reset). */
    struct prof_channel ch[] = {{"p", "W", PMU_KIND_POWER}, {"e", "J", PMU_KIND_ENERGY}};
    double v0[] = {1, 50}, v1[] = {NAN, 40}, v2[] = {4, 42};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, (uint64_t)S)};
    struct prof_thread_sample s2[] = {fake_th(1, PC_MAIN, (uint64_t)(2 * S))};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE((uint64_t)S, s1),
                                    FAKE_SAMPLE((uint64_t)(2 * S), s2)};
    samples[0].values = v0;
    samples[1].values = v1;
    samples[2].values = v2;
    struct profile p = {.samples = samples, .nsamples = 3, .channels = ch, .nchannels = 2};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    /* Default: both channels summed; interval 1 gives nothing, interval 2
     * 4 W x 1 s + 2 J. */
    cr_expect(fake_close(r.totals.energy_j, 6), "%g", r.totals.energy_j);
    cr_expect(isfinite(fake_row(&r, "main")->self[Q_ENERGY]));
    report_free(&r);
}

Test(report_energy, channel_choice)
{
    struct prof_channel ch[] = {{"package-0", "W", PMU_KIND_POWER},
                                {"dram", "W", PMU_KIND_POWER},
                                {"temp", "", PMU_KIND_CUSTOM}};
    double v0[] = {1, 1, 70}, v1[] = {6, 2, 70};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, (uint64_t)S)};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE((uint64_t)S, s1)};
    samples[0].values = v0;
    samples[1].values = v1;
    struct profile p = {.samples = samples, .nsamples = 2, .channels = ch, .nchannels = 3};
    struct report r;
    char *error = NULL;
    /* Default: the power channels, not the custom one. */
    cr_assert_eq(fake_analyze_opts(&p, "procedure", METRIC_ENERGY, NULL, &r, &error), 0);
    cr_expect(fake_close(r.totals.energy_j, 8));
    cr_expect(strstr(r.totals.energy_source, "package-0") &&
              strstr(r.totals.energy_source, "dram"));
    report_free(&r);

    struct metrics_options by_name = {.channel = "dram"}, by_index = {.channel = "0"};
    cr_assert_eq(fake_analyze_opts(&p, "procedure", METRIC_ENERGY, &by_name, &r, &error), 0);
    cr_expect(fake_close(r.totals.energy_j, 2));
    report_free(&r);
    cr_assert_eq(fake_analyze_opts(&p, "procedure", METRIC_ENERGY, &by_index, &r, &error), 0);
    cr_expect(fake_close(r.totals.energy_j, 6));
    report_free(&r);

    struct metrics_options custom = {.channel = "temp"}, missing = {.channel = "gpu"};
    cr_expect_eq(fake_analyze_opts(&p, "procedure", METRIC_ENERGY, &custom, &r, &error), -1);
    cr_assert_not_null(error);
    cr_expect_not_null(strstr(error, "temp"));
    free(error);
    error = NULL;
    cr_expect_eq(fake_analyze_opts(&p, "procedure", METRIC_ENERGY, &missing, &r, &error), -1);
    cr_assert_not_null(error);
    cr_expect_not_null(strstr(error, "gpu"));
    free(error);
}

Test(report_energy, current_times_voltage_when_there_is_no_power)
{
    struct prof_channel ch[] = {{"i", "A", PMU_KIND_CURRENT}, {"u", "V", PMU_KIND_VOLTAGE}};
    double v0[] = {0, 0}, v1[] = {2, 5};
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, (uint64_t)(0.25 * S))};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE((uint64_t)S, s1)};
    samples[0].values = v0;
    samples[1].values = v1;
    struct profile p = {.samples = samples, .nsamples = 2, .channels = ch, .nchannels = 2};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(r.totals.energy_j, 10));
    cr_expect(fake_close(fake_row(&r, "main")->self[Q_ENERGY], 2.5));
    cr_expect(fake_close(fake_row(&r, "[unattributed]")->self[Q_ENERGY], 7.5));
    report_free(&r);
}

Test(report_energy, no_channel_no_energy)
{
    struct prof_thread_sample s0[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_thread_sample s1[] = {fake_th(1, PC_MAIN, 100)};
    struct prof_sample samples[] = {FAKE_SAMPLE(0, s0), FAKE_SAMPLE(1000, s1)};
    struct profile p = {.samples = samples, .nsamples = 2};
    struct report r;
    fake_analyze(&p, "procedure", &r);
    cr_expect_not(r.totals.has_energy);
    cr_expect_null(fake_find(&r, "[unattributed]"));
    cr_expect_eq(r.totals.energy_j, 0);
    report_free(&r);
}

/* The perf engine's profiles (META cpu_time "sampled"): a thread's CPU
 * time grows by whole periods, so a busy thread shows 0, 1 or 2 periods in
 * a tick one period long.  Split tick by tick, the empty ticks' energy
 * would be nobody's while the double ticks could give only one tick's
 * worth: the split is over windows of ten periods instead, and a thread
 * busy the whole time gets all of the energy. */
Test(report_energy, sampled_cpu_time_is_split_over_windows_of_periods)
{
    enum { TICKS = 1000 };
    static const int pattern[] = {1, 0, 2, 1, 1, 0, 2, 0, 2, 1};
    static struct prof_sample samples[TICKS + 1];
    static struct prof_thread_sample entries[2 * TICKS];
    static double power[] = {10};
    size_t n = 0;
    uint64_t cpu = 0;
    samples[0] = (struct prof_sample){.time_ns = 0, .values = power};
    for (int k = 1; k <= TICKS; k++) {
        struct prof_sample *s = &samples[k];
        *s = (struct prof_sample){.time_ns = (uint64_t)k * 1000000, .values = power};
        s->threads = &entries[n];
        for (int j = 0; j < pattern[k % 10]; j++) {
            cpu += 1000000;
            entries[n++] = fake_th(1, PC_MAIN, cpu);
            s->nthreads++;
        }
    }
    struct prof_meta meta[] = {{"cpu_time", "sampled"}};
    struct profile p = {.samples = samples,
                        .nsamples = TICKS + 1,
                        .channels = power_ch,
                        .nchannels = 1,
                        .meta = meta,
                        .nmeta = 1,
                        .frequency = 1000};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(r.totals.energy_j, 10), "%g J", r.totals.energy_j);
    double main_j = fake_row(&r, "prog:main")->self[Q_ENERGY];
    cr_expect(main_j > 9.8, "the busy thread got %.3f J of 10", main_j);
    cr_expect(fabs(main_j + r.totals.unattributed_j - 10) < 1e-9, "rows add up");
    report_free(&r);

    /* A clock read at every sample (ptrace) keeps the split per interval. */
    p.nmeta = 0;
    fake_analyze(&p, "binary,procedure", &r);
    cr_expect(fake_row(&r, "prog:main")->self[Q_ENERGY] < 8,
              "per interval, the empty ticks are nobody's");
    report_free(&r);
}

/* The perf engine's samples come at their own instants, so its intervals
 * are merged into windows; each sample must still be worth the power of
 * the interval it was taken in (docs/pmu.md, "The join").  One busy
 * thread, 1 kHz: main runs at 9 W for 5 ms, then foo at 1 W for 5 ms,
 * over and over; a window of ten periods holds both.  Split by CPU time
 * alone, each would get the window's mean, 5 W. */
Test(report_energy, a_window_splits_by_the_power_at_each_sample)
{
    enum { TICKS = 1000 };
    static struct prof_sample samples[TICKS + 1];
    static struct prof_thread_sample entries[TICKS];
    static double nine[] = {9}, one[] = {1};
    samples[0] = (struct prof_sample){.time_ns = 0, .values = one};
    for (int k = 1; k <= TICKS; k++) {
        bool hot = (k - 1) % 10 < 5;
        entries[k - 1] = fake_th(1, hot ? PC_MAIN : PC_FOO, (uint64_t)k * 1000000);
        samples[k] = (struct prof_sample){.time_ns = (uint64_t)k * 1000000,
                                          .values = hot ? nine : one,
                                          .nthreads = 1,
                                          .threads = &entries[k - 1]};
    }
    struct prof_meta meta[] = {{"cpu_time", "sampled"}, {"pmu_timing", "instant"}};
    struct profile p = {.samples = samples,
                        .nsamples = TICKS + 1,
                        .channels = power_ch,
                        .nchannels = 1,
                        .meta = meta,
                        .nmeta = 2,
                        .frequency = 1000};
    struct report r;
    fake_analyze(&p, "binary,procedure", &r);
    fake_expect_consistent(&r);
    cr_expect(fake_close(r.totals.energy_j, 5), "%g J", r.totals.energy_j);
    double main_j = fake_row(&r, "prog:main")->self[Q_ENERGY];
    double foo_j = fake_row(&r, "prog:foo")->self[Q_ENERGY];
    cr_expect(fabs(main_j - 4.5) < 0.05 && fabs(foo_j - 0.5) < 0.05,
              "main %.3f J (9 W for 0.5 s), foo %.3f J (1 W for 0.5 s)", main_j, foo_j);
    cr_expect(r.totals.unattributed_j < 0.01, "%.3f J unattributed of a busy thread",
              r.totals.unattributed_j);
    report_free(&r);
}
