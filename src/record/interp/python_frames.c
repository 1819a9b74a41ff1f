/*
 * python_frames.c - a thread's Python frames (python.h).  Its thread state
 * is the one whose native_thread_id is the thread's id: found by walking
 * the runtime's interpreters and their threads, then remembered and
 * checked again at each use.  Its frames are the chain from the thread's
 * current frame through `previous`; the frames one call of the eval loop
 * runs end at an entry frame (3.11: is_entry) or before a shim frame the
 * eval loop pushed (3.12+: owned by the C stack).  Every chain is bounded:
 * INTERP_MAX_FRAMES frames shown, a few more shim frames skipped, then the
 * read stops as cut, so a chain that loops ends there.
 */
#include "record/interp/python.h"

#include <string.h>

#define INTERPRETERS_MAX 64
#define THREADS_MAX 4096
#define STATE_HEADER_MAX 1024
#define FRAME_HEADER_MAX 256

static size_t tstate_slot(pid_t tid)
{
    return ((size_t)tid * 2654435761u) % 256;
}

/* The fields of a thread state at ADDR: its next, its native thread id and
 * its frame pointer (current_frame, or cframe). */
static bool read_tstate(const struct python_runtime *rt, uint64_t addr, uint64_t *next,
                        uint64_t *native_id, uint64_t *frame)
{
    const struct python_layout *l = &rt->layout;
    uint64_t end = l->tstate_next + 8;
    if (l->tstate_native_thread_id + 8 > end)
        end = l->tstate_native_thread_id + 8;
    if (l->tstate_frame + 8 > end)
        end = l->tstate_frame + 8;
    uint8_t buf[STATE_HEADER_MAX];
    if (!remote_pointer_ok(addr) || end > sizeof(buf) || !remote_read(rt->pid, addr, buf, end))
        return false;
    memcpy(next, buf + l->tstate_next, 8);
    memcpy(native_id, buf + l->tstate_native_thread_id, 8);
    memcpy(frame, buf + l->tstate_frame, 8);
    return true;
}

static bool read_word(const struct python_runtime *rt, uint64_t addr, uint64_t *out)
{
    return remote_read(rt->pid, addr, out, sizeof(*out));
}

/* Walk every interpreter's threads for the one running TID. */
static uint64_t find_tstate(struct python_runtime *rt, pid_t tid, enum interp_failure *failure)
{
    const struct python_layout *l = &rt->layout;
    uint64_t interp;
    *failure = INTERP_NO_THREAD;
    if (!read_word(rt, rt->img.runtime + l->runtime_interpreters_head, &interp)) {
        *failure = INTERP_BAD_READ;
        return 0;
    }
    for (int i = 0; i < INTERPRETERS_MAX && interp; i++) {
        uint64_t ts;
        if (!remote_pointer_ok(interp) || !read_word(rt, interp + l->interp_threads_head, &ts)) {
            *failure = INTERP_BAD_READ;
            return 0;
        }
        for (int k = 0; k < THREADS_MAX && ts; k++) {
            uint64_t next, native_id, frame;
            if (!read_tstate(rt, ts, &next, &native_id, &frame)) {
                *failure = INTERP_BAD_READ;
                return 0;
            }
            if (native_id == (uint64_t)tid)
                return ts;
            if (next == ts)
                break; /* a loop of one */
            ts = next;
        }
        uint64_t next_interp;
        if (!read_word(rt, interp + l->interp_next, &next_interp) || next_interp == interp)
            break;
        interp = next_interp;
    }
    return 0;
}

/* The thread's current frame pointer. */
static bool current_frame(const struct python_runtime *rt, uint64_t frame_field, uint64_t *frame)
{
    if (!rt->layout.frame_via_cframe) {
        *frame = frame_field;
        return true;
    }
    /* 3.11, 3.12: the thread state points at the innermost eval loop's
     * _PyCFrame (NULL before any eval loop ran). */
    if (frame_field == 0) {
        *frame = 0;
        return true;
    }
    return remote_pointer_ok(frame_field) &&
           read_word(rt, frame_field + rt->layout.cframe_current_frame, frame);
}

/* The thread state of TID and its current frame, through the cache. */
static bool thread_frame(struct python_runtime *rt, pid_t tid, uint64_t *tstate,
                         uint64_t *frame_field, uint64_t *frame, enum interp_failure *failure)
{
    size_t slot = tstate_slot(tid);
    uint64_t next, native_id, field;
    uint64_t ts = rt->tstates[slot].tid == tid ? rt->tstates[slot].tstate : 0;
    if (!ts || !read_tstate(rt, ts, &next, &native_id, &field) || native_id != (uint64_t)tid) {
        ts = find_tstate(rt, tid, failure);
        rt->tstates[slot].tid = tid;
        rt->tstates[slot].tstate = ts;
        if (!ts || !read_tstate(rt, ts, &next, &native_id, &field))
            return false;
    }
    *tstate = ts;
    *frame_field = field;
    if (!current_frame(rt, field, frame)) {
        *failure = INTERP_BAD_READ;
        return false;
    }
    return true;
}

