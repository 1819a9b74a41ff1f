/*
 * pagefaults.c - a target with a known number of page faults per function,
 * for the counters the perf engine reads with each sample (-e page-faults).
 *
 * usage: pagefaults [ROUNDS]
 *   Each of ROUNDS (default 12) rounds runs three phases, one function
 *   each: fault_many() touches 3 x PAGES fresh pages, fault_few() touches
 *   PAGES, and no_faults() computes for about as long without touching new
 *   memory.  A fresh page is one of a new anonymous mapping, written once:
 *   one minor fault each (transparent huge pages are refused for the
 *   mapping, so a fault maps 4 KiB, not 2 MiB).  The mappings are unmapped
 *   before the next phase, so memory stays bounded.  At the end it prints
 *   the pages each function touched ("fault_many N", "fault_few N") and
 *   exits 0.  Each phase lasts tens of milliseconds: the faults a sample
 *   reports were taken in the function it finds the thread in.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))
#define BARRIER() __asm__ volatile("" ::: "memory")

enum { PAGES = 8192, NO_FAULT_ROUNDS = 20000000 };

static volatile uint64_t sink;

/* Touch NPAGES fresh pages; returns how many were touched.  Inlined, so
 * the sampled PC names the function that faults. */
static inline __attribute__((always_inline)) long touch_fresh(long npages)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)(npages * page);
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("pagefaults: mmap");
        exit(1);
    }
#ifdef MADV_NOHUGEPAGE
    madvise(p, len, MADV_NOHUGEPAGE);
#endif
    for (long i = 0; i < npages; i++) {
        p[i * page] = (char)i;
        BARRIER();
    }
    munmap(p, len);
    return npages;
}

static KEEP long fault_many(void)
{
    long n = touch_fresh(3 * PAGES);
    BARRIER();
    return n;
}

static KEEP long fault_few(void)
{
    long n = touch_fresh(PAGES);
    BARRIER();
    return n;
}

static KEEP void no_faults(void)
{
    uint64_t x = sink;
    for (int i = 0; i < NO_FAULT_ROUNDS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        BARRIER();
    }
    sink = x;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    long many = 0, few = 0;
    for (int r = 0; r < rounds; r++) {
        many += fault_many();
        few += fault_few();
        no_faults();
    }
    printf("fault_many %ld\nfault_few %ld\n", many, few);
    return 0;
}
