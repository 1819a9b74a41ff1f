/* fuzz_native.c - libFuzzer target for the native reader (format/native.h)
 * and its record-level dump. */
#include "format/load.h"
#include "format/native.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *null_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Damaged inputs print through stdio's stderr; silence that stream only
     * (libFuzzer and the sanitizers write to descriptor 2 themselves). */
    null_out = fopen("/dev/null", "w");
    if (null_out)
        stderr = null_out;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (null_out)
        native_dump_buffer("fuzz", data, size, null_out);

    struct profile p;
    if (native_load_buffer("fuzz", data, size, &p) != 0)
        return 0;
    /* Touch everything the model promises so a sanitizer checks it. */
    volatile uint64_t sink = p.truncated_at + p.totals.samples + (uint64_t)p.frequency;
    for (size_t i = 0; i < p.nmeta; i++)
        sink += strlen(p.meta[i].key) + strlen(p.meta[i].value);
    for (size_t i = 0; i < p.nchannels; i++)
        sink += strlen(p.channels[i].name) + strlen(p.channels[i].unit) + p.channels[i].kind;
    for (size_t i = 0; i < p.nprocesses; i++)
        sink += p.processes[i].pid + strlen(p.processes[i].exe) + p.processes[i].exit_ns;
    for (size_t i = 0; i < p.nthreads; i++)
        sink += p.threads[i].tid + strlen(p.threads[i].name) + p.threads[i].end_ns;
    for (size_t i = 0; i < p.nmaps; i++) {
        sink += p.maps[i].start + p.maps[i].unmap_ns + strlen(p.maps[i].path);
        for (uint8_t k = 0; k < p.maps[i].build_id_len; k++)
            sink += p.maps[i].build_id[k];
    }
    for (size_t i = 0; i < p.nimages; i++)
        for (size_t k = 0; k < p.images[i].size; k++)
            sink += p.images[i].data[k] + strlen(p.images[i].name);
    for (size_t i = 0; i < p.nstacks; i++)
        for (uint32_t k = 0; k < p.stacks[i].depth; k++)
            sink += p.stacks[i].pcs[k];
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *s = &p.samples[i];
        for (size_t k = 0; k < p.nchannels; k++)
            sink += (uint64_t)(s->values[k] == s->values[k]);
        for (uint32_t t = 0; t < s->nthreads; t++) {
            /* The reader promises every stack id refers to a stack. */
            if (s->threads[t].stack >= p.nstacks)
                __builtin_trap();
            sink += s->threads[t].pc + p.stacks[s->threads[t].stack].depth;
        }
    }
    (void)sink;
    profile_free(&p);
    return 0;
}
