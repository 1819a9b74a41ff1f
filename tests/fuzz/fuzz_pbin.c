/* fuzz_pbin.c - libFuzzer target for .pbin files: the native reader with
 * its LOCATION records (format/native.h), the symbolizer answering from
 * them (symbol/symbolizer.h), and native_write_profile() (format/pbin.h),
 * whose output must read back whole and, written again, the same. */
#include "format/load.h"
#include "format/native.h"
#include "format/pbin.h"
#include "symbol/symbolizer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *null_out;
static char out_dir[64], out_a[80], out_b[80];

static void remove_outputs(void)
{
    unlink(out_a);
    unlink(out_b);
    rmdir(out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Damaged inputs warn through stdio's stderr; silence that stream only
     * (libFuzzer and the sanitizers write to descriptor 2 themselves). */
    null_out = fopen("/dev/null", "w");
    if (null_out)
        stderr = null_out;
    /* Writing commits with fsync: on tmpfs that costs nothing. */
    char shm[] = "/dev/shm/fuzz-pbin-XXXXXX", tmp[] = "/tmp/fuzz-pbin-XXXXXX";
    const char *dir = mkdtemp(shm);
    if (!dir)
        dir = mkdtemp(tmp);
    if (!dir)
        abort();
    snprintf(out_dir, sizeof(out_dir), "%s", dir);
    snprintf(out_a, sizeof(out_a), "%s/a.pbin", dir);
    snprintf(out_b, sizeof(out_b), "%s/b.pbin", dir);
    atexit(remove_outputs);
    return 0;
}

static unsigned char *slurp_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        abort();
    *len = (size_t)st.st_size;
    unsigned char *b = malloc(*len ? *len : 1);
    if (!b || read(fd, b, *len) != (ssize_t)*len)
        abort();
    close(fd);
    return b;
}

static void check_locations(const struct profile *p)
{
    volatile size_t sink = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        const struct prof_location *l = &p->locations[i];
        if (l->nframes > NATIVE_LOCATION_FRAMES_MAX)
            __builtin_trap();
        for (uint32_t f = 0; f < l->nframes; f++) {
            const struct prof_sym_frame *fr = &l->frames[f];
            sink += strlen(fr->binary) + strlen(fr->path) + strlen(fr->function) +
                    strlen(fr->mangled) + strlen(fr->file) + fr->line + fr->inlined;
        }
    }
    (void)sink;
}

/* What a consumer of a .pbin does: names every sampled address from the
 * tables, never opening a binary. */
static void symbolize(const struct profile *p)
{
    struct symbolizer_options opts = {0};
    struct symbolizer *s = symbolizer_new(p, &opts);
    volatile size_t sink = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *smp = &p->samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            const struct sym_location *l =
                symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            for (uint32_t f = 0; f < l->nframes; f++)
                sink += strlen(l->frames[f].function) + strlen(l->frames[f].binary);
            const struct prof_stack *st = &p->stacks[th->stack];
            for (uint32_t k = 1; k < st->depth; k++)
                sink += symbolizer_resolve(s, th->pid, smp->time_ns, st->pcs[k], true)->nframes;
        }
    }
    (void)sink;
    symbolizer_free(s);
}

static void load_written(const char *path, struct profile *q)
{
    size_t len;
    unsigned char *d = slurp_file(path, &len);
    if (native_load_buffer(path, d, len, q) != 0 || q->truncated)
        __builtin_trap();
    free(d);
}

/* Nothing of P is lost on the way to Q (orphan pids gain a process). */
static void expect_kept(const struct profile *p, const struct profile *q)
{
    if (q->nsamples != p->nsamples || q->nlocations != p->nlocations ||
        q->nchannels != p->nchannels || q->nmeta != p->nmeta || q->nthreads != p->nthreads ||
        q->nmaps != p->nmaps || q->nimages != p->nimages || q->nstacks > p->nstacks ||
        q->nprocesses < p->nprocesses || q->has_totals != p->has_totals)
        __builtin_trap();
}

/* A model written by the writer reads back as itself. */
static void expect_same(const struct profile *q, const struct profile *r)
{
    expect_kept(q, r);
    if (r->nprocesses != q->nprocesses || r->nstacks != q->nstacks)
        __builtin_trap();
    for (size_t i = 0; i < q->nprocesses; i++)
        if (q->processes[i].pid != r->processes[i].pid ||
            q->processes[i].start_ns != r->processes[i].start_ns ||
            q->processes[i].exit_ns != r->processes[i].exit_ns ||
            strcmp(q->processes[i].exe, r->processes[i].exe) != 0)
            __builtin_trap();
    for (size_t i = 0; i < q->nthreads; i++)
        if (q->threads[i].tid != r->threads[i].tid ||
            q->threads[i].start_ns != r->threads[i].start_ns ||
            q->threads[i].end_ns != r->threads[i].end_ns)
            __builtin_trap();
    for (size_t i = 0; i < q->nmaps; i++)
        if (q->maps[i].pid != r->maps[i].pid || q->maps[i].start != r->maps[i].start ||
            q->maps[i].time_ns != r->maps[i].time_ns || q->maps[i].unmap_ns != r->maps[i].unmap_ns)
            __builtin_trap();
    for (size_t i = 0; i < q->nsamples; i++)
        if (q->samples[i].time_ns != r->samples[i].time_ns ||
            q->samples[i].nthreads != r->samples[i].nthreads)
            __builtin_trap();
    for (size_t i = 0; i < q->nlocations; i++)
        if (q->locations[i].pc != r->locations[i].pc ||
            q->locations[i].nframes != r->locations[i].nframes)
            __builtin_trap();
}

/* Whatever the reader accepts, the writer writes a file the reader takes
 * whole and keeps everything in; and what it wrote, written again, reads
 * back the same. */
static void rewrite(const struct profile *p)
{
    struct profile q, r;
    if (native_write_profile(out_a, p) != 0)
        abort();
    load_written(out_a, &q);
    expect_kept(p, &q);
    if (native_write_profile(out_b, &q) != 0)
        abort();
    load_written(out_b, &r);
    expect_same(&q, &r);
    profile_free(&q);
    profile_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (null_out)
        native_dump_buffer("fuzz", data, size, null_out);
    struct profile p;
    if (native_load_buffer("fuzz", data, size, &p) != 0)
        return 0;
    check_locations(&p);
    /* Without tables the symbolizer would read the binaries the maps name. */
    if (p.nlocations)
        symbolize(&p);
    rewrite(&p);
    profile_free(&p);
    return 0;
}
