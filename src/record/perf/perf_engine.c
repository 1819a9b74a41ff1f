/*
 * perf_engine.c - the perf engine (engine.h, docs/recording.md): the
 * kernel samples every thread's CPU time, the profiler never stops
 * anybody.
 *
 * The program is started the way `perf record` starts one: a fork that
 * waits on a pipe while its events are opened (enabled on exec), then
 * exec; the profiler is its real parent (exit status from waitpid), and
 * the program runs without ptrace.  One thread does everything in a poll()
 * loop over a signalfd, the tick clock (tick_clock.h, tick_rate() below)
 * and the ring buffers (woken when one is half full).  At every tick it
 * looks at every thread for whether and where it is blocked (offcpu.h),
 * reads the measurement source, takes the records the kernel wrote up to
 * that moment (in time order across CPUs), and writes their entries: a
 * CPU sample at its own time (stack unwound at once), a wait from the
 * thread's context switch records (begun when it left its CPU to block,
 * ended when it came back, named by the looks), and a SAMPLE at the
 * tick's time with the measurement.  Each entry stands for the thread's
 * wall time since its previous one (end_run(), end_wait()).  While no
 * thread starts a wait for a while and nothing is measured, the ticks
 * slow down (relax_ticks()): the waits keep their times, only a short one
 * between two ticks is named by guess.  What both engines share (output,
 * measurement source, signals, ticks, the -d summary's common lines) is
 * in recording.h.
 */
#include "pmu/pmu.h"
#include "record/engine.h"
#include "record/interp/interp.h"
#include "record/perf/group_witness.h"
#include "record/jit_maps.h"
#include "record/launch.h"
#include "record/output.h"
#include "record/perf/perf_events.h"
#include "record/offcpu.h"
#include "unwind/perf_regs.h"
#include "record/perf/perf_threads.h"
#include "record/process.h"
#include "record/profiler_signals.h"
#include "record/recorder.h"
#include "record/recording.h"
#include "unwind/regs.h"
#include "record/tick_clock.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Records newer than this when a tick takes them wait for the next one:
 * another CPU may still be writing an older one. */
#define HOLDBACK_NS (100 * 1000ULL)

/* An interpreter's frames are read at the tick after their sample, while
 * the thread runs on; a sample read more than this many full-rate tick
 * periods after it (the profiler fell behind, on a loaded machine) keeps
 * its native frames only: by then the call it sampled may have returned
 * and another taken its frame's address, which the check against the
 * sample cannot tell (docs/python.md).  Ticks come up to 1.25 periods
 * apart (their spread). */
#define INTERP_MAX_AGE_PERIODS 2.5
/* How long the witness may take to report a signal the group received. */
#define SIGNAL_ECHO_NS (100 * 1000 * 1000ULL)

/* Threads that exited lately, to know a late sample of one. */
#define EXITED_KEPT 64
struct exited_thread {
    pid_t tid;
    uint64_t time; /* monotonic */
};

/* What a process needs beyond process.h, by the same index. */
struct perf_proc {
    bool exec_pending; /* COMM exec seen, its program's first mapping not yet */
    uint64_t exec_time;
    char *exe;
    uint64_t cpu_samples; /* its threads' */
};

/* The record at the head of a ring, parsed: it stays in place in the ring
 * until it is processed. */
struct ring_head {
    bool ready;
    struct perf_record r;
};

/* A thread entry not written yet, with its counter deltas and its time:
 * it stands for the thread's wall time since its previous entry. */
struct entry {
    struct prof_thread_sample s;
    uint64_t counters[PERF_COUNTERS_MAX];
    uint64_t at; /* monotonic */
};

struct engine {
    struct recording rec; /* the output, the measurement source, signals, the ticks */
    const struct record_options *opts;
    struct perf_event_set ev;
    struct perf_threads threads;
    struct process_table procs;
    struct perf_proc *extra;
    size_t extra_cap;
    int pidfd;
    struct group_witness witness;
    struct launch_hold launch;

    pid_t first_pid;
    bool first_exited;
    int first_status;
    bool target_stopped;
    bool sampling, finished, stop_requested;
    int finish_rc; /* output_finish()'s */
    struct profsig_job job;
    int64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC */

    struct ring_head *heads; /* one per ring */

    struct entry *entries;
    size_t nentries, entries_cap;
    struct prof_thread_sample *batch;
    size_t batch_cap;
    uint64_t *counter_values; /* the batch's, thread by thread */
    size_t counter_values_cap;
    struct stack_snapshot offcpu_snap;
    uint64_t pcs[STACK_MAX_DEPTH];
    struct interp_stack interp; /* a thread's interpreter frames, read at the tick */

    uint64_t last_tick;     /* monotonic */
    uint64_t written_until; /* monotonic: the last SAMPLE written was at this time */
    uint64_t quiet_ticks;   /* in a row, finding no new wait */
    uint64_t relaxed_ticks; /* ticks taken at the relaxed rate */
    uint64_t cpu_samples, lost, throttled, ticks, threads_seen;
    uint64_t children_ended, children_status_known; /* processes other than the first */
    uint64_t children_samples;                      /* the CPU samples of those that ended */
    uint64_t waits, waits_seen;                     /* ended; named by a look during them */
    struct exited_thread exited[EXITED_KEPT];
    size_t exited_next;
    uint64_t late_samples;                       /* of threads already gone: dropped */
    uint64_t sample_bytes, unwind_ns, truncated; /* CPU samples' records, their stacks */
    uint64_t counter_totals[PERF_COUNTERS_MAX];
};

static uint64_t to_realtime(const struct engine *e, uint64_t mono)
{
    return (uint64_t)((int64_t)mono + e->realtime_offset);
}

static struct perf_proc *extra_of(struct engine *e, size_t proc)
{
    if (proc >= e->extra_cap) {
        size_t old = e->extra_cap;
        e->extra = xgrow(e->extra, &e->extra_cap, proc + 1, sizeof(*e->extra));
        memset(&e->extra[old], 0, (e->extra_cap - old) * sizeof(*e->extra));
    }
    return &e->extra[proc];
}

static void set_exe(struct engine *e, size_t proc, const char *exe)
{
    struct perf_proc *x = extra_of(e, proc);
    free(x->exe);
    x->exe = xstrdup(exe);
}

/* --- processes, threads, maps -------------------------------------------- */

static struct perf_thread *add_thread(struct engine *e, size_t proc, pid_t tid, uint64_t mono,
                                      const char *name)
{
    pid_t pid = e->procs.procs[proc].pid;
    struct perf_thread *th = perf_threads_find(&e->threads, tid);
    if (th)
        return th;
    th = perf_threads_add(&e->threads, pid, tid, proc);
    snprintf(th->name, sizeof(th->name), "%s", name ? name : "");
    if (!name)
        proc_thread_name(pid, tid, th->name, sizeof(th->name));
    output_thread(e->rec.out, (uint32_t)pid, (uint32_t)tid, to_realtime(e, mono), th->name);
    e->threads_seen++;
    return th;
}

/* The EXEC record of a process comes before its new maps; its path is the
 * first file mapped after the exec (the kernel maps the program before its
 * interpreter), or what /proc says when no mapping came. */
static void write_pending_exec(struct engine *e, size_t proc, const char *first_file)
{
    struct perf_proc *x = extra_of(e, proc);
    if (!x->exec_pending)
        return;
    struct process *p = &e->procs.procs[proc];
    char exe[4096] = "";
    if (first_file && first_file[0] == '/')
        snprintf(exe, sizeof(exe), "%s", first_file);
    else
        proc_exe(p->pid, exe, sizeof(exe));
    output_exec(e->rec.out, (uint32_t)p->pid, to_realtime(e, x->exec_time), exe);
    set_exe(e, proc, exe);
    x->exec_pending = false;
}

