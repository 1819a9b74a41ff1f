/*
 * snapshots.h - `record --switch-output`: the recording as a series of
 * profiles, each complete and readable alone, as perf record
 * --switch-output makes them, for a service that never exits.
 *
 * Contract:
 *  - snapshots_parse() reads the option's value: "signal" (SIGUSR2 to the
 *    profiler starts a new file), a period ("10s", "5m", "1h", or
 *    seconds) or a size ("512K", "100M", "1G", "4096B": the file's records
 *    before compression, at least 4K); 0, or -1 after a one-line message.
 *  - snapshots_new(PATTERN, OPTS) is NULL when the option was not given.
 *    Every file of the series is named by PATTERN with "%t" replaced by
 *    the local time it was opened, YYYYmmddHHMMSSmmm (milliseconds), or
 *    when PATTERN has no "%t", PATTERN.TIMESTAMP as perf names them; a
 *    name equal to the previous one gets "-N".  snapshots_path() is the
 *    name of the file being written.
 *  - snapshots_due(S, NOW, BYTES) (monotonic ns; the current file's size):
 *    the period has passed since the current file was opened, the file
 *    reached the size, or SIGUSR2 asked (snapshots_request()).
 *    snapshots_switch() then moves OUT on to the next file (output_switch():
 *    no event is lost, the program is not stopped) and forgets the oldest
 *    files beyond MAX_FILES (> 0: only the last N are kept on disk).  A
 *    file that cannot be opened is one warning; the current one goes on.
 *  - snapshots_free() applies MAX_FILES to the last file too, once the
 *    recording finished it, and frees S.
 */
#ifndef PTPROF_RECORD_SNAPSHOTS_H
#define PTPROF_RECORD_SNAPSHOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "record/output.h"

struct snapshot_options {
    bool on;
    bool on_signal;       /* SIGUSR2 */
    double every_s;       /* 0: no period */
    uint64_t every_bytes; /* 0: no size */
    unsigned max_files;   /* 0: keep all */
};

struct snapshots;

int snapshots_parse(const char *value, struct snapshot_options *out);
struct snapshots *snapshots_new(const char *pattern, const struct snapshot_options *opts);
const char *snapshots_path(const struct snapshots *s);
void snapshots_request(struct snapshots *s);
bool snapshots_due(const struct snapshots *s, uint64_t now_ns, uint64_t bytes);
void snapshots_switch(struct snapshots *s, struct output *out, uint64_t now_ns);
void snapshots_free(struct snapshots *s);

#endif
