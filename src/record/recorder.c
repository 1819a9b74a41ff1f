/*
 * recorder.c - record_run() (recorder.h): choose the engine before
 * anything starts (engine.h), and let it record.
 */
#include "record/recorder.h"
#include "record/engine.h"

int record_run(const struct record_options *opts)
{
    struct engine_choice choice;
    int rc = engine_choose(opts, &choice);
    if (rc != 0)
        return rc;
    const struct record_engine_ops *engine =
        choice.engine == ENGINE_PERF ? &perf_engine_ops : &ptrace_engine_ops;
    return engine->run(opts, &choice);
}
