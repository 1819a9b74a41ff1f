/*
 * test_stacks.c - end-to-end tests of the call stacks "ptprof record"
 * writes: the callers workload (tests/workloads/callers.c) has known call
 * chains, and every sampled stack is symbolized independently of ptprof
 * (profile_query.h) and compared with them.  Also threads blocked in a
 * system call (tests/workloads/timeloop.c).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile_query.h"
#include "engines.h"
#include "record_native.h"
#include "symbol/elf_symtab.h"

#define MAX_FRAMES 128
#define SHOW_BAD 3

/* How many thread samples matched a pattern, with a few that did not. */
struct tally {
    int seen, ok;
    int bad_shown;
    char bad[SHOW_BAD][700];
};

static void tally_add(struct tally *t, bool ok, const struct pq_frame *f, size_t n)
{
    t->seen++;
    if (ok) {
        t->ok++;
    } else if (t->bad_shown < SHOW_BAD) {
        pq_describe(f, n, t->bad[t->bad_shown], sizeof(t->bad[0]));
        t->bad_shown++;
    }
}

#define TALLY_FMT "%d of %d\nfor example:\n  %s\n  %s\n  %s"
#define TALLY_ARGS(t) (t).ok, (t).seen, (t).bad[0], (t).bad[1], (t).bad[2]

static bool named(const struct pq_frame *f, size_t n, size_t i, const char *name)
{
    return i < n && strcmp(f[i].name, name) == 0;
}

static bool in_libc(const struct pq_frame *f)
{
    return f->map && strncmp(pq_basename(f->map->path), "libc.so", 7) == 0;
}

struct hot_stats {
    struct tally chains;
    int via_a, via_b;
};

/* Samples whose leaf is hot(): hot <- via_a|via_b <- main|worker_main (no
 * loop function between them in callers.c). */
static void check_hot_chains(struct recording *r, const char *what)
{
    struct profile_query q;
    pq_init(&q, &r->prof);
    struct hot_stats st;
    memset(&st, 0, sizeof(st));
    for (size_t i = 0; i < r->prof.nsamples; i++) {
        const struct prof_sample *s = &r->prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            struct pq_frame f[MAX_FRAMES];
            size_t n = pq_frames(&q, s, &s->threads[t], f, MAX_FRAMES);
            if (!named(f, n, 0, "hot"))
                continue;
            bool a = named(f, n, 1, "via_a"), b = named(f, n, 1, "via_b");
            bool ok = (a || b) && (named(f, n, 2, "main") || named(f, n, 2, "worker_main"));
            tally_add(&st.chains, ok, f, n);
            if (ok) {
                st.via_a += a;
                st.via_b += b;
            }
        }
    }
    pq_free(&q);
    cr_log_info("%s: %d samples in hot, %d with the right chain, via_a %d, via_b %d", what,
                st.chains.seen, st.chains.ok, st.via_a, st.via_b);

    cr_assert_geq(st.chains.seen, 300, "%s: only %d samples in hot()\n" REC_FMT, what,
                  st.chains.seen, REC_ARGS(&r->run));
    cr_assert_geq(
        st.chains.ok * 100, st.chains.seen * 95,
        "%s: samples in hot() with the chain hot <- via_a|via_b <- main|worker_main: " TALLY_FMT,
        what, TALLY_ARGS(st.chains));
    double share_a = (double)st.via_a / (double)(st.via_a + st.via_b);
    cr_assert(share_a > 0.56 && share_a < 0.84,
              "%s: via_a is the caller of %d samples in hot(), via_b of %d: %.1f%% via_a, expected "
              "about 70%%",
              what, st.via_a, st.via_b, 100 * share_a);
}

