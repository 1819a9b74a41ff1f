/*
 * record_meta.h - the META records every recording starts with, whichever
 * engine takes the samples (docs/format.md: command, host, kernel,
 * start_time, frequency, stacks, stack_size, pid, ptprof_version,
 * attached; engine and engine_reason, engine.h).
 */
#ifndef PTPROF_RECORD_RECORD_META_H
#define PTPROF_RECORD_RECORD_META_H

#include <sys/types.h>

#include "record/engine.h"
#include "record/output.h"

struct record_options;

/* STACK_SIZE: the copy the engine starts each thread with (META
 * stack_size). */
void record_meta_write(struct output *out, const struct record_options *opts, pid_t first_pid,
                       const struct engine_choice *engine, size_t stack_size);

#endif
