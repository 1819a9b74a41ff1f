/* fuzz_gperftools.c - libFuzzer target for the gperftools CPU profile reader
 * and writer (interop/gperftools.h): whatever reads must also write and read
 * back with every tick that is not at PC 0.  Memory follows the input's
 * size whatever its counts (weights), so no limit is needed. */
#include "interop/gperftools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Rejected inputs print a line through stdio's stderr; libFuzzer and
     * the sanitizers write to descriptor 2 and are not affected. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    if (gperftools_load_buffer("fuzz", data, size, &p) != 0) {
        if (p.nsamples || p.nstacks || p.format)
            abort(); /* a failed load leaves nothing behind */
        return 0;
    }
    /* Touch everything the reader promises so a sanitizer checks it. */
    volatile uint64_t sink = 0;
    uint64_t at_zero = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_thread_sample *t = &p.samples[i].threads[0];
        if (p.samples[i].nthreads != 1 || t->stack == 0 || t->stack >= p.nstacks)
            abort();
        const struct prof_stack *st = &p.stacks[t->stack];
        if (st->depth == 0 || st->pcs[0] != t->pc)
            abort();
        at_zero += t->pc == 0 ? prof_weight(&p.samples[i], 0) : 0;
        for (uint32_t d = 0; d < st->depth; d++)
            sink += st->pcs[d];
    }
    for (size_t i = 0; i < p.nmaps; i++)
        sink += p.maps[i].start + p.maps[i].end + strlen(p.maps[i].path);
    sink += strlen(p.processes[0].exe);

    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        abort();
    if (gperftools_write(&p, "fuzz.out", out) != 0)
        abort();
    fclose(out);
    struct profile back;
    if (gperftools_load_buffer("fuzz.out", buf, len, &back) != 0)
        abort();
    if (back.totals.samples != p.totals.samples - at_zero)
        abort();
    (void)sink;
    profile_free(&back);
    free(buf);
    profile_free(&p);
    return 0;
}
