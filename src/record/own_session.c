/* own_session.c - see own_session.h */
#include "record/own_session.h"
#include "util/log.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static enum {
    NOT_TRIED,
    AUTOGROUP_OFF,
    TURNED_OFF,
    HAS_THREADS,
    FORK_FAILED,
    SPLIT,
    OWN_SESSION,
    SETSID_FAILED,
} state = NOT_TRIED;

static bool autogroup_on(void)
{
    FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
    if (!f)
        return false;
    int c = fgetc(f);
    fclose(f);
    return c == '1';
}

/* A fork copies the calling thread only: split a process of one thread. */
static bool single_threaded(void)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return false;
    int tasks = 0;
    struct dirent *de;
    while ((de = readdir(dir)))
        if (de->d_name[0] != '.')
            tasks++;
    closedir(dir);
    return tasks == 1;
}

/* The recorder ended: end the same way, for the shell. */
_Noreturn static void exit_as(int status)
{
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* Signals a fault raises in this very process stay deliverable. */
static void forwardable(sigset_t *set)
{
    sigfillset(set);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
        sigdelset(set, faults[i]);
}

_Noreturn static void front(pid_t recorder)
{
    sigset_t set;
    forwardable(&set);
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            kill(recorder, sig);
            continue;
        }
        int status;
        pid_t got;
        while ((got = waitpid(recorder, &status, WNOHANG | WUNTRACED)) == recorder) {
            if (!WIFSTOPPED(status))
                exit_as(status);
            /* The recorder stopped for a job-control stop of the program:
             * the shell watches this process, so it stops too.  When `fg`
             * continues it, the recorder continues with it. */
            raise(SIGSTOP);
            kill(recorder, SIGCONT);
        }
    }
}

bool own_session_split(void)
{
    const char *knob = getenv("PTPROF_OWN_SESSION");
    if (knob && strcmp(knob, "0") == 0) {
        state = TURNED_OFF;
        return false;
    }
    if (!autogroup_on()) {
        state = AUTOGROUP_OFF;
        return false;
    }
    if (!single_threaded()) {
        state = HAS_THREADS;
        return false;
    }
    /* The front's mask is in place before the child can end or be signalled. */
    sigset_t set, before;
    forwardable(&set);
    sigprocmask(SIG_BLOCK, &set, &before);
    fflush(NULL);
    pid_t front_pid = getpid();
    pid_t recorder = fork();
    if (recorder < 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        state = FORK_FAILED;
        pt_debug("fork for the recorder's own session: %s", strerror(errno));
        return false;
    }
    if (recorder > 0)
        front(recorder);
    /* A SIGKILL to the front is a SIGKILL to the profiler: the recorder
     * ends with it, and the kernel detaches the program, as before. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != front_pid) /* killed before the request: nothing was recorded */
        _exit(PT_EXIT_INCOMPLETE);
    sigprocmask(SIG_SETMASK, &before, NULL);
    state = SPLIT;
    return true;
}

void own_session_leave(void)
{
    if (state != SPLIT)
        return;
    if (setsid() < 0) {
        state = SETSID_FAILED;
        pt_debug("setsid: %s", strerror(errno));
        return;
    }
    state = OWN_SESSION;
}

const char *own_session_describe(void)
{
    switch (state) {
    case OWN_SESSION:
        return "the recorder in a session of its own (its own autogroup), the program in yours";
    case SETSID_FAILED:
        return "the recorder in the program's session (setsid failed)";
    case AUTOGROUP_OFF:
        return "the recorder in the program's session (the kernel's autogroup is off)";
    case TURNED_OFF:
        return "the recorder in the program's session (PTPROF_OWN_SESSION=0)";
    case HAS_THREADS:
        return "the recorder in the program's session (it already had threads)";
    case FORK_FAILED:
        return "the recorder in the program's session (fork failed)";
    case SPLIT:
    case NOT_TRIED:
        break;
    }
    return NULL;
}
