/* perf_counters.c - see perf_counters.h */
#include "record/perf/perf_counters.h"
#include "util/log.h"

#include <linux/perf_event.h>
#include <string.h>

#define HW PERF_TYPE_HARDWARE
#define SW PERF_TYPE_SOFTWARE

/* perf's names (tools/perf/util/parse-events.c), the ones every kernel has. */
static const struct perf_counter counters[] = {
    {"cycles", "cpu-cycles", HW, PERF_COUNT_HW_CPU_CYCLES, "count", "CPU cycles", false},
    {"instructions", NULL, HW, PERF_COUNT_HW_INSTRUCTIONS, "count", "instructions retired", false},
    {"cache-references", NULL, HW, PERF_COUNT_HW_CACHE_REFERENCES, "count",
     "last-level cache accesses", false},
    {"cache-misses", NULL, HW, PERF_COUNT_HW_CACHE_MISSES, "count", "last-level cache misses",
     false},
    {"branch-instructions", "branches", HW, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "count",
     "branch instructions retired", false},
    {"branch-misses", NULL, HW, PERF_COUNT_HW_BRANCH_MISSES, "count", "mispredicted branches",
     false},
    {"bus-cycles", NULL, HW, PERF_COUNT_HW_BUS_CYCLES, "count", "bus cycles", false},
    {"stalled-cycles-frontend", "idle-cycles-frontend", HW, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
     "count", "cycles the front end stalled", false},
    {"stalled-cycles-backend", "idle-cycles-backend", HW, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
     "count", "cycles the back end stalled", false},
    {"ref-cycles", NULL, HW, PERF_COUNT_HW_REF_CPU_CYCLES, "count",
     "reference cycles (not scaled by frequency)", false},
    {"cpu-clock", NULL, SW, PERF_COUNT_SW_CPU_CLOCK, "nanoseconds", "CPU clock time", false},
    {"task-clock", NULL, SW, PERF_COUNT_SW_TASK_CLOCK, "nanoseconds", "time the thread ran", false},
    {"page-faults", "faults", SW, PERF_COUNT_SW_PAGE_FAULTS, "count", "page faults", false},
    {"minor-faults", NULL, SW, PERF_COUNT_SW_PAGE_FAULTS_MIN, "count",
     "page faults served without I/O", false},
    {"major-faults", NULL, SW, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "count", "page faults that read",
     false},
    /* The scheduler counts these from kernel mode only. */
    {"context-switches", "cs", SW, PERF_COUNT_SW_CONTEXT_SWITCHES, "count",
     "times the thread was switched out", true},
    {"cpu-migrations", "migrations", SW, PERF_COUNT_SW_CPU_MIGRATIONS, "count",
     "moves to another CPU", true},
    {"alignment-faults", NULL, SW, PERF_COUNT_SW_ALIGNMENT_FAULTS, "count",
     "unaligned accesses fixed up by the kernel", false},
    {"emulation-faults", NULL, SW, PERF_COUNT_SW_EMULATION_FAULTS, "count",
     "instructions the kernel emulated", false},
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static const struct perf_counter *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < NCOUNTERS; i++) {
        const struct perf_counter *c = &counters[i];
        if ((strlen(c->name) == len && strncmp(c->name, name, len) == 0) ||
            (c->alias && strlen(c->alias) == len && strncmp(c->alias, name, len) == 0))
            return c;
    }
    return NULL;
}

bool perf_counter_is_hardware(const struct perf_counter *c)
{
    return c->type == PERF_TYPE_HARDWARE;
}

int perf_counters_parse(const char *spec, struct perf_counter_list *out)
{
    memset(out, 0, sizeof(*out));
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            pt_err("-e '%s': empty event name", spec);
            return -1;
        }
        const struct perf_counter *c = lookup(p, len);
        if (!c) {
            pt_err("-e: unknown event '%.*s'; see ptprof record --help-events", (int)len, p);
            return -1;
        }
        for (size_t i = 0; i < out->n; i++) {
            if (out->c[i] == c) {
                pt_err("-e: event '%s' given twice", c->name);
                return -1;
            }
        }
        if (out->n == PERF_COUNTERS_MAX) {
            pt_err("-e: at most %d events are read with each sample", PERF_COUNTERS_MAX);
            return -1;
        }
        out->c[out->n++] = c;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int perf_counters_check(const char *spec)
{
    struct perf_counter_list list;
    return perf_counters_parse(spec, &list);
}

void perf_counters_list(FILE *out)
{
    fprintf(out, "Events for -e (read with each sample by the perf engine):\n");
    for (int hw = 1; hw >= 0; hw--) {
        fprintf(out, "\n%s\n",
                hw ? "On the CPU's performance monitoring unit (where it has one):"
                   : "In software (every kernel):");
        for (size_t i = 0; i < NCOUNTERS; i++) {
            const struct perf_counter *c = &counters[i];
            if (perf_counter_is_hardware(c) != (hw == 1))
                continue;
            char names[64];
            snprintf(names, sizeof(names), "%s%s%s", c->name, c->alias ? ", " : "",
                     c->alias ? c->alias : "");
            fprintf(out, "  %-42s %s%s\n", names, c->about, c->kernel_only ? " (*)" : "");
        }
    }
    fprintf(out, "\nCounters count in user and kernel mode where kernel.perf_event_paranoid\n"
                 "(1 or below) or CAP_PERFMON allows it, else in user mode only; (*) happens\n"
                 "in kernel mode only, so it needs that permission.\n");
}
