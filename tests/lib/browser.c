/* browser.c - see browser.h: pages in headless Chromium. */
#include "browser.h"

#include "spawn.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 90.0
/* Less than this share of pixels off the background is "nothing drawn". */
#define BLANK_FRACTION 0.002

static void *must(void *p)
{
    if (!p)
        cr_assert_fail("out of memory in test helper");
    return p;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return must(s);
}

static const char *chromium_path(void)
{
    static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    const char *env = getenv("PTPROF_CHROMIUM");
    if (env && *env)
        return env;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(*candidates); i++) {
        if (access(candidates[i], X_OK) == 0)
            return candidates[i];
    }
    return NULL;
}

bool browser_available(void)
{
    const char *p = chromium_path();
    return p && access(p, X_OK) == 0;
}

/* file:// URL of PATH (absolute), percent-encoding what a URL reserves. */
static char *file_url(const char *path)
{
    char *abs = NULL;
    if (path[0] == '/') {
        abs = must(strdup(path));
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof(cwd)))
            cr_assert_fail("getcwd: %s", strerror(errno));
        abs = str_printf("%s/%s", cwd, path);
    }
    size_t n = strlen(abs);
    char *url = must(malloc(8 + 3 * n + 1)), *q = url;
    q += sprintf(q, "file://");
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p))
            *q++ = (char)*p;
        else
            q += sprintf(q, "%%%02X", *p);
    }
    *q = '\0';
    free(abs);
    return url;
}

/* Chromium logs a console message as
 *   [PID:TID:DATE:INFO:CONSOLE:LINE] "text", source: URL (LINE)
 * (older versions: CONSOLE(LINE)); keep what follows the bracket. */
static void collect_console(struct browser_page *pg)
{
    size_t cap = 0;
    char *line = pg->log;
    while (line && *line) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *close = memchr(line, ']', len);
        if (line[0] == '[' && close) {
            char *tag = memmem(line, (size_t)(close - line), ":CONSOLE", 8);
            if (tag) {
                const char *msg = close + 1;
                while (*msg == ' ')
                    msg++;
                if (pg->nconsole == cap) {
                    cap = cap ? 2 * cap : 8;
                    pg->console = must(realloc(pg->console, cap * sizeof(*pg->console)));
                }
                pg->console[pg->nconsole++] = must(strndup(msg, len - (size_t)(msg - line)));
            }
        }
        line = end ? end + 1 : NULL;
    }
}

bool browser_open(const struct browser_opts *o, struct browser_page *pg)
{
    memset(pg, 0, sizeof(*pg));
    const char *exe = chromium_path();
    if (!exe) {
        pg->why = must(strdup("chromium is not installed (package chromium)"));
        return false;
    }
    char *dir = test_mkdtemp();
    char *profile = str_printf("%s/profile", dir);
    char *shot = o->screenshot ? must(strdup(o->screenshot)) : str_printf("%s/shot.png", dir);
    /* A page served over HTTP (http_serve.h) is opened at its URL. */
    char *base = strncmp(o->path, "http://", 7) == 0 ? must(strdup(o->path)) : file_url(o->path);
    char *url = str_printf("%s%s", base, o->suffix ? o->suffix : "");
    char *a_profile = str_printf("--user-data-dir=%s", profile);
    char *a_shot = str_printf("--screenshot=%s", shot);
    char *a_size =
        str_printf("--window-size=%d,%d", o->width ? o->width : 1200, o->height ? o->height : 800);
    char *a_budget = str_printf("--virtual-time-budget=%d", o->virtual_time_ms);
    char *e_cache = str_printf("XDG_CACHE_HOME=%s", dir);
    char *e_config = str_printf("XDG_CONFIG_HOME=%s", dir);
    char *e_home = str_printf("HOME=%s", dir);
    const char *argv[24];
    size_t n = 0;
    argv[n++] = exe;
    argv[n++] = "--headless";
    argv[n++] = "--no-sandbox";
    argv[n++] = "--disable-gpu";
    argv[n++] = a_profile;
    argv[n++] = "--no-first-run";
    argv[n++] = "--no-default-browser-check";
    argv[n++] = "--disable-extensions";
    argv[n++] = "--hide-scrollbars";
    argv[n++] = "--enable-logging=stderr";
    argv[n++] = "--v=0";
    argv[n++] = a_size;
    argv[n++] = a_shot;
    argv[n++] = "--dump-dom";
    if (o->virtual_time_ms > 0)
        argv[n++] = a_budget;
    argv[n++] = url;
    argv[n] = NULL;
    const char *env[] = {e_cache, e_config, e_home, NULL};
    struct spawn_opts so = {
        .argv = argv,
        .env = env,
        .timeout_s = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S,
    };
    struct spawn_result r;
    spawn_run(&so, &r);
    pg->log = r.err;
    pg->dom = r.out;
    r.err = r.out = NULL;
    collect_console(pg);
    pg->parse_error = strstr(pg->dom, "<parsererror") != NULL;

    size_t len = 0;
    char *png = test_read_file(shot, &len);
    char err[256];
    if (!png) {
        pg->why = str_printf("no screenshot (chromium %s)", spawn_status_text(r.status));
    } else if (!png_decode(png, len, &pg->shot, err, sizeof(err))) {
        pg->why = str_printf("screenshot %s: %s", shot, err);
    } else {
        pg->ran = true;
        png_stats(&pg->shot, &pg->stats);
        pg->blank = pg->stats.colours < 2 || pg->stats.nonbg < BLANK_FRACTION;
    }
    free(png);
    spawn_result_free(&r);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(shot);
    free(base);
    free(url);
    free(a_profile);
    free(a_shot);
    free(a_size);
    free(a_budget);
    free(e_cache);
    free(e_config);
    free(e_home);
    return pg->ran;
}

bool browser_page_clean(const struct browser_page *pg)
{
    return pg->ran && !pg->blank && !pg->parse_error && pg->nconsole == 0;
}

char *browser_page_describe(const struct browser_page *pg)
{
    char *s =
        str_printf("%s; %s; %.2f%% of the pixels drawn, %zu colours; %s; %zu console "
                   "message(s)",
                   pg->ran   ? "rendered"
                   : pg->why ? pg->why
                             : "did not run",
                   pg->blank ? "BLANK" : "not blank", 100 * pg->stats.nonbg, pg->stats.colours,
                   pg->parse_error ? "XML PARSE ERROR" : "parsed", pg->nconsole);
    for (size_t i = 0; i < pg->nconsole && i < 10; i++) {
        char *t = str_printf("%s\n  console: %s", s, pg->console[i]);
        free(s);
        s = t;
    }
    return s;
}

void browser_page_free(struct browser_page *pg)
{
    for (size_t i = 0; i < pg->nconsole; i++)
        free(pg->console[i]);
    free(pg->console);
    free(pg->why);
    free(pg->dom);
    free(pg->log);
    png_free(&pg->shot);
    memset(pg, 0, sizeof(*pg));
}
