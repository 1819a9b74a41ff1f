/*
 * test_processes.c - end-to-end tests of process trees: "ptprof record"
 * follows fork, vfork and clone children and their execs (and does not
 * with --no-inherit), and gives every process its own program, maps, exit
 * status and samples, with either recording engine (engines.h).  Workload:
 * tests/workloads/forker.c.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engines.h"
#include "profile_query.h"
#include "record_native.h"

static char *canonical(const char *path)
{
    char *real = realpath(path, NULL);
    cr_assert(real, "realpath(%s) failed", path);
    return real;
}

/* Every thread sample names the process its thread belongs to. */
static void check_sample_pids(const struct profile *p)
{
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            const struct prof_thread *th = pq_thread(p, ts->tid);
            cr_assert(th, "sample %zu: thread %u has no THREAD record", i, ts->tid);
            cr_assert_eq(th->pid, ts->pid, "sample %zu: thread %u of process %u sampled as pid %u",
                         i, ts->tid, th->pid, ts->pid);
            cr_assert(pq_process(p, ts->pid), "sample %zu: pid %u has no PROCESS record", i,
                      ts->pid);
        }
    }
}

/* Does PID have an executable mapping of file EXE? */
static bool maps_file(const struct profile *p, uint32_t pid, const char *exe)
{
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && (m->perms & 4) && m->path && strcmp(m->path, exe) == 0)
            return true;
    }
    return false;
}

struct process_samples {
    int total;   /* thread samples of the process */
    int running; /* of which not blocked in a system call */
    int in_fn;   /* of which symbolized to the function asked for */
    int in_exe;  /* of which in a mapping of the file asked for */
};

/* PID's samples, resolved with PID's own maps at each sample's time. */
static struct process_samples count_samples(const struct profile *p, uint32_t pid, const char *fn,
                                            const char *exe)
{
    struct process_samples c = {0, 0, 0, 0};
    struct profile_query q;
    pq_init(&q, p);
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            if (ts->pid != pid)
                continue;
            c.total++;
            if (ts->flags & PROF_THREAD_IN_SYSCALL)
                continue;
            c.running++;
            const char *name = fn ? pq_function(&q, pid, ts->pc, s->time_ns) : NULL;
            c.in_fn += name && strcmp(name, fn) == 0;
            const struct prof_map *m = pq_map_at(p, pid, ts->pc, s->time_ns);
            c.in_exe += exe && m && m->path && strcmp(m->path, exe) == 0;
        }
    }
    pq_free(&q);
    cr_log_info("pid %u: %d samples, %d running, %d in %s, %d in %s", pid, c.total, c.running,
                c.in_fn, fn ? fn : "-", c.in_exe, exe ? exe : "-");
    return c;
}

/* The perf engine is the first process's parent only: of the others it
 * knows that they ended (their threads' exits), not how. */
static void check_exit_code(const char *engine, const struct profile *p,
                            const struct prof_process *pr, int code, const char *what)
{
    /* The perf engine knows a child's status only when it read it before
     * the child's parent reaped it (docs/recording.md); what it knows must
     * be right. */
    if (engine_is_perf(engine) && pr->pid != pq_first_pid(p) && !pr->exited) {
        size_t threads = 0;
        for (size_t i = 0; i < p->nthreads; i++) {
            if (p->threads[i].pid != pr->pid)
                continue;
            threads++;
            cr_assert_neq(p->threads[i].end_ns, 0, "%s (pid %u): thread %u never ended", what,
                          pr->pid, p->threads[i].tid);
        }
        cr_assert_gt(threads, 0, "%s (pid %u) has no thread", what, pr->pid);
        return;
    }
    cr_assert(pr->exited, "%s (pid %u) has no exit in the profile", what, pr->pid);
    cr_assert(WIFEXITED(pr->exit_status) && WEXITSTATUS(pr->exit_status) == code,
              "%s engine: %s (pid %u): wait status %#x, expected exit %d", engine, what, pr->pid,
              (unsigned)pr->exit_status, code);
}

/* A shell runs one program in the background and another in the
 * foreground: three processes, each with its own program, maps, samples and
 * exit status. */
