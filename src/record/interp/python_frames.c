/*
 * python_frames.c - a thread's Python frames (python.h).  Its thread state
 * is the one whose native_thread_id is the thread's id: found by walking
 * the runtime's interpreters and their threads, then remembered and
 * checked again at each use.  Its frames are the chain from the thread's
 * current frame through `previous`; the frames one call of the eval loop
 * runs end at an entry frame (3.11: is_entry) or before a shim frame the
 * eval loop pushed (3.12+: owned by the C stack).  Every chain is bounded:
 * INTERP_MAX_FRAMES frames shown, as many shim frames skipped, then the
 * read stops as cut, so a chain that loops ends there.
 *
 * Cost: in a ptrace stop, 3.11's and 3.12's _PyCFrame comes from the
 * stack copied at the same stop (it lives on the C stack).  A thread's
 * frames sit below its current frame in its data stack
 * chunk (callers at lower addresses), so one read of the chunk below the
 * current frame usually holds them all; then one read of every code
 * object's header at once.  A frame outside the window (a generator's, an
 * older chunk's) is read on its own.  Asked to defer (a ptrace stop), the
 * frames of code objects the cache knows are named by
 * python_finish_thread() once the thread runs on, their headers read
 * again and held to what the cache knew.
 */
#include "record/interp/python.h"
#include "util/xalloc.h"

#include <string.h>
#include <sys/uio.h>

#define INTERPRETERS_MAX 64
#define THREADS_MAX 4096
#define STATE_HEADER_MAX 1024
#define FRAME_HEADER_MAX 256
/* Bytes of the data stack read below the current frame at once. */
#define FRAME_WINDOW 4096
/* A chunk is never larger (CPython's grow by doubling from 16 KiB). */
#define CHUNK_MAX (64u << 20)

struct tstate_view {
    uint64_t next, native_id, frame_field, chunk;
};

static size_t tstate_slot(pid_t tid)
{
    return ((size_t)tid * 2654435761u) % 256;
}

static uint64_t end_of(uint64_t end, uint64_t offset, uint64_t width)
{
    return offset + width > end ? offset + width : end;
}

/* The fields of the thread state at ADDR. */
static bool read_tstate(const struct python_runtime *rt, uint64_t addr, struct tstate_view *v)
{
    const struct python_layout *l = &rt->layout;
    uint64_t end = end_of(0, l->tstate_next, 8);
    end = end_of(end, l->tstate_native_thread_id, 8);
    end = end_of(end, l->tstate_frame, 8);
    end = end_of(end, l->tstate_datastack_chunk, 8);
    uint8_t buf[STATE_HEADER_MAX];
    if (!remote_pointer_ok(addr) || end > sizeof(buf) || !remote_read(rt->pid, addr, buf, end))
        return false;
    memcpy(&v->next, buf + l->tstate_next, 8);
    memcpy(&v->native_id, buf + l->tstate_native_thread_id, 8);
    memcpy(&v->frame_field, buf + l->tstate_frame, 8);
    memcpy(&v->chunk, buf + l->tstate_datastack_chunk, 8);
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
            struct tstate_view v;
            if (!read_tstate(rt, ts, &v)) {
                *failure = INTERP_BAD_READ;
                return 0;
            }
            if (v.native_id == (uint64_t)tid)
                return ts;
            if (v.next == ts)
                break; /* a loop of one */
            ts = v.next;
        }
        uint64_t next_interp;
        if (!read_word(rt, interp + l->interp_next, &next_interp) || next_interp == interp)
            break;
        interp = next_interp;
    }
    return 0;
}

/* The word at ADDR from the thread's stack COPY, when the copy holds it. */
static bool copied_word(const struct stack_snapshot *copy, uint64_t addr, uint64_t *out)
{
    if (!copy || !copy->data || addr < copy->sp || copy->size < 8 ||
        addr - copy->sp > copy->size - 8)
        return false;
    memcpy(out, copy->data + (addr - copy->sp), 8);
    return true;
}

/* The thread's current frame pointer; the _PyCFrame (3.11, 3.12) from COPY,
 * the stack copied at the same stop, where it holds it: one read fewer
 * inside the stop. */
static bool current_frame(const struct python_runtime *rt, uint64_t frame_field,
                          const struct stack_snapshot *copy, uint64_t *frame)
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
    uint64_t at = frame_field + rt->layout.cframe_current_frame;
    return remote_pointer_ok(frame_field) &&
           (copied_word(copy, at, frame) || read_word(rt, at, frame));
}

