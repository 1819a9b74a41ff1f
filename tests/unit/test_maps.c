/* test_maps.c - record/maps.h: parsing the kernel's /proc/PID/maps text. */
#include "record/proc_maps.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int parse(const char *text, struct map_list *out)
{
    return maps_parse(text, strlen(text), out);
}

Test(maps, parses_every_field_of_a_file_mapping)
{
    struct map_list m = {0};
    cr_assert_eq(parse("7f3a1c828000-7f3a1c9bd000 r-xp 00028000 fd:01 1312345"
                       "                    /usr/lib/x86_64-linux-gnu/libc.so.6\n",
                       &m),
                 0);
    cr_assert_eq(m.count, 1);
    const struct map_entry *e = &m.entries[0];
    cr_assert_eq(e->start, 0x7f3a1c828000ULL);
    cr_assert_eq(e->end, 0x7f3a1c9bd000ULL);
    cr_assert_eq(e->perms, MAP_PERM_READ | MAP_PERM_EXEC);
    cr_assert_eq(e->offset, 0x28000ULL);
    cr_assert_eq(e->dev_major, 0xfdu);
    cr_assert_eq(e->dev_minor, 1u);
    cr_assert_eq(e->inode, 1312345ULL);
    cr_assert_str_eq(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    maps_clear(&m);
    cr_assert_eq(m.count, 0);
    cr_assert_null(m.entries);
}

Test(maps, parses_a_realistic_process_in_order)
{
    const char *text =
        "5555555d4000-5555555d6000 r--p 00000000 fd:01 1316123      /home/u/My Files/my prog\n"
        "5555555d6000-5555555db000 r-xp 00002000 fd:01 1316123      /home/u/My Files/my prog\n"
        "5555555df000-555555600000 rw-p 00000000 00:00 0            [heap]\n"
        "7ffff7d80000-7ffff7d83000 rw-p 00000000 00:00 0 \n"
        "7ffff7e00000-7ffff7e10000 rw-s 00000000 00:05 4242         /dev/shm/ring (deleted)\n"
        "7ffff7fbd000-7ffff7fc1000 r--p 00000000 00:00 0            [vvar]\n"
        "7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0            [vdso]\n"
        "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0            [stack]\n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0    [vsyscall]";
    struct map_list m = {0};
    cr_assert_eq(parse(text, &m), 0);
    cr_assert_eq(m.count, 9);

    /* Spaces inside a path belong to the path. */
    cr_assert_str_eq(m.entries[0].path, "/home/u/My Files/my prog");
    cr_assert_eq(m.entries[1].offset, 0x2000ULL);
    cr_assert_eq(m.entries[1].perms, MAP_PERM_READ | MAP_PERM_EXEC);
    cr_assert_str_eq(m.entries[2].path, "[heap]");
    /* Anonymous memory has an empty path, even with the kernel's padding. */
    cr_assert_str_eq(m.entries[3].path, "");
    cr_assert_eq(m.entries[3].inode, 0ULL);
    cr_assert_eq(m.entries[3].perms, MAP_PERM_READ | MAP_PERM_WRITE);
    cr_assert_eq(m.entries[4].perms, MAP_PERM_READ | MAP_PERM_WRITE | MAP_PERM_SHARED);
    cr_assert_str_eq(m.entries[4].path, "/dev/shm/ring (deleted)");
    cr_assert_eq(m.entries[4].dev_minor, 5u);
    cr_assert_str_eq(m.entries[6].path, "[vdso]");
    cr_assert_eq(m.entries[6].start, 0x7ffff7fc1000ULL);
    cr_assert_eq(m.entries[6].end, 0x7ffff7fc3000ULL);
    /* The last line needs no newline; the top of the address space parses. */
    cr_assert_str_eq(m.entries[8].path, "[vsyscall]");
    cr_assert_eq(m.entries[8].start, 0xffffffffff600000ULL);
    cr_assert_eq(m.entries[8].perms, MAP_PERM_EXEC);
    for (size_t i = 1; i < m.count; i++)
        cr_assert_gt(m.entries[i].start, m.entries[i - 1].start);
    maps_clear(&m);
}

Test(maps, empty_text_is_no_entries)
{
    struct map_list m = {0};
    cr_assert_eq(maps_parse("", 0, &m), 0);
    cr_assert_eq(m.count, 0);
    cr_assert_eq(parse("\n\n", &m), 0);
    cr_assert_eq(m.count, 0);
}

Test(maps, rejects_malformed_lines)
{
    static const char *const bad[] = {
        "garbage\n",
        "7f00-7f10\n",
        "7f00 7f10 r-xp 00000000 fd:01 5 /lib/x\n",                    /* no dash */
        "7f00-7f10 r-xp\n",                                            /* cut after perms */
        "7f00-7f10 r-xp zz000000 fd:01 5 /lib/x\n",                    /* offset not hex */
        "7f00-7f10 r-xp 00000000 fd01 5 /lib/x\n",                     /* device without colon */
        "7f00-7f10 r-xp 00000000 fd:01 /lib/x\n",                      /* no inode */
        "7f10-7f00 r-xp 00000000 fd:01 5 /lib/x\n",                    /* end before start */
        "17f0000000000000a-7f10 r-xp 00000000 fd:01 5 /lib/x\n",       /* > 64 bits */
        "7f00-7f10 r-xp 00000000 fd:01 99999999999999999999 /lib/x\n", /* inode overflow */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct map_list m = {0};
        cr_expect_eq(parse(bad[i], &m), -1, "accepted: %s", bad[i]);
        cr_expect_eq(m.count, 0, "kept an entry from: %s", bad[i]);
        maps_clear(&m);
    }
}

Test(maps, keeps_the_lines_before_a_malformed_one)
{
    struct map_list m = {0};
    cr_assert_eq(parse("1000-2000 r-xp 00000000 08:02 77 /bin/a\n"
                       "this is not a maps line\n"
                       "3000-4000 r-xp 00000000 08:02 78 /bin/b\n",
                       &m),
                 -1);
    cr_assert_eq(m.count, 1);
    cr_assert_str_eq(m.entries[0].path, "/bin/a");
    maps_clear(&m);
}

Test(maps, parse_stops_at_the_given_length)
{
    const char *text = "1000-2000 r-xp 00000000 08:02 77 /bin/a\n3000-4000 r-xp 00000000 08:02 78 "
                       "/bin/b\n";
    const char *second = strchr(text, '\n') + 1;
    struct map_list m = {0};
    cr_assert_eq(maps_parse(text, (size_t)(second - text), &m), 0);
    cr_assert_eq(m.count, 1);
    maps_clear(&m);
}

Test(maps, add_unique_copies_and_skips_duplicates)
{
    struct map_list m = {0};
    char path[] = "/lib/libx.so";
    struct map_entry e = {.start = 0x1000, .end = 0x2000, .offset = 0, .path = path};
    maps_add_unique(&m, &e);
    maps_add_unique(&m, &e);
    cr_assert_eq(m.count, 1);
    path[1] = 'X';
    cr_assert_str_eq(m.entries[0].path, "/lib/libx.so");
    e.path = (char *)"/lib/liby.so";
    maps_add_unique(&m, &e);
    e.start = 0x3000;
    e.end = 0x4000;
    maps_add_unique(&m, &e);
    cr_assert_eq(m.count, 3);
    maps_clear(&m);
}

Test(maps, read_finds_our_own_executable)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';

    struct map_list m = {0};
    cr_assert_eq(maps_read(getpid(), &m), 0);
    cr_assert_gt(m.count, 0);
    /* This very function's code must lie in an executable mapping of it. */
    uint64_t here = (uint64_t)(uintptr_t)&maps_read;
    bool found_exe = false, found_code = false;
    for (size_t i = 0; i < m.count; i++) {
        const struct map_entry *e = &m.entries[i];
        if (strcmp(e->path, exe) == 0 && (e->perms & MAP_PERM_EXEC)) {
            found_exe = true;
            found_code |= here >= e->start && here < e->end;
        }
    }
    cr_assert(found_exe, "no executable mapping of %s", exe);
    cr_assert(found_code, "maps_read's own code is not inside %s's x mapping", exe);
    maps_clear(&m);
}

Test(maps, read_of_an_exited_process_says_esrch)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(0);
    /* Wait for the zombie without reaping it: its maps read empty. */
    siginfo_t si;
    cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
    struct map_list m = {0};
    errno = 0;
    cr_assert_eq(maps_read(pid, &m), -1);
    cr_assert_eq(errno, ESRCH);
    cr_assert_eq(m.count, 0);
    waitpid(pid, NULL, 0);
}
