/* spawn.c - see spawn.h: running programs from tests, with a hard timeout. */
#include "spawn.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_TIMEOUT_S 60.0
/* How long to keep reading pipes after the exit: a leftover grandchild may
 * hold them open, and we must not wait for it forever. */
#define DRAIN_S 2.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *must(void *ptr)
{
    if (!ptr)
        cr_assert_fail("out of memory in test helper");
    return ptr;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return must(s);
}

/* environ with OPTS->env applied: "NAME=VALUE" sets, "NAME" removes. */
static char **build_env(const char *const *changes)
{
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    for (size_t i = 0; changes && changes[i]; i++)
        extra++;
    char **env = must(calloc(n + extra + 1, sizeof(*env)));
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; changes && changes[j]; j++) {
            size_t len = strcspn(changes[j], "=");
            if (strncmp(environ[i], changes[j], len) == 0 && environ[i][len] == '=')
                replaced = true;
        }
        if (!replaced)
            env[count++] = environ[i];
    }
    for (size_t j = 0; changes && changes[j]; j++) {
        if (strchr(changes[j], '='))
            env[count++] = (char *)changes[j];
    }
    env[count] = NULL;
    return env;
}

static char *join_argv(const char *const *argv)
{
    size_t len = 1;
    for (size_t i = 0; argv[i]; i++)
        len += strlen(argv[i]) + 1;
    char *s = must(malloc(len));
    s[0] = '\0';
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* In the child: undo what the test runner changed, then exec. */
static void __attribute__((noreturn))
exec_child(const struct spawn_opts *opts, char **env, int in_fd, int out_fd, int err_fd)
{
    setpgid(0, 0);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);

    if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(err_fd, STDERR_FILENO) < 0)
        _exit(125);
    if (opts->cwd && chdir(opts->cwd) != 0) {
        dprintf(STDERR_FILENO, "spawn: chdir %s: %s\n", opts->cwd, strerror(errno));
        _exit(125);
    }
    execve(opts->argv[0], (char *const *)opts->argv, env);
    dprintf(STDERR_FILENO, "spawn: cannot run %s: %s\n", opts->argv[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
}

void spawn_start(const struct spawn_opts *opts, struct spawn_proc *p)
{
    memset(p, 0, sizeof(*p));
    p->in_fd = p->out_fd = p->err_fd = -1;
    p->cmdline = join_argv(opts->argv);
    p->input = opts->input;
    p->input_len = opts->input ? opts->input_len : 0;

    int in[2], out[2], err[2];
    if (opts->input) {
        if (pipe2(in, O_CLOEXEC) != 0)
            cr_assert_fail("pipe: %s", strerror(errno));
    } else {
        in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        in[1] = -1;
        if (in[0] < 0)
            cr_assert_fail("/dev/null: %s", strerror(errno));
    }
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        cr_assert_fail("pipe: %s", strerror(errno));

    /* A program that exits without reading its input must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    char **env = build_env(opts->env);
    double timeout = opts->timeout_s > 0 ? opts->timeout_s : DEFAULT_TIMEOUT_S;

    fflush(NULL);
    p->start = now_s();
    p->deadline = p->start + timeout;
    pid_t pid = fork();
    if (pid < 0)
        cr_assert_fail("fork: %s", strerror(errno));
    if (pid == 0)
        exec_child(opts, env, in[0], out[1], err[1]);
    /* Also here, so a signal to the group cannot race the child's setpgid. */
    setpgid(pid, pid);
    free(env);
    p->pid = pid;

    close(in[0]);
    close(out[1]);
    close(err[1]);
    p->in_fd = in[1];
    p->out_fd = out[0];
    p->err_fd = err[0];
    int fds[3] = {p->in_fd, p->out_fd, p->err_fd};
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0)
            fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    }
    if (p->in_fd >= 0 && p->input_len == 0) {
        close(p->in_fd);
        p->in_fd = -1;
    }
}

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = *cap ? *cap : 4096;
        while (want < *len + n + 1)
            want *= 2;
        *buf = must(realloc(*buf, want));
        *cap = want;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Read what is there; close the descriptor at end of file. */
static void read_pipe(int *fd, char **buf, size_t *len, size_t *cap)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(*fd, chunk, sizeof(chunk));
        if (n > 0) {
            append(buf, len, cap, chunk, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            close(*fd);
            *fd = -1;
        }
        return;
    }
}

