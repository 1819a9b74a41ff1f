/* outfile.c - see outfile.h */
#include "util/outfile.h"
#include "util/compress.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct outfile {
    char *path;     /* what the user asked for */
    char *tmp_path; /* NULL for stdout; the name to give an unnamed temporary */
    bool unnamed;   /* the temporary is an O_TMPFILE: nothing to remove, ever */
    FILE *stream;   /* the file, or the compressor writing to it */
    /* A compressing stream has no descriptor of its own and closes the
     * file, so a duplicate lets commit fsync after the compressor ended. */
    int sync_fd;
    enum compression compression;
    bool published; /* the file is already at PATH */
    bool direct;    /* PATH is a device or a pipe, written in place */
};

/*
 * Temporaries that have a name (where the file system has no O_TMPFILE)
 * are removed on the exits that run code: exit() (out of memory) and the
 * terminating signals, whose handler is installed only where the signal's
 * action was the default one (a command that handles them, as record does
 * through a signalfd, aborts its outfiles itself).  Only SIGKILL leaves one.
 */
#define LIVE_MAX 16
static char *volatile live[LIVE_MAX];
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ, SIGPIPE};

static void remove_live(void)
{
    for (int i = 0; i < LIVE_MAX; i++) {
        char *p = live[i];
        if (p)
            unlink(p);
    }
}

static void on_fatal_signal(int sig)
{
    remove_live();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch(char *tmp)
{
    static bool installed;
    if (!installed) {
        installed = true;
        atexit(remove_live);
        for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
            struct sigaction old;
            if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
                !(old.sa_flags & SA_SIGINFO))
                signal(fatal_signals[i], on_fatal_signal);
        }
    }
    for (int i = 0; i < LIVE_MAX; i++)
        if (!live[i]) {
            live[i] = tmp;
            return;
        }
}

static void unwatch(const char *tmp)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live[i] == tmp)
            live[i] = NULL;
}

/* An unnamed temporary in DIR (O_TMPFILE), given a name only when it is
 * moved into place: killed at any moment, even by SIGKILL, the writer
 * leaves nothing.  -1 where the file system (or the kernel) cannot, or
 * /proc, which names it, is missing. */
static int open_unnamed(const char *dir, mode_t mode)
{
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) != 0)
        return -1;
    return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
#else
    (void)dir;
    (void)mode;
    return -1;
#endif
}

/* Give the unnamed temporary (descriptor FD) the name OUT->tmp_path, a
 * fresh one next to PATH: the rename that follows moves it into place. */
static int name_unnamed(struct outfile *out, int fd)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    size_t len = strlen(out->tmp_path);
    for (int attempt = 0; attempt < 100; attempt++) {
        /* mkstemp's pattern, without the file mkstemp would create. */
        strcpy(out->tmp_path + len - 6, "XXXXXX");
        int probe = mkostemp(out->tmp_path, O_CLOEXEC);
        if (probe < 0)
            return -1;
        close(probe);
        unlink(out->tmp_path);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, out->tmp_path, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* A device or a pipe (/dev/null, a FIFO, /dev/stdout) is written as it is:
 * renaming a temporary over it would replace the device with a file. */
static struct outfile *open_direct(struct outfile *out)
{
    int fd = open(out->path, O_WRONLY | O_CLOEXEC);
    FILE *raw = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!raw) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(out->path);
        free(out);
        return NULL;
    }
    out->direct = true;
    out->compression = compression_for_path(out->path);
    out->stream = out->compression == COMPRESSION_NONE ? raw : compress_open(raw, out->compression);
    if (!out->stream) {
        pt_err("cannot write '%s': %s compression: %s", out->path,
               compression_name(out->compression), strerror(errno));
        fclose(raw);
        free(out->path);
        free(out);
        return NULL;
    }
    return out;
}

