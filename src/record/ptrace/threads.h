/*
 * threads.h - the traced threads of the target and their ptrace state.
 *
 * Contract: a dense array of struct thread plus a tid index, so the
 * sampler walks threads in array order and finds one by tid in O(1) when
 * waitpid() names it.  thread_add() opens /proc/PID/task/TID/schedstat once
 * and keeps it open: the CPU time is re-read with pread() every sample.
 * Each thread owns the buffer its stack is copied into (allocated at its
 * first capture, freed with it), so a capture stays with its thread when
 * the table moves.  Pointers into the table are invalidated by
 * thread_add() and thread_remove(); hold indices or tids across those
 * calls.  Nothing here uses ptrace: the schedstat and syscall readers work
 * on any thread of a process we may inspect.
 */
#ifndef PTPROF_RECORD_PTRACE_THREADS_H
#define PTPROF_RECORD_PTRACE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/ptrace/spells.h"
#include "record/syscall_origin.h"
#include "record/tid_index.h"

struct stack_snapshot;
struct interp_stack;

/* /proc/PID/task/TID/schedstat: CPU time, and how often the thread was
 * put on a CPU.  A thread whose both numbers did not move has not run.
 * WAIT_NS, the time it waited for a CPU, cuts its intervals (spells.h). */
struct thread_sched {
    uint64_t cpu_ns;
    uint64_t runs;
    uint64_t wait_ns;
};

struct thread {
    pid_t tid;
    pid_t pid;           /* its process */
    size_t proc;         /* index of its process in the tracer's table */
    int schedstat_fd;    /* -1 when it could not be opened */
    bool stopped;        /* in a ptrace-stop: we owe it a resume */
    bool group_stop;     /* stopped by job control: resume with PTRACE_LISTEN */
    bool announced;      /* known from a clone event, first stop not seen yet */
    bool awaited;        /* interrupted, its stop not seen yet (a sample waits for it) */
    uint64_t held_since; /* monotonic ns it was interrupted (or found stopped) */
    bool exiting;        /* past PTRACE_EVENT_EXIT: never interrupt it again */
    int pending_signal;  /* to deliver when resumed */
    uint64_t pc;         /* last PC read */
    uint64_t cpu_ns;     /* last CPU time read */
    uint32_t stack;      /* last stack id recorded */
    int syscall;         /* the call it was last seen blocked in (named), or -1 */
    uint64_t sp;         /* stack pointer at the last capture */
    int syscall_fd;      /* /proc/PID/task/TID/syscall, opened on first need */
    bool reused;         /* this sample reuses the last capture (it has not run since) */
    bool late;           /* interrupted but not stopped in time: the stop is pending */
    bool in_vfork;       /* waiting for its vfork child: cannot be interrupted */
    bool sig_fresh;      /* a signal was delivered since the last capture... */
    uint64_t sig_pc;     /* ...interrupting the thread here... */
    uint64_t sig_cpu;    /* ...when its CPU time was this... */
    int sig_number;      /* ...with this signal */
    bool captured_once;  /* pc/sp/syscall hold something real */

