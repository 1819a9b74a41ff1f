/* idle_cpu.c - see idle_cpu.h */
#include "record/ptrace/idle_cpu.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void idle_cpu_open(struct idle_cpu *c)
{
    memset(c, 0, sizeof(*c));
    /* Tests give the machine's state instead of depending on it. */
    const char *path = getenv("PTPROF_LOADAVG");
    c->fd = open(path && *path ? path : "/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

long idle_cpu_parse_runnable(const char *text, size_t len)
{
    /* Three load averages, then "RUNNABLE/TOTAL". */
    size_t i = 0;
    for (int field = 0; field < 3; field++) {
        while (i < len && text[i] != ' ')
            i++;
        while (i < len && text[i] == ' ')
            i++;
    }
    long n = 0;
    size_t start = i;
    for (; i < len && text[i] >= '0' && text[i] <= '9' && n < 1000000000L; i++)
        n = n * 10 + (text[i] - '0');
    return i > start && i < len && text[i] == '/' ? n : -1;
}

bool idle_cpu_free(struct idle_cpu *c, uint64_t now, size_t ncpus)
{
    if (c->fd < 0 || now < c->next_check)
        return c->free;
    c->next_check = now + IDLE_CPU_CHECK_NS;
    char buf[128];
    ssize_t n = pread(c->fd, buf, sizeof(buf) - 1, 0);
    long runnable = n > 0 ? idle_cpu_parse_runnable(buf, (size_t)n) : -1;
    /* The count includes the caller, who is running as it reads. */
    c->free = runnable >= 1 && (size_t)(runnable - 1) < ncpus;
    return c->free;
}

void idle_cpu_close(struct idle_cpu *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
