/*
 * regs.h - the registers the sampler reads from a stopped thread.
 *
 * Contract: regs_read_pc() fetches the general registers of a thread in a
 * ptrace-stop with one PTRACE_GETREGSET (NT_PRSTATUS) and returns its
 * program counter.  The architecture-specific part is this file only.
 */
#ifndef PTPROF_UNWIND_REGS_H
#define PTPROF_UNWIND_REGS_H

#include <elf.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

#if defined(__x86_64__)
#define REGS_PC(r) ((r).rip)
#define REGS_SP(r) ((r).rsp)
#define REGS_FP(r) ((r).rbp)
#elif defined(__aarch64__)
#define REGS_PC(r) ((r).pc)
#define REGS_SP(r) ((r).sp)
#define REGS_FP(r) ((r).regs[29])
#elif defined(__riscv)
#define REGS_PC(r) ((r).pc)
#define REGS_SP(r) ((r).sp)
#define REGS_FP(r) ((r).s0)
#else
#error "ptprof: unsupported architecture (x86_64, aarch64 and riscv64 are supported)"
#endif

/*
 * The system call a thread stopped in, or -1.  A thread interrupted while
 * blocked in a system call has the call's number in orig_rax and a
 * "restart" code in rax (the call resumes transparently when the thread
 * does); a thread interrupted in user code has a negative orig_rax.
 */
static inline int regs_blocked_syscall(const struct user_regs_struct *r)
{
#if defined(__x86_64__)
    long nr = (long)r->orig_rax;
    long ret = (long)r->rax;
    /* -EINTR, -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK */
    if (nr >= 0 && (ret == -4 || ret == -512 || ret == -513 || ret == -514 || ret == -516))
        return (int)nr;
#else
    (void)r;
#endif
    return -1;
}

/*
 * The system call a thread stopped on its way out of, or -1.  The kernel
 * looks for a pending stop on every return to user space, a call's exit
 * included: there orig_rax holds the call's number and rax what it
 * returned (not a restart code: that is a call still blocked).  Known on
 * x86-64 only.
 */
static inline int regs_syscall_exit(const struct user_regs_struct *r)
{
#if defined(__x86_64__)
    long nr = (long)r->orig_rax;
    if (nr >= 0 && regs_blocked_syscall(r) < 0)
        return (int)nr;
#else
    (void)r;
#endif
    return -1;
}

static inline int regs_read_pc(pid_t tid, uint64_t *pc)
{
    struct user_regs_struct regs;
    struct iovec iov = {.iov_base = &regs, .iov_len = sizeof(regs)};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0)
        return -1;
    *pc = (uint64_t)REGS_PC(regs);
    return 0;
}

#endif
