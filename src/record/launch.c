/* launch.c - see launch.h */
#include "record/launch.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static int exit_code_for_errno(int err)
{
    return err == ENOENT ? PT_EXIT_NOT_FOUND : PT_EXIT_CANNOT_EXEC;
}

/* In the child between fork and exec: only async-signal-safe calls. */
static void child(char *const argv[], const sigset_t *mask, int go_fd, int err_fd)
{
    char c;
    sigprocmask(SIG_SETMASK, mask, NULL);
    while (read(go_fd, &c, 1) < 0 && errno == EINTR)
        ;
    execvp(argv[0], argv);
    int err = errno;
    ssize_t unused = write(err_fd, &err, sizeof(err));
    (void)unused;
    _exit(exit_code_for_errno(err));
}

/* Wait for the exec stop, passing on any signal that arrives first. */
static int wait_exec_stop(pid_t pid)
{
    for (;;) {
        int status;
        pid_t got = waitpid(pid, &status, __WALL);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (WIFEXITED(status) || WIFSIGNALED(status))
            return -1;
        if (status >> 16 == PTRACE_EVENT_EXEC)
            return 0;
        int sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
        ptrace(PTRACE_CONT, pid, 0, sig);
    }
}

int launch_traced(char *const argv[], const sigset_t *child_mask, unsigned long options,
                  pid_t *pid_out)
{
    struct launch_hold l;
    int rc = launch_hold(argv, child_mask, &l);
    if (rc != 0)
        return rc;
    if (ptrace(PTRACE_SEIZE, l.pid, 0, options) != 0) {
        int e = errno;
        launch_cancel(&l);
        pt_err("cannot trace %s: ptrace(PTRACE_SEIZE): %s%s", argv[0], strerror(e),
               e == EPERM ? " (ptrace is forbidden here: see kernel.yama.ptrace_scope, seccomp)"
                          : "");
        return PT_EXIT_USAGE;
    }
    rc = launch_release(&l);
    if (rc != 0)
        return rc;
    if (wait_exec_stop(l.pid) != 0) {
        pt_err("%s: exited before it could be profiled", argv[0]);
        return PT_EXIT_CANNOT_EXEC;
    }
    *pid_out = l.pid;
    return 0;
}

int launch_hold(char *const argv[], const sigset_t *child_mask, struct launch_hold *l)
{
    int go[2], err[2];
    l->pid = -1;
    l->command = argv[0];
    if (pipe2(go, O_CLOEXEC) != 0)
        return pt_err("pipe: %s", strerror(errno)), PT_EXIT_USAGE;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(go[0]);
        close(go[1]);
        return pt_err("pipe: %s", strerror(errno)), PT_EXIT_USAGE;
    }
    pid_t pid = fork();
    if (pid < 0) {
        pt_err("fork: %s", strerror(errno));
        close(go[0]);
        close(go[1]);
        close(err[0]);
        close(err[1]);
        return PT_EXIT_USAGE;
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        child(argv, child_mask, go[0], err[1]);
    }
    close(go[0]);
    close(err[1]);
    l->pid = pid;
    l->go_fd = go[1];
    l->err_fd = err[0];
    return 0;
}

int launch_release(struct launch_hold *l)
{
    close(l->go_fd); /* the child may exec now */
    int child_errno = 0;
    ssize_t n;
    while ((n = read(l->err_fd, &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
        ;
    close(l->err_fd);
    if (n != (ssize_t)sizeof(child_errno))
        return 0; /* the pipe closed on exec: the command runs */
    while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (child_errno == ENOENT)
        pt_err("%s: command not found", l->command);
    else
        pt_err("%s: %s", l->command, strerror(child_errno));
    return exit_code_for_errno(child_errno);
}

void launch_cancel(struct launch_hold *l)
{
    if (l->pid <= 0)
        return;
    kill(l->pid, SIGKILL);
    close(l->go_fd);
    close(l->err_fd);
    while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    l->pid = -1;
}