static uint32_t perms_of(const struct perf_mmap *m)
{
    uint32_t perms = 0;
    if (!m->mmap2)
        return MAP_PERM_READ | MAP_PERM_EXEC;
    perms |= (m->prot & 1) ? MAP_PERM_READ : 0;    /* PROT_READ */
    perms |= (m->prot & 2) ? MAP_PERM_WRITE : 0;   /* PROT_WRITE */
    perms |= (m->prot & 4) ? MAP_PERM_EXEC : 0;    /* PROT_EXEC */
    perms |= (m->flags & 1) ? MAP_PERM_SHARED : 0; /* MAP_SHARED */
    return perms;
}

static void on_mmap(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    const struct perf_mmap *m = &r->u.mmap;
    struct process *p = process_find(&e->procs, (pid_t)m->pid);
    if (!p || !m->filename)
        return;
    size_t proc = (size_t)(p - e->procs.procs);
    bool anonymous = strncmp(m->filename, "//anon", 6) == 0;
    write_pending_exec(e, proc, anonymous ? NULL : m->filename);
    struct map_entry me = {
        .start = m->addr,
        .end = m->addr + m->len,
        .offset = m->pgoff,
        .inode = anonymous ? 0 : m->ino,
        .dev_major = m->maj,
        .dev_minor = m->min,
        .perms = perms_of(m),
        .path = (char *)(anonymous ? "" : m->filename),
    };
    if (me.end < me.start)
        return;
    maps_replace(&p->maps, &me);
    p->maps_version++;
    process_report_map(p, &me, e->rec.out, to_realtime(e, r->time));
    if (strcmp(m->filename, "[vdso]") == 0 && !p->vdso_captured)
        p->vdso_captured = process_capture_image(p, me.start, me.end, "[vdso]", e->rec.out);
    if (p->unwinder)
        dwarf_unwinder_maps_changed(p->unwinder);
}

static void flush_entries(struct engine *e, uint64_t until, bool at_until);
static void end_wait(struct engine *e, struct perf_thread *th, uint64_t time);

static void on_comm(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    const struct perf_comm *c = &r->u.comm;
    struct perf_thread *th = perf_threads_find(&e->threads, (pid_t)c->tid);
    if (th && c->comm)
        snprintf(th->name, sizeof(th->name), "%s", c->comm);
    if (!c->exec)
        return;
    struct process *p = process_find(&e->procs, (pid_t)c->pid);
    if (!p)
        return;
    /* Entries taken before the exec are written now, while the maps they
     * need are still the process's maps. */
    if (e->nentries)
        flush_entries(e, r->time - 1, false);
    size_t proc = (size_t)(p - e->procs.procs);
    process_exec(p);
    struct perf_proc *x = extra_of(e, proc);
    x->exec_pending = true;
    x->exec_time = r->time;
    /* The other threads died in the exec. */
    for (size_t i = e->threads.count; i-- > 0;) {
        struct perf_thread *other = e->threads.all[i];
        if (other->pid == p->pid && other->tid != p->pid) {
            output_thread_exit(e->rec.out, (uint32_t)other->tid, to_realtime(e, r->time));
            perf_threads_remove(&e->threads, other->tid);
        }
    }
}

static void on_fork(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    const struct perf_task *t = &r->u.task;
    struct perf_thread *creator = perf_threads_find(&e->threads, (pid_t)t->ptid);
    const char *name = creator ? creator->name : NULL;
    char name_copy[sizeof(creator->name)] = "";
    if (name)
        snprintf(name_copy, sizeof(name_copy), "%s", name);
    if (t->pid == t->ppid) { /* a thread */
        struct process *p = process_find(&e->procs, (pid_t)t->pid);
        if (p)
            add_thread(e, (size_t)(p - e->procs.procs), (pid_t)t->tid, r->time, name_copy);
        return;
    }
    struct process *parent = process_find(&e->procs, (pid_t)t->ppid);
    if (!parent || !e->opts->inherit)
        return; /* --no-inherit: the first process only */
    size_t parent_idx = (size_t)(parent - e->procs.procs);
    size_t idx = process_add(&e->procs, (pid_t)t->pid, (pid_t)t->ppid);
    parent = &e->procs.procs[parent_idx];
    struct process *child = &e->procs.procs[idx];
    uint64_t rt = to_realtime(e, r->time);
    output_process(e->rec.out, t->pid, t->ppid, rt);
    /* The child runs its parent's program in a copy of its address space,
     * which no MMAP record will describe. */
    const char *exe = extra_of(e, parent_idx)->exe;
    char exe_copy[4096] = "";
    if (exe)
        snprintf(exe_copy, sizeof(exe_copy), "%s", exe);
    output_exec(e->rec.out, t->pid, rt, exe_copy);
    set_exe(e, idx, exe_copy);
    for (size_t i = 0; i < parent->maps.count; i++) {
        maps_replace(&child->maps, &parent->maps.entries[i]);
        process_report_map(child, &parent->maps.entries[i], e->rec.out, rt);
    }
    add_thread(e, idx, (pid_t)t->tid, r->time, name ? name_copy : NULL);
}

static size_t live_threads_of(const struct engine *e, pid_t pid)
{
    size_t n = 0;
    for (size_t i = 0; i < e->threads.count; i++)
        n += e->threads.all[i]->pid == pid;
    return n;
}

/* Did thread TID exit at TIME or later (a sample taken at TIME is one of
 * its own, processed after its EXIT record)? */
static bool exited_after(const struct engine *e, pid_t tid, uint64_t time)
{
    for (size_t i = 0; i < EXITED_KEPT; i++)
        if (e->exited[i].tid == tid && e->exited[i].time >= time)
            return true;
    return false;
}

static void on_exit_record(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    const struct perf_task *t = &r->u.task;
    struct perf_thread *th = perf_threads_find(&e->threads, (pid_t)t->tid);
    if (!th)
        return;
    pid_t pid = th->pid;
    /* A wait it ended in is over.  Ended running, its last entry is its
     * last CPU sample: the time since (less than a period: the end of what
     * it did last, and its exit) reads in no sample (docs/recording.md). */
    if (th->off)
        end_wait(e, th, r->time);
    output_thread_exit(e->rec.out, t->tid, to_realtime(e, r->time));
    perf_threads_remove(&e->threads, (pid_t)t->tid);
    e->exited[e->exited_next++ % EXITED_KEPT] = (struct exited_thread){(pid_t)t->tid, r->time};
    /* A process other than the first ends with its last thread.  It is
     * not our child: its status is known only while it is a zombie its
     * parent has not reaped yet (docs/recording.md). */
    struct process *p = process_find(&e->procs, pid);
    if (p && pid != e->first_pid && live_threads_of(e, pid) == 0) {
        /* Its JIT's names outlive it until the pid is reused: now. */
        jit_maps_capture(e->rec.out, (uint32_t)pid, &p->maps, &p->owner);
        p->exited = true;
        int status;
        e->children_ended++;
        e->children_samples += extra_of(e, (size_t)(p - e->procs.procs))->cpu_samples;
        if (proc_zombie_status(pid, &status)) {
            output_exit(e->rec.out, (uint32_t)pid, to_realtime(e, r->time), status);
            e->children_status_known++;
        }
    }
}

/* --- CPU samples ---------------------------------------------------------- */

