/*
 * keys.h - what report rows are keyed by: any combination of pc, binary,
 * file, procedure, procedure_mangled, symbol, line and thread (DESIGN.md).
 *
 * Contract:
 *  - key_spec_parse() reads a comma list of key names (no duplicates, at
 *    least one) into SPEC; on an unknown or repeated name it returns -1
 *    and writes a one-line reason into ERR.
 *  - A row's identity is its components joined by KEY_SEP (a byte that no
 *    name contains: key_compose() replaces any in a component by '?');
 *    key_display() joins them with ':' instead, as CSV and tables show
 *    them, and key_part() extracts component I.
 *  - Component values (docs/report.md): pc is the offset of the address in
 *    its binary as 0x hex; file is the source file or "[unknown]"; line is
 *    the line number (0 when unknown); procedure is the demangled name,
 *    procedure_mangled the symbol as in the binary (the demangled name when
 *    there is none); symbol is the function the code was compiled into
 *    (demangled): the last, not inlined, frame of the address, the same
 *    for every inlined frame of it, so that rows line up with perf, gprof
 *    and pprof, which name code by the symbol that holds it; thread is
 *    "NAME#N", N numbering the profile's threads
 *    from 1 in order of first appearance, so that runs line up.
 */
#ifndef PTPROF_ANALYZE_KEYS_H
#define PTPROF_ANALYZE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_SEP '\x1f'
#define KEY_UNKNOWN "[unknown]"

enum key_kind {
    KEY_PC,
    KEY_BINARY,
    KEY_FILE,
    KEY_PROCEDURE,
    KEY_PROCEDURE_MANGLED,
    KEY_SYMBOL,
    KEY_LINE,
    KEY_THREAD,
    KEY_KIND_COUNT,
};

struct key_spec {
    enum key_kind kinds[KEY_KIND_COUNT];
    size_t count;
};

/* The values of one frame's components; pc is preformatted. */
struct key_frame {
    const char *pc;
    const char *binary;
    const char *file;
    const char *function;
    const char *mangled;
    const char *symbol; /* the containing (not inlined) function; NULL: function */
    uint32_t line;
    const char *thread;
};

int key_spec_parse(const char *list, struct key_spec *spec, char *err, size_t errlen);
/* binary,procedure */
void key_spec_default(struct key_spec *spec);
bool key_spec_has(const struct key_spec *spec, enum key_kind kind);
const char *key_kind_name(enum key_kind kind);
/* The key names joined by ':' (the CSV header's first column), allocated. */
char *key_spec_header(const struct key_spec *spec);

/* The identity of F under SPEC into *BUF (grown as needed); returns its
 * length. */
size_t key_compose(const struct key_spec *spec, const struct key_frame *f, char **buf, size_t *cap);
/* The identity whose every component is VALUE ("[unattributed]"...). */
char *key_compose_all(const struct key_spec *spec, const char *value);
/* ID with ':' between components, allocated. */
char *key_display(const char *id);
/* Component I of ID, allocated ("" if ID has fewer). */
char *key_part(const char *id, size_t i);

#endif
