/*
 * jit_maps.h - the names JIT compilers publish for the code they generate,
 * copied into the profile while they still exist.
 *
 * Node (--perf-basic-prof), the JVM's perf agents, LuaJIT, .NET and
 * Python 3.12 (-X perf) write /tmp/perf-PID.map, one "START SIZE name"
 * line (hex, hex, text) per piece of code, and some write a jitdump file
 * (jit-PID.dump, which they map into their address space so profilers
 * find it).  Both belong to the process: the next process with the same
 * pid overwrites them, and nothing names the code once they are gone.
 *
 * Contract: jit_maps_capture() reads /tmp/perf-PID.map, and every jitdump
 * file MAPS shows mapped (a path whose base name is "jit-N.dump"; MAPS may
 * be NULL), and writes what names PID's code as one IMAGE record named
 * JIT_MAP_IMAGE (docs/format.md) in perf-map syntax, one "%llx %llx %s"
 * line per piece of code, in the order the JIT published them (a later
 * line wins where two overlap).  Left out: malformed lines, empty pieces,
 * names holding control characters, and pieces inside a file-backed
 * mapping of MAPS (code in an ELF file is named by its symbols; node lists
 * its builtins, which its binary names too).  It reads at most
 * JIT_MAP_MAX_BYTES of each file and keeps at most that much text (a
 * warning says what was cut).  Nothing to read is nothing to write.
 *
 * The files are named by the process, which may be another user's while
 * the recorder is root: it opens them with O_NOFOLLOW|O_NONBLOCK and reads
 * only a regular file owned by root or by one of the uids PID has now or
 * had when SEEN was read (jit_owner_read(), where the process was created
 * and at each exec: a reaped process has no uids left to read; SEEN may be
 * NULL), perf-map lines of bounded length.  A file refused is said with
 * pt_debug() and in the META "jit_refused.PID".
 *
 * It is engine-independent: a recorder calls it where a process exits
 * (the files outlive the process until the pid is reused) and, for the
 * processes still running, where recording ends.  It never signals or
 * stops the process, and reads only files.
 */
#ifndef PTPROF_RECORD_JIT_MAPS_H
#define PTPROF_RECORD_JIT_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/maps.h"
#include "model/profile.h"
#include "record/output.h"

#define JIT_MAP_MAX_BYTES (32u << 20)

/* The users a process runs as: real, effective, saved and filesystem uid. */
struct jit_owner {
    uint32_t uid[4];
    bool known;
};

/* PID's uids from /proc/PID/status; false (and O->known false) when gone. */
bool jit_owner_read(uint32_t pid, struct jit_owner *o);
void jit_maps_capture(struct output *out, uint32_t pid, const struct map_list *maps,
                      const struct jit_owner *seen);

#endif
