/*
 * output_state.h - what a profile file must repeat to be read alone when
 * the recording goes on into a new file (record --switch-output): the
 * META, the value types, the processes alive with their programs, the
 * threads alive with their names, the maps in place, the captured images
 * (the vdso, a JIT's map), the names of an interpreter's frames (LOCATION
 * records, docs/python.md), and every call stack handed out so far.
 *
 * Contract: the output (output.h) tells the state every event as it
 * writes it (output_state_note_*); output_state_replay() then writes what
 * is still true, in an order a reader accepts (META and value types,
 * then per live process: PROCESS, EXEC, its THREADs, MAPs, IMAGEs,
 * LOCATIONs), to
 * another output through output.h's functions.
 *
 * Running totals: a thread's cumulative CPU time (and its counter values,
 * PROF_VALUE_COUNTER) go into each file counted from the thread's last
 * sample in the previous files (output_state_rebase() on every thread
 * sample written; output_state_new_file() when a file starts), so that a
 * thread's first sample in a file is worth what it used since its
 * previous sample, in whichever file that was: nothing is counted twice
 * or lost, and a thread born in a file counts from its birth as usual.  A process that exited
 * takes its threads, maps and images with it; an unmapped range leaves
 * the maps (trimmed where it covered part of one); an exec drops the maps
 * from before it.  Stacks get ids of the state's own (from 1, 0 is none)
 * that stay valid across files; output_state_stack_pcs() gives their
 * addresses back so each file can write them under its own ids.  Memory
 * follows what is live, plus the distinct stacks seen.
 */
#ifndef PTPROF_RECORD_OUTPUT_STATE_H
#define PTPROF_RECORD_OUTPUT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct output;
struct output_state;

struct output_state *output_state_new(void);
void output_state_free(struct output_state *s);

void output_state_note_meta(struct output_state *s, const char *key, const char *value);
void output_state_note_value_types(struct output_state *s, const struct prof_value_type *types,
                                   uint32_t n);
void output_state_note_process(struct output_state *s, uint32_t pid, uint32_t ppid,
                               uint64_t time_ns);
void output_state_note_exec(struct output_state *s, uint32_t pid, uint64_t time_ns,
                            const char *path);
void output_state_note_exit(struct output_state *s, uint32_t pid);
void output_state_note_thread(struct output_state *s, uint32_t pid, uint32_t tid, uint64_t time_ns,
                              const char *name);
void output_state_note_thread_exit(struct output_state *s, uint32_t tid);
void output_state_note_map(struct output_state *s, const struct prof_map *m);
void output_state_note_unmap(struct output_state *s, uint32_t pid, uint64_t start, uint64_t end);
void output_state_note_image(struct output_state *s, uint32_t pid, uint64_t start, const char *name,
                             const void *data, size_t size);
/* A LOCATION naming an interpreter's frame (copied; kept until its
 * process exits). */
void output_state_note_location(struct output_state *s, const struct prof_location *loc);

/* The state's id of the stack PCS[0..DEPTH) (DEPTH > 0), from 1. */
uint32_t output_state_stack(struct output_state *s, const uint64_t *pcs, uint32_t depth);
/* Its addresses (NULL for an id never handed out). */
const uint64_t *output_state_stack_pcs(const struct output_state *s, uint32_t id, uint32_t *depth);

/* T's cpu_ns (and VALUES' counters, NULL: none) as the current file counts them. */
void output_state_rebase(struct output_state *s, struct prof_thread_sample *t, uint64_t *values);
void output_state_new_file(struct output_state *s);

/* Write what is still true to TO; 0, or -1 when writing failed. */
int output_state_replay(const struct output_state *s, struct output *to);

#endif
