/*
 * real_tools.h - what the tests that hold ptprof against real tools share
 * (gperftools, folded stacks, perf script): running the tools and
 * ptprof itself, per-function tallies, reading `ptprof report --format csv` and folded
 * lines, loading a buffer with its messages captured, and a gzip cut
 * short.
 */
#ifndef PTPROF_TESTS_UNIT_REAL_TOOLS_H
#define PTPROF_TESTS_UNIT_REAL_TOOLS_H

#include "../lib/spawn.h"
#include "format/load.h"
#include "model/profile.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void run_ok(const char *const *argv, const char *const *env, struct spawn_result *res)
{
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 180};
    spawn_run(&o, res);
    cr_assert_eq(spawn_exit_code(res->status), 0, "%s %s: %s\n%s", argv[0], argv[1] ? argv[1] : "",
                 spawn_status_text(res->status), res->err);
}

/* The built ptprof run with ARGS (NULL-terminated, at most 30), failing
 * the test unless it exits 0: its stdout (the caller frees it). */
static inline char *ptprof_stdout(const char *const *args)
{
    char *ptprof = build_ptprof();
    const char *argv[32] = {ptprof};
    size_t n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    char *out = xstrdup(res.out);
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

struct fn_count {
    char name[1024];
    double value;
};

struct fn_counts {
    struct fn_count *items;
    size_t n;
    double total;
};

static inline void fn_add(struct fn_counts *c, const char *name, double v)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].name, name) == 0) {
            c->items[i].value += v;
            return;
        }
    c->items = realloc(c->items, (c->n + 1) * sizeof(*c->items));
    snprintf(c->items[c->n].name, sizeof(c->items[c->n].name), "%s", name);
    c->items[c->n++].value = v;
}

static inline double fn_get(const struct fn_counts *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].name, name) == 0)
            return c->items[i].value;
    return 0;
}

static inline void fn_free(struct fn_counts *c)
{
    free(c->items);
    memset(c, 0, sizeof(*c));
}

/* One CSV field (RFC 4180 quotes) from *AT into BUF; *AT moves past it. */
static inline void csv_field(const char **at, char *buf, size_t size)
{
    const char *p = *at;
    size_t n = 0;
    bool quoted = *p == '"';
    p += quoted;
    for (; *p && *p != '\n' && (quoted || *p != ','); p++) {
        if (quoted && *p == '"') {
            if (p[1] != '"') {
                quoted = false;
                continue;
            }
            p++;
        }
        if (n + 1 < size)
            buf[n++] = *p;
    }
    buf[n] = '\0';
    *at = *p == ',' ? p + 1 : p;
}

/* `ptprof report FILE -k procedure --metric METRIC --format csv` plus
 * EXTRA (NULL-terminated, may be NULL): COLUMN per function into OUT,
 * its sum over the rows in OUT->total. */
static inline void report_column(const char *file, const char *metric, const char *column,
                                 const char *const *extra, struct fn_counts *out)
{
    char *ptprof = build_ptprof();
    /* No --limit: every row, also those with nothing of their own. */
    const char *argv[32] = {ptprof,     "report", "--format",    "csv", "-k",        "procedure",
                            "--metric", metric,   "--threshold", "0",   "--no-cache"};
    size_t n = 11;
    for (size_t i = 0; extra && extra[i] && n < 30; i++)
        argv[n++] = extra[i];
    argv[n++] = file;
    argv[n] = NULL;
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    memset(out, 0, sizeof(*out));
    const char *line = res.out;
    int col = -1;
    char field[1024];
    for (int i = 0; *line && *line != '\n'; i++) {
        csv_field(&line, field, sizeof(field));
        if (strcmp(field, column) == 0)
            col = i;
    }
    cr_assert_geq(col, 1, "no column %s in:\n%s", column, res.out);
    while (*line == '\n' && line[1]) {
        line++;
        char key[1024];
        csv_field(&line, key, sizeof(key));
        double v = 0;
        for (int i = 1; i <= col; i++) {
            csv_field(&line, field, sizeof(field));
            v = strtod(field, NULL);
        }
        line += strcspn(line, "\n");
        out->total += v;
        fn_add(out, key, v);
    }
    spawn_result_free(&res);
    free(ptprof);
}

/* Folded TEXT's tallies, read here without ptprof's reader: per leaf
 * function (SELF), per function anywhere in a line, once a line (TOTAL),
 * from frame SKIP on (1: after a process frame).  Checks that lines are
 * sorted and distinct, as the writer promises. */
