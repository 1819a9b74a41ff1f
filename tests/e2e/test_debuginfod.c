/*
 * test_debuginfod.c - debug info from a real debuginfod server (elfutils'
 * `debuginfod`, Debian package debuginfod), started here on a loopback
 * port over a directory that holds the debug file of a stripped build of
 * the shares workload: names, files and lines come from the server, and
 * again from the client's cache once it is gone; a server that is down
 * gives one warning and the stripped names; a server that accepts and
 * never answers costs a bounded time; `ptprof record` never asks.
 */
#include "../lib/spawn.h"
#include "../unit/real_tools.h"
#include "test_record_common.h"
#include "symbol/build_id.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fixture {
    char *dir, *prog, *data, *hex;
};

static void sh(const char *dir, const char *cmd)
{
    char *full = xasprintf("cd '%s' && %s", dir, cmd);
    cr_assert_eq(system(full), 0, "%s", full);
    free(full);
}

/* shares built with -g, its debug info in DIR/srv/, stripped, recorded. */
static void fixture_make(struct fixture *f)
{
    f->dir = test_mkdtemp();
    const char *cut = strstr(__FILE__, "e2e/test_debuginfod.c");
    cr_assert(cut);
    char *rel = xasprintf("%.*sworkloads/shares.c", (int)(cut - __FILE__), __FILE__);
    char *src = realpath(rel, NULL);
    cr_assert(src, "cannot find %s", rel);
    char *cmd = xasprintf("cp '%s' prog.c && cc -std=gnu11 -O2 -g -pthread -o prog prog.c -lm && "
                          "mkdir srv && objcopy --only-keep-debug prog srv/prog.debug && "
                          "strip --strip-all prog",
                          src);
    sh(f->dir, cmd);
    f->prog = test_path(f->dir, "prog");
    f->data = test_path(f->dir, "prog.data");
    uint8_t id[64];
    int n = build_id_read(f->prog, id, sizeof(id));
    cr_assert_gt(n, 0);
    f->hex = xmalloc(2 * (size_t)n + 1);
    build_id_hex(id, (size_t)n, f->hex);
    char *ptprof = build_ptprof();
    const char *rec[] = {ptprof, "record", "-o", f->data, "--", f->prog, "1", "1", NULL};
    struct spawn_result res;
    run_ok(rec, NULL, &res);
    spawn_result_free(&res);
    free(ptprof);
    free(cmd);
    free(src);
    free(rel);
}

static void fixture_free(struct fixture *f)
{
    test_rmtree(f->dir);
    free(f->dir);
    free(f->prog);
    free(f->data);
    free(f->hex);
}

/* A loopback TCP socket listening on a free port (never accepting). */
static int listener(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(s, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(s, 16), 0);
    socklen_t len = sizeof(a);
    cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return s;
}

/* The HTTP status of GET PATH on the loopback PORT, 0 when no answer. */
static int http_status(int port, const char *path)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {2, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int status = 0;
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
        char *req = xasprintf("GET %s HTTP/1.0\r\n\r\n", path);
        char buf[64] = {0};
        if (write(s, req, strlen(req)) == (ssize_t)strlen(req) && read(s, buf, 63) > 12)
            sscanf(buf, "HTTP/%*s %d", &status);
        free(req);
    }
    close(s);
    return status;
}

/* debuginfod serving DIR/srv on a free loopback port, once it has the
 * debug file. */
static void start_server(const struct fixture *f, struct spawn_proc *srv, int *port)
{
    char *tool = test_need_tool("debuginfod");
    int s = listener(port);
    close(s);
    char *p = xasprintf("%d", *port), *db = test_path(f->dir, "db.sqlite");
    char *srvdir = test_path(f->dir, "srv");
    const char *argv[] = {tool, "-F", "-p", p, "-d", db, "-t", "0", "-g", "0", srvdir, NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 300};
    spawn_start(&o, srv);
    char *path = xasprintf("/buildid/%s/debuginfo", f->hex);
    int status = 0;
    for (int i = 0; i < 300 && status != 200; i++) {
        spawn_pump(srv, 0.1);
        status = http_status(*port, path);
    }
    cr_assert_eq(status, 200, "debuginfod does not serve %s:\n%s", path, srv->err);
    free(path);
    free(srvdir);
    free(db);
    free(p);
    free(tool);
}

static void stop_server(struct spawn_proc *srv)
{
    kill(srv->pid, SIGTERM);
    struct spawn_result res;
    spawn_finish(srv, &res);
    spawn_result_free(&res);
}

/* `ptprof report -k procedure,file,line --format csv` of the fixture with
 * the servers URLS and the client's cache in DIR/CACHE. */
static void report(const struct fixture *f, const char *urls, const char *cache,
                   struct spawn_result *res)
{
    char *ptprof = build_ptprof();
    char *u = xasprintf("DEBUGINFOD_URLS=%s", urls);
    char *c = xasprintf("DEBUGINFOD_CACHE_PATH=%s/%s", f->dir, cache);
    char *x = xasprintf("XDG_CACHE_HOME=%s/xdg-%s", f->dir, cache);
    const char *env[] = {u, c, x, "DEBUGINFOD_TIMEOUT", "PTPROF_DEBUG_ROOT=/nonexistent", NULL};
    const char *argv[] = {ptprof,     "report", "-k",    "procedure,file,line",
                          "--format", "csv",    f->data, NULL};
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 90};
    spawn_run(&o, res);
    cr_assert_eq(spawn_exit_code(res->status), 0, "%s", res->err);
    free(x);
    free(c);
    free(u);
    free(ptprof);
}

