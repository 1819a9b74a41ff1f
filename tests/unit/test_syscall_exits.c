/*
 * test_syscall_exits.c - what a ptrace sample that stopped at a system
 * call's exit stands for (record/ptrace/syscall_exits.h): the frames of
 * the call's wrappers give way to the code that made the call, and samples
 * stay at calls only as far as the process's kernel time goes.
 */
#include "record/ptrace/syscall_exits.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static char exe_path[PATH_MAX];

/* This process, with a vDSO, a C library and itself (as /proc/PID/exe
 * names it) mapped where the test says. */
static struct process fake_process(void)
{
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
    cr_assert_gt(n, 0);
    exe_path[n] = '\0';
    static struct map_entry entries[3];
    entries[0] = (struct map_entry){.start = 0x1000, .end = 0x2000, .path = exe_path};
    entries[1] = (struct map_entry){.start = 0x7000, .end = 0x8000, .path = "/usr/lib/libc.so.6"};
    entries[2] = (struct map_entry){.start = 0x9000, .end = 0xa000, .path = "[vdso]"};
    struct process p = {.pid = getpid(), .maps_version = 1};
    p.maps.entries = entries;
    p.maps.count = 3;
    return p;
}

Test(syscall_exits, a_vdso_call_goes_to_the_program_code_that_made_it)
{
    struct process p = fake_process();
    struct syscall_exits x = {0};
    /* vDSO leaf, called from libc's wrapper, called from the program. */
    uint64_t pcs[] = {0x9100, 0x7200, 0x7300, 0x1400, 0x1500};
    int depth = syscall_exits_to_caller(&x, 0, &p, pcs, 5);
    cr_expect_eq(depth, 2);
    cr_expect_eq(pcs[0], 0x1400 - 1, "the calling instruction, not its return address");
    cr_expect_eq(pcs[1], 0x1500);
    syscall_exits_free(&x);
}

Test(syscall_exits, a_library_wrapper_goes_to_its_caller)
{
    struct process p = fake_process();
    struct syscall_exits x = {0};
    uint64_t pcs[] = {0x7100, 0x1200, 0x1300};
    cr_expect_eq(syscall_exits_to_caller(&x, 0, &p, pcs, 3), 2);
    cr_expect_eq(pcs[0], 0x1200 - 1);
    syscall_exits_free(&x);
}

Test(syscall_exits, a_call_made_by_the_program_itself_stays)
{
    struct process p = fake_process();
    struct syscall_exits x = {0};
    uint64_t pcs[] = {0x1100, 0x1200};
    cr_expect_eq(syscall_exits_to_caller(&x, 0, &p, pcs, 2), 2);
    cr_expect_eq(pcs[0], 0x1100);
    /* Nothing above the wrappers: nothing better to say. */
    uint64_t only_libc[] = {0x7100, 0x7200};
    cr_expect_eq(syscall_exits_to_caller(&x, 0, &p, only_libc, 2), 2);
    cr_expect_eq(only_libc[0], 0x7100);
    syscall_exits_free(&x);
}

/* This process's own kernel time moves only in clock ticks: the decisions
 * are checked against what it reads, whatever that is. */
Test(syscall_exits, samples_stay_at_calls_only_up_to_the_kernel_time)
{
    struct syscall_exits x = {0};
    uint64_t user, kernel;
    cr_assert(syscall_exits_process_times(getpid(), &user, &kernel));
    /* The first decision takes the kernel time so far as its base: with
     * no kernel time since, no sample stays. */
    cr_expect_not(syscall_exits_keep(&x, 0, getpid(), 1000000, 1));
    cr_expect_eq(x.stops, 1);
    cr_expect_eq(x.kept, 0);
    cr_expect_eq(x.moved_ns, 1000000);
    /* Pretend the process spent 2.4 ms in the kernel since: two 1 ms
     * samples stay, the third would pass it by more than half. */
    x.procs[0].kernel_ns = x.procs[0].base_ns + 2400000;
    x.procs[0].read_at = 1;
    cr_expect(syscall_exits_keep(&x, 0, getpid(), 1000000, 2));
    cr_expect(syscall_exits_keep(&x, 0, getpid(), 1000000, 3));
    cr_expect_not(syscall_exits_keep(&x, 0, getpid(), 1000000, 4));
    cr_expect(syscall_exits_keep(&x, 0, getpid(), 400000, 5), "0.4 ms fits to the nearest");
    cr_expect_eq(x.kept, 3);
    cr_expect_eq(x.kept_ns, 2400000);
    syscall_exits_free(&x);
}

Test(syscall_exits, process_times_of_a_missing_process)
{
    uint64_t user, kernel;
    cr_expect_not(syscall_exits_process_times(-5, &user, &kernel));
}
