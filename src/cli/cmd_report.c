/*
 * cmd_report.c - "ptprof report": where a profile's CPU time went, per
 * function, as a table or CSV, from a profile in any format (format/load.h).
 * Also decides where binaries are looked for: the original raw format stores
 * only their base names, and a profile may be read on another machine.
 */
#include "analyze/flat_profile.h"
#include "cli/cli.h"
#include "format/load.h"
#include "render/table.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

struct dir_list {
    char **dirs;
    size_t count, capacity;
};

#define USAGE_LINE "usage: ptprof report FILE [-s DIR]... [--format table|csv] [--limit N]\n"

static void usage(FILE *out)
{
    fprintf(out, USAGE_LINE
            "\n"
            "Show CPU time and samples per function of a profile: the native format or the\n"
            "original sampler's (--format pperf), plain or compressed.\n"
            "\n"
            "  -s, --search DIR   look for the profiled binaries in DIR first (repeatable)\n"
            "      --format FMT   table (default) or csv\n"
            "      --limit N      show only the N functions with the most CPU time\n"
            "  -h, --help         show this help\n"
            "\n"
            "A binary recorded with its full path is read from there. Otherwise, or when\n"
            "that file is gone or another build, it is searched by name in the -s\n"
            "directories, the profile's directory, the current directory, LD_LIBRARY_PATH\n"
            "and the system library directories.\n");
}

/* --- search path --------------------------------------------------------- */

static void add_dir(struct dir_list *l, const char *dir, size_t len)
{
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len == 0)
        return;
    char *d = xasprintf("%.*s", (int)len, dir);
    struct stat st;
    for (size_t i = 0; i < l->count; i++) {
        if (strcmp(l->dirs[i], d) == 0) {
            free(d);
            return;
        }
    }
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(d);
        return;
    }
    l->dirs = xgrow(l->dirs, &l->capacity, l->count + 1, sizeof(*l->dirs));
    l->dirs[l->count++] = d;
}

static void add_path_list(struct dir_list *l, const char *list)
{
    while (list && *list) {
        size_t n = strcspn(list, ":");
        add_dir(l, list, n);
        list += n + (list[n] == ':');
    }
}

/* The dynamic linker's own configuration names the library directories
 * (multiarch ones included) without running ldconfig. */
static void add_ld_so_conf(struct dir_list *l, const char *path, int depth)
{
    FILE *f = fopen(path, "r");
    if (!f || depth > 4) {
        if (f)
            fclose(f);
        return;
    }
    char line[PATH_MAX + 16];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        char *p = line + strspn(line, " \t");
        size_t n = strlen(p);
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = '\0';
        if (n == 0)
            continue;
        if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
            const char *pat = p + 8 + strspn(p + 8, " \t");
            char *full = pat[0] == '/' ? xstrdup(pat) : xasprintf("/etc/%s", pat);
            glob_t g;
            if (glob(full, 0, NULL, &g) == 0)
                for (size_t i = 0; i < g.gl_pathc; i++)
                    add_ld_so_conf(l, g.gl_pathv[i], depth + 1);
            globfree(&g);
            free(full);
        } else if (p[0] == '/') {
            add_dir(l, p, strcspn(p, "= \t"));
        }
    }
    fclose(f);
}

/* Debian-style multiarch directory names from the machine we run on. */
static void add_multiarch(struct dir_list *l)
{
    struct utsname u;
    if (uname(&u) != 0)
        return;
    const char *m = u.machine, *triplet;
    if (m[0] == 'i' && strcmp(m + 2, "86") == 0)
        triplet = "i386-linux-gnu";
    else if (strncmp(m, "armv7", 5) == 0)
        triplet = "arm-linux-gnueabihf";
    else
        triplet = NULL;
    char *a = triplet ? xstrdup(triplet) : xasprintf("%s-linux-gnu", m);
    const char *roots[] = {"/lib", "/usr/lib", "/usr/local/lib"};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        char *d = xasprintf("%s/%s", roots[i], a);
        add_dir(l, d, strlen(d));
        free(d);
    }
    free(a);
}

static void build_search_path(struct dir_list *l, const char *profile)
{
    /* The original raw format does not record where the program lived; a
     * profile is most often written next to it (build/demo.data for
     * build/demo). */
    if (strcmp(profile, "-") != 0) {
        const char *slash = strrchr(profile, '/');
        if (slash)
            add_dir(l, profile, slash == profile ? 1 : (size_t)(slash - profile));
    }
    add_dir(l, ".", 1);
    add_path_list(l, getenv("LD_LIBRARY_PATH"));
    add_ld_so_conf(l, "/etc/ld.so.conf", 0);
    add_multiarch(l);
    add_path_list(l, "/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib");
}

/* --- command ------------------------------------------------------------- */

static int parse_limit(const char *s, size_t *out)
{
    char *end;
    if (!s[0] || s[0] == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"search", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'F'},
        {"limit", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct dir_list dirs = {0};
    enum table_format format = TABLE_TEXT;
    size_t limit = 0;
    int rc = PT_EXIT_USAGE, opt;

    optind = 1;
    opterr = 0; /* our own messages, with our program name */
    while ((opt = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': {
            struct stat st;
            if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
                pt_warn("report: -s %s: not a directory", optarg);
            add_dir(&dirs, optarg, strlen(optarg));
            break;
        }
        case 'F':
            if (strcmp(optarg, "table") == 0) {
                format = TABLE_TEXT;
            } else if (strcmp(optarg, "csv") == 0) {
                format = TABLE_CSV;
            } else {
                pt_err("report: unknown format '%s' (table or csv)", optarg);
                goto out;
            }
            break;
        case 'L':
            if (parse_limit(optarg, &limit) != 0) {
                pt_err("report: --limit wants a number of rows, not '%s'", optarg);
                goto out;
            }
            break;
        case 'h':
            usage(stdout);
            rc = PT_EXIT_OK;
            goto out;
        default: /* ':' missing value, '?' unknown option */
            pt_err("report: option '%s' %s", argv[optind - 1],
                   opt == ':' ? "needs a value" : "is not known");
            fputs(USAGE_LINE, stderr);
            goto out;
        }
    }
    if (argc - optind != 1) {
        pt_err("report: %s", argc - optind ? "one profile at a time for now" : "no profile given");
        fputs(USAGE_LINE, stderr);
        goto out;
    }
    const char *file = argv[optind];
    build_search_path(&dirs, file);

    struct profile prof;
    if (profile_load(file, &prof) != 0) {
        profile_free(&prof);
        rc = PT_EXIT_BAD_INPUT;
        goto out;
    }
    struct flat_options fo = {.search_dirs = (const char *const *)dirs.dirs,
                              .nsearch_dirs = dirs.count};
    struct flat_profile fp;
    flat_profile_compute(&prof, &fo, &fp);
    profile_free(&prof);
    rc = PT_EXIT_OK;
    if (render_flat_profile(stdout, &fp, format, limit) != 0) {
        pt_err("report: cannot write the report to standard output");
        rc = PT_EXIT_USAGE;
    }
    flat_profile_free(&fp);
out:
    for (size_t i = 0; i < dirs.count; i++)
        free(dirs.dirs[i]);
    free(dirs.dirs);
    return rc;
}
