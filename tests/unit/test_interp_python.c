/*
 * test_interp_python.c - the CPython frame reader (record/interp/) on a
 * synthetic image: a runtime, an interpreter, a thread state, frames, code
 * objects and strings laid out in this process's own memory as CPython
 * 3.12 lays them out, read through process_vm_readv as a target's would
 * be.  Then the same image corrupted (a frame chain that loops, a code
 * object of the wrong type, a string of absurd length, pointers to
 * nowhere, a thread list that loops): each read ends, bounded, with the
 * failure counted, never a crash or a hang.  Also the location table,
 * _Py_DebugOffsets' validation (and the real one of an installed 3.13),
 * the merge with native frames, and how a command is told to be Python.
 */
#include "record/interp/interp.h"
#include "record/interp/interp_names.h"
#include "record/interp/python.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERSION_312 0x030c01f0u
#define TID 4242

/* Objects of the image, 16-byte aligned as CPython's allocator gives them. */
struct image {
    _Alignas(16) uint8_t runtime[256];
    _Alignas(16) uint8_t interp[256];
    _Alignas(16) uint8_t tstate[512];
    _Alignas(16) uint8_t cframe[64];
    _Alignas(16) uint8_t frames[4][96];
    _Alignas(16) uint8_t code[2][256];
    _Alignas(16) uint8_t str[4][4096];
    _Alignas(16) uint8_t bytes[2][128];
    _Alignas(16) uint8_t types[4][64]; /* code, str, bytes, None */
};

static struct image img;
static struct python_runtime rt;
static struct interp_names *names;

static void put(uint8_t *at, uint64_t offset, uint64_t value)
{
    memcpy(at + offset, &value, 8);
}

static uint64_t addr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* A compact ASCII str (3.12: PyASCIIObject is 40 bytes). */
static void make_str(uint8_t *o, const char *s)
{
    const struct python_layout *l = &rt.layout;
    put(o, 8, addr(img.types[1]));
    put(o, l->unicode_length, strlen(s));
    uint32_t state = 1u << 2 | 1u << 5 | 1u << 6; /* kind 1, compact, ascii */
    memcpy(o + l->unicode_state, &state, 4);
    memcpy(o + l->unicode_ascii_size, s, strlen(s) + 1);
}

/* A location table: every instruction of the code on FIRST + 1, then the
 * rest two lines further (no-column entries, 8 code units each). */
static void make_table(uint8_t *o)
{
    static const uint8_t table[] = {0x80 | 13 << 3 | 7, 0x02, 0x80 | 13 << 3 | 7, 0x04};
    put(o, 8, addr(img.types[2]));
    put(o, rt.layout.bytes_size, sizeof(table));
    memcpy(o + rt.layout.bytes_sval, table, sizeof(table));
}

static void make_code(uint8_t *o, uint8_t *qualname, uint8_t *file, uint32_t first, uint8_t *table)
{
    const struct python_layout *l = &rt.layout;
    put(o, 8, addr(img.types[0]));
    put(o, l->code_qualname, addr(qualname));
    put(o, l->code_filename, addr(file));
    put(o, l->code_linetable, addr(table));
    memcpy(o + l->code_firstlineno, &first, 4);
}

/* A frame running CODE at code unit UNIT, called from PREVIOUS. */
static void make_frame(uint8_t *f, uint8_t *previous, uint8_t *code, uint64_t unit, int owner)
{
    const struct python_layout *l = &rt.layout;
    memset(f, 0, 96);
    put(f, l->frame_previous, previous ? addr(previous) : 0);
    put(f, l->frame_code, code ? addr(code) : 0);
    put(f, l->frame_instr, code ? addr(code) + l->code_adaptive + 2 * unit : 0);
    f[l->frame_owner] = (uint8_t)owner;
}

