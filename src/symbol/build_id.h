/*
 * build_id.h - the GNU build-id of an ELF file.
 *
 * Contract: build_id_read() opens PATH, reads its NT_GNU_BUILD_ID note with
 * elfutils (dwelf_elf_gnu_build_id) and copies at most MAX bytes into OUT.
 * Returns the length, 0 when the file has no build-id, or -1 when it cannot
 * be read or is not ELF (no message: callers decide whether that matters).
 * The recorder stores build-ids with every mapped file so a symbolizer can
 * tell a binary that changed since recording from the one that ran.
 */
#ifndef PTPROF_SYMBOL_BUILD_ID_H
#define PTPROF_SYMBOL_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

int build_id_read(const char *path, uint8_t *out, size_t max);
/* Lower-case hex of ID into BUF (2*len+1 bytes). */
void build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
