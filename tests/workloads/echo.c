/*
 * echo.c - copies standard input to standard output and then writes a
 * marker to standard error, to show that a profiled program keeps its own
 * stdin, stdout and stderr.
 *
 * usage: echo
 *   The marker is "echo: N bytes" (N copied bytes).  Exit 0, or 1 on an
 *   I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    char buf[4096];
    unsigned long total = 0;
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            perror("echo: read");
            return 1;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(STDOUT_FILENO, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                perror("echo: write");
                return 1;
            }
            done += w;
        }
        total += (unsigned long)n;
    }
    fprintf(stderr, "echo: %lu bytes\n", total);
    return 0;
}
