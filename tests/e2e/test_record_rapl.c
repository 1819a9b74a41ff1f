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

struct advancer {
    struct fake_powercap *fp;
    atomic_bool stop;
    uint64_t advanced_uj;
};

/* Advance on absolute deadlines, so a late wake-up catches up and the rate
 * holds over the run. */
static void *advance(void *arg)
{
    struct advancer *a = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&a->stop)) {
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        if (fake_powercap_advance(a->fp, DOMAIN, STEP_UJ) != 0)
            break;
        a->advanced_uj += STEP_UJ;
    }
    return NULL;
}

Test(record_rapl, recorded_power_matches_the_simulated_counter)
{
    struct advancer a = {.fp = fake_powercap_create()};
    cr_assert(a.fp, "cannot build a fake powercap tree");
    cr_assert_eq(fake_powercap_add(a.fp, DOMAIN, "package-0", MAX_RANGE_UJ - 300000, MAX_RANGE_UJ),
                 0);
    char *env_root = NULL;
    cr_assert(asprintf(&env_root, "PTPROF_SYSFS_ROOT=%s", fake_powercap_root(a.fp)) > 0);

    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/rapl.pperf", dir) > 0);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof, "record", "-o", profile, "-f",  "100",
                          "-p",   "rapl",   "--", spin,    "1.5", NULL};
    const char *env[] = {env_root, NULL};

    pthread_t thread;
    atomic_init(&a.stop, false);
    cr_assert_eq(pthread_create(&thread, NULL, advance, &a), 0);
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 60);
    atomic_store(&a.stop, true);
    pthread_join(thread, NULL);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert_gt(a.advanced_uj, MAX_RANGE_UJ, "the counter never wrapped");

    struct pperf_profile prof;
    load_valid_profile(profile, &prof);
    cr_assert_eq(prof.magic, 3, "magic %" PRIu32 ", want 3 (power)", prof.magic);
    cr_assert_eq(prof.pmu_size, 8, "PMU size %" PRIu32 ", want 8 (one double)", prof.pmu_size);
    cr_assert_geq(prof.nsamples, 50, "only %" PRIu64 " samples", prof.nsamples);

    /* Time-weighted mean power over the run; every reading must be a real
     * number of watts (a wrap handled wrongly gives NaN or a spike). */
    double energy = 0, time = 0;
    for (uint64_t i = 0; i < prof.nsamples; i++) {
        double w = prof.samples[i].pmu[0];
        cr_assert(isfinite(w) && w >= 0 && w < 20 * EXPECTED_W,
                  "sample %" PRIu64 ": %g W with %.1f W applied", i, w, EXPECTED_W);
        if (i > 0) {
            double dt = (double)(prof.samples[i].wall_us - prof.samples[i - 1].wall_us) / 1e6;
            energy += w * dt;
            time += dt;
        }
    }
    cr_assert_gt(time, 0.5, "samples span only %.3f s", time);
    double mean = energy / time;
    cr_assert(fabs(mean - EXPECTED_W) <= 0.1 * EXPECTED_W, "mean power %.3f W, expected %.3f W",
              mean, EXPECTED_W);

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
