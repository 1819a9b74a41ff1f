/*
 * pmu_file.c - the "file" source of pmu.h: one number read from a file on
 * every sample (a hwmon sensor, a driver's attribute, a value that external
 * equipment keeps up to date), optionally scaled from a stated unit.
 *
 * The file is opened once and pread() at offset 0 on every sample: sysfs and
 * hwmon regenerate their text for each read at offset 0, and a regular file
 * rewritten in place is seen as it is now.  A regular file outside sysfs and
 * procfs may also be replaced (a script's `mv tmp file`): its path is
 * looked up at every read (one stat) and reopened when it names another
 * file.  Every failure (an empty or partial file met between a truncation
 * and a write, a path missing for a moment) is only this read's: the next
 * one tries again (recording.h decides when a source is given up).
 * A reading stands for the instant of its pread: the middle of the clock
 * reads around it.
 */
#include "pmu/pmu.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* statfs f_type of the kernel's pseudo file systems (linux/magic.h). */
#define SYSFS_MAGIC_NUMBER 0x62656572
#define PROC_MAGIC_NUMBER 0x9fa0

/* How long the first read may find the file empty or half written. */
#define PMU_FILE_PATIENCE_NS 1000000000ULL

struct unit {
    const char *name;
    double scale; /* to the base unit */
    const char *base;
    enum pmu_kind kind;
};

static const struct unit units[] = {
    {"W", 1, "W", PMU_KIND_POWER},       {"mW", 1e-3, "W", PMU_KIND_POWER},
    {"uW", 1e-6, "W", PMU_KIND_POWER},   {"\u00b5W", 1e-6, "W", PMU_KIND_POWER},
    {"A", 1, "A", PMU_KIND_CURRENT},     {"mA", 1e-3, "A", PMU_KIND_CURRENT},
    {"uA", 1e-6, "A", PMU_KIND_CURRENT}, {"\u00b5A", 1e-6, "A", PMU_KIND_CURRENT},
    {"V", 1, "V", PMU_KIND_VOLTAGE},     {"mV", 1e-3, "V", PMU_KIND_VOLTAGE},
    {"uV", 1e-6, "V", PMU_KIND_VOLTAGE}, {"\u00b5V", 1e-6, "V", PMU_KIND_VOLTAGE},
};

struct file_source {
    int fd;
    double scale;
    char *path;
    bool follow; /* a regular file another program may replace */
    dev_t dev;   /* the file fd holds */
    ino_t ino;
};

static const struct unit *find_unit(const char *name)
{
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(units[i].name, name) == 0)
            return &units[i];
    }
    return NULL;
}

/* -1: the read failed (errno set); -2: the text is not one number; -3:
 * the file is empty. */
static int read_value(int fd, double *out)
{
    char buf[64];
    ssize_t n;
    do {
        n = pread(fd, buf, sizeof(buf) - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0)
        return -3;
    /* A full buffer cannot be trusted to hold the whole number. */
    if ((size_t)n == sizeof(buf) - 1)
        return -2;
    buf[n] = '\0';

    const char *p = buf;
    while (isspace((unsigned char)*p))
        p++;
    /* Only plain decimal numbers; strtod would also take "nan" or hex. */
    if (!(isdigit((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.'))
        return -2;
    char *end;
    double v = strtod(p, &end);
    if (end == p)
        return -2;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -2;
    *out = v;
    return 0;
}

/* The path, or its tail when too long: the end says which sensor it is. */
static void channel_name(const char *path, char *out, size_t size)
{
    size_t len = strlen(path);
    if (len < size)
        snprintf(out, size, "%s", path);
    else
        snprintf(out, size, "...%s", path + len - (size - 4));
}

static void file_release(struct pmu_source *src)
{
    struct file_source *f = src->priv;
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free(f);
    src->priv = NULL;
}

static int file_init(struct pmu_source *src, const char *arg)
{
    if (!arg || !*arg) {
        pt_err("file: no path given (use -p file:PATH[,UNIT])");
        return -1;
    }

    /* The unit follows the last comma; a path may contain commas itself. */
    const struct unit *unit = NULL;
    const char *comma = strrchr(arg, ',');
    char *path;
    if (comma && (unit = find_unit(comma + 1))) {
        path = xasprintf("%.*s", (int)(comma - arg), arg);
    } else if (comma && access(arg, F_OK) != 0) {
        pt_err("file: unknown unit '%s' in 'file:%s' (use W, mW, uW, A, mA, uA, V, mV or uV)",
               comma + 1, arg);
        return -1;
    } else {
        path = xstrdup(arg);
    }

    struct file_source *f = xcalloc(1, sizeof(*f));
    f->fd = -1;
    f->scale = unit ? unit->scale : 1;
    f->path = path;
    src->priv = f;
    src->timing = PMU_AT_INSTANT;

    double first;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        pt_err("file: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    struct statfs sfs;
    if (fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode) && fstatfs(f->fd, &sfs) == 0 &&
        sfs.f_type != SYSFS_MAGIC_NUMBER && sfs.f_type != PROC_MAGIC_NUMBER) {
        f->follow = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    /* A file another program rewrites may be empty for a moment. */
    int r;
    uint64_t give_up = monotonic_ns() + PMU_FILE_PATIENCE_NS;
    while ((r = read_value(f->fd, &first)) < -1 && monotonic_ns() < give_up) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    if (r == -1) {
        pt_err("file: cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (r == -2 || r == -3) {
        pt_err("file: %s: offset 0: does not hold one decimal number%s", path,
               r == -3 ? " (it is empty)" : "");
        return -1;
    }

    src->channels = xcalloc(1, sizeof(*src->channels));
    src->nchannels = 1;
    channel_name(path, src->channels[0].name, sizeof(src->channels[0].name));
    snprintf(src->channels[0].unit, sizeof(src->channels[0].unit), "%s", unit ? unit->base : "");
    src->channels[0].kind = unit ? unit->kind : PMU_KIND_CUSTOM;
    return 0;
}

/* The file the path names now, when it was replaced since the last read;
 * -1 (why set) when the path names nothing for the moment. */
static int follow_path(struct pmu_source *src, struct file_source *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0) {
        snprintf(src->why, sizeof(src->why), "%s: %s", f->path, strerror(errno));
        return -1;
    }
    if (st.st_dev == f->dev && st.st_ino == f->ino)
        return 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(src->why, sizeof(src->why), "cannot open %s: %s", f->path, strerror(errno));
        return -1;
    }
    close(f->fd);
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return 0;
}

/* One pread and a parse (and one stat for a file that may be replaced);
 * no allocation. */
static int file_read(struct pmu_source *src, double *values)
{
    struct file_source *f = src->priv;
    if (f->follow && follow_path(src, f) != 0)
        return -1;
    double v;
    uint64_t before = monotonic_ns();
    int r = read_value(f->fd, &v);
    uint64_t after = monotonic_ns();
    if (r != 0) {
        snprintf(src->why, sizeof(src->why), "%s: %s", f->path,
                 r == -1   ? strerror(errno)
                 : r == -3 ? "empty"
                           : "does not hold one decimal number");
        return -1;
    }
    src->read_at = before + (after - before) / 2;
    values[0] = v * f->scale;
    return 0;
}

const struct pmu_ops pmu_file_ops = {
    .name = "file",
    .about = ":PATH[,UNIT]  a number read from PATH (UNIT: W mW uW A mA uA V mV uV)",
    .init = file_init,
    .read = file_read,
    .release = file_release,
};