/* leaf (code 0, unit 9: line 14) <- outer (code 1, unit 2: line 21) <- shim */
static void build_image(void)
{
    memset(&img, 0, sizeof(img));
    memset(&rt, 0, sizeof(rt));
    char why[256];
    cr_assert(python_layout_for(getpid(), VERSION_312, 0, &rt.layout, why, sizeof(why)), "%s", why);
    const struct python_layout *l = &rt.layout;
    rt.pid = getpid();
    rt.version = VERSION_312;
    rt.img.runtime = addr(img.runtime);
    rt.img.code_type = addr(img.types[0]);
    rt.img.unicode_type = addr(img.types[1]);
    rt.img.bytes_type = addr(img.types[2]);
    rt.img.none = addr(img.types[3]);
    rt.codes = python_code_cache_new();
    put(img.runtime, l->runtime_interpreters_head, addr(img.interp));
    put(img.interp, l->interp_threads_head, addr(img.tstate));
    put(img.tstate, l->tstate_native_thread_id, TID);
    put(img.tstate, l->tstate_frame, addr(img.cframe));
    put(img.cframe, l->cframe_current_frame, addr(img.frames[0]));
    make_str(img.str[0], "Worker.leaf");
    make_str(img.str[1], "outer");
    make_str(img.str[2], "/srv/app.py");
    make_table(img.bytes[0]);
    make_code(img.code[0], img.str[0], img.str[2], 11, img.bytes[0]);
    make_code(img.code[1], img.str[1], img.str[2], 19, img.bytes[0]);
    make_frame(img.frames[0], img.frames[1], img.code[0], 9, 0);
    make_frame(img.frames[1], img.frames[2], img.code[1], 2, 0);
    make_frame(img.frames[2], NULL, NULL, 0, 3); /* the eval loop's entry shim */
    names = interp_names_new(NULL);
}

static void free_image(void)
{
    python_code_cache_free(rt.codes);
    free(rt.walk);
    interp_names_free(names);
}

static bool read_frames(struct interp_stack *st, enum interp_failure *failure)
{
    static const struct interp_when stopped = {.stopped = true};
    *failure = INTERP_FAILURES;
    return python_read_thread(&rt, TID, &stopped, names, 1, st, failure);
}

static void expect_frame(const struct interp_stack *st, uint32_t i, const char *function,
                         uint32_t line)
{
    struct interp_frame_name n;
    cr_assert_lt(i, st->n);
    cr_assert(interp_names_find(names, st->frames[i].pc, &n), "frame %u has no name", i);
    cr_expect_str_eq(n.function, function);
    cr_expect_str_eq(n.file, "/srv/app.py");
    cr_expect_eq(n.line, line, "%s: line %u, want %u", function, n.line, line);
}

Test(interp_python, reads_the_frames_of_a_synthetic_image, .init = build_image, .fini = free_image)
{
    struct interp_stack st;
    enum interp_failure failure;
    cr_assert(read_frames(&st, &failure), "failure %d", failure);
    cr_assert_eq(st.n, 2);
    expect_frame(&st, 0, "Worker.leaf", 14);
    expect_frame(&st, 1, "outer", 20);
    cr_expect(!st.frames[0].entry);
    cr_expect(st.frames[1].entry, "the frame before the shim ends its eval-loop call");
    cr_expect(!st.cut);
    /* Read again: the same names, from the cache. */
    struct interp_stack again;
    cr_assert(read_frames(&again, &failure));
    cr_expect_eq(again.frames[0].pc, st.frames[0].pc);
    cr_expect_eq(interp_names_count(names), 2);
}

Test(interp_python, a_frame_chain_that_loops_is_cut, .init = build_image, .fini = free_image)
{
    /* outer's previous is the leaf again: leaf, outer, leaf, outer... */
    put(img.frames[1], rt.layout.frame_previous, addr(img.frames[0]));
    struct interp_stack st;
    enum interp_failure failure;
    cr_assert(read_frames(&st, &failure));
    cr_expect_eq(st.n, INTERP_MAX_FRAMES);
    cr_expect(st.cut);
    /* A frame that is its own caller. */
    put(img.frames[0], rt.layout.frame_previous, addr(img.frames[0]));
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT);
}