static struct entry *new_entry(struct engine *e, uint64_t at)
{
    e->entries = xgrow(e->entries, &e->entries_cap, e->nentries + 1, sizeof(*e->entries));
    struct entry *en = &e->entries[e->nentries++];
    memset(en, 0, sizeof(*en));
    en->at = at;
    return en;
}

/* Where the thread was in its own code: the sampled IP, or, for a sample
 * taken in the kernel, the user PC it entered the kernel from (its user
 * registers), to which the ptrace engine charges kernel time too. */
static uint64_t user_pc(const struct perf_sample *s)
{
    struct user_regs_struct regs;
    if (s->regs_abi != 0 && s->regs && perf_regs_to_user(s->regs, PERF_REGS_USER_MASK, &regs))
        return (uint64_t)REGS_PC(regs);
    return s->ip;
}

/* The user call chain of -g fp, without the kernel's context markers. */
static int callchain_pcs(const struct perf_sample *s, uint64_t *pcs, int max)
{
    int depth = 0;
    for (uint64_t i = 0; i < s->callchain_nr && depth < max; i++) {
        uint64_t pc = perf_u64(s->callchain, (size_t)i);
        if (pc >= (uint64_t)PERF_CONTEXT_MAX)
            continue;
        pcs[depth++] = pc;
    }
    if (depth == 0)
        pcs[depth++] = user_pc(s);
    return depth;
}

/* The sample's registers and stack copy as a snapshot (pointing into the
 * record: the unwinders only read it), and the process's unwinder; false
 * when the sample has neither. */
static bool sample_snapshot(struct process *p, const struct perf_sample *s,
                            struct stack_snapshot *snap)
{
    if (!perf_sample_snapshot(s, PERF_REGS_USER_MASK, snap))
        return false;
    if (!p->unwinder)
        p->unwinder = dwarf_unwinder_new(p->pid);
    return p->unwinder != NULL;
}

/* -g fp: the kernel's chain, mended through frameless innermost frames by
 * their CFI from the sample's registers and stack copy. */
static int mended_callchain(struct engine *e, struct process *p, const struct perf_sample *s)
{
    uint64_t chain[STACK_MAX_DEPTH];
    int depth = callchain_pcs(s, chain, STACK_MAX_DEPTH);
    struct stack_snapshot snap;
    if (!sample_snapshot(p, s, &snap)) {
        memcpy(e->pcs, chain, (size_t)depth * sizeof(*chain));
        return depth;
    }
    return stack_repair_fp(p->unwinder, &snap, chain, depth, e->pcs, STACK_MAX_DEPTH, NULL);
}

/* -g dwarf: the sample's copy unwound by CFI; *CUT when it ran off the end
 * of a copy that did not reach the top of the stack. */
static int unwound_pcs(struct engine *e, struct process *p, const struct perf_sample *s, bool *cut)
{
    struct stack_snapshot snap;
    *cut = false;
    if (!sample_snapshot(p, s, &snap)) {
        e->pcs[0] = user_pc(s);
        return 1;
    }
    int depth = dwarf_unwind(p->unwinder, (pid_t)s->tid, &snap, e->pcs, STACK_MAX_DEPTH, cut);
    *cut = *cut || depth >= STACK_MAX_DEPTH; /* deeper than the frames kept */
    if (depth <= 0) {
        e->pcs[0] = user_pc(s);
        depth = 1;
    }
    return depth;
}

/*
 * What the sample read (the group's values: task-clock first, then -e's)
 * as increases since the thread's previous sample.  A thread has an
 * inherited event per CPU, counting only while it runs there, and a sample
 * reads the event of the CPU it was taken on: the increase of value K is
 * its value less what the same CPU's event said at the thread's previous
 * sample there (0 before: each event starts at the thread's birth).
 * Returns false when the sample read nothing usable.
 */
static bool read_increases(struct engine *e, struct perf_thread *th, const struct perf_sample *s,
                           uint64_t *inc)
{
    size_t n = 1 + e->ev.counters.n;
    int slot = perf_events_cpu_slot(&e->ev, s->cpu);
    if (!s->read.entries || s->read.nr < n || slot < 0)
        return false;
    if (!th->last_read)
        th->last_read = xcalloc(e->ev.ncpus * n, sizeof(*th->last_read));
    uint64_t *last = th->last_read + (size_t)slot * n;
    for (size_t k = 0; k < n; k++) {
        uint64_t v = perf_read_value(&s->read, k, NULL);
        inc[k] = v >= last[k] ? v - last[k] : 0;
        last[k] = v;
    }
    return true;
}

/* The thread's CPU time (its task-clock, exact, kernel time included even
 * where kernel mode is not sampled) and the counters' increases, from what
 * the sample read; the sum of its periods where the kernel reads nothing
 * with a sample (before Linux 6.12). */
static void take_reads(struct engine *e, struct perf_thread *th, const struct perf_sample *s,
                       struct entry *en)
{
    uint64_t inc[1 + PERF_COUNTERS_MAX];
    if (!e->ev.read_cpu || !read_increases(e, th, s, inc)) {
        th->cpu_ns += s->period;
        return;
    }
    th->cpu_ns += inc[0];
    for (size_t k = 0; k < e->ev.counters.n; k++) {
        en->counters[k] = inc[1 + k];
        e->counter_totals[k] += inc[1 + k];
    }
}

static void on_sample(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    const struct perf_sample *s = &r->u.sample;
    struct perf_thread *th = perf_threads_find(&e->threads, (pid_t)s->tid);
    if (!th) {
        /* A sample of a thread already gone (its EXIT record came first
         * from another CPU's ring): adopted, it would count the thread's
         * CPU time again. */
        if (exited_after(e, (pid_t)s->tid, r->time)) {
            e->late_samples++;
            return;
        }
        /* Its FORK record was lost (a full ring), or it predates the
         * events (attached): adopt it if its process is ours. */
        struct process *p = process_find(&e->procs, (pid_t)s->pid);
        if (!p)
            return;
        th = add_thread(e, (size_t)(p - e->procs.procs), (pid_t)s->tid, r->time, NULL);
    }
    struct process *p = &e->procs.procs[th->proc];
    write_pending_exec(e, th->proc, NULL);
    /* It runs: a wait it was taken to be in is over (a switch record
     * lost, or, without them, a wait seen only by the looks). */
    if (th->off)
        end_wait(e, th, r->time);
    th->spell_sampled = true;
    e->cpu_samples++;
    extra_of(e, th->proc)->cpu_samples++;
    struct entry *en = new_entry(e, r->time);
    take_reads(e, th, s, en);
    th->sample_time = r->time;
    th->blocked = false;
    int depth;
    bool cut = false;
    uint64_t unwind_start = monotonic_ns();
    e->sample_bytes += r->size;
    if (e->opts->stack_mode == STACK_FP) {
        depth = mended_callchain(e, p, s);
    } else if (e->opts->stack_mode == STACK_DWARF) {
        depth = unwound_pcs(e, p, s, &cut);
    } else {
        e->pcs[0] = user_pc(s);
        depth = 1;
    }
    if (e->rec.interp) {
        /* Read now, after the sample: kept only if the sample shows them. */
        struct stack_snapshot at_sample = {0};
        perf_sample_snapshot(s, PERF_REGS_USER_MASK, &at_sample);
        uint64_t now = monotonic_ns();
        struct interp_when when = {
            .sample = &at_sample,
            .age_ns = now > r->time ? now - r->time : 0,
            .max_age_ns = (uint64_t)(INTERP_MAX_AGE_PERIODS * (double)e->rec.clock.period)};
        if (interp_read(e->rec.interp, p, (pid_t)s->tid, &when, &e->interp))
            depth = interp_merge(e->rec.interp, p, &e->interp, e->pcs, depth, STACK_MAX_DEPTH);
    }
    e->unwind_ns += monotonic_ns() - unwind_start;
    e->truncated += cut;
    en->s = (struct prof_thread_sample){
        .pid = (uint32_t)th->pid,
        .tid = (uint32_t)th->tid,
        .pc = e->pcs[0],
        .cpu_ns = th->cpu_ns,
        .stack = e->opts->stack_mode == STACK_NONE
                     ? 0
                     : output_stack(e->rec.out, e->pcs, (uint32_t)depth),
        .syscall = -1,
        .flags = cut && e->opts->stack_mode != STACK_NONE ? PROF_THREAD_STACK_TRUNCATED : 0,
    };
    th->last_pc = en->s.pc;
    th->last_stack = en->s.stack;
    th->last_flags = en->s.flags;
}

