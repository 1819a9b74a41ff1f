/*
 * load.c - see load.h: from a path to a struct profile, whatever the
 * compression and the format.
 */
#include "format/load.h"
#include "format/native.h"
#include "format/resemble.h"
#include "interop/folded.h"
#include "interop/gmon.h"
#include "interop/gperftools.h"
#include "interop/perf_data.h"
#include "interop/perf_script.h"
#include "interop/pperf.h"
#include "interop/pprof.h"
#include "util/instream.h"
#include "util/linereader.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The longest run of zero bytes a format held whole may contain: none
 * holds more than a few hundred in a row (a pperf map label), while
 * /dev/zero and a decompression bomb hold nothing else. */
#define ZERO_RUN_MAX ((size_t)1 << 20)
/* gmon.out is the exception: a histogram has a 16-bit bin per 4 bytes of
 * code, and code where no sample fell reads as zeros; 64 MiB is 128 MiB of
 * code without one hit, more than any program's text. */
#define GMON_ZERO_RUN_MAX ((size_t)64 << 20)

static int unclaimed(const struct profile_file *f, const void *data, size_t len, bool whole,
                     const struct binary_search *search, struct profile *out);

/* The formats read from the stream as it goes rather than whole. */
struct stream_format {
    const char *name;
    int (*load)(struct instream *in, struct profile *out);
    /* Text: a prefix is what it says up to its last whole line, so a
     * stream that ends at damage loads that far, as truncated. */
    bool text;
};

static const struct stream_format native_stream = {"native", native_load_stream, false};
static const struct stream_format perf_script_stream = {"perf-script", perf_script_load_stream,
                                                        true};
static const struct stream_format folded_stream = {"folded", folded_load_stream, true};

/* What the text detectors look at: the first bytes, and one more to tell
 * a longer file from one that ends there. */
#define TEXT_HEAD_SIZE                                                                             \
    ((FOLDED_DETECT_BYTES > PERF_SCRIPT_DETECT_BYTES ? FOLDED_DETECT_BYTES                         \
                                                     : PERF_SCRIPT_DETECT_BYTES) +                 \
     1)

/* The text format the first N bytes D of a file start, or NULL: its
 * detector claims them, or no detector does and they resemble it most
 * (resemble.h), so that its reader names the bad line.  The formats
 * checked before the text ones in profile_parse() are ruled out first, in
 * the same order, so a file is read as the same format either way.  WHOLE:
 * D is the whole content. */
static const struct stream_format *text_format(const unsigned char *d, size_t n, bool whole)
{
    if (n == 0 || perf_data_detect(d, n) || gperftools_detect(d, n, NULL) || gmon_detect(d, n) ||
        pprof_detect(d, n))
        return NULL;
    if (perf_script_detect(d, n))
        return &perf_script_stream;
    if (folded_detect(d, n))
        return &folded_stream;
    switch (profile_resemblance(d, n, whole)) {
    case RESEMBLES_PERF_SCRIPT:
        return &perf_script_stream;
    case RESEMBLES_FOLDED:
        return &folded_stream;
    default:
        return NULL;
    }
}

static void keep_head(struct profile_file *f, const unsigned char *d, size_t n)
{
    f->head_len = n < sizeof(f->head) ? n : sizeof(f->head);
    if (f->head_len)
        memcpy(f->head, d, f->head_len);
}

/* Open IN as F: a native or text stream stays open, anything else is read
 * whole (at most MAX_LEN bytes).  IN belongs to F from here. */
static int read_stream(struct instream *in, size_t max_len, struct profile_file *f)
{
    f->name = xstrdup(instream_name(in));
    xalloc_reading(f->name); /* until profile_file_free() */
    f->raw.compression = instream_compression(in);
    /* No limit yet: these few bytes decode at most one piece. */
    const unsigned char *d;
    size_t n = instream_peek(in, 8, &d);
    if (native_is_native(d, n)) {
        /* Read record by record by profile_parse(): memory follows what
         * the profile holds, and damage stops the reading there. */
        n = instream_peek(in, sizeof(f->head), &d); /* may move the bytes: D anew */
        keep_head(f, d, n);
        f->in = in;
        f->stream = &native_stream;
        return 0;
    }
    instream_limit_zero_run(in, gmon_detect(d, n) ? GMON_ZERO_RUN_MAX : ZERO_RUN_MAX);
    size_t want = TEXT_HEAD_SIZE;
    n = instream_peek(in, want, &d);
    /* Text whose first line is longer than the head (a folded stack of
     * thousands of frames): look as far as that line's end, so that what
     * the file is does not depend on its first line's length.  The line
     * reader would hold that line anyway, and refuses one past its limit. */
    while (n == want && want < LINE_READER_MAX && !memchr(d, '\n', n) && !memchr(d, '\0', n)) {
        want = want * 2 < LINE_READER_MAX ? want * 2 : LINE_READER_MAX;
        n = instream_peek(in, want, &d);
    }
    const struct stream_format *text = text_format(d, n, n < want);
    if (text) {
        /* Read line by line by profile_parse(): memory follows the
         * profile's distinct content, however large the text, so however
         * well it compresses (a log of identical lines does). */
        instream_limit_ratio(in, 0);
        keep_head(f, d, n);
        f->in = in;
        f->stream = text;
        return 0;
    }
    /* Everything else is parsed whole: first make sure the first bytes
     * could start a profile at all, so that an endless input that looks
     * like none is refused before it is read. */
    size_t head = n < PROFILE_HEAD_SIZE ? n : PROFILE_HEAD_SIZE;
    bool whole = n < PROFILE_HEAD_SIZE;
    if (head && !gmon_detect(d, head) && !gperftools_detect(d, head, NULL)) {
        /* perf.data is read on: a reader of it may claim it below. */
        enum resemblance r = profile_resemblance(d, head, whole);
        if (r == RESEMBLES_NOTHING) {
            struct profile none;
            unclaimed(f, d, head, whole, NULL, &none);
            instream_close(in);
            profile_file_free(f);
            return -1;
        }
    }
    int rc = slurp_stream(in, max_len, &f->raw);
    instream_close(in);
    if (rc != 0) {
        profile_file_free(f);
        return -1;
    }
    keep_head(f, f->raw.data, f->raw.len);
    return 0;
}

