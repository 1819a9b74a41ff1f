/*
 * test_syscall_origin.c - naming the call a blocked thread is really in
 * (record/syscall_origin.h): restart_syscall takes the name of the call
 * last seen at the same PC and SP, or of the kernel function it sleeps in.
 */
#include "record/syscall_origin.h"

#include <criterion/criterion.h>
#include <sys/syscall.h>
#include <unistd.h>

Test(syscall_origin, restart_takes_the_name_of_the_call_seen_at_the_same_place)
{
    struct syscall_origin o;
    syscall_origin_init(&o);
    pid_t me = getpid();
    cr_assert_eq(syscall_origin_name(&o, SYS_poll, 0x1000, 0x7000, me, me), SYS_poll);
    cr_assert_eq(syscall_origin_name(&o, SYS_restart_syscall, 0x1000, 0x7000, me, me), SYS_poll);
    cr_assert_eq(syscall_origin_name(&o, SYS_restart_syscall, 0x1000, 0x7000, me, me), SYS_poll);
    /* Not in a call: said as it is, and nothing is forgotten. */
    cr_assert_eq(syscall_origin_name(&o, -1, 0, 0, me, me), -1);
    cr_assert_eq(syscall_origin_name(&o, SYS_restart_syscall, 0x1000, 0x7000, me, me), SYS_poll);
    /* A new call replaces the old one. */
    cr_assert_eq(syscall_origin_name(&o, SYS_futex, 0x2000, 0x7100, me, me), SYS_futex);
    cr_assert_eq(syscall_origin_name(&o, SYS_restart_syscall, 0x2000, 0x7100, me, me), SYS_futex);
}

Test(syscall_origin, a_restart_elsewhere_is_not_named_after_another_call)
{
    struct syscall_origin o;
    syscall_origin_init(&o);
    pid_t me = getpid();
    cr_assert_eq(syscall_origin_name(&o, SYS_poll, 0x1000, 0x7000, me, me), SYS_poll);
    /* Another place, and this running thread sleeps nowhere: no name to
     * give but restart_syscall's own. */
    cr_assert_eq(syscall_origin_name(&o, SYS_restart_syscall, 0x1000, 0x7200, me, me),
                 SYS_restart_syscall);
}

Test(syscall_origin, kernel_sleep_functions_name_their_calls)
{
    cr_assert_eq(syscall_from_wchan("hrtimer_nanosleep"), SYS_clock_nanosleep);
    cr_assert_eq(syscall_from_wchan("do_syscall_64"), SYS_clock_nanosleep);
    cr_assert_eq(syscall_from_wchan("poll_schedule_timeout.constprop.0"), SYS_poll);
    cr_assert_eq(syscall_from_wchan("do_sys_poll"), SYS_poll);
    cr_assert_eq(syscall_from_wchan("futex_wait_queue"), SYS_futex);
    cr_assert_eq(syscall_from_wchan("futex_do_wait"), SYS_futex);
    cr_assert_eq(syscall_from_wchan("0"), -1);
    cr_assert_eq(syscall_from_wchan(""), -1);
    cr_assert_eq(syscall_from_wchan("pipe_read"), -1);
    cr_assert(syscall_is_restart(SYS_restart_syscall));
    cr_assert_not(syscall_is_restart(SYS_read));
}
