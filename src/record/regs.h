/*
 * regs.h - the registers the sampler reads from a stopped thread.
 *
 * Contract: regs_read_pc() fetches the general registers of a thread in a
 * ptrace-stop with one PTRACE_GETREGSET (NT_PRSTATUS) and returns its
 * program counter.  The architecture-specific part is this file only.
 */
#ifndef PTPROF_RECORD_REGS_H
#define PTPROF_RECORD_REGS_H

#include <elf.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

#if defined(__x86_64__)
#define REGS_PC(r) ((r).rip)
#elif defined(__aarch64__)
#define REGS_PC(r) ((r).pc)
#elif defined(__riscv)
#define REGS_PC(r) ((r).pc)
#else
#error "ptprof: unsupported architecture (x86_64, aarch64 and riscv64 are supported)"
#endif

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
