/*
 * python_layout.c - where CPython keeps the fields the frame reader needs
 * (python.h).  3.11 and 3.12 have no table of their own: their offsets are
 * written here, each from the header that defines the field (offsetof()
 * over the installed internal headers of 3.11.7 and 3.12.1, x86-64; the
 * layouts hold within a minor version).  From 3.13 on the runtime starts
 * with _Py_DebugOffsets (Include/internal/pycore_runtime.h), which is read
 * from the target and validated before any of it is used.
 */
#include "record/interp/python.h"

#include <stdio.h>
#include <string.h>

static const struct python_layout layout_311 = {
    .source = "offsets table for 3.11",
    /* Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head */
    .runtime_interpreters_head = 40,
    /* Include/internal/pycore_interp.h: struct _is .next, .threads.head */
    .interp_next = 0,
    .interp_threads_head = 16,
    /* Include/cpython/pystate.h: struct _ts .next, .native_thread_id, .cframe,
     * .datastack_chunk; _PyCFrame.current_frame */
    .tstate_next = 8,
    .tstate_native_thread_id = 160,
    .tstate_frame = 56,
    .tstate_datastack_chunk = 296,
    .frame_via_cframe = true,
    .cframe_current_frame = 8,
    /* Include/internal/pycore_frame.h: _PyInterpreterFrame .previous,
     * .f_code, .prev_instr, .is_entry, .owner */
    .frame_previous = 48,
    .frame_code = 32,
    .frame_instr = 56,
    .frame_is_entry = 68,
    .frame_owner = 69,
    .instr_is_previous = true,
    .owner_cstack = -1,
    /* Include/cpython/code.h: PyCodeObject .co_filename, .co_qualname,
     * .co_firstlineno, .co_linetable, .co_code_adaptive */
    .code_filename = 112,
    .code_qualname = 128,
    .code_firstlineno = 72,
    .code_linetable = 136,
    .code_adaptive = 184,
    /* Include/cpython/unicodeobject.h: PyASCIIObject .state, .length,
     * sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
    .unicode_state = 32,
    .unicode_length = 16,
    .unicode_ascii_size = 48,
    .unicode_compact_size = 72,
    /* Include/object.h: PyVarObject.ob_size; Include/cpython/bytesobject.h:
     * PyBytesObject.ob_sval */
    .bytes_size = 16,
    .bytes_sval = 32,
};

static const struct python_layout layout_312 = {
    .source = "offsets table for 3.12",
    /* Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head */
    .runtime_interpreters_head = 40,
    /* Include/internal/pycore_interp.h: struct _is .next, .threads.head */
    .interp_next = 0,
    .interp_threads_head = 72,
    /* Include/cpython/pystate.h: struct _ts .next, .native_thread_id, .cframe,
     * .datastack_chunk; _PyCFrame.current_frame */
    .tstate_next = 8,
    .tstate_native_thread_id = 144,
    .tstate_frame = 56,
    .tstate_datastack_chunk = 232,
    .frame_via_cframe = true,
    .cframe_current_frame = 0,
    /* Include/internal/pycore_frame.h: _PyInterpreterFrame .previous,
     * .f_code, .prev_instr, .owner; FRAME_OWNED_BY_CSTACK */
    .frame_previous = 8,
    .frame_code = 0,
    .frame_instr = 56,
    .frame_is_entry = -1,
    .frame_owner = 70,
    .instr_is_previous = true,
    .owner_cstack = 3,
    /* Include/cpython/code.h: PyCodeObject .co_filename, .co_qualname,
     * .co_firstlineno, .co_linetable, .co_code_adaptive */
    .code_filename = 112,
    .code_qualname = 128,
    .code_firstlineno = 68,
    .code_linetable = 136,
    .code_adaptive = 192,
    /* Include/cpython/unicodeobject.h: PyASCIIObject .state, .length,
     * sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
    .unicode_state = 32,
    .unicode_length = 16,
    .unicode_ascii_size = 40,
    .unicode_compact_size = 56,
    /* Include/object.h: PyVarObject.ob_size; Include/cpython/bytesobject.h:
     * PyBytesObject.ob_sval */
    .bytes_size = 16,
    .bytes_sval = 32,
};