ENGINE_TEST(stacks, dwarf_unwinds_code_without_frame_pointers, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *callers = build_workload("callers-nofp");
    const char *args[] = {"-f", "2000", "-g", "dwarf", "--", callers, "2", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    cr_assert_str_eq(profile_meta(&r.prof, "stacks"), "dwarf");
    check_hot_chains(&r, "callers-nofp, -g dwarf");
    recording_free(&r);
    free(callers);
}

ENGINE_TEST(stacks, fp_walks_code_with_frame_pointers, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *callers = build_workload("callers");
    const char *args[] = {"-f", "2000", "-g", "fp", "--", callers, "2", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    cr_assert_str_eq(profile_meta(&r.prof, "stacks"), "fp");
    check_hot_chains(&r, "callers, -g fp");
    recording_free(&r);
    free(callers);
}

/* A qsort comparator is called back from libc, and a signal handler runs on
 * top of whatever the signal interrupted: DWARF CFI unwinds through both
 * without any frame pointer. */
ENGINE_TEST(stacks, dwarf_unwinds_through_libc_callbacks_and_signal_frames, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *callers = build_workload("callers-nofp");
    const char *args[] = {"-f", "2000", "-g", "dwarf", "--", callers, "2", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);

    struct profile_query q;
    pq_init(&q, &r.prof);
    struct tally sorted, handled;
    memset(&sorted, 0, sizeof(sorted));
    memset(&handled, 0, sizeof(handled));
    for (size_t i = 0; i < r.prof.nsamples; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            struct pq_frame f[MAX_FRAMES];
            size_t n = pq_frames(&q, s, &s->threads[t], f, MAX_FRAMES);
            if (named(f, n, 0, "weigh")) {
                /* weigh <- compare_weighted <- libc's sort... <- sort_pass <- main */
                int sp = pq_find_frame(f, n, 2, "sort_pass");
                bool through_libc = false;
                for (int k = 2; k < sp; k++)
                    through_libc |= in_libc(&f[k]);
                bool ok = named(f, n, 1, "compare_weighted") && sp > 2 && through_libc &&
                          named(f, n, (size_t)sp + 1, "main");
                tally_add(&sorted, ok, f, n);
            } else if (named(f, n, 0, "alarm_work") || named(f, n, 0, "on_alarm")) {
                /* [alarm_work <-] on_alarm <- libc's signal trampoline <-
                 * the interrupted code ... <- main */
                size_t h = named(f, n, 0, "alarm_work") ? 1 : 0;
                bool ok = named(f, n, h, "on_alarm") && n > h + 1 && in_libc(&f[h + 1]) &&
                          pq_find_frame(f, n, h + 2, "main") > (int)h + 1;
                tally_add(&handled, ok, f, n);
            }
        }
    }
    pq_free(&q);
    cr_log_info("comparator: %d of %d right; signal handler: %d of %d right", sorted.ok,
                sorted.seen, handled.ok, handled.seen);

    cr_assert_geq(sorted.seen, 20, "only %d samples in the qsort comparator's weigh()\n" REC_FMT,
                  sorted.seen, REC_ARGS(&r.run));
    cr_assert_geq(sorted.ok * 100, sorted.seen * 90,
                  "samples in weigh() whose stack goes compare_weighted <- libc <- sort_pass <- "
                  "main: " TALLY_FMT,
                  TALLY_ARGS(sorted));
    cr_assert_geq(handled.seen, 20, "only %d samples in the signal handler\n" REC_FMT, handled.seen,
                  REC_ARGS(&r.run));
    cr_assert_geq(handled.ok * 100, handled.seen * 90,
                  "samples in the signal handler whose stack goes on_alarm <- libc trampoline <- "
                  "interrupted code <- main: " TALLY_FMT,
                  TALLY_ARGS(handled));
    recording_free(&r);
    free(callers);
}

/* callers' SIGALRM handler on_alarm() is two instructions (call alarm_work,
 * ret) around alarm_work(), which does ~0.5 ms of work per signal.  The CPU
 * time the thread spends in the handler is alarm_work()'s: a profile that
 * charges on_alarm's first instruction with it caught the thread after the
 * kernel set up the handler's frame but before it ran, and credited it with
 * the time spent before the signal.  (A thread waiting for a CPU there may
 * be sampled there: that costs it no CPU time, so CPU time is the measure.) */
ENGINE_TEST(stacks, signal_handler_cpu_time_is_charged_to_the_handlers_work, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *callers = build_workload("callers-nofp");
    const char *args[] = {"-f", "1000", "--", callers, "2", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);

    struct profile_query q;
    pq_init(&q, &r.prof);
    uint64_t at_entry = 0, in_work = 0;
    int work_samples = 0;
    /* CPU time between two samples of a thread goes to the later one. */
    struct pq_cpu_deltas cpu = {0};
    for (size_t i = 0; i < r.prof.nsamples; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            uint64_t delta = pq_cpu_delta(&cpu, ts);
            struct pq_frame f[2];
            size_t n = pq_frames(&q, s, ts, f, 2);
            if (named(f, n, 0, "on_alarm"))
                at_entry += delta;
            if (named(f, n, 0, "alarm_work")) {
                in_work += delta;
                work_samples++;
            }
        }
    }
    pq_cpu_free(&cpu);
    pq_free(&q);
    cr_log_info("CPU time at on_alarm: %.1f ms, in alarm_work: %.1f ms", at_entry / 1e6,
                in_work / 1e6);
    cr_assert_geq(work_samples, 5, "only %d samples in the signal handler's work\n" REC_FMT,
                  work_samples, REC_ARGS(&r.run));
    cr_assert_leq(at_entry * 100, (at_entry + in_work) * 25,
                  "%.1f ms of CPU time charged to the handler's entry instruction vs %.1f ms to "
                  "the work it calls",
                  at_entry / 1e6, in_work / 1e6);
    recording_free(&r);
    free(callers);
}

