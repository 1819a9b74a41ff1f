/* fuzz_folded.c - libFuzzer target for the folded stacks reader
 * (interop/folded.h): whatever it accepts is a consistent profile whose
 * every PC resolves from its locations table. */
#include "interop/folded.h"

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

static bool has_location(const struct profile *p, uint64_t pc, bool ra)
{
    for (size_t i = 0; i < p->nlocations; i++)
        if (p->locations[i].pc == pc && p->locations[i].return_address == ra)
            return p->locations[i].nframes > 0;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)folded_detect(data, size);
    struct profile p;
    if (folded_load_buffer("fuzz", data, size, &p) != 0) {
        if (p.nsamples || p.nstacks || p.format || p.nlocations)
            abort(); /* a failed load leaves nothing behind */
        return 0;
    }
    if (p.nprocesses != 1 || p.nthreads != 1 || p.nlocations % 2)
        abort();
    uint64_t cpu = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *s = &p.samples[i];
        const struct prof_thread_sample *t = &s->threads[0];
        if (s->nthreads != 1 || t->stack == 0 || t->stack >= p.nstacks || t->cpu_ns < cpu ||
            prof_weight(s, 0) == 0)
            abort();
        cpu = t->cpu_ns;
        const struct prof_stack *st = &p.stacks[t->stack];
        if (st->depth == 0 || st->depth > FOLDED_MAX_DEPTH || st->pcs[0] != t->pc)
            abort();
        /* Checking every frame is quadratic: the leaf and the root. */
        if (!has_location(&p, t->pc, false) || !has_location(&p, st->pcs[st->depth - 1], true))
            abort();
    }
    for (size_t i = 0; i < p.nlocations; i++)
        for (uint32_t k = 0; k < p.locations[i].nframes; k++)
            if (!p.locations[i].frames[k].function || !*p.locations[i].frames[k].function)
                abort();
    profile_free(&p);
    return 0;
}
