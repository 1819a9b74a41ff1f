/* corpus.c - see corpus.h */
#include "corpus.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *corpus_dir(const char *corpus)
{
    const char *src = getenv("PTPROF_SRCDIR");
    char *path = NULL;
    struct stat st;
    if (src && *src) {
        cr_assert_geq(asprintf(&path, "%s/%s", src, corpus), 0);
        return path;
    }
    /* The suite may run from build/ or deeper. */
    const char *up[] = {"", "../", "../../", "../../../"};
    for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
        cr_assert_geq(asprintf(&path, "%s%s", up[i], corpus), 0);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return path;
        free(path);
    }
    cr_assert_fail("cannot find %s; run from the source tree or set PTPROF_SRCDIR", corpus);
    return NULL;
}

static unsigned char *read_exact(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "open %s", path);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    *len = (size_t)st.st_size;
    unsigned char *buf = malloc(*len ? *len : 1);
    cr_assert_not_null(buf);
    cr_assert_eq(read(fd, buf, *len), (ssize_t)*len, "read %s", path);
    close(fd);
    return buf;
}

size_t corpus_replay(const char *corpus, void (*fn)(const struct corpus_file *f, void *ctx),
                     void *ctx)
{
    char *dir = corpus_dir(corpus);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    fflush(stderr);
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    dup2(null, 2);
    close(null);

    size_t files = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *path = NULL;
        cr_assert_geq(asprintf(&path, "%s/%s", dir, de->d_name), 0);
        struct corpus_file f = {.path = path, .name = de->d_name};
        unsigned char *data = read_exact(path, &f.len);
        f.data = data;
        f.must_load = strncmp(de->d_name, "valid-", 6) == 0;
        fn(&f, ctx);
        free(data);
        free(path);
        files++;
    }
    closedir(d);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    cr_expect_gt(files, 0, "the corpus in %s is empty", dir);
    free(dir);
    return files;
}