int profile_file_read(const char *path, struct profile_file *f)
{
    memset(f, 0, sizeof(*f));
    struct instream *in = instream_open(path);
    return in ? read_stream(in, SLURP_DEFAULT_MAX, f) : -1;
}

int profile_file_read_memory(const char *name, const void *data, size_t len, size_t max_len,
                             struct profile_file *f)
{
    memset(f, 0, sizeof(*f));
    return read_stream(instream_open_memory(name, data, len), max_len, f);
}

int profile_file_hold(struct profile_file *f)
{
    if (!f->in)
        return 0;
    int rc = slurp_stream(f->in, SLURP_DEFAULT_MAX, &f->raw);
    instream_close(f->in);
    f->in = NULL;
    f->stream = NULL;
    return rc;
}

uint64_t profile_file_length(const struct profile_file *f)
{
    return f->in ? instream_offset(f->in) : f->raw.len;
}

void profile_file_free(struct profile_file *f)
{
    xalloc_reading(NULL);
    instream_close(f->in);
    slurp_free(&f->raw);
    free(f->name);
    memset(f, 0, sizeof(*f));
}

const char *profile_file_format(const struct profile_file *f)
{
    if (f->in)
        return f->stream->name;
    if (native_is_native(f->raw.data, f->raw.len))
        return "native";
    if (perf_data_detect(f->raw.data, f->raw.len))
        return "perf-data";
    if (gmon_detect(f->raw.data, f->raw.len))
        return "gmon";
    if (gperftools_detect(f->raw.data, f->raw.len, NULL))
        return "gperftools";
    if (pprof_detect(f->raw.data, f->raw.len))
        return "pprof";
    if (perf_script_detect(f->raw.data, f->raw.len))
        return "perf-script";
    if (folded_detect(f->raw.data, f->raw.len))
        return "folded";
    enum resemblance r = profile_resemblance(f->raw.data, f->raw.len, true);
    return r == RESEMBLES_NOTHING ? "unknown" : resemblance_name(r);
}

/* F's open stream through its reader. */
static int parse_stream(const struct profile_file *f, struct profile *out)
{
    if (f->stream->load(f->in, out) != 0)
        return -1;
    if (f->stream->text && instream_end(f->in) == INSTREAM_DAMAGED) {
        /* The reader stopped at the last whole line, unconsumed after. */
        pt_warn("%s; the profile ends at its last whole line", instream_error(f->in));
        out->truncated = true;
        out->truncated_at = instream_offset(f->in);
    }
    return 0;
}

/* A text held whole (profile_file_hold()): a prefix of it is what it says
 * up to its last whole line, so a damaged compressed stream loads as
 * truncated there. */
static int parse_held_text(const struct profile_file *f,
                           int (*load)(const char *, const void *, size_t, struct profile *),
                           struct profile *out)
{
    size_t len = f->raw.len;
    if (f->raw.truncated) {
        const char *nl = len ? memrchr(f->raw.data, '\n', len) : NULL;
        len = nl ? (size_t)(nl - (const char *)f->raw.data) + 1 : 0;
    }
    if (load(f->name, f->raw.data, len, out) != 0)
        return -1;
    if (f->raw.truncated) {
        pt_warn("%s; the profile ends at its last whole line", f->raw.error);
        out->truncated = true;
        out->truncated_at = len;
    }
    return 0;
}

int profile_parse(const struct profile_file *f, struct profile *out)
{
    return profile_parse_with(f, NULL, out);
}

