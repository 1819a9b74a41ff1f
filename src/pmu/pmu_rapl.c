/*
 * pmu_rapl.c - the "rapl" source of pmu.h: average power of Linux powercap
 * energy domains (RAPL packages and their subdomains) between two reads.
 *
 * Each domain's energy_uj counter is opened once at init and pread() on every
 * sample: sysfs regenerates an attribute's text when it is read at offset 0,
 * so no reopen is needed, and the read path allocates nothing.  That keeps a
 * sample to one syscall per domain plus one clock read, inside the window in
 * which the target is stopped.
 */
#include "pmu/pmu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

struct rapl_domain {
    int fd;          /* energy_uj, open for the source's lifetime */
    uint64_t max_uj; /* max_energy_range_uj: where the counter wraps; 0 unknown */
    uint64_t last_uj;
    uint64_t now_uj;
};

struct rapl {
    unsigned n;
    uint64_t last_ns; /* CLOCK_MONOTONIC when last_uj was read */
    struct rapl_domain dom[];
};

/* A decimal counter as sysfs prints it; anything else is a failed read. */
static int parse_counter(const char *buf, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
        unsigned digit = (unsigned)(buf[i] - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    if (i == 0)
        return -1;
    for (; i < len; i++) {
        if (!isspace((unsigned char)buf[i]))
            return -1;
    }
    *out = v;
    return 0;
}

static int read_counter(int fd, uint64_t *out)
{
    char buf[32];
    ssize_t n;
    do {
        n = pread(fd, buf, sizeof(buf), 0);
    } while (n < 0 && errno == EINTR);
    /* A full buffer means a longer text than any 64-bit counter. */
    if (n <= 0 || (size_t)n == sizeof(buf))
        return -1;
    return parse_counter(buf, (size_t)n, out);
}

/* Read a short attribute (name, max_energy_range_uj) once; -1 if absent. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, buf, size - 1, 0);
    close(fd);
    if (n < 0)
        return -1;
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        n--;
    buf[n] = '\0';
    return n;
}

/* "intel-rapl:N": a package domain, not the control type nor a subdomain. */
static int package_number(const char *name, unsigned *out)
{
    static const char prefix[] = "intel-rapl:";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return -1;
    const char *p = name + sizeof(prefix) - 1;
    unsigned v = 0;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000)
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
    }
    *out = v;
    return 0;
}

static int cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "intel-rapl:0, intel-rapl:0:0, ..." for error messages. */
static void list_present(const char *base, char *out, size_t size)
{
    char *names[64];
    size_t count = 0;
    DIR *dir = opendir(base);
    snprintf(out, size, "none");
    if (!dir)
        return;
    struct dirent *de;
    while (count < sizeof(names) / sizeof(names[0]) && (de = readdir(dir))) {
        if (de->d_name[0] != '.')
            names[count++] = xstrdup(de->d_name);
    }
    closedir(dir);
    qsort(names, count, sizeof(names[0]), cmp_str);
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (used < size) {
            int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", names[i]);
            used += w > 0 ? (size_t)w : 0;
        }
        free(names[i]);
    }
}

/* The directories of every package domain, in package order. */
static char **default_domains(const char *base, unsigned *count)
{
    DIR *dir = opendir(base);
    if (!dir) {
        pt_err("rapl: cannot open %s: %s (no powercap support, or the intel_rapl driver is "
               "not loaded)",
               base, strerror(errno));
        return NULL;
    }
    unsigned *nums = NULL;
    size_t cap = 0, n = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        unsigned num;
        if (package_number(de->d_name, &num) == 0) {
            nums = xgrow(nums, &cap, n + 1, sizeof(*nums));
            nums[n++] = num;
        }
    }
    closedir(dir);
    if (n == 0) {
        char present[256];
        list_present(base, present, sizeof(present));
        pt_err("rapl: no package domain (intel-rapl:N) in %s (present: %s)", base, present);
        free(nums);
        return NULL;
    }
    qsort(nums, n, sizeof(*nums), cmp_unsigned);
    char **dirs = xcalloc(n, sizeof(*dirs));
    for (size_t i = 0; i < n; i++)
        dirs[i] = xasprintf("%s/intel-rapl:%u", base, nums[i]);
    free(nums);
    *count = (unsigned)n;
    return dirs;
}

