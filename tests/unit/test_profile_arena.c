/* test_profile_arena.c - model/profile.h's arena: aligned zeroed memory
 * that never moves while the profile lives, strings copied into it, and
 * profile_free() freeing it and nothing of it twice (the ASan build's leak
 * check sees the rest). */
#include "model/profile.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool all_zero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

Test(profile_arena, aligned_and_zeroed)
{
    struct profile p;
    profile_init(&p);
    cr_assert_null(p.arena.head);
    for (size_t size = 0; size < 200; size++) {
        unsigned char *b = profile_arena_alloc(&p, size);
        cr_assert_not_null(b);
        cr_assert_eq((uintptr_t)b % 8, 0, "size %zu: %p", size, (void *)b);
        cr_assert(all_zero(b, size), "size %zu", size);
        memset(b, 0xa5, size); /* the next allocations must not see it */
    }
    profile_free(&p);
    cr_assert_null(p.arena.head);
}

/* The byte at offset J of allocation I. */
static unsigned char pattern(size_t i, size_t j)
{
    return (unsigned char)(i * 31 + j * 7 + 1);
}

Test(profile_arena, earlier_allocations_stay_across_blocks)
{
    struct profile p;
    profile_init(&p);
    /* About 12 MB in pieces of up to 3000 bytes, and a few bigger than a
     * block's share: blocks of every size, and blocks of their own. */
    enum { N = 8000 };
    unsigned char **at = calloc(N, sizeof(*at));
    size_t *len = calloc(N, sizeof(*len));
    for (size_t i = 0; i < N; i++) {
        len[i] = i % 2000 == 1999 ? ((size_t)1 << 20) + i : (i * 7919) % 3000;
        at[i] = profile_arena_alloc(&p, len[i]);
        cr_assert_eq((uintptr_t)at[i] % 8, 0);
        cr_assert(all_zero(at[i], len[i]), "allocation %zu", i);
        for (size_t j = 0; j < len[i]; j++)
            at[i][j] = pattern(i, j);
    }
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < len[i]; j++)
            cr_assert_eq(at[i][j], pattern(i, j), "allocation %zu byte %zu", i, j);
    free(at);
    free(len);
    profile_free(&p);
}

Test(profile_arena, strdup)
{
    struct profile p;
    profile_init(&p);
    const char *words[] = {"", "a", "main", "a rather longer function name (in a.out)"};
    char *copies[4];
    for (size_t i = 0; i < 4; i++) {
        copies[i] = profile_arena_strdup(&p, words[i]);
        cr_assert_neq(copies[i], words[i]);
    }
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(copies[i], words[i]);
    profile_free(&p);
}

/* Samples of both kinds and locations in the arena: profile_free frees the
 * malloc'd ones and the arena, and the arena's never one by one. */
Test(profile_arena, profile_free_frees_both_kinds)
{
    struct profile p;
    profile_init(&p);
    p.samples = calloc(3, sizeof(*p.samples));
    p.nsamples = 3;
    struct prof_thread_sample th = {.pc = 0x1000, .syscall = -1};
    profile_sample_set_one(&p, &p.samples[0], &th, 1);
    profile_sample_set_one(&p, &p.samples[1], &th, 5);
    cr_assert(p.samples[0].in_arena);
    cr_assert_null(prof_weights(&p.samples[0]));
    cr_assert_eq(prof_weight(&p.samples[1], 0), 5);
    cr_assert_eq(p.samples[1].threads[0].pc, 0x1000);
    p.samples[2] = (struct prof_sample){
        .nthreads = 1, .threads = calloc(1, sizeof(th) + sizeof(uint64_t)), .has_weights = true};
    p.samples[2].values = calloc(1, sizeof(double));

    struct prof_sym_frame *f = profile_arena_alloc(&p, sizeof(*f));
    char *name = profile_arena_strdup(&p, "main");
    *f = (struct prof_sym_frame){
        .binary = name, .path = name, .function = name, .mangled = name, .file = name};
    p.locations = calloc(2, sizeof(*p.locations));
    p.nlocations = 2;
    p.locations_in_arena = true;
    for (int ra = 0; ra <= 1; ra++)
        p.locations[ra] =
            (struct prof_location){.pc = 16, .return_address = ra, .nframes = 1, .frames = f};
    profile_free(&p);
    cr_assert_null(p.arena.head);
    cr_assert_null(p.samples);
}

/* Locations in the arena replaced by malloc'd ones: the new ones are freed
 * one by one, the old ones with the arena. */
