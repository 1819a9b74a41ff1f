/*
 * load.c - see load.h: from a path to a struct profile, whatever the
 * compression and the format; and the words info and dump describe it with.
 */
#include "format/load.h"
#include "interop/folded.h"
#include "interop/gmon.h"
#include "interop/gperftools.h"
#include "format/native.h"
#include "interop/perf_script.h"
#include "interop/pperf.h"
#include "interop/pprof.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int profile_file_read(const char *path, struct profile_file *f)
{
    memset(f, 0, sizeof(*f));
    if (slurp_path(path, SLURP_DEFAULT_MAX, &f->raw) != 0)
        return -1;
    f->name = xstrdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
    return 0;
}

void profile_file_free(struct profile_file *f)
{
    slurp_free(&f->raw);
    free(f->name);
    memset(f, 0, sizeof(*f));
}

const char *profile_file_format(const struct profile_file *f)
{
    if (native_is_native(f->raw.data, f->raw.len))
        return "native";
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
    return "pperf";
}

/* A text format: a prefix of it is what it says up to its last whole line,
 * so a damaged compressed stream loads as truncated there. */
static int parse_text(const struct profile_file *f,
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
    profile_init(out);
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
        return parse_text(f, perf_script_load_buffer, out);
    if (folded_detect(f->raw.data, f->raw.len))
        return parse_text(f, folded_load_buffer, out);
    if (f->raw.truncated) {
        /* The header's counts describe the whole file: a prefix never
         * validates, so say why rather than where the counts disagree. */
        pt_err("%s", f->raw.error);
        return -1;
    }
    struct pperf_profile pp;
    if (pperf_load_buffer(f->name, f->raw.data, f->raw.len, &pp) != 0)
        return -1;
    int rc = profile_from_pperf(&pp, f->name, out);
    pperf_free(&pp);
    return rc;
}

int profile_load(const char *path, struct profile *out)
{
    struct profile_file f;
    profile_init(out);
    if (profile_file_read(path, &f) != 0)
        return -1;
    int rc = profile_parse(&f, out);
    profile_file_free(&f);
    return rc;
}
