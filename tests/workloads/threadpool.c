/*
 * threadpool.c - a server's thread pool at rest beside a little work: many
 * threads blocked on a queue that stays empty, and two that compute, for
 * the ptrace engine's crowded rounds (bench/many_threads.sh: what a round
 * costs the recorder when most threads sleep).
 *
 * usage: threadpool IDLE SECONDS
 *   IDLE threads block in read() on a pipe nobody writes; two threads spin
 *   in serve() for SECONDS of wall time; then the program exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int queue[2];
static double seconds;
static volatile uint64_t sink;

static void *wait_for_work(void *arg)
{
    (void)arg;
    char c;
    while (read(queue[0], &c, 1) == 1)
        ;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *serve(void *arg)
{
    (void)arg;
    double end = now_s() + seconds;
    uint64_t x = sink;
    while (now_s() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
    sink = x;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || pipe(queue) != 0) {
        fprintf(stderr, "usage: threadpool IDLE SECONDS\n");
        return 2;
    }
    int idle = atoi(argv[1]);
    seconds = atof(argv[2]);
    pthread_t t;
    for (int i = 0; i < idle; i++)
        if (pthread_create(&t, NULL, wait_for_work, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    pthread_t busy[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&busy[i], NULL, serve, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(busy[i], NULL);
    return 0;
}
