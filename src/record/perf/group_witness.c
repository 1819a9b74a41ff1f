/* group_witness.c - see group_witness.h */
#include "record/perf/group_witness.h"
#include "util/timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* The witness's whole life: report every signal until the pipe closes. */
static void witness_main(int control, int reports)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0)
        for (int fd = 0; fd <= 2; fd++)
            dup2(null, fd);
    /* Nothing of the profiler's stays open here: not its output file,
     * not the ends of a pipeline it writes to. */
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        if (fd != control && fd != reports)
            close(fd);
    int sfd = signalfd(-1, &all, SFD_CLOEXEC);
    if (sfd < 0)
        _exit(1);
    struct pollfd fds[2] = {{.fd = sfd, .events = POLLIN}, {.fd = control, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            _exit(1);
        if (fds[1].revents)
            _exit(0); /* the profiler closed the pipe, or died */
        struct signalfd_siginfo si;
        if ((fds[0].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
            unsigned char sig = (unsigned char)si.ssi_signo;
            if (write(reports, &sig, 1) < 0 && errno != EAGAIN)
                _exit(1);
        }
    }
}

int group_witness_start(struct group_witness *w)
{
    memset(w, 0, sizeof(*w));
    w->control = w->reports = -1;
    int control[2], reports[2];
    if (pipe2(control, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(reports, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(control[0]);
        close(control[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(control[0]);
        close(control[1]);
        close(reports[0]);
        close(reports[1]);
        return -1;
    }
    if (pid == 0) {
        close(control[1]);
        close(reports[0]);
        witness_main(control[0], reports[1]);
    }
    close(control[0]);
    close(reports[1]);
    w->pid = pid;
    w->control = control[1];
    w->reports = reports[0];
    return 0;
}

static void collect(struct group_witness *w)
{
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(w->reports, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] < 64)
                w->seen |= 1ULL << buf[i];
}

bool group_witness_saw(struct group_witness *w, int sig, uint64_t wait_ns)
{
    if (!w->pid || sig <= 0 || sig >= 64)
        return false;
    uint64_t give_up = monotonic_ns() + wait_ns;
    for (;;) {
        collect(w);
        if (w->seen & (1ULL << sig)) {
            w->seen &= ~(1ULL << sig);
            return true;
        }
        uint64_t now = monotonic_ns();
        if (now >= give_up)
            return false;
        struct pollfd p = {.fd = w->reports, .events = POLLIN};
        uint64_t left_ms = (give_up - now + 999999) / 1000000;
        poll(&p, 1, (int)left_ms);
    }
}

void group_witness_stop(struct group_witness *w)
{
    if (!w->pid)
        return;
    close(w->control);
    close(w->reports);
    /* A witness stopped by SIGSTOP to the group cannot see the pipe close:
     * continue it (only it: its own pid). */
    kill(w->pid, SIGCONT);
    while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    w->pid = 0;
}
