/* test_idle_cpu.c - reading the runnable count of /proc/loadavg (record/idle_cpu.h). */
#include "record/ptrace/idle_cpu.h"

#include <criterion/criterion.h>
#include <string.h>

Test(idle_cpu, runnable_count_of_loadavg)
{
    const char *text = "0.50 0.40 0.30 3/250 12345\n";
    cr_expect_eq(idle_cpu_parse_runnable(text, strlen(text)), 3);
    const char *big = "12.00 9.10 8.00 127/4096 1\n";
    cr_expect_eq(idle_cpu_parse_runnable(big, strlen(big)), 127);
    cr_expect_eq(idle_cpu_parse_runnable("0.50 0.40", 9), -1, "cut before the field");
    cr_expect_eq(idle_cpu_parse_runnable("0.5 0.4 0.3 x/2 1", 17), -1, "not a number");
    cr_expect_eq(idle_cpu_parse_runnable("0.5 0.4 0.3 12", 14), -1, "no total");
}