Test(interp_python, objects_of_the_wrong_type_are_refused, .init = build_image, .fini = free_image)
{
    struct interp_stack st;
    enum interp_failure failure;
    put(img.code[1], 8, addr(img.types[1])); /* a str where a code object should be */
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT);
    put(img.code[1], 8, addr(img.types[0]));
    put(img.code[1], rt.layout.code_qualname, addr(img.bytes[0])); /* a name that is bytes */
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT);
    put(img.code[1], rt.layout.code_qualname, addr(img.str[1]));
    put(img.bytes[0], rt.layout.bytes_size, 1ull << 40); /* a table of a terabyte */
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT);
}

Test(interp_python, a_string_of_absurd_length_is_cut, .init = build_image, .fini = free_image)
{
    memset(img.str[3], 'x', sizeof(img.str[3]));
    make_str(img.str[3], "x");
    put(img.str[3], rt.layout.unicode_length, 1ull << 40);
    memset(img.str[3] + rt.layout.unicode_ascii_size, 'x', 2000);
    put(img.code[0], rt.layout.code_qualname, addr(img.str[3]));
    struct interp_stack st;
    enum interp_failure failure;
    cr_assert(read_frames(&st, &failure), "failure %d", failure);
    struct interp_frame_name n;
    cr_assert(interp_names_find(names, st.frames[0].pc, &n));
    cr_expect_eq(strlen(n.function), 1024);
}

Test(interp_python, pointers_to_nowhere_fail_cleanly, .init = build_image, .fini = free_image)
{
    struct interp_stack st;
    enum interp_failure failure;
    /* A page nobody mapped: after a guard-free probe, one of these is. */
    uint64_t nowhere = 0x10000;
    put(img.frames[1], rt.layout.frame_previous, nowhere);
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_READ);
    put(img.frames[1], rt.layout.frame_previous, 0x7); /* misaligned */
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT);
    put(img.frames[1], rt.layout.frame_previous, addr(img.frames[2]));
    put(img.code[0], rt.layout.code_filename, nowhere);
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_BAD_OBJECT, "an unreadable string: failure %d", failure);
    put(img.cframe, rt.layout.cframe_current_frame, nowhere);
    cr_expect(!read_frames(&st, &failure));
}

Test(interp_python, a_thread_list_that_loops_ends, .init = build_image, .fini = free_image)
{
    put(img.tstate, rt.layout.tstate_native_thread_id, TID + 1);
    put(img.tstate, rt.layout.tstate_next, addr(img.tstate));
    struct interp_stack st;
    enum interp_failure failure;
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_NO_THREAD);
    /* Two thread states pointing at each other: bounded by THREADS_MAX. */
    static _Alignas(16) uint8_t other[512];
    memcpy(other, img.tstate, sizeof(other));
    put(img.tstate, rt.layout.tstate_next, addr(other));
    put(other, rt.layout.tstate_next, addr(img.tstate));
    cr_expect(!read_frames(&st, &failure));
    cr_expect_eq(failure, INTERP_NO_THREAD);
}

Test(interp_python, a_frame_that_moved_since_the_sample_is_stale, .init = build_image,
     .fini = free_image)
{
    /* The sample's stack copy holds the cframe, with another frame. */
    uint8_t copy[256] = {0};
    struct stack_snapshot snap = {.sp = addr(img.cframe) - 64, .size = sizeof(copy), .data = copy};
    put(copy, 64 + rt.layout.cframe_current_frame, addr(img.frames[1]));
    struct interp_when then = {.sample = &snap};
    struct interp_stack st;
    enum interp_failure failure;
    cr_expect(!python_read_thread(&rt, TID, &then, names, 1, &st, &failure));
    cr_expect_eq(failure, INTERP_STALE);
    put(copy, 64 + rt.layout.cframe_current_frame, addr(img.frames[0]));
    cr_expect(python_read_thread(&rt, TID, &then, names, 1, &st, &failure));
    cr_expect_eq(st.n, 2);
    snap.sp = addr(img.cframe) + 8; /* the cframe is not in the copy */
    cr_expect(!python_read_thread(&rt, TID, &then, names, 1, &st, &failure));
    cr_expect_eq(failure, INTERP_UNCHECKED);
}

