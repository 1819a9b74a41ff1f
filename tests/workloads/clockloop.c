/*
 * clockloop.c - a target that lives in the vDSO, for the [vdso] image test.
 *
 * usage: clockloop SECONDS
 *   Calls clock_gettime(CLOCK_MONOTONIC) in a tight loop for SECONDS; with
 *   a TSC clock source the call runs in the vDSO without entering the
 *   kernel, so most samples land in the vDSO's clock_gettime.  Prints
 *   "clockloop: N calls".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: clockloop SECONDS\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t end = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (int64_t)(seconds * 1e9);
    uint64_t calls = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        calls++;
        if ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec >= end)
            break;
    }
    printf("clockloop: %llu calls\n", (unsigned long long)calls);
    return 0;
}
