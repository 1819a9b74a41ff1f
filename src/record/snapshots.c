/* snapshots.c - see snapshots.h */
#include "record/snapshots.h"
#include "record/detached.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A finished file: its name, the native recording it is converted from
 * (NULL: it is that recording) and the conversion under way (-1: none). */
struct done_file {
    char *path, *native;
    bool converting;
    struct detached_job job;
};

struct snapshots {
    struct snapshot_options opts;
    char *pattern;
    char *current;          /* the name the current file ends up with */
    char *current_native;   /* what the output writes to, when converted */
    struct done_file *done; /* finished files still on disk, oldest first */
    size_t ndone, done_cap;
    uint64_t opened_ns;
    bool requested;
};

int snapshots_parse(const char *value, struct snapshot_options *out)
{
    out->on = true;
    if (!value || strcmp(value, "signal") == 0) {
        out->on_signal = true;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    double seconds = 0, bytes = 0;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        seconds = 1;
    else if (strcmp(end, "m") == 0)
        seconds = 60;
    else if (strcmp(end, "h") == 0)
        seconds = 3600;
    else if (strcmp(end, "B") == 0)
        bytes = 1;
    else if (strcmp(end, "K") == 0)
        bytes = 1024;
    else if (strcmp(end, "M") == 0)
        bytes = 1024.0 * 1024;
    else if (strcmp(end, "G") == 0)
        bytes = 1024.0 * 1024 * 1024;
    double scaled = v * (seconds > 0 ? seconds : bytes);
    if (errno || end == value || !(v > 0) || (seconds == 0 && bytes == 0) ||
        (seconds > 0 && scaled > 1e7) || (bytes > 0 && (scaled < 4096 || scaled > 1e15))) {
        pt_err("--switch-output=%s: 'signal', a period (10s, 5m, 1h) or a size from 4K "
               "(512K, 100M, 1G)",
               value);
        return -1;
    }
    if (seconds > 0)
        out->every_s = scaled;
    else
        out->every_bytes = (uint64_t)scaled;
    return 0;
}

/* PATTERN for a file opened now. */
static char *name_now(const struct snapshots *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    size_t n = strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
    snprintf(stamp + n, sizeof(stamp) - n, "%03ld", ts.tv_nsec / 1000000);
    const char *t = strstr(s->pattern, "%t");
    char *name = t ? xasprintf("%.*s%s%s", (int)(t - s->pattern), s->pattern, stamp, t + 2)
                   : xasprintf("%s.%s", s->pattern, stamp);
    /* Two files within a millisecond (SIGUSR2 twice). */
    const char *prev = s->current ? s->current : (s->ndone ? s->done[s->ndone - 1].path : NULL);
    for (int k = 2; prev && strncmp(prev, name, strlen(name)) == 0; k++) {
        char *again =
            t ? xasprintf("%.*s%s-%d%s", (int)(t - s->pattern), s->pattern, stamp, k, t + 2)
              : xasprintf("%s.%s-%d", s->pattern, stamp, k);
        free(name);
        name = again;
        if (strcmp(prev, name) != 0)
            break;
    }
    return name;
}

/* The hidden native recording beside FINAL: ".BASE.data" in its folder
 * (a collector's glob for the series does not match it). */
static char *native_beside(const char *final)
{
    const char *slash = strrchr(final, '/');
    return slash ? xasprintf("%.*s.%s.data", (int)(slash - final + 1), final, slash + 1)
                 : xasprintf(".%s.data", final);
}

struct snapshots *snapshots_new(const char *pattern, const struct snapshot_options *opts)
{
    if (!opts->on)
        return NULL;
    struct snapshots *s = xcalloc(1, sizeof(*s));
    s->opts = *opts;
    s->pattern = xstrdup(pattern);
    s->current = name_now(s);
    if (opts->convert)
        s->current_native = native_beside(s->current);
    s->opened_ns = monotonic_ns();
    return s;
}

const char *snapshots_path(const struct snapshots *s)
{
    return s->current_native ? s->current_native : s->current;
}

/* What a conversion process is given (its own copy of memory). */
struct conversion {
    int (*convert)(const char *native, const char *path);
    const char *native, *path;
};

static int convert_file(void *ctx)
{
    const struct conversion *c = ctx;
    if (c->convert(c->native, c->path) != 0) {
        pt_err("--switch-output: could not write %s; the recording is kept in %s", c->path,
               c->native);
        return -1;
    }
    if (unlink(c->native) != 0 && errno != ENOENT)
        pt_warn("--switch-output: cannot remove %s: %s", c->native, strerror(errno));
    return 0;
}

/* Start converting a finished file, off the recording: false when it was
 * done here (no process could be made). */
static bool start_conversion(const struct snapshots *s, const char *native, const char *path,
                             struct detached_job *job)
{
    struct conversion c = {s->opts.convert, native, path};
    if (detached_start(convert_file, &c, job) == 0)
        return true;
    convert_file(&c);
    return false;
}

void snapshots_request(struct snapshots *s)
{
    if (s && s->opts.on_signal)
        s->requested = true;
}

bool snapshots_due(const struct snapshots *s, uint64_t now_ns, uint64_t bytes)
{
    if (!s)
        return false;
    return s->requested ||
           (s->opts.every_s > 0 && now_ns - s->opened_ns >= (uint64_t)(s->opts.every_s * 1e9)) ||
           (s->opts.every_bytes > 0 && bytes >= s->opts.every_bytes);
}

static void finish_job(struct done_file *d)
{
    if (d->converting)
        detached_wait(&d->job); /* a failure said so itself */
    d->converting = false;
}

/* Reap the conversions that are over: a long series holds no process or
 * descriptor of its past. */
static void reap_finished(struct snapshots *s)
{
    for (size_t i = 0; i < s->ndone; i++)
        if (s->done[i].converting && detached_finished(&s->done[i].job))
            finish_job(&s->done[i]);
}

/* Only the last MAX_FILES finished files stay (counted by the names the
 * series asks for: a file still being converted is waited for first). */
static void prune(struct snapshots *s)
{
    while (s->opts.max_files && s->ndone > s->opts.max_files) {
        struct done_file *d = &s->done[0];
        finish_job(d);
        if (unlink(d->path) != 0 && errno != ENOENT)
            pt_warn("--switch-max-files: cannot remove %s: %s", d->path, strerror(errno));
        if (d->native)
            unlink(d->native); /* kept by a failed conversion */
        free(d->path);
        free(d->native);
        memmove(s->done, s->done + 1, (s->ndone - 1) * sizeof(*s->done));
        s->ndone--;
    }
}

/* PATH (from NATIVE when converted) is finished: converted, off the
 * recording, when the series asks for another format. */
static void add_done(struct snapshots *s, char *path, char *native)
{
    s->done = xgrow(s->done, &s->done_cap, s->ndone + 1, sizeof(*s->done));
    struct done_file *d = &s->done[s->ndone++];
    *d = (struct done_file){.path = path, .native = native};
    d->converting = native && start_conversion(s, native, path, &d->job);
}

void snapshots_switch(struct snapshots *s, struct output *out, uint64_t now_ns)
{
    s->requested = false;
    s->opened_ns = now_ns; /* a file that cannot be opened is retried a period later */
    char *next = name_now(s);
    char *next_native = s->opts.convert ? native_beside(next) : NULL;
    char *finished = s->current, *finished_native = s->current_native;
    bool opened;
    int rc = output_switch(out, next_native ? next_native : next, &opened);
    if (!opened) {
        pt_warn("--switch-output: cannot start %s; %s goes on", next, finished);
        free(next);
        free(next_native);
        return;
    }
    s->current = next;
    s->current_native = next_native;
    if (rc != 0) {
        pt_warn("--switch-output: %s could not be completed", finished);
        free(finished_native);
        finished_native = NULL; /* nothing to convert */
    }
    reap_finished(s);
    add_done(s, finished, finished_native);
    prune(s);
}

void snapshots_free(struct snapshots *s)
{
    if (!s)
        return;
    if (access(snapshots_path(s), F_OK) == 0) {
        add_done(s, s->current, s->current_native);
        s->current = s->current_native = NULL;
    }
    /* The profiler ends when every file of the series is written. */
    for (size_t i = 0; i < s->ndone; i++)
        finish_job(&s->done[i]);
    prune(s);
    for (size_t i = 0; i < s->ndone; i++) {
        free(s->done[i].path);
        free(s->done[i].native);
    }
    free(s->done);
    free(s->current);
    free(s->current_native);
    free(s->pattern);
    free(s);
}
