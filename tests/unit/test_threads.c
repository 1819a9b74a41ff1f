/* test_threads.c - the recorder's thread table (src/record/ptrace/threads.h). */
#include "record/ptrace/threads.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

Test(threads, add_find_remove_keeps_every_other_thread_reachable)
{
    struct thread_table t;
    threads_init(&t);
    /* Enough tids to force several index rebuilds, with collisions. */
    for (pid_t tid = 1000; tid < 4000; tid++)
        thread_add(&t, getpid(), tid)->pc = (uint64_t)tid * 3;
    cr_assert_eq(t.count, 3000);
    for (pid_t tid = 1000; tid < 4000; tid += 2)
        thread_remove(&t, tid);
    cr_assert_eq(t.count, 1500);
    for (pid_t tid = 1000; tid < 4000; tid++) {
        struct thread *th = thread_find(&t, tid);
        if (tid % 2 == 0) {
            cr_assert_null(th, "removed tid %d still found", tid);
        } else {
            cr_assert_not_null(th, "tid %d lost", tid);
            cr_assert_eq(th->pc, (uint64_t)tid * 3, "tid %d carries another thread's data", tid);
        }
    }
    cr_assert_eq(t.seen, 3000);
    threads_destroy(&t);
}

Test(threads, adding_a_known_tid_returns_the_existing_entry)
{
    struct thread_table t;
    threads_init(&t);
    thread_add(&t, getpid(), 42)->pending_signal = 10;
    struct thread *again = thread_add(&t, getpid(), 42);
    cr_assert_eq(again->pending_signal, 10);
    cr_assert_eq(t.count, 1);
    cr_assert_eq(t.seen, 1);
    threads_destroy(&t);
}

Test(threads, cpu_time_comes_from_the_threads_own_schedstat)
{
    struct thread_table t;
    threads_init(&t);
    struct thread *self = thread_add(&t, getpid(), getpid());
    uint64_t before, after;
    cr_assert(thread_read_cpu(self, &before));
    volatile unsigned long spin = 0;
    for (unsigned long i = 0; i < 50000000UL; i++)
        spin += i;
    cr_assert(thread_read_cpu(self, &after));
    cr_assert_gt(after, before, "CPU time did not advance while spinning");
    /* A tid that does not exist has no counter, and says so. */
    struct thread *ghost = thread_add(&t, getpid(), 0x7ffffff0);
    uint64_t v;
    cr_assert_not(thread_read_cpu(ghost, &v));
    threads_destroy(&t);
}

Test(threads, schedstat_run_count_moves_when_the_thread_gets_a_cpu)
{
    struct thread_table t;
    threads_init(&t);
    struct thread *self = thread_add(&t, getpid(), getpid());
    struct thread_sched before, after;
    cr_assert(thread_read_sched(self, &before), "no scheduler statistics on this kernel");
    cr_assert_gt(before.runs, 0);
    /* Sleeping, then waking, puts the thread on a CPU again. */
    usleep(2000);
    cr_assert(thread_read_sched(self, &after));
    cr_assert_gt(after.runs, before.runs, "run count did not move after a sleep");
    cr_assert_geq(after.cpu_ns, before.cpu_ns);
    threads_destroy(&t);
}

Test(threads, a_blocked_thread_reports_its_call_pc_and_sp)
{
    struct thread_table t;
    threads_init(&t);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    struct thread *th = thread_add(&t, child, child);
    int nr = -1;
    uint64_t sp = 0, pc = 0;
    for (int tries = 0; tries < 200 && !thread_read_syscall(th, &nr, &sp, &pc); tries++)
        usleep(5000);
    cr_assert_eq(nr, SYS_pause, "the child is not seen blocked in pause()");
    cr_assert_neq(sp, 0);
    cr_assert_neq(pc, 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    threads_destroy(&t);
}
