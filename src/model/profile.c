/*
 * profile.c - see profile.h: the in-memory profile's life cycle, and the
 * words a profile's channel kinds and exit statuses are described with.
 */
#include "model/profile.h"
#include "util/xalloc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof(*p));
}

void profile_free(struct profile *p)
{
    if (!p)
        return;
    free(p->format);
    for (size_t i = 0; i < p->nmeta; i++) {
        free(p->meta[i].key);
        free(p->meta[i].value);
    }
    free(p->meta);
    for (size_t i = 0; i < p->nchannels; i++) {
        free(p->channels[i].name);
        free(p->channels[i].unit);
    }
    free(p->channels);
    for (size_t i = 0; i < p->nvalue_types; i++) {
        free(p->value_types[i].name);
        free(p->value_types[i].unit);
    }
    free(p->value_types);
    free(p->default_metric);
    for (size_t i = 0; i < p->nprocesses; i++)
        free(p->processes[i].exe);
    free(p->processes);
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].name);
    free(p->threads);
    for (size_t i = 0; i < p->nmaps; i++)
        free(p->maps[i].path);
    free(p->maps);
    for (size_t i = 0; i < p->nimages; i++) {
        free(p->images[i].name);
        free(p->images[i].data);
    }
    free(p->images);
    for (size_t i = 0; i < p->nstacks; i++)
        free(p->stacks[i].pcs);
    free(p->stacks);
    for (size_t i = 0; i < p->nsamples; i++) {
        free(p->samples[i].values);
        free(p->samples[i].threads);
        free(p->samples[i].weights);
        free(p->samples[i].thread_values);
    }
    free(p->samples);
    for (size_t i = 0; i < p->nlocations; i++) {
        for (uint32_t f = 0; f < p->locations[i].nframes; f++) {
            struct prof_sym_frame *fr = &p->locations[i].frames[f];
            free(fr->binary);
            free(fr->path);
            free(fr->function);
            free(fr->mangled);
            free(fr->file);
        }
        free(p->locations[i].frames);
    }
    free(p->locations);
    free(p->arcs);
    profile_init(p);
}

const char *profile_meta(const struct profile *p, const char *key)
{
    /* A key written twice means the later value replaces the earlier. */
    for (size_t i = p->nmeta; i-- > 0;)
        if (strcmp(p->meta[i].key, key) == 0)
            return p->meta[i].value;
    return NULL;
}

size_t profile_add_value_type(struct profile *p, const char *name, const char *unit,
                              enum prof_value_agg agg)
{
    p->value_types = xrealloc(p->value_types, (p->nvalue_types + 1) * sizeof(*p->value_types));
    p->value_types[p->nvalue_types] =
        (struct prof_value_type){xstrdup(name), xstrdup(unit ? unit : ""), agg};
    return p->nvalue_types++;
}

int profile_value_type(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < p->nvalue_types; i++)
        if (strcmp(p->value_types[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *profile_value_agg_name(enum prof_value_agg agg)
{
    switch (agg) {
    case PROF_VALUE_COUNTER:
        return "counter";
    case PROF_VALUE_LEVEL:
        return "level";
    case PROF_VALUE_SUM:
    default:
        return "sum";
    }
}

uint64_t profile_truncated_stacks(const struct profile *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        for (uint32_t j = 0; j < p->samples[i].nthreads; j++)
            n += (p->samples[i].threads[j].flags & PROF_THREAD_STACK_TRUNCATED) != 0;
    return n;
}

const char *profile_kind_name(enum pmu_kind kind)
{
    switch (kind) {
    case PMU_KIND_CURRENT:
        return "current";
    case PMU_KIND_VOLTAGE:
        return "voltage";
    case PMU_KIND_POWER:
        return "power";
    case PMU_KIND_ENERGY:
        return "energy";
    case PMU_KIND_CUSTOM:
    default:
        return "custom";
    }
}

void profile_describe_status(int32_t status, char *buf, size_t len)
{
    int st = (int)status;
    if (WIFEXITED(st)) {
        snprintf(buf, len, "exit %d", WEXITSTATUS(st));
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
            snprintf(buf, len, "killed by SIG%s%s", abbrev, WCOREDUMP(st) ? " (core dumped)" : "");
        else
            snprintf(buf, len, "killed by signal %d%s", sig, WCOREDUMP(st) ? " (core dumped)" : "");
    } else {
        snprintf(buf, len, "status 0x%x", (unsigned)st);
    }
}
