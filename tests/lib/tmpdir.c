/* tmpdir.c - see tmpdir.h */
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tmpdir_new(const char *tag)
{
    char *dir = NULL;
    cr_assert_geq(asprintf(&dir, "/tmp/ptprof-test-%s-XXXXXX", tag), 0);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    return dir;
}

char *tmpdir_path(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

void tmpdir_remove(const char *dir)
{
    /* Depth first, not following links out of the tree. */
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