static void on_context_switch(void *ctx, const struct perf_record *r);

static void count_lost(void *ctx, uint64_t count)
{
    ((struct engine *)ctx)->lost += count;
}

static void count_throttle(void *ctx)
{
    ((struct engine *)ctx)->throttled++;
}

static const struct perf_record_visitor engine_visitor = {
    .sample = on_sample,
    .mmap = on_mmap,
    .comm = on_comm,
    .fork = on_fork,
    .exit = on_exit_record,
    .lost = count_lost,
    .throttle = count_throttle,
    .context_switch = on_context_switch,
};

/* --- the rings, merged in time order -------------------------------------- */

/* The time of the record at the head of ring I (0 for one without a time:
 * processed at once), parsed once; false when the ring holds none. */
static bool ring_head_time(struct engine *e, size_t i, uint64_t *time)
{
    struct ring_head *h = &e->heads[i];
    while (!h->ready) {
        size_t size;
        const char *why;
        const uint8_t *rec = perf_ring_peek(&e->ev.rings[i], &size);
        if (!rec)
            return false;
        if (perf_record_parse(&e->ev.layout, rec, size, &h->r, &why) != 0)
            h->ready = true;
        else /* the kernel wrote it: cannot happen, but never trust it */
            perf_ring_skip(&e->ev.rings[i]);
    }
    *time = h->r.has_time ? h->r.time : 0;
    return true;
}

/* Process, in time order across the rings, every record the kernel wrote
 * that is older than HORIZON (monotonic); the rest waits in the rings for
 * the next call.  Each ring is in time order (its CPU wrote it), so this
 * merges the rings' heads, and reads every record where the kernel wrote
 * it: DWARF samples are 33 KiB each, and copying them out cost a fifth of
 * the profiler's time. */
static void drain(struct engine *e, uint64_t horizon)
{
    if (!e->heads)
        e->heads = xcalloc(e->ev.ncpus, sizeof(*e->heads));
    for (;;) {
        size_t first = SIZE_MAX;
        uint64_t first_time = 0, time;
        for (size_t i = 0; i < e->ev.ncpus; i++)
            if (ring_head_time(e, i, &time) && time <= horizon &&
                (first == SIZE_MAX || time < first_time)) {
                first = i;
                first_time = time;
            }
        if (first == SIZE_MAX)
            break;
        perf_record_visit(&e->heads[first].r, &engine_visitor, e);
        e->heads[first].ready = false;
        perf_ring_skip(&e->ev.rings[first]);
    }
    for (size_t i = 0; i < e->ev.ncpus; i++)
        perf_ring_release(&e->ev.rings[i]);
}

/* --- each thread's wall time: where it runs, where it waits ------------- */

/* An entry for TH at TIME at PC, STACK, in SYSCALL (-1: none). */
static void add_entry(struct engine *e, struct perf_thread *th, uint64_t time, uint64_t pc,
                      uint32_t stack, int syscall, uint32_t flags)
{
    struct entry *en = new_entry(e, time);
    en->s = (struct prof_thread_sample){
        .pid = (uint32_t)th->pid,
        .tid = (uint32_t)th->tid,
        .pc = pc,
        .cpu_ns = th->cpu_ns,
        .stack = stack,
        .syscall = prof_syscall(syscall),
        .flags = (uint16_t)flags,
    };
}

/* A spell out of a wait that used less CPU than this (a wake-up to take
 * a byte and wait again) ran on from where it waited; one that also lasted
 * less has no entry of its own: the wait after it takes its time, and the
 * profile has one entry less. */
#define BLINK_NS (50 * 1000ULL)

/* TH leaves its CPU at TIME for a wait: an entry stands for the time it
 * ran since its last CPU sample, there.  A spell no sample fell in ran
 * where the last sample was, or, if it barely used the CPU (by the context
 * switch records: the rest of the spell it waited for one), on from the
 * wait it came out of. */
static void end_run(struct engine *e, struct perf_thread *th, uint64_t time)
{
    if (!th->spell_sampled && time - th->on_since < BLINK_NS)
        return;
    uint64_t cpu = th->spell_cpu + (th->on_cpu_since ? time - th->on_cpu_since : 0);
    if (!th->spell_sampled && e->ev.switches && cpu < BLINK_NS && th->came_pc)
        add_entry(e, th, time, th->came_pc, th->came_stack, -1, 0);
    else if (th->sample_time)
        add_entry(e, th, time, th->last_pc, th->last_stack, -1, th->last_flags);
}

static void begin_wait(struct engine *e, struct perf_thread *th, uint64_t time)
{
    end_run(e, th, time);
    /* The run before it computed (a sample fell in it, or by the context
     * switch records it used the CPU beyond a wake-up), or it did not. */
    uint64_t cpu = th->spell_cpu + (th->on_cpu_since ? time - th->on_cpu_since : 0);
    bool computed = th->spell_sampled || (e->ev.switches && cpu >= BLINK_NS);
    th->wait_key = (struct perf_run_key){th->came_pc, th->came_stack, computed};
    th->off = true;
    th->off_since = time;
}

static bool same_key(const struct perf_run_key *a, const struct perf_run_key *b)
{
    return a->pc == b->pc && a->stack == b->stack && a->computed == b->computed;
}

/* The wait seen to follow a run like TH's last one (NULL: none yet). */
static struct perf_wait_follow *follow_of(struct perf_thread *th)
{
    for (size_t i = 0; i < PERF_THREAD_FOLLOWS; i++)
        if (th->follows[i].wait.time && same_key(&th->follows[i].key, &th->wait_key))
            return &th->follows[i];
    return NULL;
}

/* The look that names TH's wait FROM..TO: the newest that found it in
 * that wait (the wait is then remembered as the one that follows such a
 * run).  A wait no look saw (it began and ended between two looks) is
 * taken for the wait that followed the same run before (a program's waits
 * come in the same order round after round); failing that, for the wait
 * the next look found the thread in (the next of a run of short waits,
 * most likely the same call), else for the last one seen before; NULL
 * when there is none. */
static const struct perf_look *wait_look(struct perf_thread *th, uint64_t from, uint64_t to,
                                         bool *seen)
{
    const struct perf_look *l = th->looks;
    struct perf_wait_follow *follow = follow_of(th);
    *seen = true;
    for (size_t i = 0; i < PERF_THREAD_LOOKS; i++)
        if (l[i].blocked && l[i].time >= from && l[i].time < to) {
            if (!follow) {
                follow = &th->follows[th->follows_next++ % PERF_THREAD_FOLLOWS];
                follow->key = th->wait_key;
            }
            follow->wait = l[i];
            return &l[i];
        }
    *seen = false;
    if (follow)
        return &follow->wait;
    for (size_t i = PERF_THREAD_LOOKS; i-- > 0;)
        if (l[i].time >= to && l[i].time) {
            if (l[i].blocked)
                return &l[i];
            break;
        }
    for (size_t i = 0; i < PERF_THREAD_LOOKS; i++)
        if (l[i].blocked && l[i].time && l[i].time < from)
            return &l[i];
    return NULL;
}