/* timeloop's main thread sleeps in clock_nanosleep between ticks and its
 * waiter thread sits in read() on a pipe the whole run: both must be
 * recorded as blocked in that system call, with a stack that still reaches
 * the code that made the call. */
ENGINE_TEST(stacks, blocked_threads_carry_their_system_call_and_stack, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *timeloop = build_workload("timeloop-nofp");
    const char *args[] = {"-f", "500", "--", timeloop, "1.5", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    uint32_t pid = pq_first_pid(&r.prof);
    cr_assert_neq(pid, 0, "no pid in the profile's META");

    struct profile_query q;
    pq_init(&q, &r.prof);
    int main_samples = 0, waiter_samples = 0;
    struct tally sleeping, reading, main_stacks, waiter_stacks;
    memset(&sleeping, 0, sizeof(sleeping));
    memset(&reading, 0, sizeof(reading));
    memset(&main_stacks, 0, sizeof(main_stacks));
    memset(&waiter_stacks, 0, sizeof(waiter_stacks));
    for (size_t i = 0; i < r.prof.nsamples; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            bool blocked = ts->flags & PROF_THREAD_IN_SYSCALL;
            cr_assert(blocked ? ts->syscall >= 0 : ts->syscall == -1,
                      "thread %u: flags %#x but syscall %d", ts->tid, ts->flags, ts->syscall);
            struct pq_frame f[MAX_FRAMES];
            size_t n = pq_frames(&q, s, ts, f, MAX_FRAMES);
            if (ts->tid == pid) {
                main_samples++;
                bool sleeps =
                    blocked && (ts->syscall == SYS_clock_nanosleep || ts->syscall == SYS_nanosleep);
                tally_add(&sleeping, sleeps, f, n);
                if (sleeps)
                    tally_add(&main_stacks, pq_find_frame(f, n, 1, "main") > 0, f, n);
            } else {
                waiter_samples++;
                bool reads = blocked && ts->syscall == SYS_read;
                tally_add(&reading, reads, f, n);
                if (reads)
                    tally_add(&waiter_stacks, pq_find_frame(f, n, 1, "waiter_main") > 0, f, n);
            }
        }
    }
    pq_free(&q);
    cr_log_info("main: %d samples, %d sleeping (%d reach main); waiter: %d samples, %d reading "
                "(%d reach waiter_main)",
                main_samples, sleeping.ok, main_stacks.ok, waiter_samples, reading.ok,
                waiter_stacks.ok);

    cr_assert_geq(main_samples, 50, "%d samples of the main thread\n" REC_FMT, main_samples,
                  REC_ARGS(&r.run));
    cr_assert_geq(waiter_samples, 50, "%d samples of the waiter thread\n" REC_FMT, waiter_samples,
                  REC_ARGS(&r.run));
    cr_assert_geq(sleeping.ok * 100, sleeping.seen * 80,
                  "main thread samples flagged in clock_nanosleep/nanosleep (it sleeps ~99%% of "
                  "the time): " TALLY_FMT,
                  TALLY_ARGS(sleeping));
    cr_assert_geq(reading.ok * 100, reading.seen * 80,
                  "waiter thread samples flagged in read (its whole life): " TALLY_FMT,
                  TALLY_ARGS(reading));
    cr_assert_geq(main_stacks.ok * 100, main_stacks.seen * 95,
                  "sleeping main thread samples whose stack reaches main: " TALLY_FMT,
                  TALLY_ARGS(main_stacks));
    cr_assert_geq(waiter_stacks.ok * 100, waiter_stacks.seen * 95,
                  "blocked waiter samples whose stack reaches waiter_main: " TALLY_FMT,
                  TALLY_ARGS(waiter_stacks));
    recording_free(&r);
    free(timeloop);
}

