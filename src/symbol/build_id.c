/* build_id.c - see build_id.h */
#include "symbol/build_id.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

int build_id_read(const char *path, uint8_t *out, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = -1;
    if (elf && elf_kind(elf) == ELF_K_ELF) {
        const void *id = NULL;
        ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
        if (n > 0 && id) {
            size_t len = (size_t)n < max ? (size_t)n : max;
            memcpy(out, id, len);
            rc = (int)len;
        } else {
            rc = 0;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

void build_id_hex(const uint8_t *id, size_t len, char *buf)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        buf[2 * i] = digits[id[i] >> 4];
        buf[2 * i + 1] = digits[id[i] & 15];
    }
    buf[2 * len] = '\0';
}
