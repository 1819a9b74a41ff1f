/* commands.c - the subcommand table ptprof dispatches on. */
#include "cli/cli.h"

#include <stddef.h>

const struct command ptprof_commands[] = {
    {"record", "run a command and sample all its threads into a profile", cmd_record},
    {"postprocess", "symbolize a raw profile into a self-contained .pbin", cmd_postprocess},
    {"report", "show where a profile's time went", cmd_report},
    {"compare", "compare profiles with a baseline, key by key", cmd_compare},
    {"timeline", "draw a profile over time: channels and what each thread ran", cmd_timeline},
    {"flamegraph", "draw a profile's call stacks as an interactive SVG flame graph",
     cmd_flamegraph},
    {"convert", "convert a profile to another format", cmd_convert},
    {"info", "describe profiles: program, duration, samples, completeness", cmd_info},
    {"dump", "print every record of a raw profile as text", cmd_dump},
    {NULL, NULL, NULL},
};