/* --- whole stacks of a real program: sqlite3 ------------------------------- */

/* A few seconds of SQL whose virtual machine runs deep in sqlite3's stack:
 * with an 8 KiB copy every sample used to end in the shell's own code. */
static const char sqlite_script[] =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n"
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200000)\n"
    "  INSERT INTO t SELECT x, printf('row %d', x * 7919 % 5000), x * 0.5 FROM n;\n"
    "CREATE INDEX tb ON t(b);\n"
    "SELECT count(*), sum(length(t1.b)), avg(t2.c) FROM t t1 JOIN t t2 ON t1.b = t2.b\n"
    "  WHERE t1.a % 50 = 0;\n"
    "WITH RECURSIVE f(n, v) AS (SELECT 0, 0 UNION ALL\n"
    "  SELECT n + 1, (v * 31 + n) % 1000003 FROM f WHERE n < 600000) SELECT max(v) FROM f;\n";

/* "ptprof record --engine ENGINE ARGS -- sqlite3 :memory: -cmd '.read
 * DIR/q.sql'" into R. */
static void record_sqlite(struct recording *r, const char *engine, const char *const *options)
{
    char *dir = test_mkdtemp(), *script = NULL, *read = NULL;
    cr_assert(asprintf(&script, "%s/q.sql", dir) > 0);
    cr_assert(asprintf(&read, ".read %s", script) > 0);
    FILE *f = fopen(script, "w");
    cr_assert(f && fputs(sqlite_script, f) >= 0 && fclose(f) == 0, "cannot write %s", script);
    const char *args[REC_ARGS_MAX];
    size_t n = 0;
    for (size_t i = 0; options[i]; i++)
        args[n++] = options[i];
    const char *cmd[] = {"--", "/usr/bin/sqlite3", ":memory:", "-cmd", read, NULL};
    for (size_t i = 0; cmd[i]; i++)
        args[n++] = cmd[i];
    args[n] = NULL;
    record_native_engine(r, engine, args, 0, 120);
    test_rmtree(dir);
    free(dir);
    free(script);
    free(read);
}

/* Whether a stack reaches the program's main: its caller, libc's start
 * code, is on it (sqlite3 is stripped; libc names its start functions). */
static bool reaches_main(const struct pq_frame *f, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (in_libc(&f[i]) && (strcmp(f[i].name, "__libc_start_call_main") == 0 ||
                               strcmp(f[i].name, "__libc_start_main") == 0))
            return true;
    return false;
}

/* The addresses of the code ELF runs before main: its entry point
 * (_start, unnamed in a stripped program such as Debian's sqlite3) and
 * its .init section (_init, which the dynamic loader calls; it has no
 * CFI, so the unwind ends at it); 0 where it has none. */
static void start_code(Elf *elf, uint64_t starts[2])
{
    GElf_Ehdr eh;
    size_t names;
    starts[0] = starts[1] = 0;
    if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &names) != 0)
        return;
    starts[0] = eh.e_entry;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;
        if (name && strcmp(name, ".init") == 0)
            starts[1] = sh.sh_addr;
    }
}

/* Whether F is at the first instruction of code its file runs before
 * main (start_code()). */