/* TH's wait is over at TIME (it is back on a CPU, or the recording ends):
 * an entry there, where it waited, stands for the rest of the wait. */
static void end_wait(struct engine *e, struct perf_thread *th, uint64_t time)
{
    bool seen;
    const struct perf_look *l = wait_look(th, th->off_since, time, &seen);
    e->waits++;
    e->waits_seen += seen;
    if (l)
        add_entry(e, th, time, l->pc, l->stack, l->syscall, l->flags);
    th->came_pc = l ? l->pc : 0;
    th->came_stack = l ? l->stack : 0;
    th->off = false;
    th->on_since = time;
    th->spell_sampled = false;
    th->spell_cpu = 0;
    th->on_cpu_since = time;
}

/* A thread comes on a CPU, or leaves it: for a wait (it blocked), or
 * preempted (still runnable: running time, as the ptrace engine counts
 * it, and as the program's own clock of a call counts it). */
static void on_context_switch(void *ctx, const struct perf_record *r)
{
    struct engine *e = ctx;
    struct perf_thread *th = perf_threads_find(&e->threads, (pid_t)r->tid);
    if (!th || !r->has_time)
        return;
    th->last_switch = r->time;
    if (!(r->misc & PERF_REC_MISC_SWITCH_OUT)) {
        if (th->off)
            end_wait(e, th, r->time);
        th->on_cpu_since = r->time;
        return;
    }
    if (th->on_cpu_since && r->time > th->on_cpu_since)
        th->spell_cpu += r->time - th->on_cpu_since;
    th->on_cpu_since = 0;
    if (!(r->misc & PERF_REC_MISC_SWITCH_OUT_PREEMPT) && !th->off)
        begin_wait(e, th, r->time);
}

/*
 * Where every thread is at the tick at NOW (monotonic): blocked, in which
 * call and with which stack (copied once per wait), or not.  The look does
 * not disturb the thread (offcpu.h); it names the waits the context switch
 * records place in time.  Returns how many waits began since the last
 * look.
 */
static size_t look_off_cpu(struct engine *e, uint64_t now)
{
    size_t new_waits = 0;
    for (size_t i = 0; i < e->threads.count; i++) {
        struct perf_thread *th = e->threads.all[i];
        struct offcpu_look look = offcpu_look(&th->syscall_fd, th->pid, th->tid);
        memmove(&th->looks[1], &th->looks[0], (PERF_THREAD_LOOKS - 1) * sizeof(th->looks[0]));
        struct perf_look *mark = &th->looks[0];
        *mark = (struct perf_look){.time = now, .syscall = -1};
        mark->blocked = look.state == OFFCPU_IN_SYSCALL || look.state == OFFCPU_BLOCKED;
        if (!mark->blocked) {
            th->blocked = false;
            continue;
        }
        bool same = th->blocked && th->syscall_raw == look.syscall && th->sp == look.sp &&
                    th->pc == look.pc;
        if (!same) {
            struct process *p = &e->procs.procs[th->proc];
            int depth = 1;
            e->pcs[0] = look.pc;
            if (e->opts->stack_mode != STACK_NONE) {
                if (!p->unwinder)
                    p->unwinder = dwarf_unwinder_new(p->pid);
                depth = offcpu_stack(th->pid, th->tid, &th->syscall_fd, &look, &e->offcpu_snap,
                                     p->unwinder, e->pcs, STACK_MAX_DEPTH);
                if (interp_read(e->rec.interp, p, th->tid, &(struct interp_when){0}, &e->interp))
                    depth =
                        interp_merge(e->rec.interp, p, &e->interp, e->pcs, depth, STACK_MAX_DEPTH);
            }
            th->blocked_stack = e->opts->stack_mode == STACK_NONE
                                    ? 0
                                    : output_stack(e->rec.out, e->pcs, (uint32_t)depth);
            new_waits++;
            th->blocked = true;
            th->syscall_raw = look.syscall;
            /* A call a stop signal restarted reads as restart_syscall. */
            th->syscall =
                syscall_origin_name(&th->origin, look.syscall, look.pc, look.sp, th->pid, th->tid);
            th->sp = look.sp;
            th->pc = look.pc;
        }
        mark->pc = th->pc;
        mark->syscall = th->syscall;
        mark->stack = th->blocked_stack;
        mark->flags = th->syscall >= 0 ? PROF_THREAD_IN_SYSCALL : 0;
        if (look.state == OFFCPU_BLOCKED && offcpu_stopped(th->pid, th->tid))
            mark->flags |= PROF_THREAD_STOPPED;
    }
    return new_waits;
}

/*
 * After the records up to UNTIL are processed, at a tick: a thread in a
 * wait seen by a look gets an entry there (a long wait is in the profile
 * at every tick, not only when it ends).  Without context switch records
 * the looks are all there is: a thread found blocked begins its wait at
 * the look, one found running ends it there (the ptrace engine's
 * precision).
 */
static void mark_waits(struct engine *e, uint64_t until, uint64_t look_time)
{
    for (size_t i = 0; i < e->threads.count; i++) {
        struct perf_thread *th = e->threads.all[i];
        const struct perf_look *now = &th->looks[0];
        if (!e->ev.switches && now->time == look_time) {
            if (now->blocked && !th->off)
                begin_wait(e, th, look_time);
            else if (!now->blocked && th->off)
                end_wait(e, th, look_time);
            continue;
        }
        /* Blocked at two looks in a row with no switch record since the
         * first: it waited before the events were on it (attached), or
         * its records were lost.  Its wait is known from the first look. */
        const struct perf_look *before = &th->looks[1];
        if (!th->off && now->blocked && before->blocked && before->time &&
            th->last_switch < before->time && th->sample_time < before->time)
            begin_wait(e, th, until);
        if (!th->off || th->off_since >= until)
            continue;
        for (size_t k = 0; k < PERF_THREAD_LOOKS; k++) {
            const struct perf_look *l = &th->looks[k];
            if (l->blocked && l->time >= th->off_since && l->time <= until) {
                add_entry(e, th, until, l->pc, l->stack, l->syscall, l->flags);
                break;
            }
        }
    }
}

/* Every entry gathered, in time order (after the last SAMPLE written:
 * SAMPLE times always advance; no later than UNTIL unless that would go
 * back), one SAMPLE per time, each with its counters' increases (0 for an
 * entry of a wait: what a thread counted while blocked goes to its next CPU
 * sample).  With AT_UNTIL a SAMPLE at UNTIL is written even with no entry:
 * a tick's, with the measurement read at it. */
/* The reading a SAMPLE at TIME (monotonic) carries: with a source, the
 * reading whose interval holds TIME (docs/pmu.md, "The join"). */
static const double *reading_at(const struct engine *e, uint64_t time)
{
    const double *v = e->rec.pmu ? reading_join_values_at(&e->rec.join, time) : NULL;
    return v ? v : e->rec.pmu_values;
}

