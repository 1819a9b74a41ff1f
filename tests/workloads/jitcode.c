/*
 * jitcode.c - a tiny JIT: machine code written at run time into anonymous
 * executable memory, and named for profilers the way JIT compilers name
 * theirs (a perf map, or a jitdump file).
 *
 * usage: jitcode [SECONDS] [map|dump] [reuse]
 *   Writes two functions into an anonymous mapping (x86_64 only; exits 77
 *   elsewhere):
 *     jit_spin(n)          a frame-pointer frame around a loop of n steps;
 *     jit_call(fn, arg)    a frame-pointer frame that calls fn(arg), so
 *                          native code (native_work, which spends its time
 *                          in native_step) runs with a JIT frame between
 *                          it and main;
 *   names them in /tmp/perf-PID.map ("map", the default) or in a jitdump
 *   file /tmp/jit-PID.dump that it maps executable, as perf asks of a JIT
 *   ("dump"), and for SECONDS (default 2) alternates jit_spin and
 *   jit_call(native_work), about a third of the CPU time in the first.  The names
 *   are left behind at exit, as JITs leave them (the caller removes them).
 *   With "reuse" the code goes where a file was mapped read-only, as a JIT's
 *   often goes where the loader's ld.so.cache was: the file (the program
 *   itself) is mapped first, kept for REUSE_WAIT_S of work in native_warm_up
 *   (longer than a profiler's periodic look at the maps), then unmapped.
 *   Its own measurement goes to $JITCODE_OUT when set: "jit_spin NS" and
 *   "native_work NS" lines of thread CPU time (native_work's through
 *   jit_call).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)

/* push rbp; mov rbp,rsp; xor eax,eax; 1: add rax,rdi; dec rdi; jnz 1b;
 * pop rbp; ret */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x48, 0x01,
                                          0xf8, 0x48, 0xff, 0xcf, 0x75, 0xf8, 0x5d, 0xc3};
/* push rbp; mov rbp,rsp; mov rax,rdi; mov rdi,rsi; call rax; pop rbp; ret */
static const unsigned char call_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
                                          0x48, 0x89, 0xf7, 0xff, 0xd0, 0x5d, 0xc3};

#define SPIN_AT 0x40
#define CALL_AT 0x100

typedef uint64_t (*spin_fn)(uint64_t);
typedef uint64_t (*work_fn)(uint64_t);
typedef uint64_t (*call_fn)(work_fn, uint64_t);

static volatile uint64_t sink;

__attribute__((noipa)) uint64_t native_step(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* Not a leaf, so that it keeps a frame (a leaf often does not, even with
 * -fno-omit-frame-pointer), and a frame-pointer walk from native_step
 * meets the JIT frame above it. */
__attribute__((noipa)) uint64_t native_work(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t done = 0; done < n; done += 100000)
        x = native_step(x, 100000);
    return x;
}

/* The reused file stays mapped this long, in seconds of wall time. */
#define REUSE_WAIT_S 0.7

__attribute__((noipa)) uint64_t native_warm_up(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t x = 1;
    do {
        x = native_step(x, 100000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    return x;
}

/* A page where PATH was mapped read-only a while ago, free again. */
static void *page_where_a_file_was(const char *path)
{
    int fd = open(path, O_RDONLY);
    void *at = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (at == MAP_FAILED) {
        perror(path);
        exit(1);
    }
    close(fd);
    sink += native_warm_up(REUSE_WAIT_S);
    munmap(at, 4096);
    return at;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void write_perf_map(uint64_t base)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "%llx %zx jit_spin\n", (unsigned long long)(base + SPIN_AT), sizeof(spin_code));
    fprintf(f, "%llx %zx jit_call\n", (unsigned long long)(base + CALL_AT), sizeof(call_code));
    fclose(f);
}

/* perf's jitdump (tools/perf/util/jitdump.h): a header and one
 * JIT_CODE_LOAD record per function, its name and code. */
static void put_load(FILE *f, uint32_t index, uint64_t addr, const char *name,
                     const unsigned char *code, size_t size)
{
    uint32_t prefix[2] = {0 /* JIT_CODE_LOAD */, (uint32_t)(16 + 40 + strlen(name) + 1 + size)};
    uint64_t timestamp = 0;
    uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)getpid()};
    uint64_t fields[4] = {addr, addr, size, index};
    fwrite(prefix, sizeof(prefix), 1, f);
    fwrite(&timestamp, sizeof(timestamp), 1, f);
    fwrite(ids, sizeof(ids), 1, f);
    fwrite(fields, sizeof(fields), 1, f);
    fwrite(name, strlen(name) + 1, 1, f);
    fwrite(code, size, 1, f);
}

static void write_jitdump(uint64_t base)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)getpid());
    FILE *f = fopen(path, "w+");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint32_t header[6] = {0x4A695444, 1, 40, 62 /* EM_X86_64 */, 0, (uint32_t)getpid()};
    uint64_t rest[2] = {0, 0};
    fwrite(header, sizeof(header), 1, f);
    fwrite(rest, sizeof(rest), 1, f);
    put_load(f, 1, base + SPIN_AT, "jit_spin", spin_code, sizeof(spin_code));
    put_load(f, 2, base + CALL_AT, "jit_call", call_code, sizeof(call_code));
    fflush(f);
    /* A profiler finds the file by this mapping. */
    if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) == MAP_FAILED) {
        perror("mmap jitdump");
        exit(1);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2;
    const char *mode = argc > 2 ? argv[2] : "map";
    bool reuse = argc > 3 && strcmp(argv[3], "reuse") == 0;
    void *hint = reuse ? page_where_a_file_was("/proc/self/exe") : NULL;
    unsigned char *mem = mmap(hint, 4096, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | (reuse ? MAP_FIXED : 0), -1, 0);
    if (mem == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memcpy(mem + SPIN_AT, spin_code, sizeof(spin_code));
    memcpy(mem + CALL_AT, call_code, sizeof(call_code));
    if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 1;
    }
    if (strcmp(mode, "dump") == 0)
        write_jitdump((uint64_t)(uintptr_t)mem);
    else
        write_perf_map((uint64_t)(uintptr_t)mem);
    spin_fn spin = (spin_fn)(uintptr_t)(mem + SPIN_AT);
    call_fn call = (call_fn)(uintptr_t)(mem + CALL_AT);

    uint64_t spent[2] = {0, 0};
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        uint64_t a = cpu_ns();
        sink += spin(20000000);
        uint64_t b = cpu_ns();
        sink += call(native_work, 10000000);
        uint64_t c = cpu_ns();
        spent[0] += b - a;
        spent[1] += c - b;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    const char *out = getenv("JITCODE_OUT");
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            perror(out);
            return 1;
        }
        fprintf(f, "jit_spin %llu\nnative_work %llu\n", (unsigned long long)spent[0],
                (unsigned long long)spent[1]);
        fclose(f);
    }
    return 0;
}

#else

int main(void)
{
    fputs("jitcode: x86_64 only\n", stderr);
    return 77;
}

#endif
