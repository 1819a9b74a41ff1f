/* fuzz_gmon_write.c - libFuzzer target for the gmon.out writer
 * (interop/gmon.h): a native profile, mutated, written as a gmon.out of
 * this very executable (its maps' paths mean nothing here).  The file must
 * stay in proportion to the profile: at most 256 copies of the histogram
 * and 256 parts per arc, or refused (GMON_WRITE_BAD_INPUT); a writer that
 * grew without bound once filled a disk.  Corpus: tests/fuzz/corpus/gmon_write. */
#include "format/native.h"
#include "interop/gmon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bytes written, counted and dropped. */
static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
    (void)buf;
    *(uint64_t *)cookie += n;
    return (ssize_t)n;
}

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
    if (native_load_buffer("fuzz", data, size, &p) != 0)
        return 0;
    uint64_t written = 0;
    FILE *sink = fopencookie(&written, "w", (cookie_io_functions_t){.write = count_write});
    const struct gmon_write_options opts = {.binary = "/proc/self/exe", .rate = 0};
    if (sink) {
        gmon_write_stream(&p, "fuzz.gmon", sink, &opts);
        fclose(sink);
    }
    /* Header, 256 histograms of this executable's text, and the arcs of
     * at most every pair of frames the profile's stacks hold, 256 parts each. */
    uint64_t frames = 0;
    for (size_t i = 0; i < p.nstacks; i++)
        frames += p.stacks[i].depth;
    if (written > (uint64_t)256 * (64u << 20) + frames * 256 * 21 + 4096)
        abort();
    profile_free(&p);
    return 0;
}
