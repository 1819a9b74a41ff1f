/*
 * remote_mem.c - another process's memory, read with process_vm_readv
 * (python.h): all of a range or nothing.
 */
#include "record/interp/python.h"

#include <sys/uio.h>

/* The end of user space on x86-64 with 5-level paging (and aarch64). */
#define USER_SPACE_END 0x0100000000000000ULL

bool remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return true;
    if (addr == 0 || addr >= USER_SPACE_END || len > USER_SPACE_END - addr)
        return false;
    struct iovec local = {.iov_base = buf, .iov_len = len};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

bool remote_pointer_ok(uint64_t addr)
{
    return addr >= 4096 && addr < USER_SPACE_END && (addr & 7) == 0;
}