/* _Py_DebugOffsets of 3.13 as 64-bit words (Include/internal/
 * pycore_runtime.h): word 0 is the cookie, then version and
 * free_threaded, then per structure its size followed by its offsets. */
enum debug_word {
    DW_VERSION = 1,
    DW_FREE_THREADED = 2,
    DW_RUNTIME_SIZE = 3,
    DW_RUNTIME_INTERPRETERS_HEAD = 5,
    DW_INTERP_SIZE = 6,
    DW_INTERP_NEXT = 8,
    DW_INTERP_THREADS_HEAD = 9,
    DW_TSTATE_SIZE = 19,
    DW_TSTATE_NEXT = 21,
    DW_TSTATE_CURRENT_FRAME = 23,
    DW_TSTATE_NATIVE_THREAD_ID = 25,
    DW_TSTATE_DATASTACK_CHUNK = 26,
    DW_FRAME_SIZE = 28,
    DW_FRAME_PREVIOUS = 29,
    DW_FRAME_EXECUTABLE = 30,
    DW_FRAME_INSTR_PTR = 31,
    DW_FRAME_OWNER = 33,
    DW_CODE_SIZE = 34,
    DW_CODE_FILENAME = 35,
    DW_CODE_QUALNAME = 37,
    DW_CODE_LINETABLE = 38,
    DW_CODE_FIRSTLINENO = 39,
    DW_CODE_ADAPTIVE = 43,
    DW_BYTES_SIZE = 64,
    DW_BYTES_OB_SIZE = 65,
    DW_BYTES_OB_SVAL = 66,
    DW_UNICODE_SIZE = 67,
    DW_UNICODE_STATE = 68,
    DW_UNICODE_LENGTH = 69,
    DW_UNICODE_ASCII_SIZE = 70,
};
#define DEBUG_COOKIE "xdebugpy"
/* No CPython structure comes near this: a larger size is damage. */
#define STRUCT_SIZE_MAX (16u << 20)

static uint64_t word(const uint8_t *data, int i)
{
    uint64_t v;
    memcpy(&v, data + 8 * i, sizeof(v));
    return v;
}

/* The offset at word FIELD of the structure whose size is at word SIZE:
 * WIDTH bytes there must lie inside it. */
static bool field(const uint8_t *data, int size, int fieldw, uint64_t width, uint64_t *out,
                  char *why, size_t whylen)
{
    uint64_t s = word(data, size), off = word(data, fieldw);
    if (s == 0 || s > STRUCT_SIZE_MAX || off > s || width > s - off) {
        snprintf(why, whylen,
                 "_Py_DebugOffsets fails validation (word %d: offset %llu of a %llu-byte "
                 "structure)",
                 fieldw, (unsigned long long)off, (unsigned long long)s);
        return false;
    }
    *out = off;
    return true;
}

