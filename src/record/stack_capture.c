/* stack_capture.c - see stack_capture.h */
#include "record/stack_capture.h"
#include "unwind/regs.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#ifndef REGS_SP
#if defined(__x86_64__)
#define REGS_SP(r) ((r).rsp)
#else
#define REGS_SP(r) ((r).sp)
#endif
#endif

int stack_capture_regs(pid_t tid, struct stack_snapshot *s)
{
    struct iovec regs_iov = {.iov_base = &s->regs, .iov_len = sizeof(s->regs)};
    s->size = 0;
    s->complete = false;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &regs_iov) != 0)
        return -1;
    s->sp = (uint64_t)REGS_SP(s->regs);
    return 0;
}

/* What a copy may ask for: at most its capacity, never past the end of the
 * address space. */
static size_t bounded(const struct stack_copy *c)
{
    size_t want = c->want < c->snap->capacity ? c->want : c->snap->capacity;
    if (c->snap->sp > UINT64_MAX - want) /* nonsense SP: nothing above it */
        want = (size_t)(UINT64_MAX - c->snap->sp);
    return want;
}

/*
 * The kernel copies the remote ranges in order, page by page, and reports
 * how far it got: a copy that runs past the end of its mapping (the main
 * thread usually sits a few KiB below the top of its stack) comes back
 * short instead of failing, so the mapping need not be known in advance.
 * Nothing after that range is copied, though: the rest of the batch is
 * asked for again.
 */
void stack_copy_batch(pid_t pid, struct stack_copy *copies, size_t n)
{
    struct iovec local[64], remote[64];
    size_t i = 0;
    while (i < n) {
        size_t k = 0;
        for (; i + k < n && k < sizeof(local) / sizeof(local[0]); k++) {
            struct stack_copy *c = &copies[i + k];
            size_t want = bounded(c);
            local[k] = (struct iovec){.iov_base = c->snap->data, .iov_len = want};
            remote[k] = (struct iovec){.iov_base = (void *)(uintptr_t)c->snap->sp, .iov_len = want};
        }
        ssize_t got = process_vm_readv(pid, local, k, remote, k, 0);
        size_t left = got > 0 ? (size_t)got : 0;
        size_t done = 0;
        for (; done < k; done++) {
            struct stack_copy *c = &copies[i + done];
            size_t want = local[done].iov_len;
            c->snap->size = left < want ? left : want;
            c->snap->complete = c->to_top || left < want;
            if (left < want)
                break;
            left -= want;
        }
        /* Every range was copied whole, or the one at DONE was cut short
         * (a failure before its first byte included): go on after it. */
        i += done < k ? done + 1 : k;
    }
}

int stack_capture(pid_t tid, size_t copy_size, struct stack_snapshot *s)
{
    if (stack_capture_regs(tid, s) != 0)
        return -1;
    struct stack_copy c = {.snap = s, .want = copy_size, .to_top = false};
    if (bounded(&c) == 0)
        return 0;
    stack_copy_batch(tid, &c, 1);
    return 0;
}

size_t stack_copy_plan(uint64_t sp, uint64_t top, size_t limit, bool *to_top)
{
    *to_top = false;
    if (top > sp) {
        uint64_t rest = top - sp;
        if (rest <= (uint64_t)limit * STACK_COPY_NEAR_FACTOR && rest <= STACK_COPY_MAX) {
            *to_top = true;
            return (size_t)rest;
        }
    }
    return limit;
}

size_t stack_copy_grow(size_t limit, size_t configured)
{
    size_t cap = configured > STACK_COPY_GROW_MAX ? configured : STACK_COPY_GROW_MAX;
    if (cap > STACK_COPY_MAX)
        cap = STACK_COPY_MAX;
    size_t grown = limit < cap / 2 ? limit * 2 : cap;
    return grown > limit ? grown : limit;
}
