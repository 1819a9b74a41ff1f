/*
 * threads.h - the traced threads of the target and their ptrace state.
 *
 * Contract: a dense array of struct thread plus a tid index, so the
 * sampler walks threads in array order and finds one by tid in O(1) when
 * waitpid() names it.  thread_add() opens /proc/PID/task/TID/schedstat once
 * and keeps it open: the CPU time is re-read with pread() every sample.
 * Pointers into the table are invalidated by thread_add() and
 * thread_remove(); hold indices or tids across those calls.
 */
#ifndef PTPROF_RECORD_THREADS_H
#define PTPROF_RECORD_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct thread {
    pid_t tid;
    pid_t pid;          /* its process */
    size_t proc;        /* index of its process in the tracer's table */
    int schedstat_fd;   /* -1 when it could not be opened */
    bool stopped;       /* in a ptrace-stop: we owe it a resume */
    bool group_stop;    /* stopped by job control: resume with PTRACE_LISTEN */
    bool announced;     /* known from a clone event, first stop not seen yet */
    bool awaited;       /* the sampler interrupted it and waits for the stop */
    bool exiting;       /* past PTRACE_EVENT_EXIT: never interrupt it again */
    int pending_signal; /* to deliver when resumed */
    uint64_t pc;        /* last PC read */
    uint64_t cpu_ns;    /* last CPU time read */
    uint32_t stack;     /* last stack id recorded */
    int syscall;        /* system call it was last seen blocked in, or -1 */
    uint64_t sp;        /* stack pointer at the last capture */
    int syscall_fd;     /* /proc/PID/task/TID/syscall, opened on first need */
    bool reused;        /* this sample reuses the last capture (still blocked) */
    bool late;          /* interrupted but not stopped in time: the stop is pending */
    bool in_vfork;      /* waiting for its vfork child: cannot be interrupted */
    bool sig_fresh;     /* a signal was delivered since the last capture... */
    uint64_t sig_pc;    /* ...interrupting the thread here... */
    uint64_t sig_cpu;   /* ...when its CPU time was this... */
    int sig_number;     /* ...with this signal */
    bool captured_once; /* pc/sp/syscall hold something real */
};

struct thread_table {
    struct thread *threads;
    size_t count, capacity;
    int32_t *index; /* open addressing: slot -> position in threads, -1 empty */
    size_t index_size;
    uint64_t seen; /* threads ever added */
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
 * True when the thread is still blocked in the very system call, at the
 * same PC and SP, that its last capture found it in: it has not run since,
 * so that capture still describes it and waking it to look again would
 * only cost it CPU time.  Reads /proc/PID/task/TID/syscall, which does not
 * disturb the thread.
 */
bool thread_still_blocked(struct thread *th);
/* For a thread that cannot be stopped (a vfork parent, uninterruptible
 * sleep): take its PC, SP and system call from /proc/PID/task/TID/syscall.
 * Returns false when the file says it is not in a system call. */
bool thread_read_blocked(struct thread *th);
/* CPU time in ns from schedstat; returns false when unreadable. */
bool thread_read_cpu(const struct thread *th, uint64_t *cpu_ns);

#endif