static void flush_entries(struct engine *e, uint64_t until, bool at_until)
{
    size_t ncounters = e->ev.counters.n;
    /* The first time allowed: none before the recording's start either. */
    uint64_t floor = e->written_until + 1;
    if (floor < e->rec.start_mono)
        floor = e->rec.start_mono;
    for (size_t i = 0; i < e->nentries; i++) {
        struct entry *en = &e->entries[i];
        if (en->at > until)
            en->at = until;
        if (en->at < floor)
            en->at = floor;
        floor = en->at; /* the next may share its SAMPLE, not go before */
    }
    if (until < floor)
        until = floor;
    for (size_t i = 0; (i < e->nentries || at_until) && e->sampling;) {
        uint64_t time = i < e->nentries ? e->entries[i].at : until;
        size_t j = i;
        while (j < e->nentries && e->entries[j].at == time)
            j++;
        size_t m = j > i ? j - i : 1;
        e->batch = xgrow(e->batch, &e->batch_cap, m, sizeof(*e->batch));
        if (ncounters)
            e->counter_values =
                xgrow(e->counter_values, &e->counter_values_cap, m * ncounters, sizeof(uint64_t));
        for (size_t k = i; k < j; k++) {
            e->batch[k - i] = e->entries[k].s;
            for (size_t c = 0; c < ncounters; c++)
                e->counter_values[(k - i) * ncounters + c] = e->entries[k].counters[c];
        }
        if (output_sample_values(e->rec.out, to_realtime(e, time), reading_at(e, time), e->batch,
                                 (uint32_t)(j - i), ncounters ? e->counter_values : NULL) != 0) {
            /* The writer said which file and why, once (recording.h: exit 74). */
            if (e->sampling)
                pt_debug("the profile cannot be written: sampling stops");
            e->sampling = false;
        }
        e->written_until = time;
        if (j >= e->nentries && (!at_until || time == until))
            break;
        i = j;
    }
    e->nentries = 0;
    if (e->rec.pmu)
        reading_join_forget_before(&e->rec.join, e->written_until);
}

/*
 * The loop's rate.  The kernel takes the CPU samples at the requested rate
 * whatever it is; the ticks look at the threads off CPU and read the
 * measurement source.  A measurement is read at the requested rate, and
 * a value at an instant (a file) at TICK_MAX_HZ at least: a CPU sample
 * takes the power of the reading nearest it, half a reading interval away
 * at most, so readings as sparse as the samples give a function at 100 Hz
 * its neighbours' power ten times as often as at 1 kHz (docs/pmu.md, "The
 * join": -2 instead of -11 points for a 9 W function among 3 W and 1 W
 * ones).  Without a measurement the ticks go no faster than TICK_MAX_HZ: each
 * wakes the profiler and takes a CPU from the program: four busy threads
 * on two CPUs ran +49% slower at 10 kHz with a tick per period, against
 * +18% for perf record, and as fast as under perf with 1 kHz ticks
 * (docs/recording.md).  The context switch records place the waits
 * whatever the rate; blocked threads are looked at every millisecond at
 * most (relax_ticks()).
 */
#define TICK_MAX_HZ 1000.0

static double tick_rate(const struct record_options *opts, const struct pmu_source *pmu)
{
    if (pmu && pmu->timing == PMU_AT_INSTANT && pmu->nchannels)
        return opts->frequency > TICK_MAX_HZ ? opts->frequency : TICK_MAX_HZ;
    if (pmu)
        return opts->frequency;
    return opts->frequency <= TICK_MAX_HZ ? opts->frequency : TICK_MAX_HZ;
}

/*
 * Every thread busy or still in the wait it was in, nothing measured: the
 * ticks have nothing to do but wake the profiler, which takes a CPU from
 * the program (four busy threads on two CPUs ran +4.8% slower at 1 kHz
 * ticks, +2.0% at 100 Hz, perf record +1.6%, in one run).  After
 * RELAX_AFTER_NS without a new wait they come at RELAXED_HZ, and back at
 * the full rate at the first tick that finds one.  A wait keeps its
 * time however late it is seen (the context switch records place it);
 * what relaxing costs is the name of a wait that begins and ends between
 * two relaxed ticks, taken for the one seen after the same wait before
 * (wait_look(), docs/recording.md).  Nor do they relax while an
 * interpreter's frames are read: those must be read soon after their
 * sample (INTERP_MAX_AGE_PERIODS).
 */
#define RELAXED_HZ 100.0
#define RELAX_AFTER_NS (50 * 1000 * 1000ULL)

static void relax_ticks(struct engine *e, size_t new_waits)
{
    struct tick_clock *c = &e->rec.clock;
    uint64_t stride = (uint64_t)llround(e->rec.tick_hz / RELAXED_HZ);
    if (new_waits || e->rec.pmu || interp_found(e->rec.interp) || stride < 2) {
        e->quiet_ticks = 0;
        tick_clock_set_stride(c, 1);
        return;
    }
    if (c->stride > 1)
        e->relaxed_ticks++;
    else if (++e->quiet_ticks * c->period >= RELAX_AFTER_NS)
        tick_clock_set_stride(c, stride);
}

static void on_tick(struct engine *e)
{
    uint64_t now = monotonic_ns();
    /* Where the threads wait, first: as close to the tick as can be. */
    size_t new_waits = look_off_cpu(e, now);
    recording_read_pmu(&e->rec);
    drain(e, now - HOLDBACK_NS);
    mark_waits(e, now - HOLDBACK_NS, now);
    relax_ticks(e, new_waits);
    e->last_tick = now;
    flush_entries(e, now, true);
    e->ticks++;
    if (e->rec.deadline && now >= e->rec.deadline)
        e->stop_requested = true;
    recording_tick(&e->rec, now);
}

/* --- the end -------------------------------------------------------------- */

static void print_summary(const struct engine *e, uint64_t task_clock)
{
    double wall = (double)(e->rec.end_mono - e->rec.start_mono) / 1e9;
    double cpu = (double)task_clock / 1e9;
    struct recording_summary common = {
        .samples = e->cpu_samples,
        .ideal = (uint64_t)floor(cpu * e->opts->frequency),
        .samples_note = " (CPU time x frequency)",
        .per_cpu_second = true,
        .threads = e->threads_seen,
    };
    recording_print_summary(&e->rec, &common);
    double per = e->cpu_samples ? (double)e->cpu_samples : 1.0;
    fprintf(stderr, "[debug] cpu time:    %.6f s (task-clock of every thread, %s mode)\n", cpu,
            e->ev.kernel ? "user and kernel" : "user");
    fprintf(stderr,
            "[debug] lost:        %llu samples (ring buffer full), %llu throttled, %llu of "
            "threads already gone\n",
            (unsigned long long)e->lost, (unsigned long long)e->throttled,
            (unsigned long long)e->late_samples);
    fprintf(stderr, "[debug] rings:       %zu KiB per CPU, %.0f bytes per sample record\n",
            e->ev.ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 1024, (double)e->sample_bytes / per);
    fprintf(stderr,
            "[debug] ticks:       %llu (%.2f Hz: off-CPU threads, measurements), %llu relaxed to "
            "%.0f Hz (no new wait)%s\n",
            (unsigned long long)e->ticks, wall > 0 ? (double)e->ticks / wall : 0.0,
            (unsigned long long)e->relaxed_ticks, RELAXED_HZ,
            !e->rec.pmu ? ""
            : e->rec.tick_hz > e->opts->frequency
                ? "; at 1 kHz throughout, above the requested rate: a source is measured"
                : "; at the requested rate throughout: a source is measured");
    fprintf(stderr, "[debug] outside:     unwind %.2f us per sample\n",
            (double)e->unwind_ns / 1e3 / per);
    fprintf(stderr, "[debug] stacks:      %llu cut at the end of their copy\n",
            (unsigned long long)e->truncated);
    fprintf(stderr,
            "[debug] children:    %llu ended, with %llu CPU samples; the exit status of %llu "
            "read before their parent reaped them\n",
            (unsigned long long)e->children_ended, (unsigned long long)e->children_samples,
            (unsigned long long)e->children_status_known);
    fprintf(stderr, "[debug] waits:       %llu ended, %llu named by a look during them (%s)\n",
            (unsigned long long)e->waits, (unsigned long long)e->waits_seen,
            e->ev.switches ? "placed by context switch records"
                           : "no context switch records: placed by the looks");
    for (size_t k = 0; k < e->ev.counters.n; k++)
        fprintf(stderr, "[debug] counter:     %s %llu (in samples, %s mode)\n",
                e->ev.counters.c[k]->name, (unsigned long long)e->counter_totals[k],
                e->ev.kernel ? "user and kernel" : "user");
}