/* The thread state of TID, through the cache, and its current frame. */
static bool thread_frame(struct python_runtime *rt, pid_t tid, const struct stack_snapshot *copy,
                         uint64_t *tstate, struct tstate_view *v, uint64_t *frame,
                         enum interp_failure *failure)
{
    size_t slot = tstate_slot(tid);
    uint64_t ts = rt->tstates[slot].tid == tid ? rt->tstates[slot].tstate : 0;
    if (!ts || !read_tstate(rt, ts, v) || v->native_id != (uint64_t)tid) {
        ts = find_tstate(rt, tid, failure);
        rt->tstates[slot].tid = tid;
        rt->tstates[slot].tstate = ts;
        if (!ts || !read_tstate(rt, ts, v))
            return false;
    }
    *tstate = ts;
    if (!current_frame(rt, v->frame_field, copy, frame)) {
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

/* Frames as the walk finds them, named once their code objects are read;
 * the runtime's scratch (python.h). */
struct python_walk {
    uint64_t code[INTERP_MAX_FRAMES], instr[INTERP_MAX_FRAMES];
    bool entry[INTERP_MAX_FRAMES];
    uint32_t n;
    /* the bytes of the data stack last read */
    uint8_t window[FRAME_WINDOW + FRAME_HEADER_MAX];
    uint64_t lo, hi;
    uint8_t heads[INTERP_MAX_FRAMES][PYTHON_CODE_HEADER_MAX];
    uint8_t single[FRAME_HEADER_MAX]; /* a frame outside the data stack */
};

/* FSIZE bytes of the frame at ADDR: from the window, from the thread's
 * stack COPY (the eval loop's entry frames live on the C stack), or read
 * anew: with the data stack below it when it lies in the thread's chunk
 * CHUNK, else alone (the window stays for the frames below). */
static const uint8_t *frame_bytes(const struct python_runtime *rt, struct python_walk *w,
                                  uint64_t addr, uint64_t fsize, uint64_t chunk,
                                  const struct stack_snapshot *copy)
{
    if (addr >= w->lo && addr + fsize <= w->hi)
        return w->window + (addr - w->lo);
    if (copy && copy->data && addr >= copy->sp && copy->size >= fsize &&
        addr - copy->sp <= copy->size - fsize)
        return copy->data + (addr - copy->sp);
    if (!(chunk && addr > chunk && addr - chunk < CHUNK_MAX))
        return remote_read(rt->pid, addr, w->single, fsize) ? w->single : NULL;
    uint64_t lo = addr - chunk > FRAME_WINDOW ? addr - FRAME_WINDOW : chunk;
    if (!remote_read(rt->pid, lo, w->window, addr + fsize - lo)) {
        /* The chunk below may be gone: the frame alone. */
        lo = addr;
        if (!remote_read(rt->pid, lo, w->window, fsize))
            return NULL;
    }
    w->lo = lo;
    w->hi = addr + fsize;
    return w->window + (addr - lo);
}

/* The headers of the code objects CODE[i] of the N frames, those with
 * WANT[i], read at once into W->heads, each object once: HEAD_OF[i] is
 * the index of frame i's header, SIZE_MAX for a frame not wanted. */
static bool read_code_heads(const struct python_runtime *rt, struct python_walk *w,
                            const uint64_t *code, const bool *want, uint32_t n, size_t *head_of)
{
    size_t hsize = python_code_header_size(&rt->layout);
    struct iovec local[INTERP_MAX_FRAMES], remote[INTERP_MAX_FRAMES];
    size_t heads = 0;
    for (uint32_t i = 0; i < n; i++) {
        head_of[i] = SIZE_MAX;
        if (!want[i])
            continue;
        uint32_t j = 0;
        while (j < i && (head_of[j] == SIZE_MAX || code[j] != code[i]))
            j++;
        if (j < i) {
            head_of[i] = head_of[j]; /* recursion: read once */
            continue;
        }
        head_of[i] = heads;
        local[heads] = (struct iovec){.iov_base = w->heads[heads], .iov_len = hsize};
        remote[heads] = (struct iovec){.iov_base = (void *)(uintptr_t)code[i], .iov_len = hsize};
        heads++;
    }
    return heads == 0 ||
           process_vm_readv(rt->pid, local, heads, remote, heads, 0) == (ssize_t)(heads * hsize);
}

/* Every frame's code object header at once, then their names.  With
 * DEFER, a frame whose code object the cache knows only notes it
 * (python_finish_thread() names it after the resume). */
static bool name_frames(struct python_runtime *rt, struct python_walk *w,
                        struct interp_names *names, uint32_t pid, bool defer,
                        struct interp_stack *st, enum interp_failure *failure)
{
    bool now[INTERP_MAX_FRAMES]; /* named inside the stop */
    size_t head_of[INTERP_MAX_FRAMES];
    st->ndeferred = 0;
    for (uint32_t i = 0; i < w->n; i++) {
        st->frames[i] = (struct interp_frame){.pc = 0, .entry = w->entry[i]};
        if (!remote_pointer_ok(w->code[i])) {
            *failure = INTERP_BAD_OBJECT;
            return false;
        }
        struct interp_deferred *d = &st->deferred[i];
        now[i] = !(defer && python_code_cached(rt, w->code[i], d->expect));
        if (!now[i]) {
            d->object = w->code[i];
            d->at = w->instr[i];
            st->ndeferred++;
        }
    }
    if (!read_code_heads(rt, w, w->code, now, w->n, head_of)) {
        *failure = INTERP_BAD_READ;
        return false;
    }
    for (uint32_t i = 0; i < w->n; i++) {
        if (!now[i])
            continue;
        uint64_t pc = python_code_name(rt, w->code[i], w->heads[head_of[i]], w->instr[i], names,
                                       pid, failure);
        if (!pc)
            return false;
        st->frames[i].pc = pc;
    }
    st->n = w->n;
    return true;
}

bool python_finish_thread(void *runtime, struct interp_names *names, uint32_t pid,
                          struct interp_stack *st, enum interp_failure *failure)
{
    struct python_runtime *rt = runtime;
    struct python_walk *w = rt->walk;
    uint64_t code[INTERP_MAX_FRAMES];
    bool waits[INTERP_MAX_FRAMES];
    size_t head_of[INTERP_MAX_FRAMES];
    if (!w || python_code_header_size(&rt->layout) == 0) {
        *failure = INTERP_BAD_OBJECT;
        return false;
    }
    for (uint32_t i = 0; i < st->n; i++) {
        waits[i] = st->frames[i].pc == 0;
        code[i] = st->deferred[i].object;
    }
    if (!read_code_heads(rt, w, code, waits, st->n, head_of)) {
        *failure = INTERP_BAD_READ;
        return false;
    }
    /* Each code object must be the one the stop found: it says what it said. */
    for (uint32_t i = 0; i < st->n; i++) {
        if (waits[i] &&
            !python_code_unchanged(rt, code[i], w->heads[head_of[i]], st->deferred[i].expect)) {
            *failure = INTERP_TORN;
            return false;
        }
    }
    for (uint32_t i = 0; i < st->n; i++) {
        if (!waits[i])
            continue;
        st->frames[i].pc = python_code_name(rt, code[i], w->heads[head_of[i]], st->deferred[i].at,
                                            names, pid, failure);
        if (!st->frames[i].pc)
            return false;
    }
    return true;
}

bool python_read_thread(void *runtime, pid_t tid, const struct interp_when *when,
                        struct interp_names *names, uint32_t pid, struct interp_stack *st,
                        enum interp_failure *failure)
{
    struct python_runtime *rt = runtime;
    const struct python_layout *l = &rt->layout;
    uint64_t tstate, frame;
    struct tstate_view v;
    st->n = 0;
    st->cut = false;
    /* A copy is the thread's now only while it stands still. */
    const struct stack_snapshot *copy = when->stopped ? when->copy : NULL;
    if (!thread_frame(rt, tid, copy, &tstate, &v, &frame, failure))
        return false;
    if (when->sample && !same_as_sample(rt, when->sample, v.frame_field, frame, failure))
        return false;
    uint64_t fsize = end_of(0, l->frame_previous, 8);
    fsize = end_of(fsize, l->frame_code, 8);
    fsize = end_of(fsize, l->frame_instr, 8);
    fsize = end_of(fsize, l->frame_owner, 1);
    if (l->frame_is_entry >= 0)
        fsize = end_of(fsize, (uint64_t)l->frame_is_entry, 1);
    if (fsize > FRAME_HEADER_MAX || python_code_header_size(l) == 0) {
        *failure = INTERP_BAD_OBJECT;
        return false;
    }
    if (!rt->walk)
        rt->walk = xcalloc(1, sizeof(*rt->walk));
    struct python_walk *w = rt->walk;
    w->n = 0;
    w->lo = w->hi = 0;
    uint64_t top = frame;
    for (int visited = 0; frame && visited < 2 * INTERP_MAX_FRAMES; visited++) {
        if (w->n == INTERP_MAX_FRAMES)
            break;
        if (!remote_pointer_ok(frame)) {
            *failure = INTERP_BAD_OBJECT;
            return false;
        }
        const uint8_t *buf = frame_bytes(rt, w, frame, fsize, v.chunk, copy);
        if (!buf) {
            *failure = INTERP_BAD_READ;
            return false;
        }
        uint64_t previous, code, instr;
        memcpy(&previous, buf + l->frame_previous, 8);
        memcpy(&code, buf + l->frame_code, 8);
        memcpy(&instr, buf + l->frame_instr, 8);
        if (previous == frame) {
            *failure = INTERP_BAD_OBJECT; /* a loop of one */
            return false;
        }
        if (buf[l->frame_owner] == l->owner_cstack) {
            /* The eval loop's entry shim: the frames before it were its. */
            if (w->n > 0)
                w->entry[w->n - 1] = true;
        } else if (!(rt->img.none && code == rt->img.none)) { /* 3.13: no code object */
            w->code[w->n] = code;
            w->instr[w->n] = instr;
            w->entry[w->n] = l->frame_is_entry >= 0 && buf[l->frame_is_entry] != 0;
            w->n++;
        }
        frame = previous;
    }
    st->cut = frame != 0;
    if (!name_frames(rt, w, names, pid, when->stopped && when->defer, st, failure))
        return false;
    if (when->stopped)
        return true;
    /* The frames must still be the thread's: its current frame has not
     * moved while they were read (a running thread's would). */
    uint64_t again;
    if (!read_tstate(rt, tstate, &v) || !current_frame(rt, v.frame_field, NULL, &again)) {
        *failure = INTERP_BAD_READ;
        return false;
    }
    if (v.native_id != (uint64_t)tid || again != top) {
        *failure = INTERP_TORN;
        return false;
    }
    return true;
}