    /* The stop window's copy, and what the sampler knows of it. */
    struct stack_snapshot *snap;  /* its last copy (owned), NULL before the first */
    struct interp_stack *interp;  /* its interpreter frames at that copy (owned), or NULL */
    size_t copy_limit;            /* bytes of stack it copies; grows when cut short */
    uint64_t stack_lo, stack_hi;  /* the mapping holding its stack, as last found */
    bool captured;                /* copied in the current sample */
    bool deferred;                /* ...after that sample was built (it stopped late) */
    bool before_signal;           /* copied before its signal handler ran */
    bool truncated;               /* its last stack ended at the end of the copy */
    int syscall_raw;              /* the number the registers gave, restart_syscall included */
    struct syscall_origin origin; /* names restart_syscall (syscall_origin.h) */
    /* schedstat when its last capture was known to hold: if it still reads
     * the same, the thread has not run since and the capture is reused. */
    bool idle_known;
    struct thread_sched idle_since;
    bool quiet; /* its last look found it had not run since (quiet_threads.h) */
    /* Its schedstat at its last look (or copy); whether that look found it
     * had not run since the look before; whether that look left it out of
     * its round.  A thread left out and still since waits for a CPU: a
     * crowded round need not read it (quiet_threads.h). */
    struct thread_sched looked;
    bool still;
    uint64_t ran_seen_at; /* monotonic ns of the last copy or look that saw it had run */
    bool left_out_at_look;
    bool still_runnable;  /* this round: known runnable without a read */
    bool check_reblocked; /* captured in a call: see whether it re-entered it */
    /* The current capture: CPU time since the previous one, and whether it
     * stopped on a system call's way out (syscall_exits.h). */
    uint64_t cpu_delta;
    bool at_syscall_exit;
    /* Rounds that stop only the threads that ran a period of CPU time
     * (ptrace_engine.c): this round leaves the thread out; no round before
     * next_check (monotonic ns) need look at it; a copy taken after its
     * round was built waits for the next round's sample. */
    bool left_out;
    uint64_t next_check;
    uint64_t copied_at; /* monotonic ns of its last copy */
    uint64_t ran_ns;    /* this round: CPU time since its copy (UINT64_MAX: not read) */
    uint64_t wanted_ns; /* its CPU time and time waiting for a CPU, as last counted */
    bool pending_entry;
    /* Its schedstat as of its last copy or reuse, and when it was read
     * (realtime ns; 0: nothing to cut an interval by); its last entry's
     * mark (spells.h); whether this round's copy is already unwound. */
    struct thread_sched sched;
    uint64_t sched_seen_ns;
    uint64_t resumed_ns; /* realtime ns of its last resume from a ptrace stop */
    uint64_t callers;    /* its last copy's stack above the leaf, hashed (spells.h) */
    struct spell_mark mark;
    bool finished;
};

struct thread_table {
    struct thread *threads;
    size_t count, capacity;
    struct tid_index index; /* tid -> position in threads */
    uint64_t seen;          /* threads ever added */
};

void threads_init(struct thread_table *t);
void threads_destroy(struct thread_table *t);
struct thread *thread_find(struct thread_table *t, pid_t tid);
/* Add TID of process PID (returns the existing entry if present). */
struct thread *thread_add(struct thread_table *t, pid_t pid, pid_t tid);
void thread_remove(struct thread_table *t, pid_t tid);
/* Re-open the schedstat file (after exec replaced the thread). */
void thread_reopen_schedstat(struct thread *th, pid_t pid);
/*
 * /proc/PID/task/TID/syscall, which does not disturb the thread: the call
 * it is blocked in with its SP and PC.  Returns false when the thread is
 * not blocked in a system call ("running", or "-1 SP PC" in user code) or
 * the file cannot be read.
 */
bool thread_read_syscall(struct thread *th, int *nr, uint64_t *sp, uint64_t *pc);
/* For a thread that cannot be stopped (a vfork parent, uninterruptible
 * sleep): take its PC, SP and system call from /proc/PID/task/TID/syscall
 * (into pc, sp, syscall_raw).  Returns false when the file says it is not
 * in a system call. */
bool thread_read_blocked(struct thread *th);
/* On a CPU or ready to run, by /proc/PID/task/TID/syscall ("running"),
 * which does not disturb the thread. */
bool thread_is_runnable(struct thread *th);
/* CPU time in ns from schedstat; returns false when unreadable. */
bool thread_read_cpu(const struct thread *th, uint64_t *cpu_ns);
/* CPU time and run count from schedstat; false when unreadable or when the
 * kernel keeps no scheduler statistics (it then prints zeros). */
bool thread_read_sched(const struct thread *th, struct thread_sched *out);

#endif