static bool at_start_code(const struct pq_frame *f)
{
    struct elf_symtab tab;
    if (!f->map || !f->map->path || elf_symtab_load(f->map->path, &tab) != 0)
        return false;
    uint64_t vaddr, starts[2] = {0, 0};
    bool at = false;
    int fd = open(f->map->path, O_RDONLY | O_CLOEXEC);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    if (elf)
        start_code(elf, starts);
    if (elf_symtab_vaddr(&tab, f->pc - f->map->start + f->map->offset, &vaddr) == 0)
        at = (starts[0] && vaddr == starts[0]) || (starts[1] && vaddr == starts[1]);
    elf_end(elf);
    if (fd >= 0)
        close(fd);
    elf_symtab_free(&tab);
    return at;
}

/* Stacks the program's main is not on by nature: the dynamic loader's
 * before main (its outermost frame in ld.so, or _start with nothing above
 * it, or one frame at the first instruction of _start or _init), and a
 * thread's start (clone/clone3). */
static bool ends_before_main(const struct pq_frame *f, size_t n)
{
    if (n == 0)
        return true;
    const struct pq_frame *outer = &f[n - 1];
    if (outer->map && strncmp(pq_basename(outer->map->path), "ld-linux", 8) == 0)
        return true;
    return strcmp(outer->name, "_start") == 0 || strcmp(outer->name, "clone") == 0 ||
           strcmp(outer->name, "clone3") == 0 || (n == 1 && at_start_code(outer));
}

/* Stacks of the sqlite3 shell reach main at each engine's default settings
 * (ptrace: the copy runs up to the top of the main thread's stack, which is
 * near; perf: the kernel's 32 KiB copy holds it), and nothing is said to be
 * cut. */
ENGINE_TEST(stacks, sqlite3_stacks_reach_main_at_the_default_settings, .timeout = 150)
{
    const char *options[] = {"-f", "500", NULL};
    struct recording r;
    record_sqlite(&r, engine_p->name, options);
    cr_assert_str_eq(profile_meta(&r.prof, "stacks"), "dwarf");
    struct profile_query q;
    pq_init(&q, &r.prof);
    struct tally whole;
    memset(&whole, 0, sizeof(whole));
    int cut = 0;
    for (size_t i = 0; i < r.prof.nsamples; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            struct pq_frame f[MAX_FRAMES];
            size_t n = pq_frames(&q, s, ts, f, MAX_FRAMES);
            cut += (ts->flags & PROF_THREAD_STACK_TRUNCATED) != 0;
            if (!ends_before_main(f, n))
                tally_add(&whole, reaches_main(f, n), f, n);
        }
    }
    pq_free(&q);
    cr_log_info("sqlite3 (%s engine): %d of %d stacks reach main, %d flagged cut", engine_p->name,
                whole.ok, whole.seen, cut);
    cr_assert_geq(whole.seen, 200, "%s engine: only %d samples\n" REC_FMT, engine_p->name,
                  whole.seen, REC_ARGS(&r.run));
    cr_assert_geq(whole.ok * 100, whole.seen * 98,
                  "%s engine: sqlite3 stacks reaching main: " TALLY_FMT, engine_p->name,
                  TALLY_ARGS(whole));
    cr_assert_leq(cut * 100, whole.seen, "%s engine: %d of %d stacks flagged cut", engine_p->name,
                  cut, whole.seen);
    recording_free(&r);
}

/* Thread samples of R whose stack is flagged cut (FLAGGED: ok when it
 * lacks main) and not (UNFLAGGED: ok when it reaches main; stacks that end
 * before main by nature, ends_before_main(), are not judged). */
static void tally_cut_flags(struct recording *r, struct tally *flagged, struct tally *unflagged)
{
    struct profile_query q;
    pq_init(&q, &r->prof);
    memset(flagged, 0, sizeof(*flagged));
    memset(unflagged, 0, sizeof(*unflagged));
    for (size_t i = 0; i < r->prof.nsamples; i++) {
        const struct prof_sample *s = &r->prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            struct pq_frame f[MAX_FRAMES];
            size_t n = pq_frames(&q, s, ts, f, MAX_FRAMES);
            bool whole = reaches_main(f, n);
            if (ts->flags & PROF_THREAD_STACK_TRUNCATED)
                tally_add(flagged, !whole, f, n);
            else if (!ends_before_main(f, n))
                tally_add(unflagged, whole, f, n);
        }
    }
    pq_free(&q);
}

