/*
 * engine.h - which sampling engine records a program, and why.
 *
 * Two engines take samples (docs/recording.md):
 *  - perf: the kernel samples every thread's CPU time through
 *    perf_event_open (a task-clock event inherited by every thread and
 *    child) without stopping anybody; the profiler reads the ring buffers.
 *  - ptrace: the profiler stops every thread at each tick
 *    (ptrace_engine.c).
 * Both write the same native profile through output.h, and share what
 * recording.h gathers (the output, the measurement source, the profiler's
 * signals, the tick schedule, the -d summary's common lines).
 *
 * Contract: engine_choose() decides before anything starts.  --engine
 * ptrace, --format pperf and the sampler command take ptrace; --engine
 * perf takes perf or fails (exit 1, one line naming
 * kernel.perf_event_paranoid and the fallback --engine auto); auto takes
 * ptrace for an interpreter whose frames are read (a Python program:
 * record/interp/interp.h, docs/python.md), else
 * perf where perf_event_open on the target is permitted, else ptrace.
 * Counters (-e) need perf.  CHOICE->reason says in words why, for -d,
 * `ptprof info` and the profile's META ("engine", "engine_reason").
 * Each engine provides `permitted` (may it record OPTS here) and `run`
 * (the whole recording, recorder.h's contract: returns the exit code);
 * record_run() (recorder.c) does nothing else than choose and run one.
 */
#ifndef PTPROF_RECORD_ENGINE_H
#define PTPROF_RECORD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

struct record_options;

enum record_engine {
    ENGINE_AUTO,
    ENGINE_PERF,
    ENGINE_PTRACE,
};

#define ENGINE_REASON_MAX 256

struct engine_choice {
    enum record_engine engine; /* ENGINE_PERF or ENGINE_PTRACE */
    char reason[ENGINE_REASON_MAX];
};

struct record_engine_ops {
    const char *name;
    /* False with a reason in WHY when the engine cannot record OPTS here. */
    bool (*permitted)(const struct record_options *opts, char *why, size_t size);
    int (*run)(const struct record_options *opts, const struct engine_choice *choice);
};

extern const struct record_engine_ops perf_engine_ops;   /* perf_engine.c */
extern const struct record_engine_ops ptrace_engine_ops; /* ptrace_engine.c */

/* "auto", "perf" or "ptrace"; -1 for anything else. */
int engine_parse(const char *name, enum record_engine *engine);
const char *engine_name(enum record_engine engine);

/* Returns 0 with *CHOICE filled, or PT_EXIT_USAGE after one line on
 * stderr (nothing has been started). */
int engine_choose(const struct record_options *opts, struct engine_choice *choice);

#endif
