/*
 * test_jit_maps.c - the jitdump files a process maps are read on its say
 * only when they are its own (record/jit_maps.h): a jitdump path that is a
 * symbolic link (to a root-only file), a FIFO, or a file of another user
 * is refused, said in the profile's META "jit_refused.PID", and nothing of
 * it lands in the profile; the process's own jitdump is read.  The perf
 * map's refusals are tested end to end in tests/e2e/test_jit_files.c.
 */
#include "record/jit_maps.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER "JITDUMP_CONTENTS_MARKER"

/* The recorder's view of a process (PID) that maps PATH, a jitdump;
 * returns the profile written, as bytes. */
static char *capture(const char *dir, uint32_t pid, const char *path, size_t *len)
{
    char *profile = test_path(dir, "p.data");
    struct output *out = output_open(profile, OUTPUT_NATIVE, NULL);
    cr_assert_not_null(out);
    output_started(out);
    output_process(out, pid, 0, 1);
    struct map_entry e = {.start = 0x7f0000000000, .end = 0x7f0000001000, .path = (char *)path};
    struct map_list maps = {.entries = &e, .count = 1, .capacity = 1};
    jit_maps_capture(out, pid, &maps, NULL);
    struct prof_totals totals = {0};
    cr_assert_eq(output_finish(out, &totals, NULL), 0);
    char *data = test_read_file(profile, len);
    cr_assert_not_null(data);
    unlink(profile);
    free(profile);
    return data;
}

static bool holds(const char *data, size_t len, const char *needle)
{
    return memmem(data, len, needle, strlen(needle)) != NULL;
}

/* A jitdump's bytes: its header ("JiTD", version 1, header size 40) and
 * one code-load record naming MARKER. */
static void write_jitdump(const char *path)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    uint32_t head[10] = {0x4A695444, 1, 40, 62, (uint32_t)getpid(), 0, 0, 0, 0, 0};
    fwrite(head, sizeof(head), 1, f);
    const char name[] = MARKER;
    uint32_t rec[2] = {0, (uint32_t)(16 + 40 + sizeof(name) + 16)}; /* JIT_CODE_LOAD */
    uint64_t ts = 1;
    uint32_t pid_tid[2] = {(uint32_t)getpid(), (uint32_t)getpid()};
    uint64_t load[4] = {0x7f0000100000, 0x7f0000100000, 16, 1}; /* vma, code addr, size, index */
    fwrite(rec, sizeof(rec), 1, f);
    fwrite(&ts, sizeof(ts), 1, f);
    fwrite(pid_tid, sizeof(pid_tid), 1, f);
    fwrite(load, sizeof(load), 1, f);
    fwrite(name, sizeof(name), 1, f);
    static const unsigned char code[16] = {0xc3};
    fwrite(code, sizeof(code), 1, f);
    cr_assert_eq(fclose(f), 0);
}

/* The path a process mapped, jit-PID.dump in DIR. */
static char *dump_path(const char *dir, uint32_t pid)
{
    char name[64];
    snprintf(name, sizeof(name), "jit-%u.dump", (unsigned)pid);
    return test_path(dir, name);
}

Test(jit_maps, a_jitdump_of_the_process_is_read)
{
    char *dir = test_mkdtemp(), *path = dump_path(dir, (uint32_t)getpid());
    write_jitdump(path);
    size_t len;
    char *data = capture(dir, (uint32_t)getpid(), path, &len);
    cr_expect(holds(data, len, MARKER), "the process's own jitdump was not read");
    cr_expect_not(holds(data, len, "jit_refused"), "its own jitdump was refused");
    free(data);
    free(path);
    test_rmtree(dir);
    free(dir);
}

Test(jit_maps, a_jitdump_that_is_a_link_to_a_root_only_file_is_refused)
{
    char *dir = test_mkdtemp(), *secret = test_path(dir, "secret");
    write_jitdump(secret);
    chmod(secret, 0600);
    char *path = dump_path(dir, (uint32_t)getpid());
    cr_assert_eq(symlink(secret, path), 0);
    size_t len;
    char *data = capture(dir, (uint32_t)getpid(), path, &len);
    cr_expect_not(holds(data, len, MARKER), "a linked file's contents are in the profile");
    cr_expect(holds(data, len, "jit_refused.") && holds(data, len, "a symbolic link"),
              "the profile does not say the link was refused");
    free(data);
    free(path);
    free(secret);
    test_rmtree(dir);
    free(dir);
}

Test(jit_maps, a_jitdump_that_is_a_fifo_is_refused_without_hanging, .timeout = 30)
{
    char *dir = test_mkdtemp(), *path = dump_path(dir, (uint32_t)getpid());
    cr_assert_eq(mkfifo(path, 0644), 0);
    size_t len;
    char *data = capture(dir, (uint32_t)getpid(), path, &len);
    cr_expect(holds(data, len, "not a regular file"), "the FIFO's refusal is not said");
    free(data);
    free(path);
    test_rmtree(dir);
    free(dir);
}

Test(jit_maps, another_users_jitdump_is_refused)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give a file to another user");
    char *dir = test_mkdtemp(), *path = dump_path(dir, (uint32_t)getpid());
    write_jitdump(path);
    cr_assert_eq(chown(path, 65534, 65534), 0);
    /* This process runs as root: a file of uid 65534 is not its own. */
    size_t len;
    char *data = capture(dir, (uint32_t)getpid(), path, &len);
    cr_expect_not(holds(data, len, MARKER), "another user's jitdump was read");
    cr_expect(holds(data, len, "owned by uid 65534"), "the refusal does not name the owner");
    free(data);
    free(path);
    test_rmtree(dir);
    free(dir);
}
