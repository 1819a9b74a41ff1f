/*
 * log.h - diagnostics for every ptprof command.
 *
 * Contract: messages go to stderr prefixed with the program name
 * ("ptprof: " or "sampler: "), one line each.  pt_err() reports a failure the
 * caller will turn into an exit code; pt_warn() reports something the command
 * survives; pt_debug() prints only when verbose output was requested.
 * Readers of files always name the file and the offset or line in the text.
 */
#ifndef PTPROF_UTIL_LOG_H
#define PTPROF_UTIL_LOG_H

#include <stdbool.h>

/* Exit codes shared by all commands (DESIGN.md, "Conventions"). */
enum pt_exit {
    PT_EXIT_OK = 0,
    PT_EXIT_USAGE = 1,       /* bad command line, unusable output path */
    PT_EXIT_BAD_INPUT = 2,   /* a file we were asked to read is damaged */
    PT_EXIT_INCOMPLETE = 74, /* record: the profile could not be written whole (EX_IOERR) */
    PT_EXIT_CANNOT_EXEC = 126,
    PT_EXIT_NOT_FOUND = 127,
};

void pt_set_progname(const char *name);
const char *pt_progname(void);
void pt_set_verbose(bool verbose);
bool pt_verbose(void);

void pt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
