/*
 * phases.c - busy threads whose every moment of running shows, and a log
 * of when each ran, for the test that a sampler never takes a thread that
 * ran for one that did not.
 *
 * usage: phases THREADS SECONDS LOGFILE
 *   THREADS threads (the main thread is one of them) spin for SECONDS of
 *   wall time.  Time is cut in 20 us slots; in each a thread runs one of 64
 *   phase functions, which reads CLOCK_REALTIME (the vDSO) in a tight loop
 *   through one of 8 helper functions, both picked by a hash of the slot
 *   (not periodic: samples at any interval meet any pair).  Whenever a
 *   thread runs, its PC and stack move on within microseconds, so two
 *   samples that find it at the same PC with the same stack mean it did
 *   not run in between (or, about once in 512, came back to the same pair
 *   at the same PC).
 *   Every gap of more than GAP_NS between two clock reads is a time the
 *   thread did not run (stopped by the sampler, preempted, interrupted);
 *   at the end LOGFILE gets, per thread, a line "thread TID" followed by
 *   one line "START END" (realtime ns) per gap.  Prints "phases: ok".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NPHASES 64
#define PHASE_NS 20000ULL
#define GAP_NS 2000ULL
#define MAX_GAPS (1u << 18)
#define MAX_THREADS 16
#define KEEP __attribute__((noinline, noclone, used))

struct runner {
    pid_t tid;
    uint64_t end, last;
    uint64_t (*gaps)[2];
    size_t ngaps;
    pthread_t thread;
};

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The slot's hash: which phase and which helper run in it. */
static uint64_t slot_mix(uint64_t slot)
{
    slot ^= slot >> 31;
    slot *= 0x9e3779b97f4a7c15ULL;
    return slot ^ (slot >> 29);
}

/* Reads the clock, notes the gap since the previous read, and returns the
 * slot's mix (END when the run is over). */
#define END UINT64_MAX
static inline __attribute__((always_inline)) uint64_t slot_now(struct runner *r)
{
    uint64_t now = realtime_ns();
    if (now - r->last > GAP_NS && r->ngaps < MAX_GAPS) {
        r->gaps[r->ngaps][0] = r->last;
        r->gaps[r->ngaps][1] = now;
        r->ngaps++;
    }
    r->last = now;
    return now >= r->end ? END : slot_mix(now / PHASE_NS);
}

#define HELPER(n)                                                                                  \
    KEEP uint64_t helper_##n(struct runner *r)                                                     \
    {                                                                                              \
        return slot_now(r);                                                                        \
    }                                                                                              \
    _Static_assert(1, "helper " #n)
HELPER(0);
HELPER(1);
HELPER(2);
HELPER(3);
HELPER(4);
HELPER(5);
HELPER(6);
HELPER(7);

static uint64_t (*const helpers[8])(struct runner *) = {
    helper_0, helper_1, helper_2, helper_3, helper_4, helper_5, helper_6, helper_7,
};

static unsigned phase_of(uint64_t mix)
{
    return mix == END ? NPHASES : (unsigned)(mix % NPHASES);
}

/* Runs while the slot's phase is N; returns the next slot's mix. */
#define PHASE(n)                                                                                   \
    KEEP uint64_t phase_##n(struct runner *r, uint64_t mix)                                        \
    {                                                                                              \
        while (phase_of(mix) == (n))                                                               \
            mix = helpers[(mix >> 6) % 8](r);                                                      \
        return mix;                                                                                \
    }                                                                                              \
    _Static_assert(1, "phase " #n)
PHASE(0);
PHASE(1);
PHASE(2);
PHASE(3);
PHASE(4);
PHASE(5);
PHASE(6);
PHASE(7);
PHASE(8);
PHASE(9);
PHASE(10);
PHASE(11);
PHASE(12);
PHASE(13);
PHASE(14);
PHASE(15);
PHASE(16);
PHASE(17);
PHASE(18);
PHASE(19);
PHASE(20);
PHASE(21);
PHASE(22);
PHASE(23);
PHASE(24);
PHASE(25);
PHASE(26);
PHASE(27);
PHASE(28);
PHASE(29);
PHASE(30);
PHASE(31);
PHASE(32);
PHASE(33);
PHASE(34);
PHASE(35);
PHASE(36);
PHASE(37);
PHASE(38);
PHASE(39);
PHASE(40);
PHASE(41);
PHASE(42);
PHASE(43);
PHASE(44);
PHASE(45);
PHASE(46);
PHASE(47);
PHASE(48);
PHASE(49);
PHASE(50);
PHASE(51);
PHASE(52);
PHASE(53);
PHASE(54);
PHASE(55);
PHASE(56);
PHASE(57);
PHASE(58);
PHASE(59);
PHASE(60);
PHASE(61);
PHASE(62);
PHASE(63);

static uint64_t (*const phases[NPHASES])(struct runner *, uint64_t) = {
    phase_0,  phase_1,  phase_2,  phase_3,  phase_4,  phase_5,  phase_6,  phase_7,
    phase_8,  phase_9,  phase_10, phase_11, phase_12, phase_13, phase_14, phase_15,
    phase_16, phase_17, phase_18, phase_19, phase_20, phase_21, phase_22, phase_23,
    phase_24, phase_25, phase_26, phase_27, phase_28, phase_29, phase_30, phase_31,
    phase_32, phase_33, phase_34, phase_35, phase_36, phase_37, phase_38, phase_39,
    phase_40, phase_41, phase_42, phase_43, phase_44, phase_45, phase_46, phase_47,
    phase_48, phase_49, phase_50, phase_51, phase_52, phase_53, phase_54, phase_55,
    phase_56, phase_57, phase_58, phase_59, phase_60, phase_61, phase_62, phase_63,
};

static void *run(void *arg)
{
    struct runner *r = arg;
    r->tid = (pid_t)syscall(SYS_gettid);
    r->last = realtime_ns();
    uint64_t mix = slot_now(r);
    while (phase_of(mix) < NPHASES)
        mix = phases[phase_of(mix)](r, mix);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: phases THREADS SECONDS LOGFILE\n");
        return 2;
    }
    int n = atoi(argv[1]);
    double seconds = atof(argv[2]);
    if (n < 1 || n > MAX_THREADS || !(seconds > 0))
        return 2;
    static struct runner runners[MAX_THREADS];
    uint64_t end = realtime_ns() + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < n; i++) {
        runners[i].end = end;
        runners[i].gaps = malloc(MAX_GAPS * sizeof(*runners[i].gaps));
        if (!runners[i].gaps)
            return 1;
    }
    for (int i = 1; i < n; i++)
        if (pthread_create(&runners[i].thread, NULL, run, &runners[i]) != 0)
            return 1;
    run(&runners[0]);
    for (int i = 1; i < n; i++)
        pthread_join(runners[i].thread, NULL);

    FILE *log = fopen(argv[3], "w");
    if (!log)
        return 1;
    for (int i = 0; i < n; i++) {
        fprintf(log, "thread %d\n", (int)runners[i].tid);
        for (size_t g = 0; g < runners[i].ngaps; g++)
            fprintf(log, "%llu %llu\n", (unsigned long long)runners[i].gaps[g][0],
                    (unsigned long long)runners[i].gaps[g][1]);
    }
    if (fclose(log) != 0)
        return 1;
    printf("phases: ok\n");
    return 0;
}