/* In a ptrace stop the thread's stack was just copied: the cframe (on the C
 * stack) is read from the copy, not from the process, one read fewer while
 * the thread stands still.  A copy of a thread that ran on is not used. */
Test(interp_python, a_stop_takes_the_current_frame_from_its_stack_copy, .init = build_image,
     .fini = free_image)
{
    uint8_t copy[256] = {0};
    struct stack_snapshot snap = {.sp = addr(img.cframe) - 64, .size = sizeof(copy), .data = copy};
    /* The copy says the outer frame is current; the process says the leaf. */
    put(copy, 64 + rt.layout.cframe_current_frame, addr(img.frames[1]));
    struct interp_when stop = {.stopped = true, .copy = &snap};
    struct interp_stack st;
    enum interp_failure failure;
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure), "failure %d", failure);
    cr_assert_eq(st.n, 1, "the copy's current frame, not the process's");
    expect_frame(&st, 0, "outer", 20);
    /* The cframe not in the copy: read from the process. */
    snap.sp = addr(img.cframe) + 8;
    snap.size = 32;
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure));
    cr_expect_eq(st.n, 2);
    /* Not stopped: the copy is the past, the process is read. */
    snap.sp = addr(img.cframe) - 64;
    snap.size = sizeof(copy);
    struct interp_when running = {.copy = &snap};
    cr_assert(python_read_thread(&rt, TID, &running, names, 1, &st, &failure));
    cr_expect_eq(st.n, 2);
}

/* In a ptrace stop the engine asks to defer: frames of code objects the
 * cache knows are named after the resume, from their headers read again,
 * with the names a read inside the stop gives. */
Test(interp_python, known_code_is_named_after_the_resume, .init = build_image, .fini = free_image)
{
    struct interp_stack first, st;
    enum interp_failure failure;
    struct interp_when stop = {.stopped = true, .defer = true};
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &first, &failure));
    cr_expect_eq(first.ndeferred, 0, "nothing known yet: named inside the stop");
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure));
    cr_assert_eq(st.n, 2);
    cr_expect_eq(st.ndeferred, 2);
    cr_expect(st.frames[0].pc == 0 && st.frames[1].pc == 0, "the names wait");
    cr_assert(python_finish_thread(&rt, names, 1, &st, &failure), "failure %d", failure);
    cr_expect_eq(st.frames[0].pc, first.frames[0].pc);
    cr_expect_eq(st.frames[1].pc, first.frames[1].pc);
    expect_frame(&st, 0, "Worker.leaf", 14);
    cr_expect(st.frames[1].entry);
    /* Without defer nothing waits. */
    static const struct interp_when plain = {.stopped = true};
    cr_assert(python_read_thread(&rt, TID, &plain, names, 1, &st, &failure));
    cr_expect_eq(st.ndeferred, 0);
    cr_expect_eq(st.frames[0].pc, first.frames[0].pc);
}

/* A code object that is not what it was when the thread stood still (freed,
 * its memory now another code object's) gives a torn stack, never a name;
 * the cache forgets it, so the next stop reads it anew. */
