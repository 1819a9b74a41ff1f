/*
 * pmu_file.c - the "file" source of pmu.h: one number read from a file on
 * every sample (a hwmon sensor, a driver's attribute, a value that external
 * equipment keeps up to date), optionally scaled from a stated unit.
 *
 * The file is opened once and pread() at offset 0 on every sample: sysfs and
 * hwmon regenerate their text for each read at offset 0, and a regular file
 * rewritten in place is seen as it is now.
 */
#include "pmu/pmu.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/xalloc.h"

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
};

static const struct unit *find_unit(const char *name)
{
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(units[i].name, name) == 0)
            return &units[i];
    }
    return NULL;
}

/* -1: the read failed (errno set); -2: the text is not one number. */
static int read_value(int fd, double *out)
{
    char buf[64];
    ssize_t n;
    do {
        n = pread(fd, buf, sizeof(buf) - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
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
    src->priv = f;

    int rc = -1;
    double first;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        pt_err("file: cannot open %s: %s", path, strerror(errno));
        goto out;
    }
    int r = read_value(f->fd, &first);
    if (r == -1) {
        pt_err("file: cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    if (r == -2) {
        pt_err("file: %s: offset 0: does not hold one decimal number", path);
        goto out;
    }

    src->channels = xcalloc(1, sizeof(*src->channels));
    src->nchannels = 1;
    channel_name(path, src->channels[0].name, sizeof(src->channels[0].name));
    snprintf(src->channels[0].unit, sizeof(src->channels[0].unit), "%s", unit ? unit->base : "");
    src->channels[0].kind = unit ? unit->kind : PMU_KIND_CUSTOM;
    rc = 0;
out:
    free(path);
    return rc;
}

/* One pread and a parse; no allocation. */
static int file_read(struct pmu_source *src, double *values)
{
    struct file_source *f = src->priv;
    double v;
    if (read_value(f->fd, &v) != 0)
        return -1;
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
