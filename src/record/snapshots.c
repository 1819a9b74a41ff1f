/* snapshots.c - see snapshots.h */
#include "record/snapshots.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct snapshots {
    struct snapshot_options opts;
    char *pattern;
    char *current;
    char **done; /* finished files still on disk, oldest first */
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
    const char *prev = s->current ? s->current : (s->ndone ? s->done[s->ndone - 1] : NULL);
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

struct snapshots *snapshots_new(const char *pattern, const struct snapshot_options *opts)
{
    if (!opts->on)
        return NULL;
    struct snapshots *s = xcalloc(1, sizeof(*s));
    s->opts = *opts;
    s->pattern = xstrdup(pattern);
    s->current = name_now(s);
    s->opened_ns = monotonic_ns();
    return s;
}

const char *snapshots_path(const struct snapshots *s)
{
    return s->current;
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

/* Only the last MAX_FILES finished files stay. */
static void prune(struct snapshots *s)
{
    while (s->opts.max_files && s->ndone > s->opts.max_files) {
        if (unlink(s->done[0]) != 0 && errno != ENOENT)
            pt_warn("--switch-max-files: cannot remove %s: %s", s->done[0], strerror(errno));
        free(s->done[0]);
        memmove(s->done, s->done + 1, (s->ndone - 1) * sizeof(*s->done));
        s->ndone--;
    }
}

static void add_done(struct snapshots *s, char *path)
{
    s->done = xgrow(s->done, &s->done_cap, s->ndone + 1, sizeof(*s->done));
    s->done[s->ndone++] = path;
}

void snapshots_switch(struct snapshots *s, struct output *out, uint64_t now_ns)
{
    s->requested = false;
    s->opened_ns = now_ns; /* a file that cannot be opened is retried a period later */
    char *next = name_now(s);
    char *finished = s->current;
    bool opened;
    int rc = output_switch(out, next, &opened);
    if (!opened) {
        pt_warn("--switch-output: cannot start %s; %s goes on", next, finished);
        free(next);
        return;
    }
    if (rc != 0)
        pt_warn("--switch-output: %s could not be completed", finished);
    s->current = next;
    add_done(s, finished);
    prune(s);
}

void snapshots_free(struct snapshots *s)
{
    if (!s)
        return;
    if (access(s->current, F_OK) == 0) {
        add_done(s, s->current);
        s->current = NULL;
        prune(s);
    }
    for (size_t i = 0; i < s->ndone; i++)
        free(s->done[i]);
    free(s->done);
    free(s->current);
    free(s->pattern);
    free(s);
}
