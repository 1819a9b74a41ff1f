/*
 * test_path_cache.c - the path cache (analyze/paths.h) starts over past
 * its bound: a path held stays valid and unchanged through it, and a path
 * built again is equal to the one before (memory follows a stretch of
 * distinct stacks, not all of them: issue 19).
 */
#include "test_report_fake.h"

static bool same_path(const struct path *a, const struct path *b)
{
    if (a->nframes != b->nframes || a->nunique != b->nunique)
        return false;
    for (uint32_t i = 0; i < a->nframes; i++)
        if (a->frames[i].key != b->frames[i].key ||
            a->frames[i].function != b->frames[i].function ||
            a->frames[i].mangled != b->frames[i].mangled ||
            a->frames[i].inlined != b->frames[i].inlined)
            return false;
    for (uint32_t i = 0; i < a->nunique; i++)
        if (a->unique[i] != b->unique[i])
            return false;
    return true;
}

Test(path_cache, held_paths_outlive_the_cache_starting_over_and_rebuild_equal)
{
    uint64_t s1[] = {PC_BAR, PC_FOO + 4, PC_MAIN + 4}, s2[] = {PC_FOO, PC_MAIN + 4},
             s3[] = {PC_REC, PC_FOO + 4, PC_MAIN + 4};
    struct prof_stack stacks[] = {{0, NULL}, {3, s1}, {2, s2}, {3, s3}};
    struct profile p = {.stacks = stacks, .nstacks = 4};
    struct key_spec spec;
    char err[160];
    cr_assert_eq(key_spec_parse("procedure", &spec, err, sizeof(err)), 0, "%s", err);
    struct strtab *keys = strtab_new(), *names = strtab_new();
    struct frame_resolver r = {fake_resolve, NULL};
    struct path_builder *b = path_builder_new(&p, &r, &spec, keys, names);
    path_builder_set_max_paths(b, 1);

    struct prof_thread_sample t1 = fake_ths(1, 1, 0), t2 = fake_ths(1, 2, 0),
                              t3 = fake_ths(1, 3, 0);
    const struct path *first = path_builder_get(b, 0, &t1, "", 0);
    path_builder_hold(first);
    /* Each of these starts the cache over (one path at most). */
    const struct path *second = path_builder_get(b, 0, &t2, "", 0);
    path_builder_hold(second);
    const struct path *third = path_builder_get(b, 0, &t3, "", 0);
    cr_assert_eq(first->nframes, 3);
    cr_expect_eq(first->frames[0].key, strtab_intern_str(keys, "bar"));
    cr_expect_eq(first->frames[2].key, strtab_intern_str(keys, "main"));
    cr_assert_eq(second->nframes, 2);
    cr_expect_eq(second->frames[0].key, strtab_intern_str(keys, "foo"));
    cr_assert_eq(third->nframes, 3);
    cr_expect_eq(third->frames[0].key, strtab_intern_str(keys, "rec"));

    /* Built again: a new path equal to the held one. */
    const struct path *again = path_builder_get(b, 0, &t1, "", 0);
    cr_expect(same_path(again, first));
    path_builder_release(first);
    path_builder_release(second);

    /* Without a bound hit, the same pointer comes back. */
    path_builder_set_max_paths(b, 100);
    const struct path *cached = path_builder_get(b, 0, &t2, "", 0);
    cr_expect_eq(path_builder_get(b, 0, &t2, "", 0), cached);
    path_builder_free(b);
    strtab_free(names);
    strtab_free(keys);
}

/* The flat report by procedure over P, caching MAX_PATHS paths (0: as
 * ptprof does). */
static void analyze(const struct profile *p, size_t max_paths, struct report *out)
{
    struct walk_options wo = {.max_paths = max_paths};
    char err[160];
    cr_assert_eq(key_spec_parse("procedure", &wo.keys, err, sizeof(err)), 0, "%s", err);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct aggregate *a = aggregate_new(kt, &wo.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct frame_resolver r = {fake_resolve, NULL};
    struct walk_totals t;
    char *error = NULL;
    cr_assert_eq(walk_profile(p, &r, &wo, kt, nt, &v, &t, &error), 0, "%s", error);
    aggregate_report(a, &t, metric_builtin(METRIC_CPU), out);
    aggregate_free(a);
    strtab_free(nt);
    strtab_free(kt);
}

Test(path_cache, reports_agree_however_small_the_cache)
{
    /* The same flat report whether paths are cached or built each time:
     * the walk holds each thread's previous path (executions count what
     * was entered since it). */
    uint64_t s1[] = {PC_BAR, PC_FOO + 4, PC_MAIN + 4}, s2[] = {PC_FOO, PC_MAIN + 4},
             s3[] = {PC_REC, PC_REC + 4, PC_MAIN + 4};
    struct prof_stack stacks[] = {{0, NULL}, {3, s1}, {2, s2}, {3, s3}};
    struct prof_thread_sample a0[] = {fake_ths(1, 1, 100), fake_ths(2, 3, 100)};
    struct prof_thread_sample a1[] = {fake_ths(1, 2, 300), fake_ths(2, 3, 200)};
    struct prof_thread_sample a2[] = {fake_ths(1, 1, 600), fake_ths(2, 1, 700)};
    struct prof_thread_sample a3[] = {fake_ths(1, 3, 1000), fake_ths(2, 2, 900)};
    struct prof_sample samples[] = {FAKE_SAMPLE(100, a0), FAKE_SAMPLE(200, a1),
                                    FAKE_SAMPLE(300, a2), FAKE_SAMPLE(400, a3)};
    struct profile p = {.samples = samples, .nsamples = 4, .stacks = stacks, .nstacks = 4};
    struct report cached, rebuilt;
    analyze(&p, 0, &cached);
    analyze(&p, 1, &rebuilt);
    cr_assert_eq(cached.nrows, rebuilt.nrows);
    for (size_t i = 0; i < cached.nrows; i++) {
        const struct report_row *c = &cached.rows[i], *o = fake_row(&rebuilt, c->id);
        for (int q = 0; q < Q_COUNT; q++) {
            cr_expect_eq(c->self[q], o->self[q], "%s q%d", c->id, q);
            cr_expect_eq(c->total[q], o->total[q], "%s q%d", c->id, q);
        }
    }
    report_free(&cached);
    report_free(&rebuilt);
}
