/* proc_maps.c - see proc_maps.h */
#include "record/proc_maps.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int maps_read(pid_t pid, struct map_list *out)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            errno = ESRCH; /* reaped: as gone as a zombie */
        return -1;
    }
    size_t cap = 16384, len = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len == cap)
            buf = xrealloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            free(buf);
            close(fd);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (len == 0) {
        /* A process that has released its memory (exiting) reads empty. */
        free(buf);
        errno = ESRCH;
        return -1;
    }
    int rc = maps_parse(buf, len, out);
    free(buf);
    if (rc != 0)
        errno = EPROTO;
    return rc;
}
