/*
 * spawn.h - run a program from a test and look at what it did.
 *
 * Contract:
 *  - The program runs in its own process group (as a shell runs a foreground
 *    job), with the default signal dispositions and an empty signal mask
 *    (whatever the test runner set is not inherited), core dumps disabled,
 *    stdin fed from OPTS->input (or /dev/null) and stdout/stderr captured
 *    into NUL-terminated buffers.
 *  - argv[0] is a path; there is no PATH search.  OPTS->env lists
 *    "NAME=VALUE" entries to set and "NAME" entries to remove.
 *  - Every run has a hard timeout (OPTS->timeout_s, default 60 s).  When it
 *    expires, the whole process group is killed with SIGKILL and the current
 *    Criterion test fails with the command line and its stderr so far; a
 *    test never hangs on a stuck child.
 *  - spawn_run() is start + finish.  spawn_start() / spawn_pump*() /
 *    spawn_finish() let a test act on a running program (send it a signal)
 *    while its output keeps being collected.
 *
 * Build products are found under $PTPROF_BUILD (default "build"), returned
 * as absolute paths so they work from any working directory.
 */
#ifndef PTPROF_TESTS_SPAWN_H
#define PTPROF_TESTS_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct spawn_opts {
    const char *const *argv; /* NULL-terminated; argv[0] is the path to run */
    const char *const *env;  /* NULL-terminated changes, or NULL */
    const char *cwd;         /* NULL: the test's own */
    const void *input;       /* stdin contents; NULL: /dev/null */
    size_t input_len;
    double timeout_s; /* 0: 60 s */
};

struct spawn_result {
    int status; /* as waitpid() reports it */
    char *out;  /* stdout, NUL-terminated */
    size_t out_len;
    char *err; /* stderr, NUL-terminated */
    size_t err_len;
    double wall_s; /* start to exit */
};

struct spawn_proc {
    pid_t pid; /* also the process group id */
    int in_fd, out_fd, err_fd;
    const unsigned char *input;
    size_t input_len, input_done;
    char *out, *err;
    size_t out_len, out_cap, err_len, err_cap;
    double start, deadline;
    char *cmdline; /* for failure messages */
    bool exited;
    int status;
};

void spawn_run(const struct spawn_opts *opts, struct spawn_result *res);
void spawn_result_free(struct spawn_result *res);

void spawn_start(const struct spawn_opts *opts, struct spawn_proc *p);
/* Collect output for SECONDS or until the program exits; true if it exited. */
bool spawn_pump(struct spawn_proc *p, double seconds);
/* Collect output until stdout contains TEXT; fails the test after SECONDS. */
void spawn_pump_until(struct spawn_proc *p, const char *text, double seconds);
/* Wait for the exit (hard timeout applies), drain the pipes, fill RES. */
void spawn_finish(struct spawn_proc *p, struct spawn_result *res);

/* Processes still in process group PGID after waiting up to SECONDS for
 * them to go; each is described ("pid 123 (spin) state T") into DESC. */
int spawn_group_survivors(pid_t pgid, double seconds, char *desc, size_t desc_size);

/* "exited 3", "killed by signal 11", ... for assertion messages. */
const char *spawn_status_text(int status);
/* The shell's view of STATUS: exit code, or 128 + signal number. */
int spawn_exit_code(int status);

/* Build products, absolute, allocated. */
char *build_path(const char *relative);
char *build_ptprof(void);
char *build_sampler(void);
char *build_workload(const char *name);
/* tests/RELATIVE in the source tree, absolute, allocated; the test fails
 * when it is not there (the tests run from the source tree). */
char *test_source_path(const char *relative);

/* A fresh directory under $TMPDIR (default /tmp), and its removal. */
char *test_mkdtemp(void);
void test_rmtree(const char *dir);
/* NAME found on $PATH, allocated; NULL when it is not installed. */
char *test_tool_path(const char *name);
/* The same, failing the test when NAME is missing: the test packages of
 * scripts/install-deps provide every tool a test runs. */
char *test_need_tool(const char *name);
/* Run FN(ARG) with file descriptor 2 going to a temporary file; *RC is
 * what FN returned, and the result what it printed there (allocated). */
char *test_capture_stderr(int (*fn)(void *), void *arg, int *rc);
/* Cap this process's address space a little above what it uses, so an
 * allocation sized from a bogus count fails instead of succeeding; not
 * under AddressSanitizer, which reserves terabytes. */
void test_limit_address_space(void);
/* Bytes of heap in use now (malloc's count), to tell what a reader kept. */
size_t test_heap_in_use(void);
/* DIR/NAME, allocated. */
char *test_path(const char *dir, const char *name);
/* A whole file, NUL-terminated; NULL if it cannot be read. */
char *test_read_file(const char *path, size_t *len);
bool test_file_exists(const char *path);
/* The start of an argv that runs the rest as uid and gid 65534 with no
 * supplementary groups: how the tests meet an unprivileged user (SETPRIV
 * from test_need_tool("setpriv")). */
#define AS_NOBODY(setpriv) (setpriv), "--reuid=65534", "--regid=65534", "--clear-groups"
/* A copy of the file FROM at TO, mode 0755 (a program another user may run
 * wherever the build is); fails the test when it cannot be made. */
void test_copy_executable(const char *from, const char *to);

#endif
