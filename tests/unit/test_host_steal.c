/*
 * test_host_steal.c - the host's steal share between two /proc/stat texts
 * (host_steal.h): the "cpu" line's eighth value against the sum of all
 * eight, and nothing from a text without that line.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "record/host_steal.h"

static struct host_steal parsed(const char *text)
{
    struct host_steal m;
    cr_assert(host_steal_parse(text, strlen(text), &m), "not parsed: %s", text);
    return m;
}

/* Guest time (the ninth and tenth values) is inside user time already:
 * it is not added again. */
Test(host_steal, the_share_is_steal_over_all_ticks)
{
    struct host_steal a = parsed("cpu  100 0 50 800 10 0 5 35 7 0\ncpu0 1 2 3\n");
    struct host_steal b = parsed("cpu  400 0 150 1100 10 0 5 335 9 0\ncpu0 1 2 3\n");
    cr_assert_eq(a.all, 1000);
    cr_assert_eq(a.steal, 35);
    /* 300 of the 1000 ticks between them were stolen. */
    cr_assert_float_eq(host_steal_share(&a, &b), 0.3, 1e-12);
    cr_assert_float_eq(host_steal_share(&b, &b), 0.0, 1e-12);
    cr_assert_float_eq(host_steal_share(&b, &a), 0.0, 1e-12);
}

Test(host_steal, a_text_without_the_cpu_line_gives_nothing)
{
    struct host_steal m;
    const char *bad[] = {"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu  1 2 3\n", "intr 5\n",
                         "cpu  1 2 3 4 5 6 7 8"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        cr_expect(!host_steal_parse(bad[i], strlen(bad[i]), &m), "parsed: %s", bad[i]);
        cr_expect_eq(m.all, 0);
    }
}