static void expect_names_from_the_server(const char *csv)
{
    static const char *const fns[] = {"work_heavy", "work_medium", "work_light", "work_tiny"};
    for (size_t i = 0; i < 4; i++) {
        const char *row = strstr(csv, fns[i]);
        cr_assert_not_null(row, "no %s in:\n%s", fns[i], csv);
        /* "work_heavy:/path/prog.c:93,..." */
        const char *file = row + strlen(fns[i]);
        const char *at = strstr(file, "prog.c:");
        cr_expect(file[0] == ':' && at && at < strchr(file, ','), "%s has its source file: %.200s",
                  fns[i], row);
        cr_expect_gt(at ? strtoul(at + 7, NULL, 10) : 0, 0, "%s has its line", fns[i]);
    }
    cr_expect_null(strstr(csv, "prog+0x"), "nothing of prog unnamed:\n%s", csv);
}

Test(debuginfod, names_and_lines_come_from_a_real_server, .timeout = 300)
{
    struct fixture f;
    fixture_make(&f);
    struct spawn_result res;
    report(&f, "http://127.0.0.1:1", "c0", &res);
    cr_expect_null(strstr(res.out, "work_heavy"), "stripped: no names without the server");
    spawn_result_free(&res);

    struct spawn_proc srv;
    int port;
    start_server(&f, &srv, &port);
    char *url = xasprintf("http://127.0.0.1:%d", port);
    report(&f, url, "c1", &res);
    expect_names_from_the_server(res.out);
    cr_expect_null(strstr(res.err, "debuginfod"), "no warning: %s", res.err);
    spawn_result_free(&res);
    char *cached = xasprintf("%s/c1/%s/debuginfo", f.dir, f.hex);
    cr_expect(test_file_exists(cached), "elfutils' client keeps %s", cached);
    free(cached);

    /* The server is gone; the client's cache still answers. */
    stop_server(&srv);
    report(&f, url, "c1", &res);
    expect_names_from_the_server(res.out);
    spawn_result_free(&res);
    free(url);
    fixture_free(&f);
}

Test(debuginfod, a_server_that_is_down_gives_one_warning, .timeout = 120)
{
    struct fixture f;
    fixture_make(&f);
    int port, s = listener(&port);
    close(s); /* nobody listens there now */
    char *url = xasprintf("http://127.0.0.1:%d", port);
    struct spawn_result res;
    report(&f, url, "c", &res);
    cr_expect_eq(count_occurrences(res.err, "debuginfod"), 1, "one warning:\n%s", res.err);
    cr_expect_not_null(strstr(res.err, "Connection refused"), "%s", res.err);
    cr_expect_not_null(strstr(res.err, url), "it names the server: %s", res.err);
    cr_expect_not_null(strstr(res.out, "prog+0x"), "the stripped names:\n%s", res.out);
    cr_expect_null(strstr(res.out, "work_heavy"));
    spawn_result_free(&res);
    free(url);
    fixture_free(&f);
}

Test(debuginfod, a_server_that_never_answers_costs_seconds, .timeout = 120)
{
    struct fixture f;
    fixture_make(&f);
    int port, s = listener(&port);
    char *url = xasprintf("http://127.0.0.1:%d", port);
    struct spawn_result res;
    report(&f, url, "c", &res);
    /* ptprof's DEBUGINFOD_TIMEOUT (5 s) per attempt; elfutils' own default
     * would be 90 s. */
    cr_expect_lt(res.wall_s, 40, "%.1f s", res.wall_s);
    cr_expect_not_null(strstr(res.err, "no answer in time"), "%s", res.err);
    cr_expect_not_null(strstr(res.out, "prog+0x"), "the stripped names:\n%s", res.out);
    spawn_result_free(&res);
    close(s);
    free(url);
    fixture_free(&f);
}

Test(debuginfod, recording_never_asks, .timeout = 120)
{
    struct fixture f;
    fixture_make(&f);
    /* Without unwind tables of its own, the program's frames have no CFI
     * in .eh_frame: an unwinder that looked for more would go to the debug
     * info, and to the server. */
    sh(f.dir, "cc -std=gnu11 -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -pthread "
              "-o noeh prog.c -lm && strip noeh");
    int port, s = listener(&port);
    fcntl(s, F_SETFL, O_NONBLOCK);
    char *ptprof = build_ptprof(), *out = test_path(f.dir, "dwarf.data");
    char *u = xasprintf("DEBUGINFOD_URLS=http://127.0.0.1:%d", port);
    char *c = xasprintf("DEBUGINFOD_CACHE_PATH=%s/rec-cache", f.dir);
    const char *env[] = {u, c, "PTPROF_DEBUG_ROOT=/nonexistent", NULL};
    char *noeh = test_path(f.dir, "noeh");
    const char *argv[] = {ptprof, "record", "-g", "dwarf", "-o", out, "--", noeh, "1", "1", NULL};
    struct spawn_result res;
    run_ok(argv, env, &res);
    spawn_result_free(&res);
    int conn = accept(s, NULL, NULL);
    cr_expect_lt(conn, 0, "the recorder asked the debuginfod server");
    if (conn >= 0)
        close(conn);
    close(s);
    free(noeh);
    free(c);
    free(u);
    free(out);
    free(ptprof);
    fixture_free(&f);
}
