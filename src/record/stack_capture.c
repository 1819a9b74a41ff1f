/*
 * stack_capture.c - see stack.h: the part of stack sampling that runs while
 * the target is stopped (registers + one copy of the top of the stack), and
 * the names of the stack modes.
 */
#include "record/stack.h"
#include "record/regs.h"
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

static const char *const mode_names[] = {
    [STACK_NONE] = "none",
    [STACK_FP] = "fp",
    [STACK_DWARF] = "dwarf",
};

int stack_mode_parse(const char *name, enum stack_mode *mode)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *mode = (enum stack_mode)i;
            return 0;
        }
    }
    return -1;
}

const char *stack_mode_name(enum stack_mode mode)
{
    if ((size_t)mode < sizeof(mode_names) / sizeof(mode_names[0]))
        return mode_names[mode];
    return "?";
}

void stack_snapshot_init(struct stack_snapshot *s, size_t copy_size)
{
    memset(s, 0, sizeof(*s));
    if (copy_size == 0 || copy_size > STACK_COPY_MAX)
        copy_size = copy_size == 0 ? STACK_COPY_DEFAULT : STACK_COPY_MAX;
    s->data = xmalloc(copy_size);
    s->capacity = copy_size;
}

void stack_snapshot_free(struct stack_snapshot *s)
{
    free(s->data);
    memset(s, 0, sizeof(*s));
}

int stack_capture(pid_t tid, size_t copy_size, struct stack_snapshot *s)
{
    struct iovec regs_iov = {.iov_base = &s->regs, .iov_len = sizeof(s->regs)};
    s->size = 0;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &regs_iov) != 0)
        return -1;
    s->sp = (uint64_t)REGS_SP(s->regs);

    size_t want = copy_size < s->capacity ? copy_size : s->capacity;
    if (s->sp > UINT64_MAX - want) /* nonsense SP: nothing above it to copy */
        want = (size_t)(UINT64_MAX - s->sp);
    if (want == 0)
        return 0;
    /* The kernel copies page by page and reports how far it got, so a copy
     * that runs past the top of the stack mapping comes back short rather
     * than failing: no need to look the mapping up first. */
    struct iovec local = {.iov_base = s->data, .iov_len = want};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)s->sp, .iov_len = want};
    ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (got < 0)
        return errno == ESRCH ? -1 : 0;
    s->size = (size_t)got;
    return 0;
}
