/* engine.c - see engine.h: choosing the engine, before anything starts. */
#include "record/engine.h"
#include "record/interp/interp.h"
#include "record/recorder.h"
#include "util/log.h"

#include <stdio.h>
#include <string.h>

static const char *const engine_names[] = {
    [ENGINE_AUTO] = "auto",
    [ENGINE_PERF] = "perf",
    [ENGINE_PTRACE] = "ptrace",
};

int engine_parse(const char *name, enum record_engine *engine)
{
    for (size_t i = 0; i < sizeof(engine_names) / sizeof(engine_names[0]); i++) {
        if (strcmp(name, engine_names[i]) == 0) {
            *engine = (enum record_engine)i;
            return 0;
        }
    }
    return -1;
}

const char *engine_name(enum record_engine engine)
{
    if ((size_t)engine < sizeof(engine_names) / sizeof(engine_names[0]))
        return engine_names[engine];
    return "?";
}

static int choose(struct engine_choice *c, enum record_engine engine, const char *reason)
{
    c->engine = engine;
    snprintf(c->reason, sizeof(c->reason), "%s", reason);
    return 0;
}

int engine_choose(const struct record_options *opts, struct engine_choice *c)
{
    memset(c, 0, sizeof(*c));
    bool counters = opts->events && *opts->events;
    if (opts->format == OUTPUT_PPERF) {
        if (counters) {
            pt_err("-e: the original raw format (--format pperf) holds no counters");
            return PT_EXIT_USAGE;
        }
        /* The original sampler stopped every thread at each tick. */
        return choose(c, ENGINE_PTRACE, "--format pperf keeps the original sampler's engine");
    }
    if (opts->engine == ENGINE_PTRACE) {
        if (counters) {
            pt_err("-e: counters are read by the perf engine; use --engine auto or perf");
            return PT_EXIT_USAGE;
        }
        return choose(c, ENGINE_PTRACE,
                      opts->engine_from_env ? "PTPROF_ENGINE=ptrace" : "--engine ptrace");
    }
    char why[ENGINE_REASON_MAX], what[64];
    /* The perf engine reads an interpreter's frames after the sample, when
     * the thread has moved on: exact frames need the thread stopped
     * (docs/python.md). */
    if (opts->engine == ENGINE_AUTO && !counters && interp_wanted(opts->stack_mode != STACK_NONE) &&
        interp_target_guess(opts->argv, opts->attach_pid, what, sizeof(what))) {
        snprintf(why, sizeof(why), "%s: its frames are read while each thread is stopped", what);
        return choose(c, ENGINE_PTRACE, why);
    }
    if (perf_engine_ops.permitted(opts, why, sizeof(why))) {
        c->engine = ENGINE_PERF;
        memcpy(c->reason, why, sizeof(why));
        return 0;
    }
    if (opts->engine == ENGINE_PERF || counters) {
        pt_err("%s: %s; use --engine auto to fall back to ptrace%s",
               opts->engine == ENGINE_PERF ? "--engine perf" : "-e", why,
               counters ? " (without -e)" : "");
        return PT_EXIT_USAGE;
    }
    c->engine = ENGINE_PTRACE;
    memcpy(c->reason, why, sizeof(why));
    /* Said as perf says what it falls back to: the user expected perf. */
    pt_warn("--engine auto: %s; recording with the ptrace engine (the program stops at each "
            "sample)",
            why);
    return 0;
}
