/*
 * python_find.c - the file of a process that holds the CPython runtime, and
 * what its symbols say (python.h).  Candidates are the file mappings named
 * like an interpreter (libpython3.X.so, python3.X): a process that maps
 * none costs a scan of its maps' names.  A candidate's ELF file is read
 * with libelf for _PyRuntime (or the .PyRuntime section), Py_Version, the
 * type objects that tell a code object or a string from anything else, and
 * the eval loop's range.  No debug information is needed: all of them are
 * in .dynsym, which even a stripped interpreter keeps.
 */
#include "record/interp/python.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_candidate(const struct map_entry *e)
{
    if (e->path[0] != '/')
        return false;
    const char *base = strrchr(e->path, '/') + 1;
    return strncmp(base, "libpython3.", 11) == 0 || strncmp(base, "python3", 7) == 0;
}

/* The symbols wanted, by name. */
struct wanted {
    const char *name;
    uint64_t *addr;
    uint64_t *end; /* NULL: the size is not needed */
};

static void take_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct wanted *w, size_t nw)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym) || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name)
            continue;
        for (size_t k = 0; k < nw; k++) {
            if (*w[k].addr == 0 && strcmp(name, w[k].name) == 0) {
                *w[k].addr = sym.st_value;
                if (w[k].end)
                    *w[k].end = sym.st_value + sym.st_size;
            }
        }
    }
}

/* The symbols of IMG's file, as link-time addresses; the link-time
 * address of the byte at file offset OFFSET (*VADDR), through the PT_LOAD
 * segment that holds it. */
static bool read_elf(const char *path, uint64_t offset, struct python_image *img, uint64_t *vaddr,
                     char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false; /* gone, or elsewhere: not ours to explain */
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool ok = false;
    if (!elf || elf_kind(elf) != ELF_K_ELF)
        goto out;
    size_t nph;
    *vaddr = UINT64_MAX;
    if (elf_getphdrnum(elf, &nph) == 0) {
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                continue;
            /* A mapping starts at the page that holds its segment's start. */
            uint64_t first = ph.p_offset & ~(uint64_t)0xfff;
            if (offset >= first && offset < ph.p_offset + ph.p_filesz) {
                *vaddr = ph.p_vaddr - ph.p_offset + offset;
                break;
            }
        }
    }
    if (*vaddr == UINT64_MAX)
        goto out;
    struct wanted w[] = {
        {"_PyRuntime", &img->runtime, NULL},
        {"Py_Version", &img->version_addr, NULL},
        {"PyCode_Type", &img->code_type, NULL},
        {"PyUnicode_Type", &img->unicode_type, NULL},
        {"PyBytes_Type", &img->bytes_type, NULL},
        {"_Py_NoneStruct", &img->none, NULL},
        {"_PyEval_EvalFrameDefault", &img->eval_lo, &img->eval_hi},
        {"_PyEval_EvalFrameDefault.cold", &img->eval_cold_lo, &img->eval_cold_hi},
    };
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        goto out;
    uint64_t section_runtime = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".PyRuntime") == 0)
            section_runtime = sh.sh_addr;
        if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
            take_symbols(elf, scn, &sh, w, sizeof(w) / sizeof(*w));
    }
    if (!img->runtime)
        img->runtime = section_runtime;
    if (!img->runtime)
        goto out; /* named like Python, holds no runtime: not one */
    if (!img->version_addr || !img->code_type || !img->unicode_type || !img->bytes_type ||
        !img->eval_lo) {
        /* Py_Version is new in 3.11: the file's name tells an older one. */
        const char *v = strstr(strrchr(path, '/') ? strrchr(path, '/') : path, "python3.");
        unsigned minor = v ? (unsigned)strtoul(v + 8, NULL, 10) : 0;
        if (minor > 0 && minor < 11)
            snprintf(why, whylen, "CPython 3.%u is not supported, 3.11 and later are (%s)", minor,
                     path);
        else
            snprintf(why, whylen, "%s: no Py_Version, type objects or eval loop among its symbols",
                     path);
        goto out;
    }
    ok = true;
out:
    if (elf)
        elf_end(elf);
    close(fd);
    return ok;
}

static void relocate(uint64_t *addr, uint64_t bias)
{
    if (*addr)
        *addr += bias;
}

bool python_find(pid_t pid, const struct map_list *maps, struct python_image *img, char *why,
                 size_t whylen)
{
    why[0] = '\0';
    /* libpython first: an executable linked to it holds no runtime. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < maps->count; i++) {
            const struct map_entry *e = &maps->entries[i];
            if (!is_candidate(e))
                continue;
            bool lib = strncmp(strrchr(e->path, '/') + 1, "lib", 3) == 0;
            if (lib != (pass == 0))
                continue;
            memset(img, 0, sizeof(*img));
            snprintf(img->path, sizeof(img->path), "%s", e->path);
            char root_path[4200];
            snprintf(root_path, sizeof(root_path), "/proc/%d/root%s", (int)pid, e->path);
            uint64_t vaddr = 0;
            /* The target's own view of the path first (another mount
             * namespace), then ours. */
            if (!read_elf(root_path, e->offset, img, &vaddr, why, whylen) &&
                !read_elf(e->path, e->offset, img, &vaddr, why, whylen)) {
                if (why[0])
                    return false;
                continue;
            }
            img->map_start = e->start;
            img->map_offset = e->offset;
            img->inode = e->inode;
            img->bias = e->start - vaddr;
            uint64_t *addrs[] = {&img->runtime,      &img->version_addr, &img->code_type,
                                 &img->unicode_type, &img->bytes_type,   &img->none,
                                 &img->eval_lo,      &img->eval_hi,      &img->eval_cold_lo,
                                 &img->eval_cold_hi};
            for (size_t k = 0; k < sizeof(addrs) / sizeof(*addrs); k++)
                relocate(addrs[k], img->bias);
            return true;
        }
    }
    return false;
}