Test(interp_python, code_that_changed_after_the_resume_is_torn, .init = build_image,
     .fini = free_image)
{
    struct interp_stack st;
    enum interp_failure failure;
    struct interp_when stop = {.stopped = true, .defer = true};
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure));
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure));
    cr_assert_eq(st.ndeferred, 2);
    make_str(img.str[3], "Other.code");
    put(img.code[0], rt.layout.code_qualname, addr(img.str[3]));
    cr_expect(!python_finish_thread(&rt, names, 1, &st, &failure));
    cr_expect_eq(failure, INTERP_TORN);
    cr_assert(python_read_thread(&rt, TID, &stop, names, 1, &st, &failure));
    cr_expect_eq(st.ndeferred, 1, "the changed code is read inside the stop again");
    cr_assert(python_finish_thread(&rt, names, 1, &st, &failure));
    struct interp_frame_name n;
    cr_assert(interp_names_find(names, st.frames[0].pc, &n));
    cr_expect_str_eq(n.function, "Other.code");
}

Test(interp_python, the_location_table)
{
    /* 2 units on line 11 (no column), 3 more short-form on it, 1 one-line
     * form a line further, 1 with no location, 1 long form a line back. */
    static const uint8_t t[] = {
        0x80 | 13 << 3 | 1, 0x02,                   /* +1: line 11, units 0-1 */
        0x80 | 0 << 3 | 2,  0x05,                   /* short: units 2-4 */
        0x80 | 11 << 3 | 0, 0x01, 0x02,             /* one line, +1: line 12, unit 5 */
        0x80 | 15 << 3 | 0,                         /* no location: unit 6 */
        0x80 | 14 << 3 | 0, 0x03, 0x00, 0x01, 0x01, /* long, -1: line 11, unit 7 */
    };
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 0), 11);
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 1), 11);
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 4), 11);
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 5), 12);
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 6), 10, "no location: the first line");
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 7), 11);
    cr_expect_eq(python_line_of(t, sizeof(t), 10, 8), 10, "past the table");
    cr_expect_eq(python_line_of(t, sizeof(t), 10, -1), 10, "not started");
    /* Cut short inside an entry, or not an entry at all. */
    cr_expect_eq(python_line_of(t, 9, 10, 7), 10);
    static const uint8_t junk[] = {0x01, 0x02, 0x03};
    cr_expect_eq(python_line_of(junk, sizeof(junk), 10, 0), 10);
    /* A varint that never ends. */
    uint8_t endless[64];
    memset(endless, 0x7f, sizeof(endless));
    endless[0] = 0x80 | 13 << 3;
    cr_expect_eq(python_line_of(endless, sizeof(endless), 10, 0), 10);
}

/* 3.13's table: cookie, version, free_threaded, then per structure its
 * size and offsets (words as python_layout.c numbers them). */
static void debug_offsets(uint8_t *d, uint32_t version)
{
    memset(d, 0, PYTHON_DEBUG_OFFSETS_313_SIZE);
    memcpy(d, "xdebugpy", 8);
    uint64_t w[PYTHON_DEBUG_OFFSETS_313_SIZE / 8] = {0};
    w[1] = version;
    w[3] = 1000, w[5] = 632;                                                     /* runtime */
    w[6] = 10000, w[8] = 7264, w[9] = 7344;                                      /* interpreter */
    w[19] = 400, w[21] = 8, w[23] = 72, w[25] = 160, w[26] = 232;                /* thread */
    w[28] = 80, w[29] = 8, w[30] = 0, w[31] = 56, w[33] = 70;                    /* frame */
    w[34] = 220, w[35] = 112, w[37] = 128, w[38] = 136, w[39] = 68, w[43] = 200; /* code */
    w[64] = 40, w[65] = 16, w[66] = 32;                                          /* bytes */
    w[67] = 56, w[68] = 32, w[69] = 16, w[70] = 40;                              /* str */
    memcpy(d + 8, w + 1, PYTHON_DEBUG_OFFSETS_313_SIZE - 8);
}

