/* fuzz_perf_script.c - libFuzzer target for the perf script reader
 * (interop/perf_script.h): whatever it accepts is a consistent profile whose
 * every PC resolves from its locations table, with a process for every
 * thread. */
#include "interop/perf_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

static bool has_location(const struct profile *p, uint32_t pid, uint64_t pc, bool ra)
{
    for (size_t i = 0; i < p->nlocations; i++)
        if (p->locations[i].pid == pid && p->locations[i].pc == pc &&
            p->locations[i].return_address == ra)
            return p->locations[i].nframes > 0;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool detected = perf_script_detect(data, size);
    struct profile p;
    if (perf_script_load_buffer("fuzz", data, size, &p) != 0) {
        if (p.nsamples || p.nstacks || p.format || p.nlocations)
            abort(); /* a failed load leaves nothing behind */
        return 0;
    }
    (void)detected;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *s = &p.samples[i];
        const struct prof_thread_sample *t = &s->threads[0];
        if (s->nthreads != 1 || t->stack == 0 || t->stack >= p.nstacks)
            abort();
        const struct prof_stack *st = &p.stacks[t->stack];
        if (st->depth == 0 || st->depth > PERF_SCRIPT_MAX_DEPTH || st->pcs[0] != t->pc)
            abort();
        if (!has_location(&p, t->pid, t->pc, false) ||
            !has_location(&p, t->pid, st->pcs[st->depth - 1], true))
            abort();
        bool thread = false, process = false;
        for (size_t k = 0; k < p.nthreads && !thread; k++)
            thread = p.threads[k].tid == t->tid;
        for (size_t k = 0; k < p.nprocesses && !process; k++)
            process = p.processes[k].pid == t->pid;
        if (!thread || !process)
            abort();
    }
    profile_free(&p);
    return 0;
}
