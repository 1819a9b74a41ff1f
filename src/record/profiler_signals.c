/* profiler_signals.c - see profiler_signals.h */
#include "record/profiler_signals.h"
#include "util/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const int handled[] = {SIGCHLD, SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                              SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT, SIGPIPE};

int profsig_open(sigset_t *original)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
        sigaddset(&set, handled[i]);
    if (sigprocmask(SIG_BLOCK, &set, original) != 0) {
        pt_err("sigprocmask: %s", strerror(errno));
        return -1;
    }
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0) {
        pt_err("signalfd: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, original, NULL);
    }
    return fd;
}

void profsig_close(int fd, const sigset_t *original)
{
    if (fd >= 0)
        close(fd);
    sigprocmask(SIG_SETMASK, original, NULL);
}

bool profsig_pending_in(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool pending = false;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "ShdPnd:", 7) == 0) {
            uint64_t mask = strtoull(line + 7, NULL, 16);
            pending = (mask >> (sig - 1)) & 1;
            break;
        }
    }
    fclose(f);
    return pending;
}
