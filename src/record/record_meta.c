/* record_meta.c - see record_meta.h */
#include "record/record_meta.h"
#include "record/process.h"
#include "record/recorder.h"
#include "util/timeutil.h"
#include "util/version.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

/* argv joined by spaces, each argument shell-quoted when it needs it. */
static void command_line(char *const *argv, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (char *const *a = argv; a && *a && len < size - 1; a++) {
        bool quote = (*a)[0] == '\0' || strpbrk(*a, " \t\n'\"\\$`;&|<>()*?[]#~") != NULL;
        len +=
            (size_t)snprintf(buf + len, size - len, quote ? "%s'%s'" : "%s%s", len ? " " : "", *a);
    }
}

void record_meta_write(struct output *out, const struct record_options *o, pid_t first_pid,
                       const struct engine_choice *engine, size_t stack_size)
{
    char buf[4096];
    if (o->attach_pid)
        proc_cmdline(o->attach_pid, buf, sizeof(buf));
    else
        command_line(o->argv, buf, sizeof(buf));
    output_meta(out, "command", buf);
    struct utsname u;
    if (uname(&u) == 0) {
        output_meta(out, "host", u.nodename);
        snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
        output_meta(out, "kernel", buf);
    }
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)realtime_ns());
    output_meta(out, "start_time", buf);
    snprintf(buf, sizeof(buf), "%g", o->frequency);
    output_meta(out, "frequency", buf);
    output_meta(out, "stacks", stack_mode_name(o->stack_mode));
    snprintf(buf, sizeof(buf), "%zu", stack_size);
    output_meta(out, "stack_size", buf);
    snprintf(buf, sizeof(buf), "%d", (int)first_pid);
    output_meta(out, "pid", buf);
    output_meta(out, "ptprof_version", PTPROF_VERSION);
    if (o->attach_pid)
        output_meta(out, "attached", "1");
    output_meta(out, "engine", engine_name(engine->engine));
    output_meta(out, "engine_reason", engine->reason);
}
