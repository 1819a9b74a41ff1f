/*
 * record_native.h - run "ptprof record" writing its native format (the
 * default) and load what it wrote, for the end-to-end tests of stacks,
 * processes, attaching, crashes and maps.
 */
#ifndef PTPROF_TESTS_E2E_RECORD_NATIVE_H
#define PTPROF_TESTS_E2E_RECORD_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"
#include "../lib/spawn.h"

#define REC_ARGS_MAX 32

struct recording {
    char *dir;  /* test_mkdtemp() directory, removed by recording_free() */
    char *path; /* the profile: DIR/profile.data */
    struct spawn_result run;
    struct profile prof;
    bool loaded;
};

/* Run "ptprof record -o DIR/profile.data ARGS..." (ARGS NULL-terminated:
 * options, "--", the command) with a hard timeout, and load the profile,
 * failing the test with the run's output when the profiler did not exit
 * with EXPECT_EXIT or the profile does not load. */
void record_native(struct recording *r, const char *const *args, int expect_exit, double timeout_s);
/* The same with "--engine ENGINE" first (engines.h). */
void record_native_engine(struct recording *r, const char *engine, const char *const *args,
                          int expect_exit, double timeout_s);
/* Load PATH into R->prof, failing the test with the loader's message. */
void recording_load(struct recording *r, const char *path);
/* Free everything and remove the directory.  A failed assertion ends the
 * test before this, which leaves the directory behind for inspection. */
void recording_free(struct recording *r);

/* Parse "PREFIX<number>" from TEXT (first occurrence); fails the test when
 * it is missing. */
long long parse_after(const char *text, const char *prefix);

/* A process's /proc/PID/status "State:" letter and "TracerPid:"; false if
 * the process is gone. */
bool proc_state(pid_t pid, char *state, long *tracer_pid);

/* Fail-message context of a run: status, stdout, stderr. */
#define REC_FMT "status: %s\n--- stdout ---\n%.2000s\n--- stderr ---\n%.3000s"
#define REC_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err

#endif
