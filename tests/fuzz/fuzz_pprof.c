/* fuzz_pprof.c - libFuzzer target for the pprof reader (interop/pprof.h) and
 * writer (interop/pprof_write.h): what our wire check accepts protobuf-c
 * must decode (so every error has its offset), whatever reads must be
 * consistent (stack
 * ids in range, every stack's leaf the sample's PC), write, and read back
 * standing for as many samples.  Memory follows the input's size whatever
 * its counts (weights), so no limit is needed.  Frames come from a fixed resolver: no
 * binary named by an input is ever opened. */
#include "analyze/metrics.h"
#include "interop/pprof.h"
#include "interop/pprof_wire.h"
#include "export/pprof_write.h"

#include "pprof.pb-c.h"

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

static struct sym_frame frame = {"bin", "/bin", "f", "", "f.c", 1, false};
static struct sym_location location = {0, 1, &frame};

static const struct sym_location *resolve(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t pc,
                                          bool return_address)
{
    (void)ctx;
    (void)pid;
    (void)time_ns;
    (void)return_address;
    location.offset = pc;
    return &location;
}

static size_t weighted_samples(const struct profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        for (uint32_t t = 0; t < p->samples[i].nthreads; t++)
            n += prof_weight(&p->samples[i], t);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (pprof_wire_check(NULL, data, size, NULL) == 0) {
        Perftools__Profiles__Profile *pb = perftools__profiles__profile__unpack(NULL, size, data);
        if (!pb)
            abort();
        perftools__profiles__profile__free_unpacked(pb, NULL);
    }
    struct profile p;
    if (pprof_load_buffer("fuzz", data, size, &p) != 0) {
        if (p.nsamples || p.nstacks || p.format)
            abort(); /* a failed load leaves nothing behind */
        return 0;
    }
    volatile uint64_t sink = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        for (uint32_t t = 0; t < p.samples[i].nthreads; t++) {
            const struct prof_thread_sample *th = &p.samples[i].threads[t];
            if (th->stack >= p.nstacks)
                abort();
            const struct prof_stack *st = &p.stacks[th->stack];
            if (th->stack && st->pcs[0] != th->pc)
                abort();
            for (uint32_t d = 0; d < st->depth; d++)
                sink += st->pcs[d];
        }
    for (size_t i = 0; i < p.nlocations; i++)
        for (uint32_t f = 0; f < p.locations[i].nframes; f++)
            sink += strlen(p.locations[i].frames[f].function) + p.locations[i].frames[f].line;
    for (size_t i = 0; i < p.nmaps; i++)
        sink += strlen(p.maps[i].path) + p.maps[i].build_id_len;
    (void)sink;

    struct frame_resolver r = {resolve, NULL};
    struct export_options o = {.metric = NULL};
    uint8_t *buf;
    size_t len;
    char *error;
    if (pprof_encode(&p, &r, &o, &buf, &len, &error) != 0)
        abort();
    struct profile back;
    if (pprof_load_buffer("fuzz.out", buf, len, &back) != 0)
        abort();
    if (weighted_samples(&back) != weighted_samples(&p))
        abort();
    profile_free(&back);
    free(buf);
    profile_free(&p);
    return 0;
}