/* DOMAINS as given: names under BASE, or paths (anything with a slash). */
static char **listed_domains(const char *base, const char *arg, unsigned *count)
{
    char **dirs = NULL;
    size_t cap = 0, n = 0;
    struct stat st;

    /* A whole-argument directory path wins, in case it contains a comma. */
    if (strchr(arg, '/') && stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        dirs = xcalloc(1, sizeof(*dirs));
        dirs[0] = xstrdup(arg);
        *count = 1;
        return dirs;
    }

    char *copy = xstrdup(arg), *rest = copy, *item;
    while ((item = strsep(&rest, ","))) {
        char *dir;
        if (!*item) {
            pt_err("rapl: empty domain name in 'rapl:%s'", arg);
            goto fail;
        }
        if (strchr(item, '/')) {
            if (stat(item, &st) != 0) {
                pt_err("rapl: cannot use domain directory '%s': %s", item, strerror(errno));
                goto fail;
            }
            if (!S_ISDIR(st.st_mode)) {
                pt_err("rapl: '%s' is not a powercap domain directory", item);
                goto fail;
            }
            dir = xstrdup(item);
        } else {
            dir = xasprintf("%s/%s", base, item);
            if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                char present[256];
                list_present(base, present, sizeof(present));
                pt_err("rapl: no powercap domain '%s' in %s (present: %s)", item, base, present);
                free(dir);
                goto fail;
            }
        }
        dirs = xgrow(dirs, &cap, n + 1, sizeof(*dirs));
        dirs[n++] = dir;
    }
    free(copy);
    *count = (unsigned)n;
    return dirs;

fail:
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    free(copy);
    return NULL;
}

/* The directory's last component: the domain's id ("intel-rapl:0:1"). */
static void domain_id(const char *dir, char *out, size_t size)
{
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    snprintf(out, size, "%.*s", (int)(end - start), dir + start);
}