int profile_parse_with(const struct profile_file *f, const struct binary_search *search,
                       struct profile *out)
{
    profile_init(out);
    if (f->in)
        return parse_stream(f, out);
    if (native_is_native(f->raw.data, f->raw.len)) {
        if (native_load_buffer(f->name, f->raw.data, f->raw.len, out) != 0)
            return -1;
        if (f->raw.truncated) {
            /* What decompressed is a prefix; where the compressed data
             * broke is the useful offset for the user. */
            pt_warn("%s; the profile ends there", f->raw.error);
            if (!out->truncated) {
                out->truncated = true;
                out->truncated_at = f->raw.len;
            }
        }
        return 0;
    }
    if (perf_data_detect(f->raw.data, f->raw.len)) {
        /* Its header's sections describe the whole file. */
        if (f->raw.truncated) {
            pt_err("%s", f->raw.error);
            return -1;
        }
        return perf_data_load_buffer(f->name, f->raw.data, f->raw.len, out);
    }
    if (gperftools_detect(f->raw.data, f->raw.len, NULL)) {
        /* Without its trailer a prefix is not a profile: say where the
         * compressed data broke rather than where the records stop. */
        if (f->raw.truncated) {
            pt_err("%s", f->raw.error);
            return -1;
        }
        return gperftools_load_buffer(f->name, f->raw.data, f->raw.len, out);
    }
    if (gmon_detect(f->raw.data, f->raw.len)) {
        /* A histogram is whole or missing: a prefix is not a gmon.out. */
        if (f->raw.truncated) {
            pt_err("%s", f->raw.error);
            return -1;
        }
        return gmon_load_buffer(f->name, f->raw.data, f->raw.len, out);
    }
    if (pprof_detect(f->raw.data, f->raw.len)) {
        /* A message cut short is not the message: say where it broke. */
        if (f->raw.truncated) {
            pt_err("%s", f->raw.error);
            return -1;
        }
        return pprof_load_buffer(f->name, f->raw.data, f->raw.len, out);
    }
    if (perf_script_detect(f->raw.data, f->raw.len))
        return parse_held_text(f, perf_script_load_buffer, out);
    if (folded_detect(f->raw.data, f->raw.len))
        return parse_held_text(f, folded_load_buffer, out);
    return unclaimed(f, f->raw.data, f->raw.len, true, search, out);
}

/* The original format: its header counts describe the whole file. */
static int parse_pperf(const struct profile_file *f, const struct binary_search *search,
                       struct profile *out)
{
    if (f->raw.truncated) {
        /* A prefix never validates: say why rather than where the counts
         * disagree. */
        pt_err("%s", f->raw.error);
        return -1;
    }
    struct pperf_profile pp;
    if (pperf_load_buffer(f->name, f->raw.data, f->raw.len, &pp) != 0)
        return -1;
    int rc = profile_from_pperf(&pp, f->name, search, out);
    pperf_free(&pp);
    return rc;
}

/* No reader claims DATA (the content, or its first bytes unless WHOLE):
 * hand it to the format it most resembles, whose reader names what is
 * wrong in its own terms, or say that it resembles none. */
static int unclaimed(const struct profile_file *f, const void *data, size_t len, bool whole,
                     const struct binary_search *search, struct profile *out)
{
    profile_init(out);
    switch (profile_resemblance(data, len, whole)) {
    case RESEMBLES_PERF_DATA:
        /* PERFILE2 is read above: this is version 1's PERFFILE. */
        pt_err("%s: offset 0: a perf.data file of perf's first version (PERFFILE), which ptprof "
               "does not read: perf script -i %s | ptprof report -",
               f->name, f->name);
        return -1;
    case RESEMBLES_PERF_SCRIPT:
        return parse_held_text(f, perf_script_load_buffer, out);
    case RESEMBLES_FOLDED:
        return parse_held_text(f, folded_load_buffer, out);
    case RESEMBLES_PPROF:
        if (f->raw.truncated) {
            pt_err("%s", f->raw.error);
            return -1;
        }
        return pprof_load_buffer(f->name, f->raw.data, f->raw.len, out);
    case RESEMBLES_PPERF:
        return parse_pperf(f, search, out);
    case RESEMBLES_GPERFTOOLS_HEADER:
        pt_err("%s: offset %zu: a gperftools CPU profile cut inside its header", f->name, len);
        return -1;
    case RESEMBLES_PICKLE:
        pt_err("%s: offset 0: a Python pickle (the original tools' .pbin?), which ptprof does not "
               "read: give ptprof the raw profile it was made from",
               f->name);
        return -1;
    case RESEMBLES_NOTHING:
        break;
    }
    if (len == 0)
        pt_err("%s: the file is empty: no profile in it", f->name);
    else
        pt_err("%s: offset 0: not a profile in a format ptprof reads (native, pperf, perf.data, "
               "gperftools, gmon.out, pprof, perf script, folded stacks)",
               f->name);
    return -1;
}

int profile_load(const char *path, struct profile *out)
{
    return profile_load_with(path, NULL, out);
}

int profile_load_with(const char *path, const struct binary_search *search, struct profile *out)
{
    struct profile_file f;
    profile_init(out);
    if (profile_file_read(path, &f) != 0)
        return -1;
    int rc = profile_parse_with(&f, search, out);
    profile_file_free(&f);
    return rc;
}
