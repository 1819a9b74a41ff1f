/* fuzz_slurp.c - libFuzzer target for input decompression (util/slurp.h):
 * gzip, bzip2 and zstd detection and decoding of arbitrary bytes, through
 * the same code path and 64 kB input pieces as reading a file. */
#include "util/slurp.h"

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
    struct slurp s;
    if (slurp_buffer_decompress("fuzz", data, size, FUZZ_MAX_LEN, &s) != 0) {
        if (s.data || s.error)
            __builtin_trap(); /* a failure must leave nothing behind */
        return 0;
    }
    /* What the contract promises, checked byte by byte by the sanitizers. */
    if (s.len > FUZZ_MAX_LEN || s.data[s.len] != '\0' || s.truncated != (s.error != NULL))
        __builtin_trap();
    if (s.compression == COMPRESSION_NONE && (s.len != size || memcmp(s.data, data, size) != 0))
        __builtin_trap();
    volatile unsigned sink = 0;
    for (size_t i = 0; i < s.len; i += 4096)
        sink += s.data[i];
    if (s.error)
        sink += (unsigned)strlen(s.error);
    (void)sink;
    slurp_free(&s);
    return 0;
}