/*
 * A sample taken while the thread ran on: 3.11 and 3.12 keep the innermost
 * eval loop's _PyCFrame on the C stack, so the sample's stack copy holds
 * its current_frame as it was then.  The frames read now are the sample's
 * only if that is still the current frame.  3.13 keeps the current frame
 * in the thread state alone: nothing in the sample to check against.
 */
static bool same_as_sample(const struct python_runtime *rt, const struct stack_snapshot *s,
                           uint64_t cframe, uint64_t frame, enum interp_failure *failure)
{
    const struct python_layout *l = &rt->layout;
    *failure = INTERP_UNCHECKED;
    if (!l->frame_via_cframe || !s->data || cframe < s->sp || s->size < 8 ||
        cframe - s->sp + l->cframe_current_frame > s->size - 8)
        return false;
    uint64_t then;
    memcpy(&then, s->data + (cframe - s->sp) + l->cframe_current_frame, 8);
    *failure = INTERP_STALE;
    return then == frame;
}

bool python_read_thread(void *runtime, pid_t tid, const struct stack_snapshot *at_sample,
                        struct interp_names *names, uint32_t pid, struct interp_stack *st,
                        enum interp_failure *failure)
{
    struct python_runtime *rt = runtime;
    const struct python_layout *l = &rt->layout;
    uint64_t tstate, frame;
    st->n = 0;
    st->cut = false;
    uint64_t field;
    if (!thread_frame(rt, tid, &tstate, &field, &frame, failure))
        return false;
    if (at_sample && !same_as_sample(rt, at_sample, field, frame, failure))
        return false;
    uint64_t fsize = l->frame_previous + 8;
    uint64_t fields[] = {l->frame_code + 8, l->frame_instr + 8, l->frame_owner + 1,
                         l->frame_is_entry >= 0 ? (uint64_t)l->frame_is_entry + 1 : 0};
    for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
        fsize = fields[i] > fsize ? fields[i] : fsize;
    uint8_t buf[FRAME_HEADER_MAX];
    if (fsize > sizeof(buf)) {
        *failure = INTERP_BAD_OBJECT;
        return false;
    }
    uint64_t top = frame;
    /* Each step reads the next frame and the code object of the frame
     * read before (one system call for both); shim frames are not shown
     * but count against the bound too. */
    size_t hsize = python_code_header_size(l);
    uint8_t head[PYTHON_CODE_HEADER_MAX];
    struct {
        bool set;
        bool entry;
        uint64_t code, instr;
    } pending = {0};
    if (hsize == 0) {
        *failure = INTERP_BAD_OBJECT;
        return false;
    }
    for (int visited = 0;; visited++) {
        bool next_frame =
            frame && visited < 2 * INTERP_MAX_FRAMES && st->n + pending.set < INTERP_MAX_FRAMES;
        if (!next_frame && !pending.set)
            break;
        if ((next_frame && !remote_pointer_ok(frame)) ||
            (pending.set && !remote_pointer_ok(pending.code))) {
            *failure = INTERP_BAD_OBJECT;
            return false;
        }
        if (!remote_read2(rt->pid, frame, buf, next_frame ? fsize : 0, pending.code, head,
                          pending.set ? hsize : 0)) {
            *failure = INTERP_BAD_READ;
            return false;
        }
        if (pending.set) {
            uint64_t pc =
                python_code_name(rt, pending.code, head, pending.instr, names, pid, failure);
            if (!pc)
                return false;
            st->frames[st->n++] = (struct interp_frame){.pc = pc, .entry = pending.entry};
            pending.set = false;
        }
        if (!next_frame)
            break;
        uint64_t previous, code, instr;
        memcpy(&previous, buf + l->frame_previous, 8);
        memcpy(&code, buf + l->frame_code, 8);
        memcpy(&instr, buf + l->frame_instr, 8);
        int owner = buf[l->frame_owner];
        if (previous == frame) {
            *failure = INTERP_BAD_OBJECT; /* a loop of one */
            return false;
        }
        if (owner == l->owner_cstack) {
            /* The eval loop's entry shim: the frames before it were its. */
            if (st->n > 0)
                st->frames[st->n - 1].entry = true;
        } else if (!(code == rt->img.none && rt->img.none)) { /* 3.13: no code object */
            pending.set = true;
            pending.code = code;
            pending.instr = instr;
            pending.entry = l->frame_is_entry >= 0 && buf[l->frame_is_entry] != 0;
        }
        frame = previous;
    }
    if (frame && !st->cut)
        st->cut = true;
    /* The frames must still be the thread's: its current frame has not
     * moved while they were read (a running thread's would). */
    uint64_t next, native_id, again;
    if (!read_tstate(rt, tstate, &next, &native_id, &field) || !current_frame(rt, field, &again)) {
        *failure = INTERP_BAD_READ;
        return false;
    }
    if (native_id != (uint64_t)tid || again != top) {
        *failure = INTERP_TORN;
        return false;
    }
    return true;
}