Test(profile_arena, replaced_locations)
{
    struct profile p;
    profile_init(&p);
    p.locations = calloc(1, sizeof(*p.locations));
    p.nlocations = 1;
    p.locations_in_arena = true;
    struct prof_sym_frame *f = profile_arena_alloc(&p, sizeof(*f));
    f->function = profile_arena_strdup(&p, "old");
    p.locations[0] = (struct prof_location){.pc = 16, .nframes = 1, .frames = f};

    struct prof_location *locs = calloc(1, sizeof(*locs));
    struct prof_sym_frame *g = calloc(1, sizeof(*g));
    *g = (struct prof_sym_frame){.binary = strdup("a"),
                                 .path = strdup("/a"),
                                 .function = strdup("new"),
                                 .mangled = strdup("new"),
                                 .file = strdup("")};
    locs[0] = (struct prof_location){.pc = 16, .nframes = 1, .frames = g};
    profile_replace_locations(&p, locs, 1);
    cr_assert_not(p.locations_in_arena);
    cr_assert_str_eq(p.locations[0].frames[0].function, "new");
    profile_free(&p);
}

/* A sample's weights and thread values follow its thread samples in one
 * block: each reads back what was written, and extending a sample (a
 * weight added after, values declared after) keeps everything it had,
 * malloc'd or in the arena. */
Test(profile_arena, weights_and_values_follow_the_thread_samples)
{
    struct profile p;
    profile_init(&p);
    profile_add_value_type(&p, "bytes", "bytes", PROF_VALUE_SUM);
    profile_add_value_type(&p, "events", "count", PROF_VALUE_SUM);
    p.samples = calloc(3, sizeof(*p.samples));
    p.nsamples = 3;
    struct prof_sample *s = &p.samples[0];
    struct prof_thread_sample *th = profile_sample_alloc(&p, s, 3, true, true);
    cr_assert_eq(th, s->threads);
    cr_assert_eq(s->nthreads, 3);
    for (uint32_t j = 0; j < 3; j++) {
        cr_assert_eq(prof_weight(s, j), 1, "weights start at 1");
        cr_assert_eq(prof_thread_values(&p, s, j)[0] | prof_thread_values(&p, s, j)[1], 0);
        th[j] = (struct prof_thread_sample){.tid = 10 + j, .pc = 0x1000 + j, .syscall = -1};
        prof_weights(s)[j] = 100 + j;
        prof_all_thread_values(s)[2 * j] = 1000 + j;
        prof_all_thread_values(s)[2 * j + 1] = 2000 + j;
    }
    for (uint32_t j = 0; j < 3; j++) {
        cr_assert_eq(s->threads[j].tid, 10 + j);
        cr_assert_eq(prof_weight(s, j), 100 + j);
        cr_assert_eq(prof_thread_values(&p, s, j)[0], 1000 + j);
        cr_assert_eq(prof_thread_values(&p, s, j)[1], 2000 + j);
    }

    /* Weights first, values after: what an extension adds is 1 and 0. */
    struct prof_thread_sample one = {.tid = 7, .pc = 0x2000, .syscall = -1};
    profile_sample_set_one(&p, &p.samples[1], &one, 4);
    profile_sample_extend(&p, &p.samples[1], false, true);
    cr_assert_eq(p.samples[1].threads[0].tid, 7);
    cr_assert_eq(prof_weight(&p.samples[1], 0), 4);
    cr_assert_eq(prof_thread_values(&p, &p.samples[1], 0)[1], 0);

    /* A malloc'd block becomes an arena one, the old block freed. */
    p.samples[2] = (struct prof_sample){.nthreads = 1, .threads = calloc(1, sizeof(one))};
    p.samples[2].threads[0] = one;
    profile_sample_extend(&p, &p.samples[2], true, false);
    cr_assert(p.samples[2].in_arena);
    cr_assert_eq(p.samples[2].threads[0].pc, 0x2000);
    cr_assert_eq(prof_weight(&p.samples[2], 0), 1);
    cr_assert_null(prof_all_thread_values(&p.samples[2]));
    profile_free(&p);
}

/* A thread sample keeps a syscall number in 16 bits: one beyond them (an
 * x32 call has bit 30 set) is a call without a number, never another
 * call's number. */
Test(profile_arena, syscall_numbers_beyond_16_bits_are_no_number)
{
    cr_assert_eq(prof_syscall(0), 0);
    cr_assert_eq(prof_syscall(231), 231);
    cr_assert_eq(prof_syscall(INT16_MAX), INT16_MAX);
    cr_assert_eq(prof_syscall(-1), -1);
    cr_assert_eq(prof_syscall(INT16_MAX + 1), -1);
    cr_assert_eq(prof_syscall(0x40000000 | 1), -1);
    cr_assert_eq(prof_syscall(-5), -1);
}
