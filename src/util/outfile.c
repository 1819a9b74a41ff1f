/* outfile.c - see outfile.h */
#include "util/outfile.h"
#include "util/compress.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct outfile {
    char *path;     /* what the user asked for */
    char *tmp_path; /* NULL for stdout */
    FILE *stream;   /* the file, or the compressor writing to it */
    /* A compressing stream has no descriptor of its own and closes the
     * file, so a duplicate lets commit fsync after the compressor ended. */
    int sync_fd;
    enum compression compression;
    bool published; /* the file is already at PATH */
    bool direct;    /* PATH is a device or a pipe, written in place */
};

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
    free(copy);

    int fd = mkostemp(out->tmp_path, O_CLOEXEC);
    if (fd < 0) {
        pt_err("cannot write '%s': %s", path, strerror(errno));
        free(out->tmp_path);
        out->tmp_path = NULL;
        free(out->path);
        free(out);
        return NULL;
    }
    /* Respect the umask as a plainly created file would. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        pt_debug("fchmod %s: %s", out->tmp_path, strerror(errno));
    out->compression = compression_for_path(path);
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

int outfile_publish(struct outfile *out)
{
    if (!out->tmp_path || out->published)
        return 0;
    /* Whatever was written before is visible with the name; a write error
     * here sticks to the stream and is reported by commit. */
    fflush(out->stream);
    if (rename(out->tmp_path, out->path) != 0) {
        pt_err("cannot write '%s': %s", out->path, strerror(errno));
        return -1;
    }
    out->published = true;
    return 0;
}

static void outfile_free(struct outfile *out)
{
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
    if (out->sync_fd >= 0)
        close(out->sync_fd);
    if (!out->published) {
        if (rc == 0 && rename(out->tmp_path, out->path) != 0) {
            pt_err("cannot write '%s': %s", out->path, strerror(errno));
            rc = -1;
        }
        if (rc != 0)
            unlink(out->tmp_path);
    }
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
        if (!out->published)
            unlink(out->tmp_path);
    }
    outfile_free(out);
}
