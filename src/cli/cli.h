/*
 * cli.h - the subcommands.  One file per command in src/cli/, each thin:
 * parse options, call the library, map the outcome to an exit code
 * (util/log.h: 0 ok, 1 usage, 2 bad input; record returns the target's).
 */
#ifndef PTPROF_CLI_CLI_H
#define PTPROF_CLI_CLI_H

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/* What record writes and report reads unless told, as perf.data for perf. */
#define PT_DEFAULT_PROFILE "ptprof.data"

int cmd_record(int argc, char **argv);
int cmd_sampler(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_postprocess(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* The format convert writes to a file named PATH when not told (its
 * "--to" name: "native", "pprof", "gmon"...), as record picks it too. */
const char *convert_output_format(const char *path);

/* The table ptprof dispatches on, NULL-terminated. */
extern const struct command ptprof_commands[];

#endif
