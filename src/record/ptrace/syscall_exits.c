/* syscall_exits.c - see syscall_exits.h */
#include "record/ptrace/syscall_exits.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void syscall_exits_free(struct syscall_exits *x)
{
    free(x->procs);
    memset(x, 0, sizeof(*x));
}

static struct syscall_exit_credit *credit_of(struct syscall_exits *x, size_t proc)
{
    if (proc >= x->count) {
        size_t cap = x->count;
        x->procs = xgrow(x->procs, &cap, proc + 1, sizeof(*x->procs));
        memset(x->procs + x->count, 0, (cap - x->count) * sizeof(*x->procs));
        x->count = cap;
    }
    return &x->procs[proc];
}

bool syscall_exits_process_times(pid_t pid, uint64_t *user_ns, uint64_t *kernel_ns)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* The name may hold spaces and parentheses: fields start after the
     * last ')'.  utime and stime are the 14th and 15th fields. */
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!p ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return false;
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
    *user_ns = ut * tick;
    *kernel_ns = st * tick;
    return true;
}

bool syscall_exits_keep(struct syscall_exits *x, size_t proc, pid_t pid, uint64_t delta_ns,
                        uint64_t now)
{
    struct syscall_exit_credit *c = credit_of(x, proc);
    x->stops++;
    if (x->raw) {
        x->kept++;
        x->kept_ns += delta_ns;
        return true;
    }
    if (!c->started || now - c->read_at >= SYSCALL_EXITS_STAT_INTERVAL_NS) {
        uint64_t user, kernel;
        if (syscall_exits_process_times(pid, &user, &kernel)) {
            if (!c->started)
                c->base_ns = kernel;
            c->kernel_ns = kernel;
        }
        c->started = true;
        c->read_at = now;
    }
    /* Kept while the samples kept at calls carry, to the nearest sample,
     * no more CPU time than the process spent in the kernel. */
    if (c->charged_ns + delta_ns / 2 > c->kernel_ns - c->base_ns) {
        x->moved_ns += delta_ns;
        return false;
    }
    c->charged_ns += delta_ns;
    x->kept++;
    x->kept_ns += delta_ns;
    return true;
}

static bool is_vdso(const struct map_entry *m)
{
    return m && strcmp(m->path, "[vdso]") == 0;
}

/* The main program's path, as /proc/PID/maps names it. */
static const char *main_program(struct syscall_exit_credit *c, const struct process *p)
{
    if (!c->exe_known || c->exe_maps_version != p->maps_version) {
        char link[64];
        snprintf(link, sizeof(link), "/proc/%d/exe", (int)p->pid);
        ssize_t n = readlink(link, c->exe, sizeof(c->exe) - 1);
        c->exe[n > 0 ? n : 0] = '\0';
        c->exe_known = true;
        c->exe_maps_version = p->maps_version;
    }
    return c->exe;
}

int syscall_exits_to_caller(struct syscall_exits *x, size_t proc, const struct process *p,
                            uint64_t *pcs, int depth)
{
    int k = 0;
    const struct map_entry *m = process_map_at(p, pcs[0]);
    while (k < depth && is_vdso(m))
        m = ++k < depth ? process_map_at(p, pcs[k]) : NULL;
    if (m && strcmp(m->path, main_program(credit_of(x, proc), p)) != 0) {
        /* A library's wrapper (libc's read, clock_gettime): its caller. */
        const char *lib = m->path;
        while (k < depth && m && strcmp(m->path, lib) == 0)
            m = ++k < depth ? process_map_at(p, pcs[k]) : NULL;
    }
    if (k == 0 || k >= depth)
        return depth; /* made from the program itself, or nothing above */
    memmove(pcs, pcs + k, (size_t)(depth - k) * sizeof(*pcs));
    pcs[0] -= 1; /* inside the calling instruction */
    return depth - k;
}
