/*
 * process.h - the traced processes and what the profile must know of them.
 *
 * Contract: a process is added when it first appears (the launched command,
 * an attached pid, a fork/vfork/clone child) and kept, with a stable index,
 * until the recording ends.  process_refresh_maps() re-reads
 * /proc/PID/maps, compares it with what the profile already holds, and
 * reports the difference to the output as MAP/UNMAP events (each new
 * file-backed mapping with its ELF build-id, read once per file); it also
 * captures the [vdso] image the first time it sees it after an exec, and
 * keeps in since_exec every executable file mapping seen since the exec
 * (the raw format's map table, which lists a library unloaded before the
 * end too).
 * process_exec() forgets every mapping (the new program starts afresh).
 * process_knows_pc() says whether PC lies in a mapping already reported,
 * so the recorder can refresh on demand when a freshly dlopen'ed library
 * shows up in a sample, before the sample is written; process_knows_code()
 * whether it lies in an executable one, as the PC a thread runs at must: in
 * one that is not, the maps are stale (a JIT's code mapped where the
 * loader's ld.so.cache was, read-only, before it was unmapped).
 */
#ifndef PTPROF_RECORD_PROCESS_H
#define PTPROF_RECORD_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/maps.h"
#include "record/jit_maps.h"
#include "record/output.h"

struct dwarf_unwinder;

struct process {
    pid_t pid;
    pid_t ppid;
    bool exited;
    bool vdso_captured;
    struct map_list maps;            /* as last read, sorted by start */
    struct map_list since_exec;      /* executable file mappings since the last exec */
    struct dwarf_unwinder *unwinder; /* created on first use */
    uint64_t maps_version;           /* bumped whenever maps change */
    struct jit_owner owner;          /* its uids at creation or last exec: whose JIT files */
};

struct process_table {
    struct process *procs;
    size_t count, capacity;
};

struct process *process_find(struct process_table *t, pid_t pid);
/* Returns the index of the new (or existing) process. */
size_t process_add(struct process_table *t, pid_t pid, pid_t ppid);
void process_table_free(struct process_table *t);

/* Returns true when the maps changed. */
bool process_refresh_maps(struct process *p, struct output *out, uint64_t time_ns);
void process_exec(struct process *p);
bool process_knows_pc(const struct process *p, uint64_t pc);
bool process_knows_code(const struct process *p, uint64_t pc);
/* The mapping (as last read) holding ADDR, or NULL. */
const struct map_entry *process_map_at(const struct process *p, uint64_t addr);
/* The stack mapping holding SP: the one holding it, or else the main
 * thread's "[stack]" just above it (that mapping grows down as the stack
 * deepens, past the start read from the maps); NULL if neither. */
const struct map_entry *process_stack_at(const struct process *p, uint64_t sp);

/* Report the mapping E of P as a MAP record at TIME_NS: an executable
 * file mapping with its ELF build-id (read once per file). */
void process_report_map(const struct process *p, const struct map_entry *e, struct output *out,
                        uint64_t time_ns);
/* --pid PID names a process (not one of its threads): 0, or -1 after a
 * message. */
/* 0, or -1 after a message: no such process, a thread's id, or another
 * user's process without the privilege to record it. */
int process_check_attachable(pid_t pid);
/* PID runs as a user other than ours (the kernel wants our real uid to be
 * its real, effective and saved one) and we lack CAP_SYS_PTRACE: WHY says
 * so in words, so that an EPERM is not blamed on a sysctl. */
bool process_of_another_user(pid_t pid, char *why, size_t size);
/* Copy [START, END) of P's memory (at most 1 MiB) into an IMAGE named NAME
 * (the [vdso]); false when it cannot be read. */
bool process_capture_image(struct process *p, uint64_t start, uint64_t end, const char *name,
                           struct output *out);

/* The thread group and parent of TID from /proc/TID/status; -1 if gone. */
int proc_status_ids(pid_t tid, pid_t *tgid, pid_t *ppid);
/* /proc/PID/task/TID/comm into BUF ("" when unreadable). */
void proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t size);
/* /proc/PID/cmdline with spaces between the arguments ("" if unreadable). */
void proc_cmdline(pid_t pid, char *buf, size_t size);
/* readlink /proc/PID/exe into BUF ("" when unreadable). */
void proc_exe(pid_t pid, char *buf, size_t size);
/* Read /proc/PID/stat (TID 0) or /proc/PID/task/TID/stat into BUF and
 * return where its state letter (field 3) is, the fields after it
 * following; NULL when unreadable. */
const char *proc_stat_state(pid_t pid, pid_t tid, char *buf, size_t size);
/* The wait status of process PID while it is a zombie (exited, not yet
 * reaped by its parent): the exit_code of /proc/PID/stat.  False when it
 * is not a zombie, or gone. */
bool proc_zombie_status(pid_t pid, int *status);

#endif