ENGINE_TEST(processes, shell_children_each_have_their_own_program_maps_and_status, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *forker = build_workload("forker"), *forker_nofp = build_workload("forker-nofp");
    char *script = NULL;
    cr_assert_geq(asprintf(&script, "%s spin 0.6 3 & %s spin 0.6 5; wait", forker, forker_nofp), 0);
    const char *args[] = {"--", "/bin/sh", "-c", script, NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;

    char *sh = canonical("/bin/sh"), *exe_a = canonical(forker), *exe_b = canonical(forker_nofp);
    uint32_t sh_pid = pq_first_pid(p);
    const struct prof_process *shell = pq_process(p, sh_pid);
    cr_assert(shell, "first process %u not in the profile", sh_pid);
    cr_assert_str_eq(shell->exe, sh, "the shell's program");
    check_exit_code(engine, p, shell, 0, "sh");
    cr_assert_eq(p->nprocesses, 3, "%zu processes, expected sh and its two children\n" REC_FMT,
                 p->nprocesses, REC_ARGS(&r.run));

    /* Both children say who they are; the profile must know them. */
    const char *second = strstr(r.run.out, "forker: pid ");
    cr_assert(second, "no child printed its pid\n" REC_FMT, REC_ARGS(&r.run));
    uint32_t printed[2] = {(uint32_t)parse_after(r.run.out, "forker: pid "),
                           (uint32_t)parse_after(second + 1, "forker: pid ")};
    const struct prof_process *child_a = NULL, *child_b = NULL;
    for (int i = 0; i < 2; i++) {
        const struct prof_process *c = pq_process(p, printed[i]);
        cr_assert(c, "child %u (printed) is not in the profile", printed[i]);
        cr_assert_eq(c->ppid, sh_pid, "child %u: ppid %u, expected the shell %u", c->pid, c->ppid,
                     sh_pid);
        if (strcmp(c->exe, exe_a) == 0)
            child_a = c;
        else if (strcmp(c->exe, exe_b) == 0)
            child_b = c;
        else
            cr_assert_fail("child %u runs '%s', expected %s or %s", c->pid, c->exe, exe_a, exe_b);
    }
    cr_assert(child_a && child_b, "both children run the same program");
    check_exit_code(engine, p, child_a, 3, "forker (background)");
    check_exit_code(engine, p, child_b, 5, "forker-nofp (foreground)");

    cr_assert(maps_file(p, sh_pid, sh), "the shell's maps lack %s", sh);
    cr_assert(maps_file(p, child_a->pid, exe_a), "pid %u's maps lack %s", child_a->pid, exe_a);
    cr_assert(maps_file(p, child_b->pid, exe_b), "pid %u's maps lack %s", child_b->pid, exe_b);
    cr_assert(!maps_file(p, sh_pid, exe_a) && !maps_file(p, sh_pid, exe_b),
              "the shell's maps contain a child's program");
    cr_assert(!maps_file(p, child_a->pid, exe_b) && !maps_file(p, child_b->pid, exe_a),
              "a child's maps contain the other child's program");

    check_sample_pids(p);
    /* Few samples suffice: dash runs the foreground command with vfork(),
     * and a sample that comes while it waits in vfork() holds everything
     * stopped for a while (vfork_child_is_not_held_up_by_sampling). */
    const struct prof_process *kids[2] = {child_a, child_b};
    for (int i = 0; i < 2; i++) {
        struct process_samples c = count_samples(p, kids[i]->pid, "spin_work", NULL);
        cr_assert_geq(c.running, 5, "child %u (%s): %d samples running", kids[i]->pid, kids[i]->exe,
                      c.running);
        cr_assert_geq(c.in_fn * 100, c.running * 70,
                      "child %u (%s): %d of %d running samples resolve to spin_work through its "
                      "own maps",
                      kids[i]->pid, kids[i]->exe, c.in_fn, c.running);
    }

    free(sh);
    free(exe_a);
    free(exe_b);
    free(script);
    free(forker);
    free(forker_nofp);
    recording_free(&r);
}

/* fork(), vfork() + exec and a clone without CLONE_THREAD from one program:
 * all three children are followed. */
ENGINE_TEST(processes, fork_vfork_exec_and_clone_children_are_followed, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *forker = build_workload("forker"), *exitcode = build_workload("exitcode");
    const char *args[] = {"--", forker, "tree", "0.3", exitcode, "12", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;
    const char *out = r.run.out;

    char *exe = canonical(forker), *exe_exitcode = canonical(exitcode);
    uint32_t parent = pq_first_pid(p);
    cr_assert_eq(parent, (uint32_t)parse_after(out, "forker: pid "), "first pid");
    uint32_t forked = (uint32_t)parse_after(out, "forker: fork ");
    uint32_t vforked = (uint32_t)parse_after(out, "forker: vfork ");
    uint32_t cloned = (uint32_t)parse_after(out, "forker: clone ");
    cr_assert_eq(p->nprocesses, 4, "%zu processes, expected the parent and 3 children\n" REC_FMT,
                 p->nprocesses, REC_ARGS(&r.run));

    const struct prof_process *pp = pq_process(p, parent);
    cr_assert(pp);
    cr_assert_str_eq(pp->exe, exe);
    check_exit_code(engine, p, pp, 0, "forker tree");
    struct {
        uint32_t pid;
        const char *what, *exe, *fn;
        int code;
    } kids[3] = {{forked, "fork child", exe, "fork_child_work", 11},
                 {vforked, "vfork+exec child", exe_exitcode, NULL, 12},
                 {cloned, "clone child", exe, "clone_child_work", 13}};
    for (int i = 0; i < 3; i++) {
        const struct prof_process *c = pq_process(p, kids[i].pid);
        cr_assert(c, "%s %u is not in the profile\n" REC_FMT, kids[i].what, kids[i].pid,
                  REC_ARGS(&r.run));
        cr_assert_eq(c->ppid, parent, "%s %u: ppid %u, expected %u", kids[i].what, c->pid, c->ppid,
                     parent);
        cr_assert_str_eq(c->exe, kids[i].exe, "%s %u's program", kids[i].what, c->pid);
        check_exit_code(engine, p, c, kids[i].code, kids[i].what);
        cr_assert(maps_file(p, c->pid, kids[i].exe), "%s %u's maps lack %s", kids[i].what, c->pid,
                  kids[i].exe);
    }
    cr_assert(!maps_file(p, parent, exe_exitcode), "the parent's maps contain the exec'd program");

    check_sample_pids(p);
    struct process_samples c = count_samples(p, parent, "parent_work", NULL);
    cr_assert_geq(c.running, 20, "parent: %d running samples", c.running);
    cr_assert_geq(c.in_fn * 100, c.running * 80, "parent: %d of %d running samples in parent_work",
                  c.in_fn, c.running);
    for (int i = 0; i < 3; i++) {
        c = count_samples(p, kids[i].pid, kids[i].fn, kids[i].exe);
        int hits = kids[i].fn ? c.in_fn : c.in_exe;
        /* exitcode works only ~100 ms. */
        cr_assert_geq(c.running, kids[i].fn ? 20 : 5, "%s %u: %d running samples", kids[i].what,
                      kids[i].pid, c.running);
        cr_assert_geq(hits * 100, c.running * (kids[i].fn ? 80 : 50),
                      "%s %u: %d of %d running samples in %s", kids[i].what, kids[i].pid, hits,
                      c.running, kids[i].fn ? kids[i].fn : kids[i].exe);
    }

    free(exe);
    free(exe_exitcode);
    free(forker);
    free(exitcode);
    recording_free(&r);
}

/* A parent suspended in vfork() until its child execs cannot be stopped by
 * PTRACE_INTERRUPT.  Sampling must not hold the child (and everything else)
 * stopped sample after sample while it waits for that parent: the child
 * here needs 10 ms of CPU before its exec, and the parent measures how long
 * it stayed suspended.  (One wait of the recorder's stop patience, 100 ms,
 * is what docs/recording.md promises; the bound leaves room for it.) */
ENGINE_TEST(processes, vfork_child_is_not_held_up_by_sampling, .timeout = 90)
{
    const char *engine = engine_p->name;
    char *forker = build_workload("forker"), *exitcode = build_workload("exitcode");
    const char *args[] = {"-f", "1000", "--", forker, "vfork", "10", exitcode, "12", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 75);
    const struct profile *p = &r.prof;

    uint32_t child = (uint32_t)parse_after(r.run.out, "forker: vfork ");
    long long blocked_ms = parse_after(r.run.out, " blocked ");
    const struct prof_process *c = pq_process(p, child);
    cr_assert(c, "the vfork child %u is not in the profile", child);
    check_exit_code(engine, p, c, 12, "vfork child");
    cr_log_info("vfork parent suspended %lld ms for a child using 10 ms of CPU", blocked_ms);
    cr_assert_lt(blocked_ms, 500,
                 "the parent stayed suspended in vfork() for %lld ms while its child needed 10 "
                 "ms of CPU to reach exec (without the profiler: 10-50 ms); the profile's "
                 "latency: %.3f s over %" PRIu64 " samples\n" REC_FMT,
                 blocked_ms, (double)p->totals.latency_ns / 1e9, p->totals.samples,
                 REC_ARGS(&r.run));
    free(forker);
    free(exitcode);
    recording_free(&r);
}

/* docs/format.md: the first process's PROCESS record has ppid 0, so a
 * reader finds the root of the tree without knowing the profiler's pid. */
ENGINE_TEST(processes, first_process_has_parent_0_and_children_name_their_parent, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *forker = build_workload("forker"), *exitcode = build_workload("exitcode");
    const char *args[] = {"--", forker, "tree", "0.05", exitcode, "0", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;
    uint32_t first = pq_first_pid(p);
    const struct prof_process *pr = pq_process(p, first);
    cr_assert(pr, "first process %u not in the profile", first);
    cr_assert_eq(pr->ppid, 0, "the first process %u has ppid %u in the profile, expected 0", first,
                 pr->ppid);
    for (size_t i = 0; i < p->nprocesses; i++) {
        if (p->processes[i].pid != first)
            cr_assert_eq(p->processes[i].ppid, first, "process %u: ppid %u, expected %u",
                         p->processes[i].pid, p->processes[i].ppid, first);
    }
    free(forker);
    free(exitcode);
    recording_free(&r);
}

ENGINE_TEST(processes, no_inherit_records_the_first_process_only, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *forker = build_workload("forker"), *exitcode = build_workload("exitcode");
    const char *args[] = {"--no-inherit", "--", forker, "tree", "0.3", exitcode, "12", NULL};
    struct recording r;
    /* Exit 0: the children ran normally although nobody traced them. */
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;
    uint32_t parent = pq_first_pid(p);
    cr_assert_eq(parent, (uint32_t)parse_after(r.run.out, "forker: pid "), "first pid");

    cr_assert_eq(p->nprocesses, 1, "%zu processes with --no-inherit", p->nprocesses);
    for (size_t i = 0; i < p->nthreads; i++)
        cr_assert_eq(p->threads[i].pid, parent, "thread %u of pid %u", p->threads[i].tid,
                     p->threads[i].pid);
    for (size_t i = 0; i < p->nmaps; i++)
        cr_assert_eq(p->maps[i].pid, parent, "a map of pid %u", p->maps[i].pid);
    size_t nthreads = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        for (uint32_t t = 0; t < p->samples[i].nthreads; t++) {
            cr_assert_eq(p->samples[i].threads[t].pid, parent, "a sample of pid %u",
                         p->samples[i].threads[t].pid);
            cr_assert_eq(p->samples[i].threads[t].tid, parent, "a sample of thread %u",
                         p->samples[i].threads[t].tid);
            nthreads++;
        }
    }
    cr_assert_gt(nthreads, 20, "%zu thread samples of the parent", nthreads);
    char *exe_exitcode = canonical(exitcode);
    cr_assert(!maps_file(p, parent, exe_exitcode), "the untraced child's exec is in the profile");

    free(exe_exitcode);
    free(forker);
    free(exitcode);
    recording_free(&r);
}

/* A child its parent reaps only later stays a zombie meanwhile: its exit
 * status is in the profile with either engine (the perf engine reads it
 * from /proc/PID/stat while the child is a zombie).  A second and a half
 * of it: on a machine loaded ten times over, 0.4 s once passed before the
 * recorder read the child's exit. */
ENGINE_TEST(processes, a_child_reaped_late_has_its_exit_status, .timeout = 60)
{
    char *forker = build_workload("forker");
    const char *args[] = {"--", forker, "late", "1.5", "42", NULL};
    struct recording r;
    record_native_engine(&r, engine_p->name, args, 0, 40);
    uint32_t child = (uint32_t)parse_after(r.run.out, "forker: late ");
    const struct prof_process *pr = pq_process(&r.prof, child);
    cr_assert(pr, "%s engine: child %u is not in the profile\n" REC_FMT, engine_p->name, child,
              REC_ARGS(&r.run));
    cr_assert(pr->exited, "%s engine: child %u has no exit status\n" REC_FMT, engine_p->name, child,
              REC_ARGS(&r.run));
    cr_assert(WIFEXITED(pr->exit_status) && WEXITSTATUS(pr->exit_status) == 42,
              "%s engine: child %u: wait status %#x, expected exit 42", engine_p->name, child,
              (unsigned)pr->exit_status);
    recording_free(&r);
    free(forker);
}