bool python_debug_offsets_parse(const uint8_t *data, size_t size, uint32_t version,
                                struct python_layout *l, char *why, size_t whylen)
{
    if (size < PYTHON_DEBUG_OFFSETS_313_SIZE || memcmp(data, DEBUG_COOKIE, 8) != 0) {
        snprintf(why, whylen, "the runtime does not start with _Py_DebugOffsets");
        return false;
    }
    uint64_t v = word(data, DW_VERSION);
    if (v != version) {
        snprintf(why, whylen, "_Py_DebugOffsets says version %#llx, Py_Version %#x",
                 (unsigned long long)v, version);
        return false;
    }
    if (word(data, DW_FREE_THREADED) != 0) {
        snprintf(why, whylen, "a free-threaded CPython build is not supported");
        return false;
    }
    *l = (struct python_layout){
        .source = "_Py_DebugOffsets",
        .frame_via_cframe = false,
        .frame_is_entry = -1,
        .instr_is_previous = false,
        .owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK, Include/internal/pycore_frame.h */
    };
    uint64_t ascii = 0;
    bool ok =
        field(data, DW_RUNTIME_SIZE, DW_RUNTIME_INTERPRETERS_HEAD, 8, &l->runtime_interpreters_head,
              why, whylen) &&
        field(data, DW_INTERP_SIZE, DW_INTERP_NEXT, 8, &l->interp_next, why, whylen) &&
        field(data, DW_INTERP_SIZE, DW_INTERP_THREADS_HEAD, 8, &l->interp_threads_head, why,
              whylen) &&
        field(data, DW_TSTATE_SIZE, DW_TSTATE_NEXT, 8, &l->tstate_next, why, whylen) &&
        field(data, DW_TSTATE_SIZE, DW_TSTATE_CURRENT_FRAME, 8, &l->tstate_frame, why, whylen) &&
        field(data, DW_TSTATE_SIZE, DW_TSTATE_NATIVE_THREAD_ID, 8, &l->tstate_native_thread_id, why,
              whylen) &&
        field(data, DW_TSTATE_SIZE, DW_TSTATE_DATASTACK_CHUNK, 8, &l->tstate_datastack_chunk, why,
              whylen) &&
        field(data, DW_FRAME_SIZE, DW_FRAME_PREVIOUS, 8, &l->frame_previous, why, whylen) &&
        field(data, DW_FRAME_SIZE, DW_FRAME_EXECUTABLE, 8, &l->frame_code, why, whylen) &&
        field(data, DW_FRAME_SIZE, DW_FRAME_INSTR_PTR, 8, &l->frame_instr, why, whylen) &&
        field(data, DW_FRAME_SIZE, DW_FRAME_OWNER, 1, &l->frame_owner, why, whylen) &&
        field(data, DW_CODE_SIZE, DW_CODE_FILENAME, 8, &l->code_filename, why, whylen) &&
        field(data, DW_CODE_SIZE, DW_CODE_QUALNAME, 8, &l->code_qualname, why, whylen) &&
        field(data, DW_CODE_SIZE, DW_CODE_LINETABLE, 8, &l->code_linetable, why, whylen) &&
        field(data, DW_CODE_SIZE, DW_CODE_FIRSTLINENO, 4, &l->code_firstlineno, why, whylen) &&
        field(data, DW_CODE_SIZE, DW_CODE_ADAPTIVE, 0, &l->code_adaptive, why, whylen) &&
        field(data, DW_BYTES_SIZE, DW_BYTES_OB_SIZE, 8, &l->bytes_size, why, whylen) &&
        field(data, DW_BYTES_SIZE, DW_BYTES_OB_SVAL, 0, &l->bytes_sval, why, whylen) &&
        field(data, DW_UNICODE_SIZE, DW_UNICODE_STATE, 4, &l->unicode_state, why, whylen) &&
        field(data, DW_UNICODE_SIZE, DW_UNICODE_LENGTH, 8, &l->unicode_length, why, whylen) &&
        field(data, DW_UNICODE_SIZE, DW_UNICODE_ASCII_SIZE, 0, &ascii, why, whylen);
    if (!ok)
        return false;
    /* asciiobject_size is a size, not an offset: the compact form adds
     * utf8_length and utf8 (PyCompactUnicodeObject). */
    l->unicode_ascii_size = word(data, DW_UNICODE_ASCII_SIZE);
    if (l->unicode_ascii_size == 0 || l->unicode_ascii_size > 4096) {
        snprintf(why, whylen, "_Py_DebugOffsets fails validation (a %llu-byte string header)",
                 (unsigned long long)l->unicode_ascii_size);
        return false;
    }
    l->unicode_compact_size = l->unicode_ascii_size + 16;
    return true;
}

bool python_layout_for(pid_t pid, uint32_t version, uint64_t runtime, struct python_layout *l,
                       char *why, size_t whylen)
{
    unsigned major = PYTHON_MAJOR(version), minor = PYTHON_MINOR(version);
    if (major != 3 || minor < 11) {
        snprintf(why, whylen, "CPython %u.%u is not supported (3.11 and later are)", major, minor);
        return false;
    }
    if (minor == 11) {
        *l = layout_311;
        return true;
    }
    if (minor == 12) {
        *l = layout_312;
        return true;
    }
    if (minor > 13) {
        snprintf(why, whylen, "CPython %u.%u: the layout of its _Py_DebugOffsets is not known",
                 major, minor);
        return false;
    }
    uint8_t data[PYTHON_DEBUG_OFFSETS_313_SIZE];
    if (!remote_read(pid, runtime, data, sizeof(data))) {
        snprintf(why, whylen, "cannot read the runtime's _Py_DebugOffsets");
        return false;
    }
    return python_debug_offsets_parse(data, sizeof(data), version, l, why, whylen);
}
