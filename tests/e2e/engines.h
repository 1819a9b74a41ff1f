/*
 * engines.h - end-to-end tests that run once per recording engine.
 *
 * ENGINE_TEST(suite, name, options...) declares a Criterion parameterized
 * test run with "perf" and with "ptrace"; its body reads the engine's name
 * from `engine_p->name` and passes it to `ptprof record --engine`.  The
 * name is held by value: Criterion runs each test in a new process, where
 * a pointer into the parent's memory would mean nothing.  Failures name the
 * engine in their message.
 */
#ifndef PTPROF_TESTS_E2E_ENGINES_H
#define PTPROF_TESTS_E2E_ENGINES_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdbool.h>
#include <string.h>

struct engine_param {
    char name[8];
};

#define ENGINE_TEST(suite, name, ...)                                                              \
    ParameterizedTestParameters(suite, name)                                                       \
    {                                                                                              \
        static struct engine_param engines[] = {{"perf"}, {"ptrace"}};                             \
        return cr_make_param_array(struct engine_param, engines, 2);                               \
    }                                                                                              \
    ParameterizedTest(struct engine_param *engine_p, suite, name, .disabled = false, ##__VA_ARGS__)

static inline bool engine_is_perf(const char *engine)
{
    return strcmp(engine, "perf") == 0;
}

#endif
