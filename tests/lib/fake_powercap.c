/* fake_powercap.c - see fake_powercap.h */
#include "fake_powercap.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DOMAINS 32
/* Fixed width keeps every rewrite the same size, so it is one in-place pwrite. */
#define COUNTER_WIDTH 20

struct fake_domain {
    char *id;
    char *dir;  /* ROOT/class/powercap/ID */
    char *real; /* where the files are, under ROOT/devices */
    uint64_t max_uj;
};

struct fake_powercap {
    char *root;
    unsigned n;
    struct fake_domain dom[MAX_DOMAINS];
};

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    fputs("fake_powercap: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    errno = saved;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

static int write_file(const char *dir, const char *file, const char *text)
{
    char *path = join(dir, file);
    if (!path)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t len = strlen(text);
    int rc = fd >= 0 && write(fd, text, len) == (ssize_t)len ? 0 : -1;
    if (rc != 0)
        complain("cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}

static int mkdir_if_missing(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    complain("cannot create %s: %s", path, strerror(errno));
    return -1;
}

static int mkdirs(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    int rc = 0;
    for (char *p = copy + 1; *p && rc == 0; p++) {
        if (*p == '/') {
            *p = '\0';
            rc = mkdir_if_missing(copy);
            *p = '/';
        }
    }
    if (rc == 0)
        rc = mkdir_if_missing(copy);
    free(copy);
    return rc;
}

struct fake_powercap *fake_powercap_create(void)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl = join(tmp && *tmp ? tmp : "/tmp", "ptprof-powercap-XXXXXX");
    struct fake_powercap *fp = calloc(1, sizeof(*fp));
    if (!tmpl || !fp || !mkdtemp(tmpl)) {
        complain("cannot create a temporary directory: %s", strerror(errno));
        free(tmpl);
        free(fp);
        return NULL;
    }
    fp->root = tmpl;
    char *cls = join(fp->root, "class/powercap");
    if (!cls || mkdirs(cls) != 0) {
        free(cls);
        fake_powercap_destroy(fp);
        return NULL;
    }
    free(cls);
    return fp;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

void fake_powercap_destroy(struct fake_powercap *fp)
{
    if (!fp)
        return;
    if (fp->root && nftw(fp->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        complain("cannot remove %s: %s", fp->root, strerror(errno));
    for (unsigned i = 0; i < fp->n; i++) {
        free(fp->dom[i].id);
        free(fp->dom[i].dir);
        free(fp->dom[i].real);
    }
    free(fp->root);
    free(fp);
}

const char *fake_powercap_root(const struct fake_powercap *fp)
{
    return fp->root;
}

int fake_powercap_setenv(const struct fake_powercap *fp)
{
    return setenv("PTPROF_SYSFS_ROOT", fp->root, 1);
}

static struct fake_domain *find(const struct fake_powercap *fp, const char *id)
{
    for (unsigned i = 0; i < fp->n; i++) {
        if (strcmp(fp->dom[i].id, id) == 0)
            return (struct fake_domain *)&fp->dom[i];
    }
    return NULL;
}

/* The class/powercap symlink, relative as the kernel's: ../../devices/... */
static int link_class(const struct fake_powercap *fp, const char *name, const char *real)
{
    char *link = NULL, *target = NULL;
    int rc = -1;
    if (asprintf(&link, "%s/class/powercap/%s", fp->root, name) < 0) {
        link = NULL;
        goto out;
    }
    if (asprintf(&target, "../..%s", real + strlen(fp->root)) < 0) {
        target = NULL;
        goto out;
    }
    rc = symlink(target, link) == 0 || errno == EEXIST ? 0 : -1;
    if (rc != 0)
        complain("cannot link %s: %s", link, strerror(errno));
out:
    free(link);
    free(target);
    return rc;
}

static int write_counter(const struct fake_domain *d, const char *text)
{
    char *path = join(d->real, "energy_uj");
    if (!path)
        return -1;
    /* No O_TRUNC: a concurrent reader must never see an empty file. */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t len = strlen(text);
    int rc = fd >= 0 && pwrite(fd, text, len, 0) == (ssize_t)len ? 0 : -1;
    if (rc != 0)
        complain("cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}

static int store(const struct fake_domain *d, uint64_t energy_uj)
{
    char text[COUNTER_WIDTH + 2];
    snprintf(text, sizeof(text), "%0*" PRIu64 "\n", COUNTER_WIDTH, energy_uj);
    return write_counter(d, text);
}

int fake_powercap_add(struct fake_powercap *fp, const char *id, const char *name,
                      uint64_t energy_uj, uint64_t max_range_uj)
{
    const char *first = strchr(id, ':'), *last = strrchr(id, ':');
    if (!first || strchr(id, '/') || find(fp, id) || fp->n == MAX_DOMAINS) {
        errno = EINVAL;
        complain("cannot add domain '%s': bad, duplicate or too many", id);
        return -1;
    }

    /* A subdomain lives inside its parent; a package inside its control type. */
    char *parent_real = NULL, *real = NULL;
    if (first != last) {
        char parent[256];
        snprintf(parent, sizeof(parent), "%.*s", (int)(last - id), id);
        const struct fake_domain *p = find(fp, parent);
        if (!p) {
            errno = ENOENT;
            complain("cannot add '%s': add its parent '%s' first", id, parent);
            return -1;
        }
        parent_real = strdup(p->real);
    } else {
        char type[256];
        snprintf(type, sizeof(type), "%.*s", (int)(first - id), id);
        if (asprintf(&parent_real, "%s/devices/virtual/powercap/%s", fp->root, type) < 0)
            parent_real = NULL;
        if (parent_real &&
            (mkdirs(parent_real) != 0 || write_file(parent_real, "enabled", "1\n") != 0 ||
             link_class(fp, type, parent_real) != 0)) {
            free(parent_real);
            return -1;
        }
    }
    if (!parent_real || !(real = join(parent_real, id))) {
        free(parent_real);
        return -1;
    }
    free(parent_real);

    struct fake_domain *d = &fp->dom[fp->n];
    d->real = real;
    d->id = strdup(id);
    if (asprintf(&d->dir, "%s/class/powercap/%s", fp->root, id) < 0)
        d->dir = NULL;
    d->max_uj = max_range_uj;
    if (!d->id || !d->dir || mkdir_if_missing(real) != 0 || link_class(fp, id, real) != 0)
        goto fail;

    char text[32];
    if (name && write_file(real, "name", name) != 0)
        goto fail;
    if (max_range_uj) {
        snprintf(text, sizeof(text), "%" PRIu64 "\n", max_range_uj);
        if (write_file(real, "max_energy_range_uj", text) != 0)
            goto fail;
    }
    if (write_file(real, "enabled", "1\n") != 0 || write_file(real, "energy_uj", "") != 0 ||
        store(d, energy_uj) != 0)
        goto fail;
    fp->n++;
    return 0;

fail:
    free(d->id);
    free(d->dir);
    free(d->real);
    memset(d, 0, sizeof(*d));
    return -1;
}

const char *fake_powercap_dir(const struct fake_powercap *fp, const char *id)
{
    const struct fake_domain *d = find(fp, id);
    return d ? d->dir : NULL;
}

static const struct fake_domain *lookup(const struct fake_powercap *fp, const char *id)
{
    const struct fake_domain *d = find(fp, id);
    if (!d) {
        errno = ENOENT;
        complain("no domain '%s' was added", id);
    }
    return d;
}

int fake_powercap_set(struct fake_powercap *fp, const char *id, uint64_t energy_uj)
{
    const struct fake_domain *d = lookup(fp, id);
    return d ? store(d, energy_uj) : -1;
}

uint64_t fake_powercap_energy(const struct fake_powercap *fp, const char *id)
{
    const struct fake_domain *d = lookup(fp, id);
    char *path = d ? join(d->real, "energy_uj") : NULL;
    if (!path)
        return UINT64_MAX;
    char text[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;
    if (fd >= 0)
        close(fd);
    free(path);
    if (n <= 0)
        return UINT64_MAX;
    text[n] = '\0';
    char *end;
    errno = 0;
    uint64_t v = strtoull(text, &end, 10);
    if (errno || end == text || (*end && *end != '\n')) {
        errno = EINVAL;
        return UINT64_MAX;
    }
    return v;
}

int fake_powercap_advance(struct fake_powercap *fp, const char *id, uint64_t delta_uj)
{
    const struct fake_domain *d = lookup(fp, id);
    if (!d)
        return -1;
    uint64_t now = fake_powercap_energy(fp, id);
    if (now == UINT64_MAX) {
        complain("cannot read the counter of '%s'", id);
        return -1;
    }
    if (d->max_uj) {
        /* Reduce first so the sum cannot overflow. */
        now %= d->max_uj;
        delta_uj %= d->max_uj;
        now = now >= d->max_uj - delta_uj ? now - (d->max_uj - delta_uj) : now + delta_uj;
    } else {
        now += delta_uj;
    }
    return store(d, now);
}

int fake_powercap_break(struct fake_powercap *fp, const char *id)
{
    const struct fake_domain *d = lookup(fp, id);
    char text[COUNTER_WIDTH + 2];
    memset(text, 'x', COUNTER_WIDTH);
    text[COUNTER_WIDTH] = '\n';
    text[COUNTER_WIDTH + 1] = '\0';
    return d ? write_counter(d, text) : -1;
}

int fake_powercap_root_only(struct fake_powercap *fp, const char *id)
{
    const struct fake_domain *d = lookup(fp, id);
    char *counter = d ? join(d->real, "energy_uj") : NULL;
    /* The tree itself is open to all, as sysfs is; the counter is not. */
    int rc = counter && chmod(fp->root, 0755) == 0 && chmod(counter, 0400) == 0 ? 0 : -1;
    if (rc != 0)
        complain("cannot make %s root-only: %s", counter ? counter : id, strerror(errno));
    free(counter);
    return rc;
}
