/*
 * timeline_gen.c - a large self-contained profile (.pbin) for
 * bench/timeline.sh, written with ptprof's own native writer.
 *
 * usage: timeline_gen OUT.pbin THREAD_SAMPLES THREADS
 *
 * THREADS threads sampled together at 1 kHz until THREAD_SAMPLES thread
 * samples are written, with one power channel: a slow wave around 30 W,
 * noise, and a one-sample spike now and then.  The program has 300
 * functions and 2000 distinct call stacks (4 to 12 frames); each thread
 * stays in a stack for a random phase (mostly tens of milliseconds, now
 * and then a single sample), as a real program does.  The symbol tables
 * (LOCATION records) make the file self-contained: no binary is needed to
 * read it.  Deterministic: the same arguments give the same file.
 */
#include "format/native.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFUNC 300
#define NSTACK 2000
#define MAX_DEPTH 12
#define PID 4242
#define BASE 0x400000ull
#define START_NS 1700000000000000000ull
#define PERIOD_NS 1000000ull

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static double uniform(void)
{
    return (double)(rng() >> 11) / 9007199254740992.0;
}

static uint64_t leaf_pc(unsigned f)
{
    return BASE + (uint64_t)f * 0x100 + 0x08;
}

static uint64_t return_pc(unsigned f)
{
    return BASE + (uint64_t)f * 0x100 + 0x40;
}

static int write_locations(struct native_writer *w)
{
    static const char *const modules[] = {"net", "db", "cache", "json", "http", "sched"};
    for (unsigned f = 0; f < NFUNC; f++) {
        char name[96], mangled[96];
        snprintf(name, sizeof(name), "%s::handler_%u(int)", modules[f % 6], f);
        snprintf(mangled, sizeof(mangled), "_ZN%zu%s9handler_%uEi", strlen(modules[f % 6]),
                 modules[f % 6], f);
        struct prof_sym_frame fr = {.binary = "server",
                                    .path = "/opt/bench/server",
                                    .function = name,
                                    .mangled = mangled,
                                    .file = "server.cc",
                                    .line = 100 + f};
        for (int ra = 0; ra < 2; ra++) {
            uint64_t pc = ra ? return_pc(f) : leaf_pc(f);
            struct prof_location loc = {PID, pc, ra != 0, pc - BASE, 1, &fr};
            if (native_write_location(w, &loc) != 0)
                return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: timeline_gen OUT.pbin THREAD_SAMPLES THREADS\n");
        return 1;
    }
    long total = strtol(argv[2], NULL, 10), nthreads = strtol(argv[3], NULL, 10);
    if (total < 1 || nthreads < 1 || nthreads > 1024) {
        fprintf(stderr, "timeline_gen: bad sizes\n");
        return 1;
    }
    long rounds = (total + nthreads - 1) / nthreads;
    struct native_writer *w = native_writer_open(argv[1]);
    if (!w)
        return 1;
    char buf[64];
    native_write_meta(w, "command", "server --bench (synthetic, bench/timeline_gen.c)");
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)START_NS);
    native_write_meta(w, "start_time", buf);
    native_write_meta(w, "frequency", "1000");
    native_write_meta(w, "stacks", "fp");
    native_write_meta(w, "symbolized", "1");
    struct pmu_channel ch = {.name = "package-0 (synthetic)", .unit = "W", .kind = PMU_KIND_POWER};
    native_write_channel(w, 0, &ch);
    native_write_process(w, PID, 1, START_NS);
    native_write_exec(w, PID, START_NS, "/opt/bench/server");
    for (long t = 0; t < nthreads; t++)
        native_write_thread(w, PID, (uint32_t)(PID + t), START_NS, t ? "worker" : "server");

    /* Call stacks: a leaf, then its callers as return addresses. */
    uint32_t *stacks = calloc(NSTACK, sizeof(*stacks));
    uint64_t *leaves = calloc(NSTACK, sizeof(*leaves));
    for (unsigned s = 0; s < NSTACK; s++) {
        uint64_t pcs[MAX_DEPTH];
        unsigned depth = 4 + (unsigned)(rng() % (MAX_DEPTH - 3));
        pcs[0] = leaf_pc((unsigned)(rng() % NFUNC));
        for (unsigned d = 1; d < depth; d++)
            pcs[d] = return_pc((unsigned)((s * 7 + d * 13 + rng() % 5) % NFUNC));
        stacks[s] = native_stack_id(w, pcs, depth);
        leaves[s] = pcs[0];
    }

    struct prof_thread_sample *th = calloc((size_t)nthreads, sizeof(*th));
    long *left = calloc((size_t)nthreads, sizeof(*left));
    for (long t = 0; t < nthreads; t++)
        th[t] = (struct prof_thread_sample){.pid = PID, .tid = (uint32_t)(PID + t), .syscall = -1};
    long written = 0;
    for (long r = 0; r < rounds && written < total; r++) {
        uint32_t n = (uint32_t)(total - written < nthreads ? total - written : nthreads);
        for (uint32_t t = 0; t < n; t++) {
            if (left[t]-- <= 0) { /* a new phase: mostly 5-100 ms, one in ten a single sample */
                unsigned s = (unsigned)(rng() % NSTACK);
                th[t].stack = stacks[s];
                th[t].pc = leaves[s];
                left[t] = rng() % 10 == 0 ? 0 : 5 + (long)(rng() % 96);
            }
            th[t].cpu_ns += PERIOD_NS * (8 + rng() % 3) / 10;
        }
        double v = 30 + 10 * sin((double)r / 3000.0) + 2 * (uniform() - 0.5);
        if (rng() % 100000 == 0)
            v += 150; /* a one-sample spike */
        if (native_write_sample(w, START_NS + (uint64_t)(r + 1) * PERIOD_NS, &v, 1, th, n) != 0)
            return 1;
        written += n;
    }
    if (write_locations(w) != 0)
        return 1;
    struct prof_totals tot = {.wall_ns = (uint64_t)(rounds + 1) * PERIOD_NS,
                              .latency_ns = (uint64_t)rounds * 50000,
                              .samples = (uint64_t)rounds,
                              .ideal_samples = (uint64_t)rounds + 1};
    int rc = native_writer_finish(w, &tot);
    free(stacks);
    free(leaves);
    free(th);
    free(left);
    return rc == 0 ? 0 : 1;
}
