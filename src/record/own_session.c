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

/* PTPROF_OWN_SESSION=1: leave as soon as the program started. */
static bool leave_at_start;
/* The front, whose forwarded signals carry its pid (SI_USER). */
static pid_t front_pid;
/* When the recorder left, and why, for -d. */
static double left_after_s, left_busy;
static unsigned left_cpus;
static char description[192];
/* What the program's threads wanted of the CPUs per round, and the
 * rounds' lengths, averaged (own_session_round()). */
#define ROUNDS_AVERAGED 16
static double wanted_average, elapsed_average;
static unsigned rounds_seen;

/* The front forwards a signal within milliseconds of getting it: a copy
 * later than this is a signal of its own. */
#define ECHO_WINDOW_NS (1000 * 1000 * 1000ULL)
/* When each signal last came directly and has not been echoed yet. */
static uint64_t direct_at[NSIG];

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
    leave_at_start = knob && strcmp(knob, "1") == 0;
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
    pid_t caller = getpid();
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
    if (getppid() != caller) /* killed before the request: nothing was recorded */
        _exit(PT_EXIT_INCOMPLETE);
    sigprocmask(SIG_SETMASK, &before, NULL);
    front_pid = caller;
    state = SPLIT;
    return true;
}

static void leave(void)
{
    if (setsid() < 0) {
        state = SETSID_FAILED;
        pt_debug("setsid: %s", strerror(errno));
        return;
    }
    state = OWN_SESSION;
}

void own_session_program_started(void)
{
    if (state == SPLIT && leave_at_start)
        leave();
}

void own_session_round(uint64_t wanted_ns, uint64_t elapsed_ns, unsigned cpus, double after_s)
{
    if (state != SPLIT || elapsed_ns == 0)
        return;
    /* Averages over about the last ROUNDS_AVERAGED rounds: a thread born
     * and joined in a round, or a burst, does not decide; a thread waiting
     * for a CPU is counted when it gets one, late but in full. */
    rounds_seen++;
    wanted_average += ((double)wanted_ns - wanted_average) / (double)ROUNDS_AVERAGED;
    elapsed_average += ((double)elapsed_ns - elapsed_average) / (double)ROUNDS_AVERAGED;
    double busy = wanted_average / elapsed_average;
    if (rounds_seen <= ROUNDS_AVERAGED || busy <= (double)cpus)
        return;
    left_after_s = after_s;
    left_busy = busy;
    left_cpus = cpus;
    leave();
    if (state == OWN_SESSION)
        pt_debug("the program's threads want %.1f CPUs of %u: the recorder moves to a session "
                 "of its own",
                 busy, cpus);
}

bool own_session_echo(const struct signalfd_siginfo *si, uint64_t now_ns)
{
    if (front_pid == 0 || si->ssi_signo == 0 || si->ssi_signo >= NSIG)
        return false;
    uint64_t *direct = &direct_at[si->ssi_signo];
    if (si->ssi_code != SI_USER || (pid_t)si->ssi_pid != front_pid) {
        if (state == SPLIT) /* in the front's group: the front's copy will follow */
            *direct = now_ns ? now_ns : 1;
        return false;
    }
    bool echo = *direct && now_ns - *direct <= ECHO_WINDOW_NS;
    *direct = 0;
    return echo;
}

const char *own_session_describe(void)
{
    switch (state) {
    case OWN_SESSION:
        if (leave_at_start)
            return "the recorder in a session of its own (its own autogroup) from the start "
                   "(PTPROF_OWN_SESSION=1), the program in yours";
        snprintf(description, sizeof(description),
                 "the recorder in a session of its own (its own autogroup) from %.3f s, when "
                 "the program's threads wanted %.1f CPUs of %u; the program in yours",
                 left_after_s, left_busy, left_cpus);
        return description;
    case SPLIT:
        return "the recorder in the program's session (its threads never wanted more than the "
               "CPUs)";
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
    case NOT_TRIED:
        break;
    }
    return NULL;
}
