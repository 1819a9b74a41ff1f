/*
 * test_process_stack.c - which mapping a stack pointer's copy may run up
 * to (process_stack_at): the main thread's "[stack]" grows down past the
 * start read from /proc/PID/maps as a recursion deepens, and a sample
 * taken below that start still copies up to the stack's top.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "model/maps.h"
#include "record/process.h"

static const char maps_text[] = "555555554000-555555556000 r-xp 00000000 08:01 42 /usr/bin/prog\n"
                                "7ffff7dd0000-7ffff7df0000 rw-p 00000000 00:00 0 \n"
                                "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";

static void load_maps(struct process *p)
{
    memset(p, 0, sizeof(*p));
    cr_assert_eq(maps_parse(maps_text, strlen(maps_text), &p->maps), 0);
    cr_assert_eq(p->maps.count, 3);
}

Test(process_stack, a_pointer_inside_a_mapping_gets_that_mapping)
{
    struct process p;
    load_maps(&p);
    const struct map_entry *m = process_stack_at(&p, 0x7ffff7de0000);
    cr_assert(m && m->start == 0x7ffff7dd0000 && m->end == 0x7ffff7df0000);
    m = process_stack_at(&p, 0x7ffffffde000);
    cr_assert(m && strcmp(m->path, "[stack]") == 0);
    maps_clear(&p.maps);
}

/* 450 KB of recursion below the start the maps gave. */
Test(process_stack, the_main_stack_is_found_below_its_last_read_start)
{
    struct process p;
    load_maps(&p);
    const struct map_entry *m = process_stack_at(&p, 0x7ffffffde000 - 450 * 1024);
    cr_assert(m, "no mapping for a stack that grew down");
    cr_assert_str_eq(m->path, "[stack]");
    cr_assert_eq(m->end, 0x7ffffffff000);
    /* Only the stack's copy reaches up to it: the address holds no map. */
    cr_assert_null(process_map_at(&p, 0x7ffffffde000 - 450 * 1024));
    cr_assert_eq(process_map_at(&p, 0x7ffffffde000), m);
    cr_assert_null(process_map_at(&p, 0x7ffffffff000));
    cr_assert_eq(process_map_at(&p, 0x555555555fff), &p.maps.entries[0]);
    maps_clear(&p.maps);
}

/* Only "[stack]" grows down: below any other mapping, or above them all,
 * nothing is known. */
Test(process_stack, other_gaps_hold_no_stack)
{
    struct process p;
    load_maps(&p);
    cr_assert_null(process_stack_at(&p, 0x7ffff7dd0000 - 4096));
    cr_assert_null(process_stack_at(&p, 0x555555554000 - 4096));
    cr_assert_null(process_stack_at(&p, 0x7ffffffff000));
    maps_clear(&p.maps);
}
