/* host_steal.c - see host_steal.h */
#include "record/host_steal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool host_steal_parse(const char *text, size_t len, struct host_steal *m)
{
    memset(m, 0, sizeof(*m));
    /* The first line sums every CPU: "cpu  user nice system idle iowait
     * irq softirq steal guest guest_nice" (guest time is inside user). */
    if (len < 4 || strncmp(text, "cpu ", 4) != 0 || !memchr(text, '\n', len))
        return false;
    uint64_t v[8];
    if (sscanf(text + 4,
               "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
               " %" SCNu64,
               &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return false;
    for (size_t i = 0; i < 8; i++)
        m->all += v[i];
    m->steal = v[7];
    return true;
}

void host_steal_mark(struct host_steal *m)
{
    memset(m, 0, sizeof(*m));
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n > 0) {
        buf[n] = '\0';
        host_steal_parse(buf, (size_t)n, m);
    }
}

double host_steal_share(const struct host_steal *from, const struct host_steal *to)
{
    if (to->all <= from->all || to->steal < from->steal)
        return 0;
    double share = (double)(to->steal - from->steal) / (double)(to->all - from->all);
    return share > 1 ? 1 : share;
}