static int open_domain(const char *dir, struct rapl_domain *d, struct pmu_channel *ch)
{
    char path[4096], text[64];

    snprintf(path, sizeof(path), "%s/energy_uj", dir);
    d->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (d->fd < 0) {
        if (errno == ENOENT)
            pt_err("rapl: %s has no energy_uj: not a powercap energy domain", dir);
        else if (errno == EACCES)
            pt_err("rapl: %s is readable by root only (Linux 5.10 and later): run as root, "
                   "or measure with a hwmon sensor (-p file:/sys/class/hwmon/hwmonN/"
                   "power1_input,uW), a meter that writes a file (-p file:PATH,UNIT), or an "
                   "external meter's CSV (ptprof convert PROFILE --join-csv METER.csv)",
                   path);
        else
            pt_err("rapl: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (read_counter(d->fd, &d->last_uj) != 0) {
        pt_err("rapl: %s: offset 0: not a readable energy counter", path);
        return -1;
    }

    snprintf(path, sizeof(path), "%s/max_energy_range_uj", dir);
    d->max_uj = 0;
    if (read_small(path, text, sizeof(text)) <= 0 ||
        parse_counter(text, strlen(text), &d->max_uj) != 0)
        pt_debug("rapl: no usable %s; a wrapping counter will read as NaN", path);

    char id[64], name[64];
    domain_id(dir, id, sizeof(id));
    snprintf(path, sizeof(path), "%s/name", dir);
    ssize_t len = read_small(path, name, sizeof(name));
    for (ssize_t i = 0; i < len; i++) {
        if (!isprint((unsigned char)name[i]))
            name[i] = '?';
    }
    /* The id keeps names unique: two sockets each have a "dram" subdomain. */
    if (len > 0 && strcmp(name, id) != 0)
        snprintf(ch->name, sizeof(ch->name), "%.40s (%.20s)", name, id);
    else
        snprintf(ch->name, sizeof(ch->name), "%s", id);
    snprintf(ch->unit, sizeof(ch->unit), "W");
    ch->kind = PMU_KIND_POWER;
    return 0;
}

/* Every counter, or none: a failed read leaves the previous state intact. */
static int sample_all(struct rapl *r)
{
    for (unsigned i = 0; i < r->n; i++) {
        if (read_counter(r->dom[i].fd, &r->dom[i].now_uj) != 0)
            return -1;
    }
    return 0;
}

static void rapl_release(struct pmu_source *src)
{
    struct rapl *r = src->priv;
    if (!r)
        return;
    for (unsigned i = 0; i < r->n; i++) {
        if (r->dom[i].fd >= 0)
            close(r->dom[i].fd);
    }
    free(r);
    src->priv = NULL;
}

static int rapl_init(struct pmu_source *src, const char *arg)
{
    char base[4096];
    snprintf(base, sizeof(base), "%s/class/powercap", pmu_sysfs_root());

    unsigned n = 0;
    char **dirs = arg && *arg ? listed_domains(base, arg, &n) : default_domains(base, &n);
    if (!dirs)
        return -1;

    struct rapl *r = xcalloc(1, sizeof(*r) + n * sizeof(r->dom[0]));
    r->n = n;
    for (unsigned i = 0; i < n; i++)
        r->dom[i].fd = -1;
    src->priv = r;
    src->channels = xcalloc(n, sizeof(*src->channels));
    src->nchannels = n;

    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        rc = open_domain(dirs[i], &r->dom[i], &src->channels[i]);
        for (unsigned j = 0; j < i && rc == 0; j++) {
            if (strcmp(src->channels[j].name, src->channels[i].name) == 0) {
                pt_err("rapl: domain '%s' is listed twice", dirs[i]);
                rc = -1;
            }
        }
    }
    for (unsigned i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    if (rc != 0)
        return -1;

    /* Prime as the read path does, so the first read covers init -> read. */
    if (sample_all(r) != 0) {
        pt_err("rapl: an energy counter under %s stopped being readable", base);
        return -1;
    }
    r->last_ns = monotonic_ns();
    for (unsigned i = 0; i < n; i++)
        r->dom[i].last_uj = r->dom[i].now_uj;
    src->timing = PMU_OVER_INTERVAL;
    src->read_at = r->last_ns;
    return 0;
}

static double delta_uj(const struct rapl_domain *d)
{
    if (d->now_uj >= d->last_uj)
        return (double)(d->now_uj - d->last_uj);
    /* The counter wrapped at max_energy_range_uj (at most once per read). */
    if (d->max_uj == 0 || d->last_uj > d->max_uj)
        return NAN;
    return (double)(d->max_uj - d->last_uj + d->now_uj);
}

/* No allocation, no open: one pread per domain and one clock read. */
static int rapl_read(struct pmu_source *src, double *values)
{
    struct rapl *r = src->priv;
    if (sample_all(r) != 0) {
        snprintf(src->why, sizeof(src->why), "an energy_uj stopped holding a counter");
        return -1;
    }
    uint64_t now_ns = monotonic_ns();
    src->read_at = now_ns;
    uint64_t dt_ns = now_ns - r->last_ns;
    if (dt_ns == 0) {
        /* Keep the old reference so this energy is counted by the next read. */
        for (unsigned i = 0; i < r->n; i++)
            values[i] = NAN;
        return 0;
    }
    for (unsigned i = 0; i < r->n; i++) {
        struct rapl_domain *d = &r->dom[i];
        /* uJ / ns = 1e3 W */
        values[i] = delta_uj(d) * 1e3 / (double)dt_ns;
        d->last_uj = d->now_uj;
    }
    r->last_ns = now_ns;
    return 0;
}

const struct pmu_ops pmu_rapl_ops = {
    .name = "rapl",
    .about = "[:DOMAIN,...]  power (W) of powercap/RAPL domains (default: every package)",
    .init = rapl_init,
    .read = rapl_read,
    .release = rapl_release,
};
