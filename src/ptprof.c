/*
 * ptprof.c - entry point: dispatch to a subcommand (git/perf style).
 *
 * Invoked as "sampler" (a link to this binary) it behaves as the original
 * tool's command line; otherwise argv[1] names the subcommand.
 */
#include "cli/cli.h"
#include "util/log.h"
#include "util/version.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: ptprof COMMAND [OPTIONS] [ARGS]\n\n"
                 "A sampling profiler for unmodified Linux programs.\n\n"
                 "Commands:\n");
    for (const struct command *c = ptprof_commands; c->name; c++)
        fprintf(out, "  %-12s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'ptprof COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (strcmp(self, "sampler") == 0) {
        pt_set_progname("sampler");
        return cmd_sampler(argc, argv);
    }
    if (argc < 2) {
        usage(stderr);
        return PT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return PT_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptprof %s\n", PTPROF_VERSION);
        return PT_EXIT_OK;
    }
    for (const struct command *c = ptprof_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    pt_err("'%s' is not a ptprof command; see 'ptprof --help'", argv[1]);
    return PT_EXIT_USAGE;
}