/* Sampling is over: take the last records, write the last SAMPLE and END.
 * The program may run on (Ctrl-C): it is no longer watched. */
static int finish_profile(struct engine *e)
{
    if (e->finished)
        return e->finish_rc;
    e->finished = true;
    e->sampling = false;
    tick_clock_stop(&e->rec.clock);
    e->rec.end_mono = monotonic_ns();
    perf_events_disable(&e->ev);
    recording_read_pmu(&e->rec);
    drain(e, UINT64_MAX);
    /* The waits under way, up to the end. */
    for (size_t i = 0; i < e->threads.count; i++)
        if (e->threads.all[i]->off)
            end_wait(e, e->threads.all[i], e->rec.end_mono);
    flush_entries(e, e->rec.end_mono, true);
    /* The JIT names of every process still known (the first's too). */
    for (size_t i = 0; i < e->procs.count; i++)
        if (!e->procs.procs[i].exited)
            jit_maps_capture(e->rec.out, (uint32_t)e->procs.procs[i].pid, &e->procs.procs[i].maps,
                             &e->procs.procs[i].owner);
    /* Attached, we are not its parent: its status is not ours to know. */
    if (e->first_exited && !e->opts->attach_pid)
        output_exit(e->rec.out, (uint32_t)e->first_pid, to_realtime(e, e->rec.end_mono),
                    e->first_status);
    uint64_t task_clock = perf_events_task_clock(&e->ev);
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)e->lost);
    output_meta(e->rec.out, "lost_samples", buf);
    struct prof_totals totals = {
        .wall_ns = e->rec.end_mono - e->rec.start_mono,
        .latency_ns = 0,
        .samples = e->cpu_samples,
        .ideal_samples = (uint64_t)floor((double)task_clock / 1e9 * e->opts->frequency),
    };
    struct map_list no_pperf_maps = {0}; /* the native format has its MAP records */
    recording_note_pmu(&e->rec);
    recording_interp_meta(&e->rec);
    e->finish_rc = output_finish(e->rec.out, &totals, &no_pperf_maps);
    e->rec.out = NULL;
    if (e->opts->debug)
        print_summary(e, task_clock);
    return e->finish_rc;
}

/* --- the profiler's own signals ------------------------------------------- */

/* Did the program get SIG already, from its process group?  Only if the
 * witness (our group) got it and the program is still in that group. */
static bool program_got(void *ctx, int sig, uint64_t since)
{
    (void)since; /* the witness reports each signal once */
    struct engine *e = ctx;
    return group_witness_saw(&e->witness, sig, SIGNAL_ECHO_NS) &&
           getpgid(e->first_pid) == getpgrp();
}

static bool program_stopped(void *ctx)
{
    return ((struct engine *)ctx)->target_stopped;
}

static bool program_gone(void *ctx)
{
    return ((struct engine *)ctx)->first_exited;
}

static void reap(struct engine *e)
{
    if (e->opts->attach_pid || e->first_exited)
        return;
    for (;;) {
        int status;
        pid_t got = waitpid(e->first_pid, &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (got <= 0)
            return;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            e->first_exited = true;
            e->first_status = status;
            return;
        }
        e->target_stopped = WIFSTOPPED(status);
    }
}

static void read_signals(struct engine *e);

static void pump(void *ctx)
{
    read_signals(ctx);
}

/* The program, as profiler_signals.h handles signals for it. */
static struct profsig_program program_of(struct engine *e)
{
    return (struct profsig_program){.pid = e->first_pid,
                                    .attached = e->opts->attach_pid != 0,
                                    .ctx = e,
                                    .got = program_got,
                                    .job_stopped = program_stopped,
                                    .gone = program_gone,
                                    .pump = pump};
}

static void on_profiler_signal(void *ctx, const struct signalfd_siginfo *si)
{
    struct engine *e = ctx;
    int sig = (int)si->ssi_signo;
    if (recording_on_signal(&e->rec, sig))
        return;
    if (sig == SIGCHLD) {
        reap(e);
        return;
    }
    struct profsig_program program = program_of(e);
    if (profsig_handle(&e->job, &program, sig, monotonic_ns()) == PROFSIG_STOP) {
        if (e->sampling)
            pt_debug("signal %d: sampling stops", sig);
        e->stop_requested = true;
    }
}

static void read_signals(struct engine *e)
{
    profsig_read(e->rec.signal_fd, on_profiler_signal, e);
    reap(e); /* a SIGCHLD merged with another is still a reason to look */
}

/* The terminal stopped the job: stop with the program so the shell sees
 * it; when continued, make sure the program is continued too. */
static void follow_job_stop(struct engine *e)
{
    struct profsig_program program = program_of(e);
    profsig_follow_job_stop(&e->job, &program, e->rec.signal_fd);
}

/* --- start ---------------------------------------------------------------- */

/* Every descriptor we may need: a thread and a CPU each. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void measure_clock_offset(struct engine *e)
{
    uint64_t m1 = monotonic_ns();
    uint64_t rt = realtime_ns();
    uint64_t m2 = monotonic_ns();
    e->realtime_offset = (int64_t)rt - (int64_t)(m1 + (m2 - m1) / 2);
}

/* The META records, and the counters as the profile's value types: each
 * thread sample carries what each counted since the thread's previous
 * sample. */
static void write_header(struct engine *e)
{
    recording_start_output(&e->rec, e->first_pid, perf_events_stack_copy(e->opts));
    output_meta(e->rec.out, "cpu_time", "sampled");
    output_meta(e->rec.out, "sampled_modes", e->ev.kernel ? "user and kernel" : "user");
    const struct perf_counter_list *c = &e->ev.counters;
    if (!c->n)
        return;
    output_meta(e->rec.out, "counters_mode", e->ev.kernel ? "user and kernel" : "user");
    struct prof_value_type types[PERF_COUNTERS_MAX];
    for (size_t k = 0; k < c->n; k++)
        types[k] = (struct prof_value_type){
            .name = (char *)c->c[k]->name, .unit = (char *)c->c[k]->unit, .agg = PROF_VALUE_SUM};
    /* A write error shows at the first sample, which stops sampling. */
    output_value_types(e->rec.out, types, (uint32_t)c->n);
}

