/*
 * resemble.h - which profile format some bytes most resemble, for content
 * that no reader claims.
 *
 * Contract: load.c asks this when no format's detector claims a file, so
 * that the user sees the error of the format the file most likely is (the
 * folded reader's bad line, the pprof reader's offset, "this is
 * perf.data") rather than whatever the last reader in the chain says; and
 * it asks about a file's first PROFILE_HEAD_SIZE bytes before reading the
 * rest, so that an endless input that resembles no profile (/dev/urandom,
 * a pipe of noise) is refused at once.  The judgement looks at bytes only:
 * it allocates nothing, prints nothing, and runs no reader.
 *
 * What counts (in this order):
 *   - perf.data: the magic "PERFILE2" (or version 1's "PERFFILE");
 *   - a gperftools CPU profile cut inside its header, too short for its
 *     detector (slot 0 is 0, slot 1 a header size of 3 to 1024 words);
 *   - the original raw format (pperf) with one of its documented magic
 *     numbers 0-3 and a header whose counts fit the file, or, with the
 *     whole header there, a PMU sample size it allows (a file cut short:
 *     the pperf reader says where);
 *   - a Python pickle (0x80, protocol 2-5): what the original tools'
 *     post-processing wrote as .pbin, no profile ptprof reads;
 *   - text (no NUL or other control byte but tab, CR, LF, FF, VT in the
 *     first bytes): perf script when more lines look like its call-chain
 *     frames (an indented hexadecimal address) than like folded stacks
 *     (ending in a count), else folded stacks if any line looks like
 *     one, else nothing;
 *   - pprof: the first byte is the tag of a field of pprof's Profile (of
 *     the first bytes only: a well-formed first sample type, the field
 *     every pprof writer starts with);
 *   - pperf with any magic number, its header counts fitting the file.
 * With only the first bytes (WHOLE false) a pperf header is judged by its
 * PMU sample size alone, since the file's length is unknown.
 */
#ifndef PTPROF_FORMAT_RESEMBLE_H
#define PTPROF_FORMAT_RESEMBLE_H

#include <stdbool.h>
#include <stddef.h>

/* The first bytes judged before a file is read whole. */
#define PROFILE_HEAD_SIZE 4096

enum resemblance {
    RESEMBLES_NOTHING,
    RESEMBLES_PERF_DATA,
    RESEMBLES_PPERF,
    RESEMBLES_PERF_SCRIPT,
    RESEMBLES_FOLDED,
    RESEMBLES_PPROF,
    RESEMBLES_GPERFTOOLS_HEADER,
    RESEMBLES_PICKLE,
};

/* DATA/LEN is the whole content when WHOLE, else its first bytes. */
enum resemblance profile_resemblance(const void *data, size_t len, bool whole);
/* "perf.data", "pperf", ... for messages; "nothing" for RESEMBLES_NOTHING. */
const char *resemblance_name(enum resemblance r);

#endif
