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

static bool range_ok(uint64_t addr, size_t len)
{
    return addr != 0 && addr < USER_SPACE_END && len <= USER_SPACE_END - addr;
}

bool remote_read2(pid_t pid, uint64_t addr1, void *buf1, size_t len1, uint64_t addr2, void *buf2,
                  size_t len2)
{
    if (len1 == 0 || len2 == 0)
        return len1 ? remote_read(pid, addr1, buf1, len1) : remote_read(pid, addr2, buf2, len2);
    if (!range_ok(addr1, len1) || !range_ok(addr2, len2))
        return false;
    struct iovec local[2] = {{.iov_base = buf1, .iov_len = len1},
                             {.iov_base = buf2, .iov_len = len2}};
    struct iovec remote[2] = {{.iov_base = (void *)(uintptr_t)addr1, .iov_len = len1},
                              {.iov_base = (void *)(uintptr_t)addr2, .iov_len = len2}};
    return process_vm_readv(pid, local, 2, remote, 2, 0) == (ssize_t)(len1 + len2);
}

bool remote_pointer_ok(uint64_t addr)
{
    return addr >= 4096 && addr < USER_SPACE_END && (addr & 7) == 0;
}