static inline void folded_tally(const char *text, size_t skip, struct fn_counts *self,
                                struct fn_counts *total)
{
    memset(self, 0, sizeof(*self));
    memset(total, 0, sizeof(*total));
    char *copy = strdup(text), *prev = NULL;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (prev)
            cr_expect_lt(strcmp(prev, line), 0, "not sorted or repeated: '%s' then '%s'", prev,
                         line);
        prev = line;
        char *sp = strrchr(line, ' ');
        cr_assert_not_null(sp, "no count in '%s'", line);
        double v = strtod(sp + 1, NULL);
        self->total += v;
        char stack[8192];
        snprintf(stack, sizeof(stack), "%.*s", (int)(sp - line), line);
        char *frames[4096];
        size_t n = 0;
        for (char *s2 = NULL, *f = strtok_r(stack, ";", &s2); f && n < 4096;
             f = strtok_r(NULL, ";", &s2))
            frames[n++] = f;
        if (n <= skip)
            continue;
        fn_add(self, frames[n - 1], v);
        for (size_t i = skip; i < n; i++) {
            bool again = false;
            for (size_t k = skip; k < i && !again; k++)
                again = strcmp(frames[k], frames[i]) == 0;
            if (!again)
                fn_add(total, frames[i], v);
        }
    }
    free(copy);
}

/* LOAD(NAME, DATA, LEN, P) with standard error captured and returned. */
static inline char *load_captured(int (*load)(const char *, const void *, size_t, struct profile *),
                                  const char *name, const void *data, size_t len, struct profile *p,
                                  int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    cr_assert_not_null(mem);
    FILE *saved = stderr;
    stderr = mem;
    *rc = load(name, data, len, p);
    stderr = saved;
    fclose(mem);
    return text;
}

/* A text a reader must refuse, and what its message must say. */
struct rejected_text {
    const char *text;
    size_t len;
    const char *where;
};

/* Every case fails to load with WHERE in its message and leaves P empty. */
static inline void expect_rejected(int (*load)(const char *, const void *, size_t,
                                               struct profile *),
                                   const char *name, const struct rejected_text *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct profile p;
        int rc;
        char *msg = load_captured(load, name, cases[i].text, cases[i].len, &p, &rc);
        cr_expect_eq(rc, -1, "case %zu accepted", i);
        cr_expect_not_null(strstr(msg, cases[i].where), "case %zu: \"%s\" not in: %s", i,
                           cases[i].where, msg);
        cr_expect_eq(p.nsamples, 0);
        cr_expect_null(p.format);
        profile_free(&p);
        free(msg);
    }
}

/* The function name at PC (as a leaf, or a caller's frame) in P's table. */
static inline const char *location_name(const struct profile *p, uint32_t pid, uint64_t pc,
                                        bool return_address)
{
    for (size_t i = 0; i < p->nlocations; i++) {
        const struct prof_location *l = &p->locations[i];
        if (l->pid == pid && l->pc == pc && l->return_address == return_address && l->nframes > 0)
            return l->frames[l->nframes - 1].function;
    }
    return NULL;
}

static inline void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* TEXT (LEN bytes) written to a file named NAME, where `ptprof info`
 * must count one thread sample cut short and say WARNING on stderr. */
static inline void expect_info_counts_one_cut(const char *name, const char *text, size_t len,
                                              const char *warning)
{
    char *dir = test_mkdtemp(), *path = test_path(dir, name), *ptprof = build_ptprof();
    write_file(path, text, len);
    struct spawn_result res;
    run_ok((const char *[]){ptprof, "info", path, NULL}, NULL, &res);
    cr_expect_not_null(strstr(res.out, "1 thread sample cut short (outer frames lost)"), "%s",
                       res.out);
    cr_expect_not_null(strstr(res.err, warning), "%s", res.err);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(path);
    free(ptprof);
}

/* PLAIN gzipped beside it by gzip itself (PLAIN.gz, which GZ names), then
 * that file cut in half: *WHOLE is PLAIN loaded, *PART the cut file
 * loaded with its warning silenced; both must load. */
static inline void load_whole_and_cut_gzip(const char *plain, const char *gz, struct profile *whole,
                                           struct profile *part)
{
    char *gzip = test_need_tool("gzip");
    struct spawn_result res;
    run_ok((const char *[]){gzip, "-k", "-9", plain, NULL}, NULL, &res);
    spawn_result_free(&res);
    size_t len;
    char *z = test_read_file(gz, &len);
    cr_assert_not_null(z);
    write_file(gz, z, len / 2);
    cr_assert_eq(profile_load(plain, whole), 0);
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    int rc = profile_load(gz, part);
    fclose(stderr);
    stderr = saved;
    cr_assert_eq(rc, 0);
    free(z);
    free(gzip);
}

#endif