Test(interp_python, debug_offsets_are_validated)
{
    uint8_t d[PYTHON_DEBUG_OFFSETS_313_SIZE];
    struct python_layout l;
    char why[256];
    debug_offsets(d, 0x030d00f0);
    cr_assert(python_debug_offsets_parse(d, sizeof(d), 0x030d00f0, &l, why, sizeof(why)), "%s",
              why);
    cr_expect_eq(l.tstate_frame, 72);
    cr_expect_eq(l.frame_owner, 70);
    cr_expect_eq(l.unicode_compact_size, 56);
    cr_expect(!l.frame_via_cframe);

    cr_expect(!python_debug_offsets_parse(d, sizeof(d), 0x030d01f0, &l, why, sizeof(why)));
    cr_expect(strstr(why, "version"), "%s", why);
    uint64_t bad = 1;
    memcpy(d + 16, &bad, 8); /* free-threaded */
    cr_expect(!python_debug_offsets_parse(d, sizeof(d), 0x030d00f0, &l, why, sizeof(why)));
    cr_expect(strstr(why, "free-threaded"), "%s", why);
    debug_offsets(d, 0x030d00f0);
    bad = 81; /* the frame's owner beyond its 80 bytes */
    memcpy(d + 33 * 8, &bad, 8);
    cr_expect(!python_debug_offsets_parse(d, sizeof(d), 0x030d00f0, &l, why, sizeof(why)));
    cr_expect(strstr(why, "validation"), "%s", why);
    debug_offsets(d, 0x030d00f0);
    bad = 1ull << 40; /* a thread state of a terabyte */
    memcpy(d + 19 * 8, &bad, 8);
    cr_expect(!python_debug_offsets_parse(d, sizeof(d), 0x030d00f0, &l, why, sizeof(why)));
    debug_offsets(d, 0x030d00f0);
    d[0] = 'X';
    cr_expect(!python_debug_offsets_parse(d, sizeof(d), 0x030d00f0, &l, why, sizeof(why)));
    cr_expect(!python_debug_offsets_parse(d, 100, 0x030d00f0, &l, why, sizeof(why)));
}

/* The .PyRuntime section of FILE: _PyRuntime's initial bytes. */
static bool runtime_section(const char *file, uint8_t *out, size_t size)
{
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    bool found = false;
    if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            const char *name;
            if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
                strcmp(name, ".PyRuntime") == 0 && sh.sh_size >= size) {
                found = pread(fd, out, size, (off_t)sh.sh_offset) == (ssize_t)size;
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return found;
}

Test(interp_python, the_debug_offsets_of_an_installed_3_13)
{
    glob_t g;
    const char *home = getenv("HOME");
    char pattern[512];
    snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions/3.13*/lib/libpython3.13.so.1.0",
             home ? home : "/root");
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0)
        cr_skip_test("no CPython 3.13 shared library under ~/.pyenv (%s)", pattern);
    uint8_t d[PYTHON_DEBUG_OFFSETS_313_SIZE];
    cr_assert(runtime_section(g.gl_pathv[0], d, sizeof(d)), "%s: no .PyRuntime", g.gl_pathv[0]);
    uint64_t version;
    memcpy(&version, d + 8, 8);
    struct python_layout l;
    char why[256];
    cr_assert(python_debug_offsets_parse(d, sizeof(d), (uint32_t)version, &l, why, sizeof(why)),
              "%s: %s", g.gl_pathv[0], why);
    /* offsetof() over 3.13.0's internal headers. */
    cr_expect_eq(l.runtime_interpreters_head, 632);
    cr_expect_eq(l.interp_threads_head, 7344);
    cr_expect_eq(l.tstate_native_thread_id, 160);
    cr_expect_eq(l.tstate_frame, 72);
    cr_expect_eq(l.frame_previous, 8);
    cr_expect_eq(l.frame_instr, 56);
    cr_expect_eq(l.code_qualname, 128);
    cr_expect_eq(l.code_adaptive, 200);
    cr_expect_eq(l.unicode_ascii_size, 40);
    globfree(&g);
}

/* Native frames: 0x1000-0x1fff is the eval loop. */
static bool fake_eval(const void *rt_, uint64_t pc, bool ra)
{
    (void)rt_;
    uint64_t at = ra ? pc - 1 : pc;
    return at >= 0x1000 && at < 0x2000;
}

