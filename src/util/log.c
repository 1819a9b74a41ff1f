/* log.c - see log.h */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *progname = "ptprof";
static bool verbose;

void pt_set_progname(const char *name)
{
    progname = name;
}

const char *pt_progname(void)
{
    return progname;
}

void pt_set_verbose(bool on)
{
    verbose = on;
}

bool pt_verbose(void)
{
    return verbose;
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
    /* One fprintf per line keeps concurrent writers from interleaving. */
    char line[4096];
    vsnprintf(line, sizeof(line), fmt, ap);
    fprintf(stderr, "%s: %s%s\n", progname, prefix, line);
}

void pt_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", fmt, ap);
    va_end(ap);
}

void pt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning: ", fmt, ap);
    va_end(ap);
}

void pt_debug(const char *fmt, ...)
{
    if (!verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vreport("debug: ", fmt, ap);
    va_end(ap);
}
