/* fuzz_perf_data.c - libFuzzer target for the perf.data reader
 * (interop/perf_data.h): whatever it accepts is a consistent profile (one
 * thread a sample, stacks that exist and start at the sample's PC, a
 * thread and a process for every sample); whatever it refuses leaves
 * nothing behind. */
#include "interop/perf_data.h"

#include <stdio.h>
#include <stdlib.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    if (perf_data_load_buffer("fuzz", data, size, &p) != 0) {
        if (p.nsamples || p.nstacks || p.format || p.nmaps)
            abort();
        return 0;
    }
    if (p.nstacks < 1 || p.stacks[0].depth != 0)
        abort();
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *s = &p.samples[i];
        if (s->nthreads != 1 || s->threads[0].stack >= p.nstacks)
            abort();
        const struct prof_stack *st = &p.stacks[s->threads[0].stack];
        if (s->threads[0].stack && st->depth == 0)
            abort();
        bool thread = false, process = false;
        for (size_t k = 0; k < p.nthreads && !thread; k++)
            thread = p.threads[k].tid == s->threads[0].tid;
        for (size_t k = 0; k < p.nprocesses && !process; k++)
            process = p.processes[k].pid == s->threads[0].pid;
        if (!thread || !process)
            abort();
        if (i > 0 && s->time_ns < p.samples[i - 1].time_ns)
            abort(); /* in time order */
    }
    for (size_t i = 0; i < p.nmaps; i++)
        if (p.maps[i].build_id_len > 20)
            abort();
    profile_free(&p);
    return 0;
}
