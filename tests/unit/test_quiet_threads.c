/* test_quiet_threads.c - a crowded round's quiet threads known from the
 * process's CPU clock (src/record/ptrace/quiet_threads.h), on a real child
 * process whose threads sleep until told to run. */
#include "record/ptrace/quiet_threads.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLEEPERS 8

/* The child: SLEEPERS threads, each reading its own pipe; a byte makes it
 * run about 20 ms of CPU time, then answer on the shared pipe and sleep
 * again. */
static int wake_fds[SLEEPERS][2], done_fd[2];

static void *sleeper(void *arg)
{
    int k = (int)(long)arg;
    char c;
    while (read(wake_fds[k][0], &c, 1) == 1) {
        struct timespec t0, t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
        if (write(done_fd[1], &c, 1) != 1)
            break;
    }
    return NULL;
}

static pid_t start_child(void)
{
    for (int k = 0; k < SLEEPERS; k++)
        cr_assert_eq(pipe(wake_fds[k]), 0);
    cr_assert_eq(pipe(done_fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no child behind */
        pthread_t t;
        for (int k = 0; k < SLEEPERS; k++)
            pthread_create(&t, NULL, sleeper, (void *)(long)k);
        for (;;)
            pause();
    }
    /* Every thread started and asleep. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    for (int tries = 0; tries < 500; tries++) {
        int n = 0;
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));)
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
        if (n == SLEEPERS + 1)
            break;
        usleep(10000);
    }
    usleep(50000);
    return pid;
}

/* The child's threads, the main one first, the sleepers in start order
 * (their tids ascend), each quiet as of now, copied and last seen running
 * at its position. */
static void add_threads(struct thread_table *tt, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    cr_assert_not_null(d);
    pid_t tids[SLEEPERS + 1];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n <= SLEEPERS;)
        if (e->d_name[0] != '.')
            tids[n++] = atoi(e->d_name);
    closedir(d);
    cr_assert_eq(n, SLEEPERS + 1);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (tids[j] < tids[i]) {
                pid_t x = tids[i];
                tids[i] = tids[j];
                tids[j] = x;
            }
    for (int i = 0; i < n; i++) {
        struct thread *th = thread_add(tt, pid, tids[i]);
        th->proc = 0;
        th->copied_at = (uint64_t)i + 1;
        th->ran_seen_at = (uint64_t)i + 1;
        th->idle_known = th->captured_once = true;
    }
}

/* Waits until thread TID of PID sleeps (back in its read): on a busy
 * machine it may still be queued for a CPU long after its answer. */
static void wait_asleep(pid_t pid, pid_t tid)
{
    char path[96], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    for (int tries = 0; tries < 3000; tries++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *close = strrchr(buf, ')');
        if (close && close[1] == ' ' && close[2] == 'S')
            return;
        usleep(1000);
    }
    cr_assert_fail("thread %d never went back to sleep", (int)tid);
}

/* What a round's LOOK and REUSE were given. */
struct round_log {
    size_t looks, reuses;
    pid_t looked[SLEEPERS + 1];
};

static bool look(void *ctx, struct thread *th, uint64_t *cpu_ns)
{
    struct round_log *log = ctx;
    log->looked[log->looks++] = th->tid;
    return thread_read_cpu(th, cpu_ns);
}

static void reuse(void *ctx, struct thread *th)
{
    (void)th;
    ((struct round_log *)ctx)->reuses++;
}

/* One round: every thread quiet as of its last look (idle_since, looked),
 * so all are postponed once the offset is known, but those in a ptrace
 * stop or waiting for one (stopped, awaited), which the round gives to
 * quiet_threads_unlooked() as the engine does. */
static struct round_log round_over(struct quiet_threads *q, struct thread_table *tt)
{
    struct round_log log = {0};
    quiet_threads_begin(q, 1);
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        if (th->stopped || th->awaited) {
            quiet_threads_unlooked(q, tt, i);
            continue;
        }
        if (quiet_threads_postpone(q, tt, i))
            continue;
        uint64_t cpu;
        cr_assert(thread_read_cpu(th, &cpu));
        quiet_threads_read(q, th, cpu);
    }
    quiet_threads_end(q, tt, look, reuse, &log);
    /* As the engine does at a look: what was read is the thread's mark. */
    for (size_t i = 0; i < tt->count; i++) {
        struct thread *th = &tt->threads[i];
        cr_assert(thread_read_cpu(th, &th->idle_since.cpu_ns));
        th->looked.cpu_ns = th->idle_since.cpu_ns;
        th->quiet = !th->stopped && !th->awaited;
    }
    return log;
}

/* The child, its threads in a table, and the accounts of the rounds. */
struct fixture {
    pid_t pid;
    struct thread_table tt;
    struct quiet_threads q;
};

static void set_up(struct fixture *f)
{
    f->pid = start_child();
    threads_init(&f->tt);
    add_threads(&f->tt, f->pid);
    f->q = (struct quiet_threads){0};
}

static void tear_down(struct fixture *f)
{
    kill(f->pid, SIGKILL);
    waitpid(f->pid, NULL, 0);
    quiet_threads_free(&f->q);
    threads_destroy(&f->tt);
}

