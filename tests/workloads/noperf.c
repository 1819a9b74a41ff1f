/*
 * noperf.c - run a command where perf_event_open fails, for real: a
 * seccomp filter makes the system call return an error before the kernel
 * looks at it, as a container runtime's default profile does.
 *
 * usage: noperf ERRNO COMMAND [ARGS...]
 *   ERRNO is EACCES, EPERM or ENOSYS.  The filter is inherited by COMMAND
 *   and everything it starts; every other system call is allowed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv)
#define ARCH AUDIT_ARCH_RISCV64
#endif

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: noperf EACCES|EPERM|ENOSYS COMMAND [ARGS...]\n");
        return 2;
    }
    int err = strcmp(argv[1], "EACCES") == 0   ? EACCES
              : strcmp(argv[1], "EPERM") == 0  ? EPERM
              : strcmp(argv[1], "ENOSYS") == 0 ? ENOSYS
                                               : 0;
    if (!err) {
        fprintf(stderr, "noperf: unknown errno '%s'\n", argv[1]);
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
    /* Without privileges a filter needs no_new_privs (which a sandbox
     * sets anyway). */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("noperf: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