/* "ptprof info" of R says CUT thread samples were cut short. */
static void check_info_counts(struct recording *r, int cut)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "info", r->path, NULL};
    struct spawn_opts opts = {.argv = argv};
    struct spawn_result info;
    spawn_run(&opts, &info);
    char want[96];
    snprintf(want, sizeof(want), "; %d thread sample%s cut short", cut, cut == 1 ? "" : "s");
    cr_assert(strstr(info.out, want), "info does not say '%s':\n" REC_FMT, want, REC_ARGS(&info));
    spawn_result_free(&info);
    free(ptprof);
}

/*
 * With a copy far too small (512 bytes) stacks are cut: each cut stack is
 * flagged, and only those lack main; the thread's copy grows, so after a
 * handful of cut samples the stacks are whole again; info counts them.
 */
Test(stacks, cut_stacks_are_flagged_counted_and_grow_whole, .timeout = 150)
{
    const char *options[] = {"-f", "500", "--stack-size", "512", NULL};
    struct recording r;
    record_sqlite(&r, "ptrace", options);
    struct tally flagged, unflagged;
    tally_cut_flags(&r, &flagged, &unflagged);
    cr_log_info("--stack-size 512: %d flagged cut (%d without main), %d not (%d with main)",
                flagged.seen, flagged.ok, unflagged.seen, unflagged.ok);
    cr_assert_geq(flagged.seen, 1, "no stack flagged cut with a 512-byte copy\n" REC_FMT,
                  REC_ARGS(&r.run));
    cr_assert_eq(flagged.ok, flagged.seen, "stacks flagged cut that reach main: " TALLY_FMT,
                 TALLY_ARGS(flagged));
    cr_assert_geq(unflagged.ok * 100, unflagged.seen * 98,
                  "stacks not flagged cut that reach main: " TALLY_FMT, TALLY_ARGS(unflagged));
    /* Doubling from 512 bytes reaches any sqlite3 stack within a few copies. */
    cr_assert_leq(flagged.seen * 10, flagged.seen + unflagged.seen,
                  "%d of %d stacks cut: the copy did not grow", flagged.seen,
                  flagged.seen + unflagged.seen);
    check_info_counts(&r, flagged.seen);
    recording_free(&r);
}

/* The perf engine's copy is fixed for a recording (the kernel's
 * STACK_USER): with perf's own 8 KiB, sqlite3's stacks are cut, and each
 * cut stack is flagged and counted as with ptrace. */
Test(stacks, perf_engine_cut_stacks_are_flagged_and_counted, .timeout = 150)
{
    const char *options[] = {"-f", "500", "--stack-size", "8192", NULL};
    struct recording r;
    record_sqlite(&r, "perf", options);
    struct tally flagged, unflagged;
    tally_cut_flags(&r, &flagged, &unflagged);
    cr_log_info("perf engine: %d flagged cut (%d without main), %d not (%d with main)",
                flagged.seen, flagged.ok, unflagged.seen, unflagged.ok);
    cr_assert_geq(flagged.seen + unflagged.seen, 200, "too few samples\n" REC_FMT,
                  REC_ARGS(&r.run));
    cr_assert_eq(flagged.ok, flagged.seen, "stacks flagged cut that reach main: " TALLY_FMT,
                 TALLY_ARGS(flagged));
    cr_assert_geq(unflagged.ok * 100, unflagged.seen * 98,
                  "stacks not flagged cut that reach main: " TALLY_FMT, TALLY_ARGS(unflagged));
    cr_assert_geq(flagged.seen * 2, flagged.seen + unflagged.seen,
                  "%d of %d stacks cut with an 8 KiB copy", flagged.seen,
                  flagged.seen + unflagged.seen);
    check_info_counts(&r, flagged.seen);
    recording_free(&r);
}
