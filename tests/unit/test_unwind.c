/*
 * test_unwind.c - record/stack.h: stack capture in the stop window and
 * unwinding after it, against the callers workload (both builds), traced
 * by a small tracer here (PTRACE_SEIZE, PTRACE_INTERRUPT, capture, resume,
 * then unwind).  Expected frames are checked by name with the workload's
 * symbol table (symbol/elf_symtab.h) and its load base from
 * /proc/PID/maps; libc frames only by the mapping they lie in.
 */
#include "model/maps.h"
#include "record/proc_maps.h"
#include "unwind/regs.h"
#include "record/stack_capture.h"
#include "unwind/stack.h"
#include "symbol/elf_symtab.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8

/* --- a minimal tracer ---------------------------------------------------- */

struct traced_thread {
    pid_t tid;
    bool pending;  /* interrupted, stop not seen yet */
    bool stopped;  /* in our interrupt stop */
    bool captured; /* snap holds this round's sample */
    bool ran;      /* its CPU time moved since its previous sample */
    uint64_t cpu_ns;
    struct stack_snapshot snap;
};

struct tracer {
    pid_t pid;
    bool gone;
    struct traced_thread threads[MAX_THREADS];
    int count;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct traced_thread *thread_of(struct tracer *tr, pid_t tid, bool add)
{
    for (int i = 0; i < tr->count; i++)
        if (tr->threads[i].tid == tid)
            return &tr->threads[i];
    if (!add)
        return NULL;
    cr_assert_lt(tr->count, MAX_THREADS, "the workload has more threads than expected");
    struct traced_thread *t = &tr->threads[tr->count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    stack_snapshot_init(&t->snap, STACK_COPY_DEFAULT);
    return t;
}

static uint64_t cpu_ns_of(pid_t pid, pid_t tid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    unsigned long long ns = 0;
    if (f) {
        if (fscanf(f, "%llu", &ns) != 1)
            ns = 0;
        fclose(f);
    }
    return ns;
}

/* Answers one ptrace stop the way a profiler must: the target's own
 * signals are delivered, new threads run, our interrupt stops are kept. */
static void handle_status(struct tracer *tr, pid_t tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        struct traced_thread *t = thread_of(tr, tid, false);
        if (t) {
            stack_snapshot_free(&t->snap);
            *t = tr->threads[--tr->count];
        }
        if (tid == tr->pid)
            tr->gone = true;
        return;
    }
    if (!WIFSTOPPED(status))
        return;
    int event = status >> 16;
    if (event == PTRACE_EVENT_STOP) {
        struct traced_thread *t = thread_of(tr, tid, true);
        if (t->pending) {
            t->pending = false;
            t->stopped = true;
            uint64_t cpu = cpu_ns_of(tr->pid, tid);
            t->ran = cpu != t->cpu_ns;
            t->cpu_ns = cpu;
            t->captured = stack_capture(tid, t->snap.capacity, &t->snap) == 0;
            return;
        }
        ptrace(PTRACE_CONT, tid, 0, 0); /* a new thread's first stop */
        return;
    }
    if (event == PTRACE_EVENT_CLONE) {
        unsigned long child = 0;
        ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
        thread_of(tr, (pid_t)child, true);
        ptrace(PTRACE_CONT, tid, 0, 0);
        return;
    }
    if (event != 0) {
        ptrace(PTRACE_CONT, tid, 0, 0);
        return;
    }
    ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(status));
}

/* Starts ARGV (argv[0] is the path) traced. */
static void tracer_start_argv(struct tracer *tr, char *const *argv)
{
    const char *path = argv[0];
    memset(tr, 0, sizeof(*tr));
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(go[1]);
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(126);
        execv(path, argv);
        _exit(127);
    }
    close(go[0]);
    /* Seized before exec, so every thread it starts is traced from birth. */
    long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
    cr_assert_eq(ptrace(PTRACE_SEIZE, pid, 0, (void *)opts), 0, "PTRACE_SEIZE: %s",
                 strerror(errno));
    tr->pid = pid;
    thread_of(tr, pid, true);
    cr_assert_eq(write(go[1], "x", 1), 1);
    close(go[1]);
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        cr_assert_gt(tid, 0);
        bool exec_stop = WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC;
        handle_status(tr, tid, status);
        cr_assert(!tr->gone, "%s did not start", path);
        if (exec_stop)
            break;
    }
}

