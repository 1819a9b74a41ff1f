/* analysis_args.c - see analysis_args.h */
#include "cli/analysis_args.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void analysis_args_init(struct analysis_args *a, const char *command)
{
    memset(a, 0, sizeof(*a));
    a->command = command;
    key_spec_default(&a->session.walk.keys);
    a->session.cache = true;
    a->session.progress = true;
    a->metric = NULL;
}

int analysis_args_option(struct analysis_args *a, int opt, const char *arg)
{
    char err[160];
    switch (opt) {
    case 'k':
        if (key_spec_parse(arg, &a->session.walk.keys, err, sizeof(err)) != 0) {
            pt_err("%s: -k: %s", a->command, err);
            return -1;
        }
        return 1;
    case 'm':
        /* Which names exist depends on the profile: checked once it is read. */
        if (!*arg || strlen(arg) >= METRIC_NAME_MAX) {
            pt_err("%s: --metric wants a metric's name, not '%s'", a->command, arg);
            return -1;
        }
        a->metric = arg;
        a->metric_given = true;
        return 1;
    case ANALYSIS_OPT_WALL:
        a->metric = "wall";
        a->metric_given = true;
        return 1;
    case ANALYSIS_OPT_LATENCY:
        a->session.walk.metrics.account_latency = true;
        return 1;
    case ANALYSIS_OPT_CHANNEL:
        a->session.walk.metrics.channel = arg;
        return 1;
    case 's': {
        /* Only a warning: the profile may not need that directory. */
        struct stat st;
        if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
            pt_warn("%s: -s %s: not a directory", a->command, arg);
        a->dirs = xrealloc(a->dirs, (a->ndirs + 1) * sizeof(*a->dirs));
        a->dirs[a->ndirs++] = arg;
        return 1;
    }
    case ANALYSIS_OPT_NO_CACHE:
        a->session.cache = false;
        return 1;
    case ANALYSIS_OPT_BINARY:
        if (access(arg, R_OK) != 0) {
            pt_err("%s: --binary %s: %s", a->command, arg, strerror(errno));
            return -1;
        }
        a->binaries = xrealloc(a->binaries, (a->nbinaries + 1) * sizeof(*a->binaries));
        a->binaries[a->nbinaries++] = arg;
        return 1;
    default:
        return 0;
    }
}

void analysis_args_done(struct analysis_args *a)
{
    a->session.search_dirs = a->dirs;
    a->session.nsearch_dirs = a->ndirs;
    a->session.binaries = a->binaries;
    a->session.nbinaries = a->nbinaries;
}

/* An ELF file: a program or library, never a profile.  Only a regular
 * file is probed: reading a pipe's first bytes would take them from the
 * profile it carries (<(...), a FIFO), and opening a FIFO blocks. */
static bool is_elf(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    unsigned char magic[SELFMAG];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
               read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
               memcmp(magic, ELFMAG, SELFMAG) == 0;
    close(fd);
    return elf;
}

void analysis_args_take_programs(struct analysis_args *a, char **argv, int first, int *argc)
{
    int kept = first;
    for (int i = first; i < *argc; i++) {
        if (is_elf(argv[i])) {
            a->binaries = xrealloc(a->binaries, (a->nbinaries + 1) * sizeof(*a->binaries));
            a->binaries[a->nbinaries++] = argv[i];
        } else {
            argv[kept++] = argv[i];
        }
    }
    *argc = kept;
    a->session.binaries = a->binaries;
    a->session.nbinaries = a->nbinaries;
}

void analysis_args_free(struct analysis_args *a)
{
    free(a->dirs);
    a->dirs = NULL;
    a->ndirs = 0;
    free(a->binaries);
    a->binaries = NULL;
    a->nbinaries = 0;
    a->session.search_dirs = NULL;
    a->session.nsearch_dirs = 0;
    a->session.binaries = NULL;
    a->session.nbinaries = 0;
}

int analysis_parse_pct(const struct analysis_args *a, const char *opt, const char *s, bool zero_ok,
                       double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < 0 || v > 100 || (!zero_ok && v == 0)) {
        pt_err("%s: %s wants a percentage%s up to 100, not '%s'", a->command, opt,
               zero_ok ? "" : " above 0", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Names from --names (one per file), else the files' base names, else
 * the paths when two base names are the same. */
char **analysis_profile_names(const char *list, char **files, size_t n)
{
    char **names = xcalloc(n, sizeof(*names));
    if (list) {
        size_t count = 0;
        for (const char *p = list;; p += strcspn(p, ",") + 1) {
            size_t len = strcspn(p, ",");
            if (count < n)
                names[count] = xasprintf("%.*s", (int)len, p);
            count++;
            if (p[len] == '\0')
                break;
        }
        if (count == n)
            return names;
        for (size_t k = 0; k < n; k++)
            free(names[k]);
        free(names);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(files[i], '/');
        names[i] = xstrdup(slash && slash[1] ? slash + 1 : files[i]);
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(names[i], names[j]) == 0) {
                for (size_t k = 0; k < n; k++) {
                    free(names[k]);
                    names[k] = xstrdup(files[k]);
                }
                return names;
            }
        }
    }
    return names;
}