/* One poll round of at most TIMEOUT_MS: feed stdin, collect output. */
static void pump_once(struct spawn_proc *p, int timeout_ms)
{
    struct pollfd fds[3];
    int n = 0, iout = -1, ierr = -1, iin = -1;
    if (p->out_fd >= 0) {
        iout = n;
        fds[n++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
    }
    if (p->err_fd >= 0) {
        ierr = n;
        fds[n++] = (struct pollfd){.fd = p->err_fd, .events = POLLIN};
    }
    if (p->in_fd >= 0) {
        iin = n;
        fds[n++] = (struct pollfd){.fd = p->in_fd, .events = POLLOUT};
    }
    if (poll(fds, (nfds_t)n, timeout_ms) <= 0)
        return;
    if (iout >= 0 && fds[iout].revents)
        read_pipe(&p->out_fd, &p->out, &p->out_len, &p->out_cap);
    if (ierr >= 0 && fds[ierr].revents)
        read_pipe(&p->err_fd, &p->err, &p->err_len, &p->err_cap);
    if (iin >= 0 && fds[iin].revents) {
        ssize_t w = write(p->in_fd, p->input + p->input_done, p->input_len - p->input_done);
        if (w > 0)
            p->input_done += (size_t)w;
        /* Done, or the reader is gone (EPIPE): either way, end of input. */
        if (p->input_done == p->input_len || (w < 0 && errno != EAGAIN && errno != EINTR)) {
            close(p->in_fd);
            p->in_fd = -1;
        }
    }
}

static bool check_exit(struct spawn_proc *p)
{
    if (p->exited)
        return true;
    int status;
    pid_t r = waitpid(p->pid, &status, WNOHANG);
    if (r == p->pid) {
        p->exited = true;
        p->status = status;
    } else if (r < 0 && errno != EINTR) {
        cr_assert_fail("waitpid %d (%s): %s", (int)p->pid, p->cmdline, strerror(errno));
    }
    return p->exited;
}

static void __attribute__((noreturn)) timed_out(struct spawn_proc *p)
{
    killpg(p->pid, SIGKILL);
    if (!p->exited)
        waitpid(p->pid, &p->status, 0);
    cr_assert_fail("timeout after %.0f s: %s\n--- stderr so far ---\n%s", p->deadline - p->start,
                   p->cmdline, p->err ? p->err : "");
    abort(); /* not reached: the assertion ends the test */
}

bool spawn_pump(struct spawn_proc *p, double seconds)
{
    double until = now_s() + seconds;
    while (!check_exit(p)) {
        double t = now_s();
        if (t >= p->deadline)
            timed_out(p);
        if (t >= until)
            return false;
        pump_once(p, 10);
    }
    return true;
}

void spawn_pump_until(struct spawn_proc *p, const char *text, double seconds)
{
    double until = now_s() + seconds;
    while (!p->out || !strstr(p->out, text)) {
        double t = now_s();
        if (t >= p->deadline)
            timed_out(p);
        if (t >= until || check_exit(p)) {
            killpg(p->pid, SIGKILL);
            cr_assert_fail("'%s' never printed '%s' (%s)\n--- stdout ---\n%s\n--- stderr ---\n%s",
                           p->cmdline, text, p->exited ? "it exited" : "gave up waiting",
                           p->out ? p->out : "", p->err ? p->err : "");
        }
        pump_once(p, 10);
    }
}

void spawn_finish(struct spawn_proc *p, struct spawn_result *res)
{
    while (!check_exit(p)) {
        if (now_s() >= p->deadline)
            timed_out(p);
        pump_once(p, 10);
    }
    double exited_at = now_s();
    if (p->in_fd >= 0) {
        close(p->in_fd);
        p->in_fd = -1;
    }
    while ((p->out_fd >= 0 || p->err_fd >= 0) && now_s() < exited_at + DRAIN_S)
        pump_once(p, 10);
    if (p->out_fd >= 0)
        close(p->out_fd);
    if (p->err_fd >= 0)
        close(p->err_fd);

    memset(res, 0, sizeof(*res));
    res->status = p->status;
    res->out = p->out ? p->out : must(strdup(""));
    res->out_len = p->out_len;
    res->err = p->err ? p->err : must(strdup(""));
    res->err_len = p->err_len;
    res->wall_s = exited_at - p->start;
    free(p->cmdline);
    memset(p, 0, sizeof(*p));
}

void spawn_run(const struct spawn_opts *opts, struct spawn_result *res)
{
    struct spawn_proc p;
    spawn_start(opts, &p);
    spawn_finish(&p, res);
}

void spawn_result_free(struct spawn_result *res)
{
    free(res->out);
    free(res->err);
    memset(res, 0, sizeof(*res));
}

/* State and process group of PID from /proc/PID/stat; -1 if it is gone. */
static int proc_stat(pid_t pid, char *state, pid_t *pgrp, char *comm, size_t comm_size)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* comm may contain anything, ")" included: the last ")" ends it. */
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return -1;
    snprintf(comm, comm_size, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
    int ppid, group;
    if (sscanf(close_paren + 1, " %c %d %d", state, &ppid, &group) != 3)
        return -1;
    *pgrp = group;
    return 0;
}

static int list_group(pid_t pgid, char *desc, size_t desc_size)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        cr_assert_fail("/proc: %s", strerror(errno));
    int count = 0;
    size_t used = 0;
    if (desc_size)
        desc[0] = '\0';
    struct dirent *de;
    while ((de = readdir(dir))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char state, comm[64];
        pid_t pgrp;
        if (proc_stat((pid_t)pid, &state, &pgrp, comm, sizeof(comm)) != 0 || pgrp != pgid)
            continue;
        count++;
        if (used < desc_size) {
            int w = snprintf(desc + used, desc_size - used, "%spid %ld (%s) state %c",
                             used ? ", " : "", pid, comm, state);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    closedir(dir);
    return count;
}

int spawn_group_survivors(pid_t pgid, double seconds, char *desc, size_t desc_size)
{
    double until = now_s() + seconds;
    int count;
    while ((count = list_group(pgid, desc, desc_size)) > 0 && now_s() < until) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return count;
}

const char *spawn_status_text(int status)
{
    static char text[64];
    if (WIFEXITED(status))
        snprintf(text, sizeof(text), "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(text, sizeof(text), "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(text, sizeof(text), "wait status 0x%x", (unsigned)status);
    return text;
}

int spawn_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

char *build_path(const char *relative)
{
    const char *dir = getenv("PTPROF_BUILD");
    if (!dir || !*dir)
        dir = "build";
    if (dir[0] == '/')
        return str_printf("%s/%s", dir, relative);
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        cr_assert_fail("getcwd: %s", strerror(errno));
    return str_printf("%s/%s/%s", cwd, dir, relative);
}

char *build_ptprof(void)
{
    return build_path("ptprof");
}

char *build_sampler(void)
{
    return build_path("sampler");
}

char *build_workload(const char *name)
{
    char *rel = str_printf("workloads/%s", name);
    char *path = build_path(rel);
    free(rel);
    return path;
}

char *test_source_path(const char *relative)
{
    const char *cut = strstr(__FILE__, "lib/spawn.c");
    if (!cut)
        cr_assert_fail("unexpected __FILE__ %s", __FILE__);
    char *path = str_printf("%.*s%s", (int)(cut - __FILE__), __FILE__, relative);
    char *abs = realpath(path, NULL);
    if (!abs)
        cr_assert_fail("cannot find %s (run from the source tree)", path);
    free(path);
    return abs;
}

char *test_mkdtemp(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path = str_printf("%s/ptprof-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(path))
        cr_assert_fail("mkdtemp %s: %s", path, strerror(errno));
    return path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void test_rmtree(const char *dir)
{
    if (dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *test_tool_path(const char *name)
{
    const char *path = getenv("PATH");
    char *copy = str_printf("%s", path && *path ? path : "/usr/bin:/bin");
    char *found = NULL;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char *candidate = str_printf("%s/%s", dir, name);
        if (access(candidate, X_OK) == 0)
            found = candidate;
        else
            free(candidate);
    }
    free(copy);
    return found;
}

char *test_need_tool(const char *name)
{
    char *found = test_tool_path(name);
    if (!found)
        cr_assert_fail("%s is not installed: scripts/install-deps --test", name);
    return found;
}

char *test_capture_stderr(int (*fn)(void *), void *arg, int *rc)
{
    FILE *tmp = tmpfile();
    if (!tmp)
        cr_assert_fail("tmpfile: %s", strerror(errno));
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    *rc = fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    /* The text went to the descriptor, not through TMP's buffer. */
    off_t n = lseek(fileno(tmp), 0, SEEK_END);
    char *text = calloc(1, n > 0 ? (size_t)n + 1 : 1);
    if (!text || (n > 0 && pread(fileno(tmp), text, (size_t)n, 0) != (ssize_t)n))
        cr_assert_fail("cannot read back what was captured");
    fclose(tmp);
    return text;
}

void test_limit_address_space(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return;
#endif
#endif
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    unsigned long pages = 0;
    cr_assert_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
    struct rlimit rl = {lim, lim};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
}

size_t test_heap_in_use(void)
{
    return mallinfo2().uordblks;
}

char *test_path(const char *dir, const char *name)
{
    return str_printf("%s/%s", dir, name);
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        append(&buf, &used, &cap, chunk, n);
    fclose(f);
    if (!buf)
        buf = must(calloc(1, 1));
    if (len)
        *len = used;
    return buf;
}

bool test_file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

void test_copy_executable(const char *from, const char *to)
{
    size_t len;
    char *data = test_read_file(from, &len);
    cr_assert(data, "cannot read %s", from);
    FILE *f = fopen(to, "wb");
    cr_assert(f && fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", to);
    cr_assert_eq(chmod(to, 0755), 0, "chmod %s: %s", to, strerror(errno));
    free(data);
}