static void tracer_start(struct tracer *tr, const char *path, const char *seconds)
{
    char *const argv[] = {(char *)path, (char *)seconds, NULL};
    tracer_start_argv(tr, argv);
}

/* Lets the target run for SECONDS, answering its ptrace stops. */
static void tracer_run(struct tracer *tr, double seconds)
{
    double end = now_s() + seconds;
    while (!tr->gone) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid > 0) {
            handle_status(tr, tid, status);
            continue;
        }
        if (now_s() >= end)
            break;
        usleep(100);
    }
}

/* Stops every thread and captures its stack. */
static void tracer_interrupt(struct tracer *tr)
{
    for (int i = 0; i < tr->count; i++) {
        struct traced_thread *t = &tr->threads[i];
        t->captured = false;
        t->pending = ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0;
    }
    for (;;) {
        bool waiting = false;
        for (int i = 0; i < tr->count; i++)
            waiting |= tr->threads[i].pending;
        if (!waiting || tr->gone)
            break;
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        cr_assert_gt(tid, 0, "waitpid: %s", strerror(errno));
        handle_status(tr, tid, status);
    }
}

static void tracer_resume(struct tracer *tr)
{
    for (int i = 0; i < tr->count; i++) {
        if (tr->threads[i].stopped)
            ptrace(PTRACE_CONT, tr->threads[i].tid, 0, 0);
        tr->threads[i].stopped = false;
    }
}

/* Kills the target and reaps every thread.  The first captured snapshot
 * is handed over to KEEP (when not NULL); the others are freed. */
static void tracer_kill(struct tracer *tr, struct stack_snapshot *keep)
{
    if (keep) {
        memset(keep, 0, sizeof(*keep));
        for (int i = 0; i < tr->count && !keep->data; i++) {
            if (tr->threads[i].captured) {
                *keep = tr->threads[i].snap;
                tr->threads[i].snap.data = NULL;
            }
        }
        cr_assert_not_null(keep->data, "no captured snapshot to keep");
    }
    kill(tr->pid, SIGKILL);
    while (!tr->gone) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        if (tid < 0)
            break;
        handle_status(tr, tid, status);
    }
    while (waitpid(-1, NULL, __WALL) > 0)
        ;
    for (int i = 0; i < tr->count; i++)
        stack_snapshot_free(&tr->threads[i].snap);
    tr->count = 0;
}

/* --- symbols ------------------------------------------------------------- */

struct symbols {
    char exe[PATH_MAX];
    struct elf_symtab tab;
    uint64_t exe_base;
    struct map_list maps;
};

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void symbols_load(struct symbols *y, pid_t pid, const char *path)
{
    memset(y, 0, sizeof(*y));
    cr_assert_not_null(realpath(path, y->exe), "%s: %s", path, strerror(errno));
    cr_assert_eq(elf_symtab_load(y->exe, &y->tab), 0);
    cr_assert_eq(maps_read(pid, &y->maps), 0);
    bool found = false;
    for (size_t i = 0; i < y->maps.count && !found; i++) {
        const struct map_entry *e = &y->maps.entries[i];
        if (e->offset == 0 && strcmp(e->path, y->exe) == 0)
            y->exe_base = e->start, found = true;
    }
    cr_assert(found, "%s not in the maps of %d", y->exe, (int)pid);
}

static void symbols_free(struct symbols *y)
{
    elf_symtab_free(&y->tab);
    maps_clear(&y->maps);
}

static const struct map_entry *mapping_of(const struct symbols *y, uint64_t addr)
{
    for (size_t i = 0; i < y->maps.count; i++)
        if (addr >= y->maps.entries[i].start && addr < y->maps.entries[i].end)
            return &y->maps.entries[i];
    return NULL;
}

/* The workload function containing ADDR, or NULL. */
static const char *name_at(const struct symbols *y, uint64_t addr)
{
    const struct map_entry *e = mapping_of(y, addr);
    if (!e || strcmp(e->path, y->exe) != 0)
        return NULL;
    const struct elf_symbol *s = elf_symtab_lookup(&y->tab, addr - y->exe_base + y->tab.load_vaddr);
    return s ? s->name : NULL;
}

/* Frame I's function: callers' entries are return addresses, so the call
 * instruction is just before them. */
