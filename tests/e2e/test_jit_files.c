/*
 * test_jit_files.c - the JIT files a recorder reads on the target's say
 * (/tmp/perf-PID.map) are the target's own, never what another user
 * planted there: root recording an unprivileged target that links its
 * map to a root-only file or makes it a FIFO, and an unprivileged
 * recording whose map another user wrote.  The target's own map is still
 * read.  Each runs on both engines (engines.h).
 */
#include "../lib/spawn.h"
#include "engines.h"
#include "test_record_common.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOBODY "65534"
#define SETPRIV "--reuid=" NOBODY, "--regid=" NOBODY, "--clear-groups"

/* What "ptprof info PROFILE" prints. */
static char *info_of(const char *profile)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "info", profile, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    char *out = xstrdup(res.out);
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

/* Root records, with ENGINE, a target running as nobody that first runs
 * the shell command PREPARE with $MAP its /tmp/perf-PID.map; returns the
 * profile's path in DIR. */
static char *record_nobody(const char *engine, const char *dir, const char *prepare)
{
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    char *profile = test_path(dir, "profile");
    char *script = xasprintf("MAP=/tmp/perf-$$.map; %s; exec %s 1", prepare, spin);
    char *setpriv = test_need_tool("setpriv");
    const char *argv[] = {ptprof,  "record", "--engine", engine, "-o",   profile, "--",
                          setpriv, SETPRIV,  "sh",       "-c",   script, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    int pid = 0;
    const char *ready = strstr(res.out, "spin: ready, pid ");
    cr_assert(ready && sscanf(ready, "spin: ready, pid %d", &pid) == 1, RUN_CONTEXT(&res));
    char *map = xasprintf("/tmp/perf-%d.map", pid);
    unlink(map);
    free(map);
    spawn_result_free(&res);
    free(setpriv);
    free(script);
    free(spin);
    free(ptprof);
    return profile;
}

static bool file_holds(const char *path, const char *needle)
{
    size_t len = 0;
    char *data = test_read_file(path, &len);
    cr_assert_not_null(data, "%s", path);
    bool found = memmem(data, len, needle, strlen(needle)) != NULL;
    free(data);
    return found;
}

ENGINE_TEST(jit_files, a_targets_link_to_a_root_only_file_is_not_read, .timeout = 120)
{
    char *dir = test_mkdtemp(), *secret = test_path(dir, "secret");
    FILE *f = fopen(secret, "w");
    cr_assert_not_null(f);
    fputs("7f0000001000 100 ROOT_ONLY_SECRET\n", f);
    fclose(f);
    chmod(secret, 0600);
    char *prepare = xasprintf("ln -s %s $MAP", secret);
    char *profile = record_nobody(engine_p->name, dir, prepare);
    cr_expect_not(file_holds(profile, "ROOT_ONLY_SECRET"),
                  "%s engine: a root-only file's contents are in the profile", engine_p->name);
    char *info = info_of(profile);
    cr_expect(strstr(info, "jit refused: /tmp/perf-") && strstr(info, "a symbolic link"),
              "%s engine: info does not say the link was refused:\n%s", engine_p->name, info);
    free(info);
    free(profile);
    free(prepare);
    free(secret);
    test_rmtree(dir);
    free(dir);
}

ENGINE_TEST(jit_files, a_fifo_as_the_map_does_not_hang_the_recorder, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *profile = record_nobody(engine_p->name, dir, "mkfifo $MAP");
    char *info = info_of(profile);
    cr_expect(strstr(info, "not a regular file"),
              "%s engine: info does not say the FIFO was refused:\n%s", engine_p->name, info);
    cr_expect(strstr(info, "status:     complete"), "%s engine:\n%s", engine_p->name, info);
    free(info);
    free(profile);
    test_rmtree(dir);
    free(dir);
}

/* The rules refuse what is not the target's, not what is. */
ENGINE_TEST(jit_files, the_unprivileged_targets_own_map_is_read, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *profile =
        record_nobody(engine_p->name, dir, "echo '7f0000001000 100 TARGETS_OWN_NAME' >$MAP");
    cr_expect(file_holds(profile, "TARGETS_OWN_NAME"),
              "%s engine: the target's own perf map is not in the profile", engine_p->name);
    char *info = info_of(profile);
    cr_expect_null(strstr(info, "jit refused"), "%s engine:\n%s", engine_p->name, info);
    free(info);
    free(profile);
    test_rmtree(dir);
    free(dir);
}

/* The reverse: the recorder is unprivileged, and the map at its target's
 * pid was written by another user (it appeared while the target ran). */
ENGINE_TEST(jit_files, an_unprivileged_recording_ignores_another_users_map, .timeout = 120)
{
    char *dir = test_mkdtemp();
    chmod(dir, 0777);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    char *profile = test_path(dir, "profile"), *setpriv = test_need_tool("setpriv");
    const char *argv[] = {setpriv, SETPRIV, ptprof, "record", "--engine", engine_p->name,
                          "-o",    profile, "--",   spin,     "2",        NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_proc p;
    spawn_start(&o, &p);
    spawn_pump_until(&p, "spin: ready", 20);
    int pid = 0;
    cr_assert(sscanf(strstr(p.out, "spin: ready"), "spin: ready, pid %d", &pid) == 1);
    char *map = xasprintf("/tmp/perf-%d.map", pid);
    FILE *f = fopen(map, "w");
    cr_assert_not_null(f, "%s", map);
    fputs("7f0000001000 100 ANOTHER_USERS_NAME\n", f);
    fclose(f);
    cr_assert_eq(chown(map, 4242, 4242), 0);
    struct spawn_result res;
    spawn_finish(&p, &res);
    unlink(map);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_expect_not(file_holds(profile, "ANOTHER_USERS_NAME"),
                  "%s engine: another user's perf map is in the profile", engine_p->name);
    char *info = info_of(profile);
    cr_expect(strstr(info, "owned by uid 4242"), "%s engine:\n%s", engine_p->name, info);
    free(info);
    spawn_result_free(&res);
    free(map);
    free(setpriv);
    free(profile);
    free(spin);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}
