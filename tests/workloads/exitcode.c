/*
 * exitcode.c - ends with a chosen exit status after a little CPU work, so
 * tests can check that the profiler passes the target's status through.
 *
 * usage: exitcode CODE [MARKER]
 *   Works ~100 ms, creates the file MARKER when given (evidence that the
 *   program ran at all, for tests where it must not), and exits with CODE.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t work_ms(unsigned ms)
{
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    uint64_t x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
    return x;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: exitcode CODE [MARKER]\n");
        return 2;
    }
    if (argc == 3) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(argv[2]);
            return 2;
        }
        close(fd);
    }
    uint64_t x = work_ms(100);
    /* Keep the work observable so it is not optimised away. */
    if (x == 42)
        puts("unlikely");
    return atoi(argv[1]);
}
