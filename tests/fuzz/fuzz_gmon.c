/* fuzz_gmon.c - libFuzzer target for the gmon.out reader (interop/gmon.h).
 * Memory follows the input's size whatever its counts (a bin's counts are a
 * few samples with weights), so the default limit on counts applies. */
#include "interop/gmon.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Rejected inputs print a line through stdio's stderr; sanitizer
     * reports go to descriptor 2 and stay visible. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    if (gmon_load_buffer("fuzz", data, size, &p) != 0)
        return 0;
    /* Touch everything the reader promises so a sanitizer checks it. */
    volatile uint64_t sink = p.nsamples + p.totals.samples + (uint64_t)p.frequency;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *s = &p.samples[i];
        sink += s->time_ns;
        for (uint32_t t = 0; t < s->nthreads; t++)
            sink +=
                s->threads[t].pc + s->threads[t].cpu_ns + s->threads[t].stack + prof_weight(s, t);
    }
    for (size_t i = 0; i < p.narcs; i++)
        sink += p.arcs[i].from_pc + p.arcs[i].self_pc + p.arcs[i].count;
    for (size_t i = 0; i < p.nmaps; i++)
        sink += p.maps[i].start + p.maps[i].end + strlen(p.maps[i].path);
    for (size_t i = 0; i < p.nmeta; i++)
        sink += strlen(p.meta[i].key) + strlen(p.meta[i].value);
    (void)sink;
    profile_free(&p);
    return 0;
}