Test(interp_python, eval_frames_give_way_to_the_frames_they_run)
{
    /* leaf (zlib) <- C call <- eval (inner) <- PyObject_Call <- eval (outer) <- main */
    uint64_t pcs[16] = {0x9000, 0x8000, 0x1100, 0x7000, 0x1200, 0x6000};
    struct interp_stack st = {.n = 4};
    st.frames[0] = (struct interp_frame){.pc = INTERP_PC_BASE + 16}; /* compress_it */
    st.frames[1] = (struct interp_frame){.pc = INTERP_PC_BASE + 32, .entry = true}; /* callback */
    st.frames[2] = (struct interp_frame){.pc = INTERP_PC_BASE + 48};                /* run */
    st.frames[3] = (struct interp_frame){.pc = INTERP_PC_BASE + 64, .entry = true}; /* <module> */
    int depth = interp_merge_stack(fake_eval, NULL, &st, pcs, 6, 16);
    uint64_t want[] = {0x9000,
                       0x8000,
                       INTERP_PC_BASE + 16,
                       INTERP_PC_BASE + 32,
                       0x7000,
                       INTERP_PC_BASE + 48,
                       INTERP_PC_BASE + 64,
                       0x6000};
    cr_assert_eq(depth, 8);
    for (int i = 0; i < depth; i++)
        cr_expect_eq(pcs[i], want[i], "frame %d: %#lx, want %#lx", i, (unsigned long)pcs[i],
                     (unsigned long)want[i]);
    /* A native stack cut short: the outer frames go to its end. */
    uint64_t cut[16] = {0x9000, 0x1100};
    depth = interp_merge_stack(fake_eval, NULL, &st, cut, 2, 16);
    cr_assert_eq(depth, 5);
    cr_expect_eq(cut[4], INTERP_PC_BASE + 64);
    /* Room for fewer frames than there are. */
    uint64_t small[4] = {0x9000, 0x1100, 0x7000, 0x1200};
    cr_expect_eq(interp_merge_stack(fake_eval, NULL, &st, small, 4, 4), 4);
}

/* An executable file at DIR/NAME starting with TEXT. */
static char *script(const char *dir, const char *name, const char *text)
{
    char *path = NULL;
    cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    return path;
}

Test(interp_python, a_python_command_is_told_by_its_names)
{
    char dir[] = "/tmp/ptprof-interp-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *env = script(dir, "env-python", "#!/usr/bin/env python3\nprint(1)\n");
    char *direct = script(dir, "direct", "#!/opt/py/bin/python3.12 -u\n");
    char *shell = script(dir, "shell", "#!/bin/sh\necho python3\n");
    char *named = script(dir, "python3.13", "");
    char what[64];
    char *a1[] = {env, NULL}, *a2[] = {direct, NULL}, *a3[] = {shell, NULL}, *a4[] = {named, NULL};
    cr_expect(interp_target_guess(a1, 0, what, sizeof(what)));
    cr_expect_str_eq(what, "python3");
    cr_expect(interp_target_guess(a2, 0, what, sizeof(what)));
    cr_expect_str_eq(what, "python3.12");
    cr_expect(!interp_target_guess(a3, 0, what, sizeof(what)), "a shell script");
    cr_expect(interp_target_guess(a4, 0, what, sizeof(what)));
    char *missing[] = {"/nonexistent/python3", NULL}, *none[] = {NULL};
    cr_expect(!interp_target_guess(missing, 0, what, sizeof(what)));
    cr_expect(!interp_target_guess(none, 0, what, sizeof(what)));
    /* This process maps no Python. */
    cr_expect(!interp_target_guess(NULL, getpid(), what, sizeof(what)));
    unlink(env);
    unlink(direct);
    unlink(shell);
    unlink(named);
    rmdir(dir);
    free(env);
    free(direct);
    free(shell);
    free(named);
}