Test(quiet_threads, the_process_clock_tells_which_quiet_thread_ran, .timeout = 60)
{
    struct fixture f;
    set_up(&f);

    /* No offset yet: every thread is read, and the offset is set. */
    struct round_log log = round_over(&f.q, &f.tt);
    cr_expect_eq(f.q.postponed_seen, 0);
    cr_expect(f.q.procs[0].offset_known, "the offset was not set");

    /* Nobody ran: every quiet thread is reused without a read. */
    log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, 0, "%zu threads read where none ran", log.looks);
    cr_expect_eq(log.reuses, SLEEPERS + 1);
    cr_expect_eq(f.q.reads_saved, SLEEPERS + 1);

    /* The third thread seen running longest ago runs: the threads are
     * read, longest since they were seen running first, until its time is
     * found; the rest are reused. */
    pid_t runner = f.tt.threads[2].tid;
    char c = 'x';
    cr_assert_eq(write(wake_fds[1][1], &c, 1), 1); /* the second sleeper: tids ascend */
    cr_assert_eq(read(done_fd[0], &c, 1), 1);
    wait_asleep(f.pid, runner);
    log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, 3, "%zu threads read to find the one that ran", log.looks);
    cr_expect_eq(log.looked[log.looks ? log.looks - 1 : 0], runner,
                 "the last thread read is not the one that ran");
    cr_expect_eq(log.reuses, SLEEPERS + 1 - 3);

    /* With it off, nothing is postponed. */
    f.q.off = true;
    size_t before = f.q.postponed_seen;
    log = round_over(&f.q, &f.tt);
    cr_expect_eq(f.q.postponed_seen, before);
    cr_expect_eq(log.looks + log.reuses, 0);

    tear_down(&f);
}

Test(quiet_threads, a_thread_gone_reads_them_all_and_sets_the_offset_anew, .timeout = 60)
{
    struct fixture f;
    set_up(&f);
    round_over(&f.q, &f.tt);
    /* A thread the table does not hold runs: its time is nobody's the
     * table knows, so every quiet thread is read; then the offset holds it
     * and the next round reads none. */
    pid_t hidden = f.tt.threads[SLEEPERS].tid;
    thread_remove(&f.tt, hidden);
    char c = 'x';
    cr_assert_eq(write(wake_fds[SLEEPERS - 1][1], &c, 1), 1);
    cr_assert_eq(read(done_fd[0], &c, 1), 1);
    wait_asleep(f.pid, hidden);
    struct round_log log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, SLEEPERS, "%zu of %d threads read", log.looks, SLEEPERS);
    cr_expect_eq(log.reuses, 0);
    log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, 0, "%zu threads read after the offset was set anew", log.looks);
    cr_expect_eq(log.reuses, SLEEPERS);

    tear_down(&f);
}

/* A thread left out of its round (it ran less than half a period since its
 * copy) and still since the look before waits for a CPU: it is postponed
 * like a quiet one, and the clock finds it when it runs. */
Test(quiet_threads, a_thread_left_out_and_still_waits_for_the_clock, .timeout = 60)
{
    struct fixture f;
    set_up(&f);
    round_over(&f.q, &f.tt);
    struct thread *waiting = &f.tt.threads[1];
    waiting->quiet = false;
    waiting->left_out_at_look = waiting->still = true;
    size_t before = f.q.postponed_seen;
    struct round_log log = round_over(&f.q, &f.tt);
    cr_expect_eq(f.q.postponed_seen - before, SLEEPERS + 1, "the waiting thread was not postponed");
    cr_expect_eq(log.looks, 0, "%zu threads read where none ran", log.looks);

    /* Not still at its last look (it ran since the look before): read. */
    waiting->quiet = false;
    waiting->left_out_at_look = true;
    waiting->still = false;
    before = f.q.postponed_seen;
    round_over(&f.q, &f.tt);
    cr_expect_eq(f.q.postponed_seen - before, SLEEPERS, "a thread that ran was postponed");
    tear_down(&f);
}

/* A thread in a ptrace stop, or waiting for a CPU to enter one, is in the
 * sum as its last read found it: no read while the clock adds up, read
 * for the sum only (never looked at, never reused) when it does not, and
 * after every thread the round may look at. */
Test(quiet_threads, threads_in_a_stop_are_read_for_the_sum_only_and_last, .timeout = 60)
{
    struct fixture f;
    set_up(&f);
    round_over(&f.q, &f.tt);
    struct thread *stopped = &f.tt.threads[1], *awaited = &f.tt.threads[3];
    stopped->stopped = true;
    awaited->awaited = true;
    stopped->ran_seen_at = awaited->ran_seen_at = 0; /* first, were they not stops */
    round_over(&f.q, &f.tt);
    struct round_log log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, 0, "%zu threads read where none ran", log.looks);
    cr_expect_eq(log.reuses, SLEEPERS + 1 - 2, "a thread in a stop was reused");
    cr_expect_eq(f.q.stops_unread, 4, "%llu threads in a stop left unread in two rounds",
                 (unsigned long long)f.q.stops_unread);

    /* The awaited thread runs (as it would to enter its stop): every other
     * thread is read before it, and it is not looked at. */
    char c = 'x';
    cr_assert_eq(write(wake_fds[2][1], &c, 1), 1); /* threads[3]: the third sleeper */
    cr_assert_eq(read(done_fd[0], &c, 1), 1);
    wait_asleep(f.pid, awaited->tid);
    log = round_over(&f.q, &f.tt);
    cr_expect_eq(log.looks, SLEEPERS + 1 - 2, "%zu threads looked at", log.looks);
    for (size_t i = 0; i < log.looks; i++)
        cr_expect_neq(log.looked[i], awaited->tid, "the awaited thread was looked at");
    cr_expect_eq(log.reuses, 0);
    cr_expect(f.q.procs[0].offset_known, "its time was not found: the offset is not known");
    tear_down(&f);
}
