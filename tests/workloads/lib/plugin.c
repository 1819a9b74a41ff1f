/*
 * plugin.c - the shared library that tests/workloads/dlopener.c loads
 * mid-run (built as build/workloads/libplugin.so).  plugin_hot() is where
 * the program then spends its time, so a profile shows whether samples in
 * code that appeared after the start are attributed to it.
 */
#include <stdint.h>

uint64_t plugin_hot(uint64_t seed);

__attribute__((noinline)) uint64_t plugin_hot(uint64_t seed)
{
    uint64_t x = seed | 1;
    for (int i = 0; i < 50000; i++) {
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
