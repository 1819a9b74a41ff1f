/*
 * test_record_rapl.c - energy measurement end to end: "ptprof record -p
 * rapl" against a simulated powercap tree whose counter this test advances
 * at a known rate (wrapping around on the way), so the recorded power is
 * known in advance.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/fake_powercap.h"
#include "test_record_common.h"

#define DOMAIN "intel-rapl:0"
#define STEP_UJ 50000u    /* per tick */
#define TICK_NS 10000000u /* 10 ms: STEP_UJ per tick is 5 W */
#define EXPECTED_W ((double)STEP_UJ * 1e-6 / ((double)TICK_NS * 1e-9))
/* Small enough to wrap several times in the run, large enough that a wrap
 * misread as a full range would stand out as a 40x spike. */
#define MAX_RANGE_UJ 2000000u

#define MAX_TICKS 6000

/* The counter's history, so the test knows how much energy it really added
 * in any window even when a busy machine delays the advancing thread. */
struct advancer {
    struct fake_powercap *fp;
    atomic_bool stop;
    size_t nticks;
    uint64_t at_us[MAX_TICKS]; /* CLOCK_REALTIME, as profile samples are stamped */
    uint64_t total_uj[MAX_TICKS];
};

static uint64_t realtime_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One step per 10 ms tick on absolute deadlines.  A wake-up late by more
 * than a tick does not catch up in a burst (a reader would see a spike);
 * the schedule restarts from now instead. */
static void *advance(void *arg)
{
    struct advancer *a = arg;
    struct timespec next;
    uint64_t total = 0;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&a->stop) && a->nticks < MAX_TICKS) {
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - next.tv_sec) * 1000000000L + (now.tv_nsec - next.tv_nsec) > TICK_NS)
            next = now;
        if (fake_powercap_advance(a->fp, DOMAIN, STEP_UJ) != 0)
            break;
        total += STEP_UJ;
        a->at_us[a->nticks] = realtime_us();
        a->total_uj[a->nticks] = total;
        a->nticks++;
    }
    return NULL;
}

/* Energy added up to time T (us). */
static double added_by(const struct advancer *a, uint64_t t)
{
    double e = 0;
    for (size_t i = 0; i < a->nticks && a->at_us[i] <= t; i++)
        e = (double)a->total_uj[i];
    return e;
}

Test(record_rapl, recorded_power_matches_the_simulated_counter)
{
    static struct advancer a;
    a.fp = fake_powercap_create();
    cr_assert(a.fp, "cannot build a fake powercap tree");
    cr_assert_eq(fake_powercap_add(a.fp, DOMAIN, "package-0", MAX_RANGE_UJ - 300000, MAX_RANGE_UJ),
                 0);
    char *env_root = NULL;
    cr_assert(asprintf(&env_root, "PTPROF_SYSFS_ROOT=%s", fake_powercap_root(a.fp)) > 0);

    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/rapl.pperf", dir) > 0);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof, RECORD_PPERF, "-o", profile, "-f",  "100",
                          "-p",   "rapl",       "--", spin,    "1.5", NULL};
    const char *env[] = {env_root, NULL};

    pthread_t thread;
    atomic_init(&a.stop, false);
    cr_assert_eq(pthread_create(&thread, NULL, advance, &a), 0);
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 60);
    atomic_store(&a.stop, true);
    pthread_join(thread, NULL);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert_gt(a.nticks ? a.total_uj[a.nticks - 1] : 0, MAX_RANGE_UJ,
                 "the counter never wrapped");

    struct pperf_profile prof;
    load_valid_profile(profile, &prof);
    cr_assert_eq(prof.magic, 3, "magic %" PRIu32 ", want 3 (power)", prof.magic);
    cr_assert_eq(prof.pmu_size, 8, "PMU size %" PRIu32 ", want 8 (one double)", prof.pmu_size);
    cr_assert_geq(prof.nsamples, 50, "only %" PRIu64 " samples", prof.nsamples);

    /* Every reading must be a real number of watts.  The counter moves in
     * steps, so a short interval may show a high power, but never more
     * energy than the steps that fit in it: a wrap handled wrongly shows as
     * NaN or as a whole range (40 steps) of extra energy. */
    double energy = 0;
    for (uint64_t i = 0; i < prof.nsamples; i++) {
        double w = prof.samples[i].pmu[0];
        cr_assert(isfinite(w) && w >= 0, "sample %" PRIu64 ": %g W", i, w);
        if (i == 0)
            continue;
        double dt = (double)(prof.samples[i].wall_us - prof.samples[i - 1].wall_us) / 1e6;
        double steps = w * dt / (STEP_UJ / 1e6), possible = dt / (TICK_NS / 1e9) + 3;
        cr_assert_leq(steps, possible,
                      "sample %" PRIu64 ": %g W over %.1f ms is %.1f steps of the counter, at "
                      "most %.1f fit",
                      i, w, dt * 1e3, steps, possible);
        energy += w * dt;
    }
    /* The mean recorded power over the samples is the power the test
     * applied between the first and the last sample (5 W on a quiet machine,
     * less when this process was descheduled; give or take a step at each
     * end). */
    uint64_t first = prof.samples[0].wall_us, last = prof.samples[prof.nsamples - 1].wall_us;
    double span = (double)(last - first) / 1e6;
    cr_assert_gt(span, 0.5, "samples span only %.3f s", span);
    double applied = (added_by(&a, last) - added_by(&a, first)) / 1e6 / span;
    double mean = energy / span;
    cr_assert(fabs(mean - applied) <= 0.05 * applied + 2 * STEP_UJ / 1e6 / span,
              "mean recorded power %.3f W, the test applied %.3f W (nominal %.1f W)", mean, applied,
              EXPECTED_W);

    pperf_free(&prof);
    spawn_result_free(&res);
    fake_powercap_destroy(a.fp);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(env_root);
    free(ptprof);
    free(spin);
}