static const char *frame_name(const struct symbols *y, const uint64_t *pcs, int i)
{
    return name_at(y, i == 0 ? pcs[0] : pcs[i] - 1);
}

static bool frame_is(const struct symbols *y, const uint64_t *pcs, int i, const char *name)
{
    const char *n = frame_name(y, pcs, i);
    return n && strcmp(n, name) == 0;
}

static bool in_libc(const struct symbols *y, uint64_t addr)
{
    const struct map_entry *e = mapping_of(y, addr);
    if (!e || !(e->perms & MAP_PERM_EXEC))
        return false;
    const char *base = strrchr(e->path, '/');
    return base && (has_prefix(base + 1, "libc.so") || has_prefix(base + 1, "libc-"));
}

static bool in_code(const struct symbols *y, uint64_t addr)
{
    const struct map_entry *e = mapping_of(y, addr);
    return e && (e->perms & MAP_PERM_EXEC);
}

/* First frame at or after FROM that is main or the worker's start. */
static int find_root(const struct symbols *y, const uint64_t *pcs, int depth, int from)
{
    for (int i = from; i < depth; i++)
        if (frame_is(y, pcs, i, "main") || frame_is(y, pcs, i, "worker_main"))
            return i;
    return -1;
}

static void describe(const struct symbols *y, const uint64_t *pcs, int depth, char *out,
                     size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < depth && used + 1 < size; i++) {
        const char *n = frame_name(y, pcs, i);
        int w = n ? snprintf(out + used, size - used, "%s%s", i ? " <- " : "", n)
                  : snprintf(out + used, size - used, "%s%#llx%s", i ? " <- " : "",
                             (unsigned long long)pcs[i], in_libc(y, pcs[i]) ? "(libc)" : "");
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* --- the sampling run ---------------------------------------------------- */

struct tally {
    int hot, hot_ok, via_a, via_b;
    int sort, sort_ok;
    int handler, handler_ok;
    /* the first stack that failed each check, for the assertion message */
    char bad_hot[1024], bad_sort[1024], bad_handler[1024];
};

static void note_bad(const struct symbols *y, char *example, const uint64_t *pcs, int depth)
{
    if (!example[0])
        describe(y, pcs, depth, example, 1024);
}

/* hot <- via_a|via_b <- ... <- main|worker_main */
static void check_hot(const struct symbols *y, struct tally *t, const uint64_t *pcs, int depth)
{
    t->hot++;
    bool a = depth > 1 && frame_is(y, pcs, 1, "via_a");
    bool b = depth > 1 && frame_is(y, pcs, 1, "via_b");
    if ((a || b) && find_root(y, pcs, depth, 2) >= 0) {
        t->hot_ok++;
        t->via_a += a;
        t->via_b += b;
    } else {
        note_bad(y, t->bad_hot, pcs, depth);
    }
}

/* [weigh <-] compare_weighted <- libc (qsort) ... <- sort_pass <- ... <- main */
static void check_sort(const struct symbols *y, struct tally *t, const uint64_t *pcs, int depth)
{
    t->sort++;
    int k = frame_is(y, pcs, 0, "compare_weighted") ? 0 : 1;
    bool ok = k + 1 < depth && frame_is(y, pcs, k, "compare_weighted") && in_libc(y, pcs[k + 1]);
    int sorter = -1;
    for (int i = k + 2; ok && i < depth && sorter < 0; i++)
        if (frame_is(y, pcs, i, "sort_pass"))
            sorter = i;
    ok = ok && sorter > 0 && find_root(y, pcs, depth, sorter + 1) >= 0;
    t->sort_ok += ok;
    if (!ok)
        note_bad(y, t->bad_sort, pcs, depth);
}

/* alarm_work <- on_alarm <- libc (signal return) <- interrupted code ... <- main */
static void check_handler(const struct symbols *y, struct tally *t, const uint64_t *pcs, int depth)
{
    t->handler++;
    bool ok = depth > 4 && frame_is(y, pcs, 1, "on_alarm") && in_libc(y, pcs[2]) &&
              in_code(y, pcs[3]) && find_root(y, pcs, depth, 3) >= 0;
    t->handler_ok += ok;
    if (!ok)
        note_bad(y, t->bad_handler, pcs, depth);
}

struct goal {
    int hot, sort, handler;
};

static bool goal_met(const struct tally *t, const struct goal *g)
{
    return t->hot >= g->hot && t->sort >= g->sort && t->handler >= g->handler;
}

/* Samples the workload NAME with MODE until GOAL or TIME_LIMIT seconds.
 * Each round: interrupt all, capture, resume, and only then unwind. */
static void sample(const char *name, enum stack_mode mode, const struct goal *goal,
                   double time_limit, struct tally *t)
{
    memset(t, 0, sizeof(*t));
    char *path = build_workload(name);
    struct tracer tr;
    tracer_start(&tr, path, "60");
    tracer_run(&tr, 0.05); /* past the dynamic loader, worker started */
    struct symbols y;
    symbols_load(&y, tr.pid, path);
    struct dwarf_unwinder *u = mode == STACK_DWARF ? dwarf_unwinder_new(tr.pid) : NULL;
    cr_assert(mode != STACK_DWARF || u != NULL);

    uint64_t pcs[STACK_MAX_DEPTH];
    unsigned seed = 12345;
    double end = now_s() + time_limit;
    while (!goal_met(t, goal) && now_s() < end && !tr.gone) {
        tracer_interrupt(&tr);
        tracer_resume(&tr);
        for (int i = 0; i < tr.count; i++) {
            struct traced_thread *th = &tr.threads[i];
            if (!th->captured || !th->ran)
                continue;
            th->captured = false;
            int depth = mode == STACK_DWARF
                            ? dwarf_unwind(u, th->tid, &th->snap, pcs, STACK_MAX_DEPTH, NULL)
                            : unwind_fp(&th->snap, pcs, STACK_MAX_DEPTH, NULL);
            cr_assert_geq(depth, 1);
            cr_assert_eq(pcs[0], (uint64_t)REGS_PC(th->snap.regs));
            if (frame_is(&y, pcs, 0, "hot"))
                check_hot(&y, t, pcs, depth);
            else if (frame_is(&y, pcs, 0, "weigh") || frame_is(&y, pcs, 0, "compare_weighted"))
                check_sort(&y, t, pcs, depth);
            else if (frame_is(&y, pcs, 0, "alarm_work"))
                check_handler(&y, t, pcs, depth);
        }
        /* 1 to 3 ms apart, never in step with the workload's own rhythm. */
        seed = seed * 1103515245u + 12345u;
        tracer_run(&tr, 0.001 + (double)(seed >> 16 & 0x7ff) / 1e6);
    }
    cr_assert(!tr.gone, "the workload ended early");
    tracer_kill(&tr, NULL);
    dwarf_unwinder_free(u);
    symbols_free(&y);
    free(path);
}

static void assert_hot_stacks(const struct tally *t)
{
    cr_assert_geq(t->hot, 300, "only %d samples in hot", t->hot);
    cr_assert_geq(t->hot_ok * 100, t->hot * 95,
                  "%d of %d samples in hot unwound to via_a/via_b and main; e.g. %s", t->hot_ok,
                  t->hot, t->bad_hot);
    /* Samples a few ms apart are correlated on a loaded 2-CPU machine (a
     * preempted thread is caught twice in one stretch of calls), so the
     * band is wider than 400 independent draws would need; a confused
     * unwinder gives 0 %, 50 % or 100 %, all far outside it. */
    double share_a = (double)t->via_a / (t->via_a + t->via_b);
    cr_assert(share_a > 0.56 && share_a < 0.84,
              "via_a is the caller in %.1f %% of the hot samples, expected about 70 %%",
              share_a * 100);
}

Test(unwind, dwarf_without_frame_pointers_finds_both_callers_of_hot, .timeout = 60)
{
    struct goal g = {.hot = 400};
    struct tally t;
    sample("callers-nofp", STACK_DWARF, &g, 12, &t);
    assert_hot_stacks(&t);
}

Test(unwind, frame_pointers_find_both_callers_of_hot, .timeout = 60)
{
    struct goal g = {.hot = 400};
    struct tally t;
    sample("callers", STACK_FP, &g, 12, &t);
    assert_hot_stacks(&t);
}

Test(unwind, dwarf_goes_through_qsort_and_signal_frames, .timeout = 60)
{
    struct goal g = {.sort = 40, .handler = 40};
    struct tally t;
    sample("callers-nofp", STACK_DWARF, &g, 12, &t);
    cr_assert_geq(t.sort, 40, "only %d samples in the qsort comparator", t.sort);
    cr_assert_geq(t.sort_ok * 100, t.sort * 95,
                  "%d of %d comparator samples unwound through qsort to main; e.g. %s", t.sort_ok,
                  t.sort, t.bad_sort);
    cr_assert_geq(t.handler, 40, "only %d samples in the signal handler", t.handler);
    cr_assert_geq(t.handler_ok * 100, t.handler * 95,
                  "%d of %d handler samples unwound through the signal frame to main; e.g. %s",
                  t.handler_ok, t.handler, t.bad_handler);
}

/* The strongest form of "the snapshot suffices": the process no longer
 * exists when its last sample is unwound. */
Test(unwind, dwarf_unwinds_a_snapshot_after_the_process_is_gone, .timeout = 60)
{
    char *path = build_workload("callers-nofp");
    struct tracer tr;
    tracer_start(&tr, path, "60");
    tracer_run(&tr, 0.05);
    struct symbols y;
    symbols_load(&y, tr.pid, path);
    struct dwarf_unwinder *u = dwarf_unwinder_new(tr.pid);
    cr_assert_not_null(u);
    uint64_t pcs[STACK_MAX_DEPTH];

    /* One unwind while the process lives reports its modules. */
    tracer_interrupt(&tr);
    tracer_resume(&tr);
    cr_assert(tr.threads[0].captured);
    cr_assert_geq(
        dwarf_unwind(u, tr.threads[0].tid, &tr.threads[0].snap, pcs, STACK_MAX_DEPTH, NULL), 1);

    pid_t tid = 0;
    double end = now_s() + 10;
    while (tid == 0 && now_s() < end) {
        tracer_run(&tr, 0.002);
        tracer_interrupt(&tr);
        for (int i = 0; i < tr.count && tid == 0; i++) {
            uint64_t pc = (uint64_t)REGS_PC(tr.threads[i].snap.regs);
            if (tr.threads[i].captured && frame_is(&y, &pc, 0, "hot"))
                tid = tr.threads[i].tid;
        }
        if (tid == 0)
            tracer_resume(&tr);
    }
    cr_assert_neq(tid, 0, "no sample in hot");
    /* Keep only the sample in hot, then kill the process while it is still
     * stopped, so nothing of it runs after the capture. */
    for (int i = 0; i < tr.count; i++)
        if (tr.threads[i].tid != tid)
            tr.threads[i].captured = false;
    struct stack_snapshot snap;
    tracer_kill(&tr, &snap);
    cr_assert_eq(kill(tid, 0), -1, "thread %d still exists", (int)tid);

    struct tally t = {0};
    int depth = dwarf_unwind(u, tid, &snap, pcs, STACK_MAX_DEPTH, NULL);
    check_hot(&y, &t, pcs, depth);
    cr_assert_eq(t.hot_ok, 1, "unwound after exit: %s", t.bad_hot);

    struct stack_snapshot again;
    stack_snapshot_init(&again, 0);
    cr_assert_eq(stack_capture(tid, again.capacity, &again), -1, "capture of a dead thread");
    stack_snapshot_free(&again);
    stack_snapshot_free(&snap);
    dwarf_unwinder_free(u);
    symbols_free(&y);
    free(path);
}

/* An unwinder whose maps change keeps working: libdwfl, given no ELF of
 * the architecture, borrowed the backend of the first module and freed it
 * with that module when the maps were reported again without it, and the
 * next unwind called through the freed memory (a JIT's process, whose maps
 * change all the time, crashed the recorder).  The freed memory is handed
 * out again here, filled with junk, so that a dangling backend crashes. */
Test(unwind, an_unwinder_outlives_the_module_it_took_its_architecture_from, .timeout = 60)
{
    char *program = build_workload("callers-nofp");
    struct stat st_program, st_libc;
    const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
    cr_assert_eq(stat(program, &st_program), 0, "%s", program);
    if (stat(libc, &st_libc) != 0)
        cr_skip_test("no %s", libc);
    struct map_entry maps[] = {
        {0x400000, 0x500000, 0, (uint64_t)st_program.st_ino, 0, 0, MAP_PERM_READ | MAP_PERM_EXEC,
         program},
        {0x7f0000000000, 0x7f0000200000, 0, (uint64_t)st_libc.st_ino, 0, 0,
         MAP_PERM_READ | MAP_PERM_EXEC, (char *)libc},
    };
    struct dwarf_unwinder *u = dwarf_unwinder_new_offline(4242);
    cr_assert_not_null(u);
    struct stack_snapshot snap;
    stack_snapshot_init(&snap, 0);
    memset(&snap.regs, 0, sizeof(snap.regs));
    snap.regs.rsp = snap.sp = 0x7ffc00000000;
    uint64_t pcs[64];

    dwarf_unwinder_set_maps(u, maps, 2);
    snap.regs.rip = 0x401000;
    cr_assert_geq(dwarf_unwind(u, 4242, &snap, pcs, 64, NULL), 1);
    /* The program unmapped: its module goes at the next unwind. */
    dwarf_unwinder_set_maps(u, &maps[1], 1);
    snap.regs.rip = 0x7f0000001000;
    cr_assert_geq(dwarf_unwind(u, 4242, &snap, pcs, 64, NULL), 1);
    enum { SIZES = 512, EACH = 8 };
    static void *junk[SIZES][EACH];
    for (size_t i = 0; i < SIZES; i++)
        for (size_t k = 0; k < EACH; k++) {
            junk[i][k] = malloc(16 * (i + 1));
            memset(junk[i][k], 0x02, 16 * (i + 1));
        }
    int depth = dwarf_unwind(u, 4242, &snap, pcs, 64, NULL);
    cr_expect_geq(depth, 1);
    cr_expect_eq(pcs[0], 0x7f0000001000);
    for (size_t i = 0; i < SIZES; i++)
        for (size_t k = 0; k < EACH; k++)
            free(junk[i][k]);
    stack_snapshot_free(&snap);
    dwarf_unwinder_free(u);
    free(program);
}

/* The copy runs from SP to the end of the stack mapping when that is nearer
 * than the copy size, and holds exactly the process's bytes. */
Test(unwind, capture_copies_the_top_of_the_stack_up_to_its_end, .timeout = 60)
{
    char *path = build_workload("callers-nofp");
    struct tracer tr;
    tracer_start(&tr, path, "60");
    tracer_run(&tr, 0.05);
    tracer_interrupt(&tr);
    struct traced_thread *leader = thread_of(&tr, tr.pid, false);
    cr_assert(leader && leader->stopped);

    struct stack_snapshot s;
    stack_snapshot_init(&s, STACK_COPY_MAX);
    cr_assert_eq(stack_capture(tr.pid, STACK_COPY_MAX, &s), 0);
    struct map_list maps = {0};
    cr_assert_eq(maps_read(tr.pid, &maps), 0);
    const struct map_entry *stack = NULL;
    for (size_t i = 0; i < maps.count; i++)
        if (s.sp >= maps.entries[i].start && s.sp < maps.entries[i].end)
            stack = &maps.entries[i];
    cr_assert_not_null(stack, "SP %#llx is in no mapping", (unsigned long long)s.sp);
    cr_assert_str_eq(stack->path, "[stack]");
    cr_assert_lt(stack->end - s.sp, STACK_COPY_MAX, "the test needs a stack smaller than 1 MiB");
    cr_assert_eq(s.size, stack->end - s.sp, "copied %zu bytes, the stack has %llu above SP", s.size,
                 (unsigned long long)(stack->end - s.sp));

    char mem_path[64];
    snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", (int)tr.pid);
    int fd = open(mem_path, O_RDONLY);
    cr_assert_geq(fd, 0);
    uint8_t *expect = malloc(s.size);
    cr_assert_eq(pread(fd, expect, s.size, (off_t)s.sp), (ssize_t)s.size);
    cr_assert_eq(memcmp(expect, s.data, s.size), 0, "the copy differs from the stack");
    close(fd);

    /* A smaller copy size than the capacity is honoured. */
    cr_assert_eq(stack_capture(tr.pid, 64, &s), 0);
    cr_assert_eq(s.size, 64);

    free(expect);
    maps_clear(&maps);
    stack_snapshot_free(&s);
    tracer_resume(&tr);
    tracer_kill(&tr, NULL);
    free(path);
}

/* The four work functions of shares. */
static bool is_work(const struct symbols *y, const uint64_t *pcs, int i)
{
    const char *n = frame_name(y, pcs, i);
    return n && has_prefix(n, "work_");
}

/*
 * shares (frame pointers) in "clock" mode spends about half its time in
 * libc's clock_gettime and the vDSO's, neither of which links a frame
 * record: the plain walk goes from there straight to run_worker, and
 * stack_repair_fp() must put the work function back in between.
 */
Test(unwind, fp_repair_finds_the_callers_of_frameless_clock_reads, .timeout = 60)
{
    char *path = build_workload("shares");
    char *const argv[] = {path, "1", "20", "clock", NULL};
    struct tracer tr;
    tracer_start_argv(&tr, argv);
    tracer_run(&tr, 0.05);
    struct symbols y;
    symbols_load(&y, tr.pid, path);
    struct dwarf_unwinder *u = dwarf_unwinder_new(tr.pid);
    cr_assert_not_null(u);

    uint64_t chain[STACK_MAX_DEPTH], pcs[STACK_MAX_DEPTH];
    int outside = 0, plain_ok = 0, mended_ok = 0;
    char bad[1024] = "";
    double end = now_s() + 20;
    while (outside < 200 && now_s() < end && !tr.gone) {
        tracer_interrupt(&tr);
        tracer_resume(&tr);
        struct traced_thread *th = &tr.threads[0];
        if (!th->captured)
            continue;
        th->captured = false;
        int depth = unwind_fp(&th->snap, chain, STACK_MAX_DEPTH, NULL);
        if (name_at(&y, chain[0]))
            continue; /* the leaf is the workload's own: nothing to mend */
        outside++;
        bool truncated = false;
        int mended = stack_repair_fp(u, &th->snap, chain, depth, pcs, STACK_MAX_DEPTH, &truncated);
        cr_assert_eq(pcs[0], chain[0], "the leaf changed");
        /* leaf (and libc) <- work_* <- run_worker <- main */
        for (int i = 1; i < depth; i++) {
            if (is_work(&y, chain, i)) {
                plain_ok++;
                break;
            }
        }
        int w = -1;
        for (int i = 1; i < mended && w < 0; i++)
            if (is_work(&y, pcs, i))
                w = i;
        bool ok = w > 0 && w + 2 < mended && frame_is(&y, pcs, w + 1, "run_worker") &&
                  frame_is(&y, pcs, w + 2, "main") && !truncated;
        mended_ok += ok;
        if (!ok && !bad[0])
            describe(&y, pcs, mended, bad, sizeof(bad));
        tracer_run(&tr, 0.001);
    }
    cr_assert(!tr.gone, "the workload ended early");
    tracer_kill(&tr, NULL);
    dwarf_unwinder_free(u);
    symbols_free(&y);
    free(path);
    cr_assert_geq(outside, 100, "only %d samples outside the workload's code", outside);
    cr_assert_leq(plain_ok * 10, outside,
                  "the plain walk already finds the work function in %d of %d samples: the "
                  "workload no longer tests anything",
                  plain_ok, outside);
    cr_assert_geq(mended_ok * 100, outside * 98,
                  "%d of %d mended stacks read leaf <- work_* <- run_worker <- main; e.g. %s",
                  mended_ok, outside, bad);
}

/* --- the frame-pointer walk on made-up stacks ------------------------------ */

#if defined(__x86_64__)
#define SET_FP(r, v) ((r).rbp = (v))
#define SET_PC(r, v) ((r).rip = (v))
#define RECORD_OFFSET 0
#elif defined(__aarch64__)
#define SET_FP(r, v) ((r).regs[29] = (v))
#define SET_PC(r, v) ((r).pc = (v))
#define RECORD_OFFSET 0
#elif defined(__riscv)
#define SET_FP(r, v) ((r).s0 = (v))
#define SET_PC(r, v) ((r).pc = (v))
#define RECORD_OFFSET 16
#endif

/* A fake stack in our own memory: SP at words[0], frame records at the
 * given word indexes, each linking to the next; the last links to LAST_FP. */
struct fake_stack {
    uint64_t words[64];
    struct stack_snapshot s;
};

static uint64_t word_addr(struct fake_stack *f, int i)
{
    return (uint64_t)(uintptr_t)&f->words[i];
}

static void fake_stack_build(struct fake_stack *f, const int *records, int n, uint64_t last_fp,
                             size_t copied_words)
{
    memset(f->words, 0, sizeof(f->words));
    for (int k = 0; k < n; k++) {
        int i = records[k];
        f->words[i] = k + 1 < n ? word_addr(f, records[k + 1]) + RECORD_OFFSET : last_fp;
        f->words[i + 1] = 0x1000 + (uint64_t)k; /* return address into caller k */
    }
    memset(&f->s, 0, sizeof(f->s));
    SET_PC(f->s.regs, 0x42);
    SET_FP(f->s.regs, word_addr(f, records[0]) + RECORD_OFFSET);
    f->s.sp = word_addr(f, 0);
    f->s.data = (uint8_t *)f->words;
    f->s.size = copied_words * 8;
    f->s.capacity = sizeof(f->words);
}

Test(unwind_fp, follows_the_chain_and_stops_at_a_null_frame_pointer)
{
    struct fake_stack f;
    const int records[] = {2, 6, 20, 40};
    fake_stack_build(&f, records, 4, 0, 64);
    uint64_t pcs[16];
    int depth = unwind_fp(&f.s, pcs, 16, NULL);
    cr_assert_eq(depth, 5);
    cr_assert_eq(pcs[0], 0x42);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(pcs[k + 1], 0x1000 + (uint64_t)k);
}

Test(unwind_fp, stops_at_a_frame_pointer_that_does_not_increase)
{
    struct fake_stack f;
    const int records[] = {10, 20, 6, 30};
    fake_stack_build(&f, records, 4, 0, 64);
    uint64_t pcs[16];
    /* The record at 20 points back down to 6: its return address is real,
     * what it links to is not. */
    cr_assert_eq(unwind_fp(&f.s, pcs, 16, NULL), 3);
}

Test(unwind_fp, stops_at_a_misaligned_frame_pointer)
{
    struct fake_stack f;
    const int records[] = {4, 12};
    fake_stack_build(&f, records, 2, word_addr(&f, 30) + RECORD_OFFSET + 3, 64);
    uint64_t pcs[16];
    cr_assert_eq(unwind_fp(&f.s, pcs, 16, NULL), 3);
}

Test(unwind_fp, a_record_above_the_copy_ends_the_walk_and_says_the_stack_was_cut)
{
    struct fake_stack f;
    const int records[] = {2, 6, 20, 40};
    /* Only 16 words were copied: the records at 20 and 40 lie above. */
    fake_stack_build(&f, records, 4, 0, 16);
    uint64_t pcs[16];
    bool cut = false;
    cr_assert_eq(unwind_fp(&f.s, pcs, 16, &cut), 3);
    cr_assert(cut, "a walk that needed the bytes above the copy must say it was cut");
    /* The same copy reaching the top of the stack: the walk simply ended. */
    f.s.complete = true;
    cr_assert_eq(unwind_fp(&f.s, pcs, 16, &cut), 3);
    cr_assert_not(cut, "nothing lies above a complete copy");
    /* A whole copy: nothing cut. */
    fake_stack_build(&f, records, 4, 0, 64);
    cr_assert_eq(unwind_fp(&f.s, pcs, 16, &cut), 5);
    cr_assert_not(cut);
}

Test(unwind_fp, never_writes_more_than_max)
{
    struct fake_stack f;
    const int records[] = {2, 6, 20, 40};
    fake_stack_build(&f, records, 4, 0, 64);
    uint64_t pcs[3] = {0};
    cr_assert_eq(unwind_fp(&f.s, pcs, 2, NULL), 2);
    cr_assert_eq(pcs[2], 0);
    cr_assert_eq(unwind_fp(&f.s, pcs, 0, NULL), 0);
}

Test(stack_mode, names_round_trip_and_unknown_names_are_refused)
{
    enum stack_mode m;
    const enum stack_mode all[] = {STACK_NONE, STACK_FP, STACK_DWARF};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(stack_mode_parse(stack_mode_name(all[i]), &m), 0);
        cr_assert_eq(m, all[i]);
    }
    cr_assert_eq(stack_mode_parse("fp", &m), 0);
    cr_assert_eq(m, STACK_FP);
    cr_assert_eq(stack_mode_parse("lbr", &m), -1);
    cr_assert_eq(stack_mode_parse("", &m), -1);
}