static int start_launched(struct engine *e)
{
    int rc = launch_hold(e->opts->argv, &e->rec.original_mask, &e->launch);
    if (rc != 0)
        return rc;
    e->first_pid = e->launch.pid;
    /* Counters the CPU lacks fail here, before the command ever runs. */
    if (perf_events_open_task(&e->ev, e->first_pid, true) != 0) {
        launch_cancel(&e->launch);
        return PT_EXIT_USAGE;
    }
    uint64_t now = monotonic_ns();
    size_t idx = process_add(&e->procs, e->first_pid, 0);
    output_process(e->rec.out, (uint32_t)e->first_pid, 0, to_realtime(e, now));
    char self[4096];
    proc_exe(getpid(), self, sizeof(self));
    set_exe(e, idx, self);
    /* Its name after the exec: the kernel's comm of the program. */
    const char *base = strrchr(e->opts->argv[0], '/');
    char comm[16];
    snprintf(comm, sizeof(comm), "%s", base ? base + 1 : e->opts->argv[0]);
    add_thread(e, idx, e->first_pid, now, comm);
    rc = launch_release(&e->launch);
    if (rc != 0)
        return rc; /* reaped, with the shell's message */
    write_header(e);
    return 0;
}

/* Open every thread of the process, again until a pass finds none new:
 * a thread made by one already opened inherits its events (its FORK
 * record says so), one made by a thread not yet opened does not. */
static int start_attached(struct engine *e)
{
    pid_t pid = e->opts->attach_pid;
    if (process_check_attachable(pid) != 0)
        return PT_EXIT_USAGE;
    e->first_pid = pid;
    e->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    uint64_t now = monotonic_ns();
    size_t idx = process_add(&e->procs, pid, 0);
    uint64_t rt = to_realtime(e, now);
    write_header(e);
    output_process(e->rec.out, (uint32_t)pid, 0, rt);
    char exe[4096];
    proc_exe(pid, exe, sizeof(exe));
    output_exec(e->rec.out, (uint32_t)pid, rt, exe);
    set_exe(e, idx, exe);
    process_refresh_maps(&e->procs.procs[idx], e->rec.out, rt);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    for (int pass = 0; pass < 100; pass++) {
        DIR *dir = opendir(path);
        if (!dir)
            break;
        int added = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
            pid_t tid = (pid_t)atoi(de->d_name);
            if (tid <= 0 || perf_threads_find(&e->threads, tid))
                continue;
            /* Inherited by a thread opened before it was made? */
            drain(e, UINT64_MAX);
            if (perf_threads_find(&e->threads, tid))
                continue;
            if (perf_events_open_task(&e->ev, tid, false) != 0) {
                if (e->threads.count == 0) {
                    closedir(dir);
                    return PT_EXIT_USAGE;
                }
                continue; /* it exited meanwhile */
            }
            add_thread(e, idx, tid, monotonic_ns(), NULL);
            added++;
        }
        closedir(dir);
        if (added == 0)
            break;
    }
    return 0;
}

/* --- the loop ------------------------------------------------------------- */

static bool recording_over(struct engine *e)
{
    if (e->first_exited)
        return true;
    return e->opts->attach_pid && e->finished;
}

static void attached_process_gone(struct engine *e)
{
    struct pollfd p = {.fd = e->pidfd, .events = POLLIN};
    if (e->pidfd >= 0 && poll(&p, 1, 0) == 1) {
        e->first_exited = true;
        e->first_status = 0;
    }
}

static void run_loop(struct engine *e)
{
    size_t nfds = 2 + e->ev.ncpus + 1;
    struct pollfd *fds = xcalloc(nfds, sizeof(*fds));
    fds[0] = (struct pollfd){.fd = e->rec.signal_fd, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = e->rec.clock.fd, .events = POLLIN};
    for (size_t i = 0; i < e->ev.ncpus; i++)
        fds[2 + i] = (struct pollfd){.fd = e->ev.ring_fd[i], .events = POLLIN};
    fds[nfds - 1] = (struct pollfd){.fd = e->pidfd, .events = POLLIN};
    while (!recording_over(e)) {
        int timeout = e->job.stop_pending ? 50 : -1;
        if (poll(fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR)
            break;
        /* Nothing to read at most ticks: no system call for it then. */
        if (fds[0].revents & POLLIN)
            read_signals(e);
        if (e->opts->attach_pid && (fds[nfds - 1].revents & (POLLIN | POLLHUP)))
            attached_process_gone(e);
        if (e->first_exited)
            break;
        if (e->sampling && (fds[1].revents & POLLIN) && tick_clock_due(&e->rec.clock)) {
            on_tick(e);
            tick_clock_next(&e->rec.clock, monotonic_ns());
        }
        bool ring_ready = false;
        for (size_t i = 0; i < e->ev.ncpus; i++)
            ring_ready |= (fds[2 + i].revents & (POLLIN | POLLHUP)) != 0;
        if (e->sampling && ring_ready)
            drain(e, monotonic_ns() - HOLDBACK_NS);
        if (e->stop_requested && !e->finished) {
            finish_profile(e);
            /* The rings are done with: stop polling them. */
            for (size_t i = 0; i < e->ev.ncpus; i++)
                fds[2 + i].fd = -1;
        }
        follow_job_stop(e);
    }
    free(fds);
}

static void free_engine(struct engine *e)
{
    recording_close(&e->rec);
    perf_events_close(&e->ev);
    if (e->pidfd >= 0)
        close(e->pidfd);
    group_witness_stop(&e->witness);
    perf_threads_free(&e->threads);
    process_table_free(&e->procs);
    for (size_t i = 0; i < e->extra_cap; i++)
        free(e->extra[i].exe);
    free(e->extra);
    free(e->heads);
    free(e->entries);
    free(e->batch);
    free(e->counter_values);
    if (e->offcpu_snap.data)
        stack_snapshot_free(&e->offcpu_snap);
}

static int perf_engine_run(const struct record_options *opts, const struct engine_choice *choice)
{
    struct engine e = {.opts = opts, .pidfd = -1};
    perf_threads_init(&e.threads);
    /* Everything that can fail for the user's reasons fails before the
     * program runs. */
    int rc = recording_open(&e.rec, opts, choice);
    if (rc != 0 || perf_events_init(&e.ev, opts) != 0) {
        rc = PT_EXIT_USAGE;
        goto out;
    }
    if (opts->stack_mode != STACK_NONE)
        stack_snapshot_init(&e.offcpu_snap, opts->stack_size);
    raise_fd_limit();
    measure_clock_offset(&e);
    if (!opts->attach_pid && group_witness_start(&e.witness) != 0)
        pt_debug("no signal witness: signals to the profiler are always forwarded");
    if (recording_catch_signals(&e.rec) != 0) {
        rc = PT_EXIT_USAGE;
        goto out;
    }
    rc = opts->attach_pid ? start_attached(&e) : start_launched(&e);
    if (rc != 0)
        goto out;
    e.rec.tick_hz = tick_rate(opts, e.rec.pmu);
    e.rec.join_readings = e.rec.pmu != NULL; /* SAMPLEs carry the reading of their time */
    if (recording_begin(&e.rec) != 0) {
        if (!opts->attach_pid)
            kill(e.first_pid, SIGKILL);
        rc = PT_EXIT_USAGE;
        goto out;
    }
    e.sampling = true;
    run_loop(&e);
    int written = finish_profile(&e);
    /* Interrupted: the program may still be running; it ends on its own
     * (it got the signal) and we end with its status. */
    while (!opts->attach_pid && !e.first_exited) {
        struct pollfd p = {.fd = e.rec.signal_fd, .events = POLLIN};
        poll(&p, 1, e.job.stop_pending ? 50 : -1);
        read_signals(&e);
        follow_job_stop(&e);
    }
    rc = recording_exit_code(&e.rec, e.first_status, written);
out:
    free_engine(&e);
    return rc;
}

const struct record_engine_ops perf_engine_ops = {
    .name = "perf",
    .permitted = perf_events_permitted,
    .run = perf_engine_run,
};
