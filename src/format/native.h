/*
 * native.h - ptprof's own streaming profile format (docs/format.md).
 *
 * Writer contract: records are appended front to back and never revisited,
 * so the writer works into pipes and compressors.  The file is created
 * through util/outfile.h: until native_writer_publish() nothing at PATH
 * changes (so a run that fails before the target starts leaves an existing
 * file untouched); after it the file is at PATH and grows as the run goes,
 * flushed at least every 250 ms, so a profiler killed with SIGKILL leaves a
 * profile that reads up to its last whole record.  native_writer_finish()
 * appends END and closes.  Each native_write_* call returns 0, or -1 once
 * writing failed (reported once); later calls then do nothing.
 * native_stack_id() deduplicates: a stack seen before gets its old id; a
 * new one is written as a STACK record first.  Id 0 means "no stack".
 * native_write_location() appends a LOCATION record (a .pbin symbol-table
 * entry); a location with more than NATIVE_LOCATION_FRAMES_MAX frames keeps
 * the innermost ones and its last (the function the code was compiled
 * into), and strings are cut so the record fits the format's limits.
 * native_writer_finish() with TOTALS NULL closes without an END record, for
 * a copy of a profile whose recorder never finished.
 * native_write_value_type() declares value type ID (0, 1, 2... in order,
 * before the first sample; at most PROF_VALUE_TYPES_MAX);
 * native_write_sample_values() writes a sample whose threads carry weights
 * (NULL: 1 each; each must be at least 1) and values (NULL: all 0; else
 * nthreads x the declared value types, thread by thread);
 * native_write_sample() is the same with neither.
 *
 * Reader contract: native_load_stream() fills a struct profile (profile.h)
 * from a stream (util/instream.h), record by record as the bytes arrive, so
 * its memory is the profile's and one record's, whatever the file's size;
 * native_load_buffer() does the same from a file image in memory.  Damage
 * after a valid header is not an error: the profile keeps everything
 * before it and is marked truncated, with the offset (a compressed stream
 * that breaks is damage at its decompressed end, with the compressed
 * offset in the warning).  The exception is a header followed by
 * something that is not a record at all (a record of type 0, such as a
 * run of zero bytes, or a malformed first record): that is an error, not
 * an empty profile; a first record merely cut short is a recorder killed
 * early, and reads as truncated.  LOCATION records fill profile.locations in file order; one
 * naming a pid that no earlier PROCESS record introduced, or holding more
 * than NATIVE_LOCATION_FRAMES_MAX frames, is damage.  A bad header, an
 * unknown major version or a critical unknown record is an error: -1 after
 * "NAME: offset N: what is wrong".  Nothing in a file can make the reader
 * crash, loop or allocate beyond what the input size justifies.
 */
#ifndef PTPROF_FORMAT_NATIVE_H
#define PTPROF_FORMAT_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

struct instream;

#define NATIVE_MAGIC "\x89PTPROF\n"
#define NATIVE_MAJOR 1
#define NATIVE_MINOR 1
/* The most frames (an inline chain) one LOCATION record may hold. */
#define NATIVE_LOCATION_FRAMES_MAX 256

/* --- writing --- */
struct native_writer;

struct native_writer *native_writer_open(const char *path);
/* Make the (still growing) file visible at its path. */
int native_writer_publish(struct native_writer *w);
/* The bytes of records written so far (before any compression). */
uint64_t native_writer_bytes(const struct native_writer *w);
int native_write_meta(struct native_writer *w, const char *key, const char *value);
int native_write_channel(struct native_writer *w, uint32_t id, const struct pmu_channel *ch);
int native_write_process(struct native_writer *w, uint32_t pid, uint32_t ppid, uint64_t time_ns);
int native_write_exec(struct native_writer *w, uint32_t pid, uint64_t time_ns, const char *path);
int native_write_exit(struct native_writer *w, uint32_t pid, uint64_t time_ns, int32_t status);
int native_write_thread(struct native_writer *w, uint32_t pid, uint32_t tid, uint64_t time_ns,
                        const char *name);
int native_write_thread_exit(struct native_writer *w, uint32_t tid, uint64_t time_ns);
/* M->unmap_ns is ignored. */
int native_write_map(struct native_writer *w, const struct prof_map *m);
int native_write_unmap(struct native_writer *w, uint32_t pid, uint64_t time_ns, uint64_t start,
                       uint64_t end);
int native_write_image(struct native_writer *w, uint32_t pid, uint64_t start, const char *name,
                       const void *data, size_t size);
uint32_t native_stack_id(struct native_writer *w, const uint64_t *pcs, uint32_t depth);
int native_write_value_type(struct native_writer *w, uint32_t id, const char *name,
                            const char *unit, enum prof_value_agg agg);
int native_write_sample(struct native_writer *w, uint64_t time_ns, const double *values,
                        uint32_t nvalues, const struct prof_thread_sample *threads,
                        uint32_t nthreads);
int native_write_sample_values(struct native_writer *w, uint64_t time_ns, const double *values,
                               uint32_t nvalues, const struct prof_thread_sample *threads,
                               uint32_t nthreads, const uint64_t *weights,
                               const uint64_t *thread_values);
int native_write_location(struct native_writer *w, const struct prof_location *loc);
/* Append END (unless TOTALS is NULL), flush, close.  Frees W either way. */
int native_writer_finish(struct native_writer *w, const struct prof_totals *totals);
/* Before publish: remove everything.  After: close what was written. */
void native_writer_abort(struct native_writer *w);

/* --- reading --- */
/* True when DATA starts with the native magic. */
int native_is_native(const void *data, size_t len);
int native_load_stream(struct instream *in, struct profile *out);
int native_load_buffer(const char *name, const void *data, size_t len, struct profile *out);
/* Print every record of a native file in file order, one line each (a
 * sample's threads indented below it), ending with how the file ends.
 * Returns -1 after a message when the file cannot be read at all (bad
 * header, unknown critical record); damage is printed, not an error. */
int native_dump_stream(struct instream *in, FILE *out);
int native_dump_buffer(const char *name, const void *data, size_t len, FILE *out);

#endif
