/*
 * symcache.h - the frames of one binary by file offset, remembered for the
 * rest of the run and, per build-id, between runs.
 *
 * Contract:
 *  - symcache_new() makes an empty table for the binary named NAME (base
 *    name) read from PATH, whose frames carry those two strings.  The
 *    table is what the symbolizer asks before it opens a binary, so every
 *    offset is resolved once.
 *  - symcache_load() attaches the persistent file DIR/HEX.sym (HEX: the
 *    lower-case build-id) and reads it.  The file records, besides the
 *    entries, whether they were made with DWARF and the path that answered
 *    (the path reported for its frames).  A file that is damaged, of
 *    another version or of another build-id is ignored (it is rewritten on
 *    save); a file made without DWARF is ignored when DEBUG_AVAILABLE says
 *    a separate debug file has appeared since.
 *  - symcache_lookup() returns the frames of OFFSET (NULL if not known; a
 *    known offset that nothing names has 0 frames), symcache_add() records
 *    them (copied into POOL's memory, so they stay valid until the pool is
 *    freed, whatever happens to the table).
 *  - symcache_set_quality() says whether the binary that answers the
 *    misses has DWARF: entries loaded without DWARF are dropped when it
 *    has, and a run without DWARF does not overwrite a file made with it.
 *  - symcache_save() writes the table back when it has new entries: under
 *    an exclusive lock (flock on DIR/.lock) it merges what the file holds
 *    now (another run may have added entries), writes a temporary file and
 *    renames it over the old one, so a reader sees the old or the new file,
 *    never a partial one, and concurrent writers lose nothing.  Failures
 *    are reported with pt_debug() only: the cache is an optimization.
 *  - symcache_dir() is $XDG_CACHE_HOME/ptprof, or ~/.cache/ptprof
 *    (allocated; NULL without either variable).
 *
 * File layout, little-endian: "PTSYMC\0\0", u32 version, u32 flags (1:
 * made with DWARF), u8 build-id length and bytes, str path, u64 count,
 * then per entry: u64 file offset, u32 nframes, per frame str function,
 * str mangled, str file, u32 line, u8 inlined.  A str is a u32 length and
 * that many bytes, no NUL.
 */
#ifndef PTPROF_SYMBOL_SYMCACHE_H
#define PTPROF_SYMBOL_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbol/strpool.h"
#include "symbol/symbolizer.h"

struct symcache;

struct symcache *symcache_new(struct strpool *pool, const char *name, const char *path);
void symcache_load(struct symcache *c, const char *dir, const uint8_t *id, size_t len,
                   bool debug_available);
const struct sym_frame *symcache_lookup(const struct symcache *c, uint64_t offset,
                                        uint32_t *nframes);
void symcache_add(struct symcache *c, uint64_t offset, const struct sym_frame *frames,
                  uint32_t nframes);
void symcache_set_path(struct symcache *c, const char *path);
void symcache_set_quality(struct symcache *c, bool has_dwarf);
/* True when the table was loaded from a file (answers may need no binary). */
bool symcache_loaded(const struct symcache *c);
/* True when its entries were made with DWARF. */
bool symcache_has_dwarf(const struct symcache *c);
void symcache_save(struct symcache *c);
void symcache_free(struct symcache *c);

char *symcache_dir(void);

#endif
