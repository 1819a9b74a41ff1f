/* syscall_origin.c - see syscall_origin.h */
#include "record/syscall_origin.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void syscall_origin_init(struct syscall_origin *o)
{
    o->nr = -1;
    o->pc = o->sp = 0;
}

int syscall_is_restart(int nr)
{
    return nr == SYS_restart_syscall;
}

/*
 * The kernel functions a thread sleeps in for the calls that restart
 * through restart_syscall, as /proc/PID/task/TID/wchan names them (the
 * first caller outside the scheduler).  Names moved between kernel
 * versions, hence the prefixes.  The nanosleep family sleeps in __sched
 * functions only, so wchan skips them all and names the system call entry
 * itself: for a thread in restart_syscall that can only be one of them.
 * glibc's nanosleep() calls clock_nanosleep.
 */
static const struct {
    const char *prefix;
    int nr;
} wchan_calls[] = {
    {"hrtimer_nanosleep", SYS_clock_nanosleep},
    {"do_nanosleep", SYS_clock_nanosleep},
    {"do_syscall_64", SYS_clock_nanosleep},
    {"posix_cpu_nsleep", SYS_clock_nanosleep},
#ifdef SYS_poll
    {"do_sys_poll", SYS_poll},
    {"do_restart_poll", SYS_poll},
    {"poll_schedule_timeout", SYS_poll},
#endif
    {"futex_", SYS_futex},
};

int syscall_from_wchan(const char *wchan)
{
    for (size_t i = 0; i < sizeof(wchan_calls) / sizeof(wchan_calls[0]); i++)
        if (strncmp(wchan, wchan_calls[i].prefix, strlen(wchan_calls[i].prefix)) == 0)
            return wchan_calls[i].nr;
    return -1;
}

static int from_wchan(pid_t pid, pid_t tid)
{
    char path[64], name[128];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, name, sizeof(name) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    name[n] = '\0';
    name[strcspn(name, "\n")] = '\0';
    return syscall_from_wchan(name);
}

int syscall_origin_name(struct syscall_origin *o, int nr, uint64_t pc, uint64_t sp, pid_t pid,
                        pid_t tid)
{
    if (nr < 0)
        return nr;
    if (!syscall_is_restart(nr)) {
        o->nr = nr;
        o->pc = pc;
        o->sp = sp;
        return nr;
    }
    if (o->nr >= 0 && o->pc == pc && o->sp == sp)
        return o->nr;
    /* Restarted before we saw the call (attached during it, or stopped by
     * someone else): ask where it sleeps, and remember the answer. */
    int guess = from_wchan(pid, tid);
    if (guess < 0)
        return nr;
    o->nr = guess;
    o->pc = pc;
    o->sp = sp;
    return guess;
}
