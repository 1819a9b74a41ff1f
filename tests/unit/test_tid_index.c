/*
 * test_tid_index.c - the tid -> position hash both engines' thread tables
 * use (record/tid_index.h): growth past half full, moves, removals.
 */
#include "record/tid_index.h"

#include <criterion/criterion.h>

Test(tid_index, finds_what_was_put_through_growth)
{
    struct tid_index x;
    tid_index_init(&x);
    /* Consecutive tids, as a program's threads get them, and spread ones. */
    for (size_t i = 0; i < 1000; i++)
        tid_index_put(&x, (pid_t)(4000 + i), i);
    for (size_t i = 0; i < 1000; i++)
        tid_index_put(&x, (pid_t)(1 + i * 65536), 1000 + i);
    cr_expect_eq(x.count, 2000);
    cr_expect_leq(x.count * 2, x.size, "more than half full: %zu of %zu", x.count, x.size);
    for (size_t i = 0; i < 1000; i++) {
        cr_expect_eq(tid_index_find(&x, (pid_t)(4000 + i)), (int32_t)i);
        cr_expect_eq(tid_index_find(&x, (pid_t)(1 + i * 65536)), (int32_t)(1000 + i));
    }
    cr_expect_eq(tid_index_find(&x, 3999), -1);
    cr_expect_eq(tid_index_find(&x, 5000), -1);
    tid_index_free(&x);
}

Test(tid_index, a_move_and_a_removal)
{
    struct tid_index x;
    tid_index_init(&x);
    for (size_t i = 0; i < 40; i++)
        tid_index_put(&x, (pid_t)(100 + i), i);
    /* The owner fills the hole of tid 105 (position 5) with its last. */
    tid_index_remove(&x, 105);
    tid_index_put(&x, 139, 5);
    cr_expect_eq(x.count, 39);
    cr_expect_eq(tid_index_find(&x, 105), -1);
    cr_expect_eq(tid_index_find(&x, 139), 5);
    for (size_t i = 0; i < 39; i++)
        if (i != 5)
            cr_expect_eq(tid_index_find(&x, (pid_t)(100 + i)), (int32_t)i, "tid %zu", 100 + i);
    tid_index_remove(&x, 105); /* absent: nothing happens */
    cr_expect_eq(x.count, 39);
    /* Every slot's probe chain survives a removal in its middle. */
    for (size_t i = 0; i < 39; i++)
        tid_index_remove(&x, (pid_t)(100 + i));
    cr_expect_eq(x.count, 1);
    cr_expect_eq(tid_index_find(&x, 139), 5);
    tid_index_remove(&x, 139);
    cr_expect_eq(x.count, 0);
    cr_expect_eq(tid_index_find(&x, 139), -1);
    tid_index_free(&x);
}
