/*
 * dwfl_reader.h - one binary read with elfutils' libdwfl: from a file
 * offset to its frames (function, source line, inline chain).
 *
 * Contract: dwfl_reader_open() reports the ELF file PATH (or the open file
 * FD, which it then owns, with PATH only naming it) as an offline libdwfl
 * module; DEBUGINFO_PATH is the libdwfl debuginfo_path
 * (binary_finder_debuginfo_path()), so separate debug info is found by
 * build-id or .gnu_debuglink.  It returns NULL with a reason in *WHY (a
 * static string) when the file cannot be used.
 *
 * dwfl_reader_frames() resolves FILE_OFFSET (the byte of the file the
 * address was loaded from): the offset becomes the address the file was
 * linked for through its PT_LOAD headers (elf_symtab_vaddr()), then
 *   - the function: the ELF symbol containing it (.symtab, or .dynsym
 *     when stripped, or the separate debug file's), demangled;
 *   - its source file and line from the DWARF line table;
 *   - the inline chain from the DWARF scopes: every
 *     DW_TAG_inlined_subroutine containing the address is a frame of its
 *     own, innermost first, named by its abstract origin, and the line of
 *     the frame that follows it is the call site (DW_AT_call_file and
 *     DW_AT_call_line).
 * It writes at most MAX frames into OUT (binary and path left NULL for the
 * caller, strings interned in POOL) and returns how many: 0 when nothing
 * names the address (no symbol, no DWARF, or no PT_LOAD holds the offset).
 * The last frame is the function the code was compiled into; when it has
 * no ELF symbol the DWARF subprogram names it.  Damaged DWARF gives fewer
 * details, never a crash.
 *
 * dwfl_reader_function_start() is for an address nothing names (a static
 * function of a stripped file): the call frame information describes each
 * function in one FDE (fde_index.h: .eh_frame, which strip keeps, else
 * .debug_frame), so the FDE holding FILE_OFFSET gives the file offset of
 * the function's first byte in *START.  False when no FDE holds it (or none maps back to
 * the file).
 *
 * dwfl_reader_has_dwarf() tells whether DWARF was found (in the file or a
 * separate debug file, looked for by elfutils' dwfl_standard_find_debuginfo:
 * the .build-id tree, .gnu_debuglink, then debuginfod servers, see
 * debug_server.h), which the persistent cache records.
 * dwfl_reader_fetch_error() is the errno a debuginfod server's answer
 * ended with during that search (0: none asked, or it answered).
 */
#ifndef PTPROF_SYMBOL_DWFL_READER_H
#define PTPROF_SYMBOL_DWFL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbol/strpool.h"
#include "symbol/symbolizer.h"

struct dwfl_reader;

struct dwfl_reader *dwfl_reader_open(const char *path, int fd, char **debuginfo_path,
                                     const char **why);
size_t dwfl_reader_frames(struct dwfl_reader *r, uint64_t file_offset, struct strpool *pool,
                          struct sym_frame *out, size_t max);
bool dwfl_reader_function_start(struct dwfl_reader *r, uint64_t file_offset, uint64_t *start);
bool dwfl_reader_has_dwarf(struct dwfl_reader *r);
int dwfl_reader_fetch_error(const struct dwfl_reader *r);
void dwfl_reader_close(struct dwfl_reader *r);

#endif
