/* fuzz_pperf.c - libFuzzer target for the pperf reader (interop/pperf.h). */
#include "interop/pperf.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Every rejected input prints a line through stdio's stderr.  Point that
     * stream at /dev/null: libFuzzer kept its own copy of the original
     * pointer and sanitizers write to descriptor 2, so their reports stay. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pperf_profile p;
    if (pperf_load_buffer("fuzz", data, size, &p) != 0)
        return 0;
    /* Touch everything the reader promises so a sanitizer checks it. */
    volatile uint64_t sink = p.magic + p.wall_us + p.latency_us + p.pmu_size;
    for (uint64_t i = 0; i < p.nsamples; i++) {
        const struct pperf_sample *s = &p.samples[i];
        sink += s->wall_us;
        for (uint32_t k = 0; k < p.pmu_size; k++)
            sink += s->pmu_raw[k];
        if (s->pmu)
            for (uint32_t k = 0; k < p.pmu_size / 8; k++)
                sink += (uint64_t)(s->pmu[k] == s->pmu[k]);
        for (uint32_t t = 0; t < s->nthreads; t++)
            sink += s->threads[t].tid + s->threads[t].pc + s->threads[t].cpu_ns;
    }
    for (uint32_t i = 0; i < p.nmaps; i++)
        sink += p.maps[i].address + p.maps[i].size + strlen(p.maps[i].label);
    (void)sink;
    pperf_free(&p);
    return 0;
}
