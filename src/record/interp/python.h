/*
 * python.h - the CPython module's parts (interp.h, docs/python.md):
 *  - python_find.c finds the runtime in a process: the file that holds it
 *    (an executable that embeds the interpreter, or libpython3.X.so), its
 *    load address, its symbols (_PyRuntime or the .PyRuntime section,
 *    Py_Version, the type objects, the eval loop's range);
 *  - python_layout.c says where the fields are: one offsets table per
 *    version for 3.11 and 3.12, each entry naming the CPython header it
 *    comes from; from 3.13 on the interpreter's own _Py_DebugOffsets,
 *    validated as untrusted input;
 *  - python_frames.c reads a thread's frames (its thread state by
 *    native_thread_id, the frame chain);
 *  - python_code.c names a frame's code object (qualified name, file, the
 *    line executing from the location table), with a cache;
 *  - remote_mem.c reads the target's memory.
 * Contract: nothing here trusts the target's memory: every pointer may be
 * wrong, every size absurd; reads are bounded and fail cleanly.
 */
#ifndef PTPROF_RECORD_INTERP_PYTHON_H
#define PTPROF_RECORD_INTERP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/interp/interp.h"
#include "model/maps.h"

/* Where CPython keeps what the reader needs, in bytes from the start of
 * each structure (x86-64 and other LP64 targets). */
struct python_layout {
    const char *source; /* where the numbers come from, for -d */
    /* _PyRuntimeState */
    uint64_t runtime_interpreters_head;
    /* PyInterpreterState */
    uint64_t interp_next, interp_threads_head;
    /* PyThreadState: current_frame directly (3.13), or through cframe */
    uint64_t tstate_next, tstate_native_thread_id, tstate_frame, tstate_datastack_chunk;
    bool frame_via_cframe;
    uint64_t cframe_current_frame;
    /* _PyInterpreterFrame */
    uint64_t frame_previous, frame_code, frame_instr, frame_owner;
    int64_t frame_is_entry; /* 3.11's is_entry; -1 when entries are shim frames */
    bool instr_is_previous; /* prev_instr (3.11, 3.12): the last instruction run */
    int owner_cstack;       /* FRAME_OWNED_BY_CSTACK (a shim frame), -1: none */
    /* PyCodeObject */
    uint64_t code_filename, code_qualname, code_firstlineno, code_linetable, code_adaptive;
    /* PyUnicodeObject (compact), PyBytesObject */
    uint64_t unicode_state, unicode_length, unicode_ascii_size, unicode_compact_size;
    uint64_t bytes_size, bytes_sval;
};

/* PY_VERSION_HEX as Py_Version holds it: 0x030C01F0 is 3.12.1 final. */
#define PYTHON_MAJOR(v) ((v) >> 24 & 0xff)
#define PYTHON_MINOR(v) ((v) >> 16 & 0xff)
#define PYTHON_MICRO(v) ((v) >> 8 & 0xff)

/* What python_find.c learns of the file that holds the runtime. */
struct python_image {
    char path[4096];
    uint64_t map_start, map_offset, inode; /* the mapping it was found through */
    uint64_t bias;                         /* run-time address = link-time address + bias */
    uint64_t runtime;                      /* _PyRuntime, 0 when not found */
    uint64_t version_addr;                 /* Py_Version, 0 when not found */
    uint64_t code_type, unicode_type, bytes_type, none;
    uint64_t eval_lo, eval_hi;           /* _PyEval_EvalFrameDefault */
    uint64_t eval_cold_lo, eval_cold_hi; /* its .cold part, when split (0, 0: none) */
};

/* Find the file of PID's maps that holds a CPython runtime: true with IMG
 * filled; false with WHY empty (no Python there) or saying why not. */
bool python_find(pid_t pid, const struct map_list *maps, struct python_image *img, char *why,
                 size_t whylen);

/* The layout for VERSION (Py_Version), reading _Py_DebugOffsets at RUNTIME
 * in PID from 3.13 on.  False with WHY when unsupported or invalid. */
bool python_layout_for(pid_t pid, uint32_t version, uint64_t runtime, struct python_layout *l,
                       char *why, size_t whylen);
/* The _Py_DebugOffsets check alone, on a copy of its bytes (unit tests). */
bool python_debug_offsets_parse(const uint8_t *data, size_t size, uint32_t version,
                                struct python_layout *l, char *why, size_t whylen);
#define PYTHON_DEBUG_OFFSETS_313_SIZE 584

/* Memory of process PID: the whole range or false (remote_mem.c). */
bool remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* A plausible user-space pointer to an object (non-null, aligned, below
 * the canonical limit). */
bool remote_pointer_ok(uint64_t addr);

struct python_walk;

/* The code object cache (python_code.c). */
struct python_code_cache;
struct python_code_cache *python_code_cache_new(void);
void python_code_cache_free(struct python_code_cache *c);

struct python_runtime {
    pid_t pid;
    uint32_t version;
    char description[64];
    struct python_image img;
    struct python_layout layout;
    struct python_code_cache *codes;
    struct python_walk *walk; /* python_frames.c's scratch, made at its first read */
    /* tid -> thread state, validated at each use */
    struct {
        pid_t tid;
        uint64_t tstate;
    } tstates[256];
};

/* The frame of code object CODE at instruction INSTR (an address in the
 * target), named through NAMES: its synthetic PC, or 0 with *FAILURE.
 * python_code_name() is the same from the first python_code_header_size()
 * bytes of the object, already read (HEAD); the size is 0 when the layout
 * puts the fields beyond PYTHON_CODE_HEADER_MAX. */
#define PYTHON_CODE_HEADER_MAX 512
uint64_t python_code_pc(struct python_runtime *rt, uint64_t code, uint64_t instr,
                        struct interp_names *names, uint32_t pid, enum interp_failure *failure);
size_t python_code_header_size(const struct python_layout *l);
uint64_t python_code_name(struct python_runtime *rt, uint64_t code, const uint8_t *head,
                          uint64_t instr, struct interp_names *names, uint32_t pid,
                          enum interp_failure *failure);
/* What the cache knows of code object CODE, or false: EXPECT gets what its
 * header said (the names' and the table's objects, the first line). */
bool python_code_cached(const struct python_runtime *rt, uint64_t code, uint64_t expect[4]);
/* Whether HEAD, CODE's header read again, still says EXPECT; if not, the
 * cache forgets CODE, so that the next read names it anew. */
bool python_code_unchanged(struct python_runtime *rt, uint64_t code, const uint8_t *head,
                           const uint64_t expect[4]);
/* The line of bytecode offset LASTI (code units) in a 3.11+ location table
 * starting at FIRSTLINENO; FIRSTLINENO when LASTI is outside it. */
uint32_t python_line_of(const uint8_t *table, size_t len, uint32_t firstlineno, int64_t lasti);

bool python_read_thread(void *rt, pid_t tid, const struct interp_when *when,
                        struct interp_names *names, uint32_t pid, struct interp_stack *st,
                        enum interp_failure *failure);
bool python_finish_thread(void *rt, struct interp_names *names, uint32_t pid,
                          struct interp_stack *st, enum interp_failure *failure);

#endif
