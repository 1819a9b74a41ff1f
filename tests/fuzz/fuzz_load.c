/* fuzz_load.c - libFuzzer target for reading any file (format/load.h):
 * decompression, the zero-run bound, format detection by content, the
 * streaming native reader, and for content no reader claims the format it
 * most resembles (format/resemble.h), whose reader then runs. */
#include "format/load.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Enough to expand small inputs a lot, small enough not to exhaust memory. */
#define FUZZ_MAX_LEN ((size_t)16 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Rejected inputs print a line through stdio's stderr; sanitizer
     * reports use descriptor 2 directly and stay visible. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile_file f;
    if (profile_file_read_memory("fuzz", data, size, FUZZ_MAX_LEN, &f) != 0)
        return 0;
    /* What info prints before parsing: the format, the first bytes. */
    volatile size_t sink = strlen(profile_file_format(&f)) + f.head_len;
    struct profile p;
    if (profile_parse(&f, &p) == 0) {
        sink += p.nsamples + p.nstacks + p.nmaps + (size_t)p.truncated_at;
        for (size_t i = 0; i < p.nsamples; i++)
            sink += p.samples[i].nthreads;
    }
    sink += (size_t)profile_file_length(&f);
    (void)sink;
    profile_free(&p);
    profile_file_free(&f);
    return 0;
}
