/* record_native.c - see record_native.h. */
#include "record_native.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/load.h"

void record_native(struct recording *r, const char *const *args, int expect_exit, double timeout_s)
{
    record_native_engine(r, NULL, args, expect_exit, timeout_s);
}

void record_native_engine(struct recording *r, const char *engine, const char *const *args,
                          int expect_exit, double timeout_s)
{
    memset(r, 0, sizeof(*r));
    profile_init(&r->prof);
    r->dir = test_mkdtemp();
    if (asprintf(&r->path, "%s/profile.data", r->dir) < 0)
        cr_assert_fail("out of memory");

    const char *argv[REC_ARGS_MAX + 7];
    char *ptprof = build_ptprof();
    size_t n = 0;
    argv[n++] = ptprof;
    argv[n++] = "record";
    argv[n++] = "-o";
    argv[n++] = r->path;
    if (engine) {
        argv[n++] = "--engine";
        argv[n++] = engine;
    }
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(i, (size_t)REC_ARGS_MAX, "too many record arguments");
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    struct spawn_opts opts = {.argv = argv, .timeout_s = timeout_s};
    spawn_run(&opts, &r->run);
    free(ptprof);
    cr_assert_eq(spawn_exit_code(r->run.status), expect_exit,
                 "ptprof record (engine %s) exit %d, expected %d\n" REC_FMT,
                 engine ? engine : "default", spawn_exit_code(r->run.status), expect_exit,
                 REC_ARGS(&r->run));
    recording_load(r, r->path);
}

void recording_load(struct recording *r, const char *path)
{
    cr_assert(test_file_exists(path), "no profile at %s", path);
    cr_assert_eq(profile_load(path, &r->prof), 0, "profile_load(%s) failed (see stderr)", path);
    r->loaded = true;
}

void recording_free(struct recording *r)
{
    if (r->loaded)
        profile_free(&r->prof);
    spawn_result_free(&r->run);
    test_rmtree(r->dir);
    free(r->dir);
    free(r->path);
    memset(r, 0, sizeof(*r));
}

long long parse_after(const char *text, const char *prefix)
{
    const char *at = text ? strstr(text, prefix) : NULL;
    cr_assert(at, "'%s' not found in:\n%.2000s", prefix, text ? text : "");
    char *end;
    long long v = strtoll(at + strlen(prefix), &end, 10);
    cr_assert_neq(end, at + strlen(prefix), "no number after '%s' in:\n%.2000s", prefix, text);
    return v;
}

bool proc_state(pid_t pid, char *state, long *tracer_pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    char *text = test_read_file(path, NULL);
    if (!text)
        return false;
    const char *s = strstr(text, "\nState:");
    const char *t = strstr(text, "\nTracerPid:");
    bool ok = s && t;
    if (ok) {
        s += strlen("\nState:");
        while (*s == ' ' || *s == '\t')
            s++;
        *state = *s;
        *tracer_pid = strtol(t + strlen("\nTracerPid:"), NULL, 10);
    }
    free(text);
    return ok;
}
