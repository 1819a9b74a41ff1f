/* offcpu.c - see offcpu.h */
#include "record/offcpu.h"
#include "record/process.h"
#include "unwind/regs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* One number of the file: decimal, or hexadecimal after "0x". */
static const char *number(const char *p, const char *end, uint64_t *v, bool *negative)
{
    while (p < end && *p == ' ')
        p++;
    *negative = p < end && *p == '-';
    if (*negative)
        p++;
    int base = 10;
    if (end - p >= 2 && p[0] == '0' && p[1] == 'x') {
        base = 16;
        p += 2;
    }
    const char *start = p;
    uint64_t x = 0;
    for (; p < end; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else
            break;
        x = x * (uint64_t)base + (uint64_t)d;
    }
    *v = x;
    return p > start ? p : NULL;
}

/* "running"; "-1 SP PC"; "NR ARG1 ... ARG6 SP PC". */
struct offcpu_look offcpu_parse(const char *text, size_t len)
{
    struct offcpu_look look = {.state = OFFCPU_RUNNING, .syscall = -1};
    const char *p = text, *end = text + len;
    if (len >= 7 && strncmp(text, "running", 7) == 0)
        return look;
    uint64_t nr, word, sp, pc;
    bool negative, neg_word;
    p = number(p, end, &nr, &negative);
    if (!p)
        return look;
    if (!negative)
        for (int i = 0; p && i < 6; i++)
            p = number(p, end, &word, &neg_word);
    p = p ? number(p, end, &sp, &neg_word) : NULL;
    p = p ? number(p, end, &pc, &neg_word) : NULL;
    if (!p || (!negative && nr > 4096))
        return look;
    look.sp = sp;
    look.pc = pc;
    if (negative) {
        look.state = OFFCPU_BLOCKED;
    } else {
        look.state = OFFCPU_IN_SYSCALL;
        look.syscall = (int)nr;
    }
    return look;
}

struct offcpu_look offcpu_look(int *fd, pid_t pid, pid_t tid)
{
    struct offcpu_look gone = {.state = OFFCPU_GONE, .syscall = -1};
    if (*fd < 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
            return gone;
    }
    char buf[256];
    ssize_t n = pread(*fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return gone;
    return offcpu_parse(buf, (size_t)n);
}

bool offcpu_stopped(pid_t pid, pid_t tid)
{
    char buf[512];
    const char *state = proc_stat_state(pid, tid, buf, sizeof(buf));
    return state && (*state == 'T' || *state == 't');
}

int offcpu_stack(pid_t pid, pid_t tid, int *fd, const struct offcpu_look *look,
                 struct stack_snapshot *snap, struct dwarf_unwinder *u, uint64_t *pcs, int max)
{
    pcs[0] = look->pc;
    if (!u || max < 2 || !snap->data)
        return 1;
    memset(&snap->regs, 0, sizeof(snap->regs));
    REGS_SP(snap->regs) = look->sp;
    REGS_PC(snap->regs) = look->pc;
    snap->sp = look->sp;
    snap->pc_sp_only = true;
    size_t want = snap->capacity;
    if (look->sp > UINT64_MAX - want)
        want = (size_t)(UINT64_MAX - look->sp);
    struct iovec local = {.iov_base = snap->data, .iov_len = want};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)look->sp, .iov_len = want};
    ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    snap->size = got > 0 ? (size_t)got : 0;
    /* Had it woken up meanwhile, the copy could mix two stacks. */
    struct offcpu_look again = offcpu_look(fd, pid, tid);
    if (snap->size == 0 || again.state != look->state || again.sp != look->sp ||
        again.pc != look->pc || again.syscall != look->syscall)
        return 1;
    int depth = dwarf_unwind(u, tid, snap, pcs, max, NULL);
    return depth > 0 ? depth : 1;
}