struct outfile *outfile_open(const char *path)
{
    struct outfile *out = xcalloc(1, sizeof(*out));
    out->path = xstrdup(path);
    out->sync_fd = -1;
    if (strcmp(path, "-") == 0) {
        out->stream = stdout;
        return out;
    }
    /* rename() would refuse a directory only at the very end, after the
     * profiled program ran: refuse it now. */
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        pt_err("cannot write '%s': %s", path, strerror(EISDIR));
        free(out->path);
        free(out);
        return NULL;
    }
    if (exists && !S_ISREG(st.st_mode))
        return open_direct(out);

    char *copy = xstrdup(path);
    char *base = xstrdup(basename(copy));
    strcpy(copy, path);
    const char *dir = dirname(copy);
    out->tmp_path = xasprintf("%s/.%s.tmp.XXXXXX", dir, base);
    free(base);

    /* Respect the umask as a plainly created file would. */
    mode_t mask = umask(0);
    umask(mask);
    int fd = open_unnamed(dir, 0666 & ~mask);
    free(copy);
    out->unnamed = fd >= 0;
    if (!out->unnamed) {
        fd = mkostemp(out->tmp_path, O_CLOEXEC);
        if (fd < 0) {
            pt_err("cannot write '%s': %s", path, strerror(errno));
            free(out->tmp_path);
            out->tmp_path = NULL;
            free(out->path);
            free(out);
            return NULL;
        }
        watch(out->tmp_path);
        if (fchmod(fd, 0666 & ~mask) != 0)
            pt_debug("fchmod %s: %s", out->tmp_path, strerror(errno));
    }
    out->compression = compression_for_path(path);
    /* The descriptor that names an unnamed temporary at the end. */
    if (out->unnamed && out->compression == COMPRESSION_NONE)
        out->sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (out->compression == COMPRESSION_NONE) {
        out->stream = fdopen(fd, "w+");
        if (!out->stream) {
            pt_err("cannot write '%s': %s", path, strerror(errno));
            close(fd);
            outfile_abort(out);
            return NULL;
        }
        return out;
    }

    FILE *raw = NULL;
    out->sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (out->sync_fd >= 0)
        raw = fdopen(fd, "w");
    if (raw)
        out->stream = compress_open(raw, out->compression);
    if (!out->stream) {
        pt_err("cannot write '%s': %s compression: %s", path, compression_name(out->compression),
               strerror(errno));
        if (raw)
            fclose(raw);
        else
            close(fd);
        outfile_abort(out);
        return NULL;
    }
    return out;
}

FILE *outfile_stream(struct outfile *out)
{
    return out->stream;
}

const char *outfile_path(const struct outfile *out)
{
    return out->path;
}

bool outfile_seekable(const struct outfile *out)
{
    return out->tmp_path != NULL && out->compression == COMPRESSION_NONE;
}

/* Rename the temporary to PATH, naming it first when it has no name. */
static int move_into_place(struct outfile *out)
{
    if (out->unnamed) {
        int fd = out->sync_fd >= 0 ? out->sync_fd : fileno(out->stream);
        if (fd < 0 || name_unnamed(out, fd) != 0)
            return -1;
        watch(out->tmp_path); /* for the instant until the rename */
    }
    int rc = rename(out->tmp_path, out->path);
    int saved = errno;
    if (rc != 0 && out->unnamed)
        unlink(out->tmp_path);
    unwatch(out->tmp_path);
    errno = saved;
    return rc;
}

int outfile_publish(struct outfile *out)
{
    if (!out->tmp_path || out->published)
        return 0;
    /* Whatever was written before is visible with the name; a write error
     * here sticks to the stream and is reported by commit. */
    fflush(out->stream);
    if (move_into_place(out) != 0) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        return -1;
    }
    out->published = true;
    return 0;
}

static void outfile_free(struct outfile *out)
{
    if (out->tmp_path)
        unwatch(out->tmp_path);
    free(out->tmp_path);
    free(out->path);
    free(out);
}

int outfile_commit(struct outfile *out)
{
    int rc = 0;
    if (fflush(out->stream) != 0 || ferror(out->stream)) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        rc = -1;
    }
    if (!out->tmp_path) {
        if (out->direct && fclose(out->stream) != 0 && rc == 0) {
            pt_err("cannot write '%s': %s", out->path, strerror(errno));
            rc = -1;
        }
        outfile_free(out);
        return rc;
    }
    /* A plain file syncs before it closes.  A compressed stream's end goes
     * out on close, so it syncs after, through the duplicate descriptor. */
    bool compressed = out->compression != COMPRESSION_NONE;
    if (!compressed && rc == 0 && fsync(fileno(out->stream)) != 0 && errno != EINVAL) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        rc = -1;
    }
    if (fclose(out->stream) != 0 && rc == 0) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        rc = -1;
    }
    if (compressed && rc == 0 && fsync(out->sync_fd) != 0 && errno != EINVAL) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        rc = -1;
    }
    out->stream = NULL;
    if (!out->published) {
        if (rc == 0 && move_into_place(out) != 0) {
            pt_err("cannot write '%s': %s", out->path, strerror(errno));
            rc = -1;
        }
        if (rc != 0 && !out->unnamed)
            unlink(out->tmp_path);
    }
    if (out->sync_fd >= 0)
        close(out->sync_fd);
    outfile_free(out);
    return rc;
}

void outfile_abort(struct outfile *out)
{
    if (!out)
        return;
    if (out->direct && out->stream)
        fclose(out->stream);
    if (out->tmp_path) {
        /* Closing finishes a compressed stream: a published partial file
         * then decompresses cleanly up to where the writer stopped. */
        if (out->stream)
            fclose(out->stream);
        if (out->sync_fd >= 0)
            close(out->sync_fd);
        if (!out->published && !out->unnamed)
            unlink(out->tmp_path);
    }
    outfile_free(out);
}
