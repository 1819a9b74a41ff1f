/* plt_symbols.c - see plt_symbols.h */
#include "symbol/plt_symbols.h"
#include "util/xalloc.h"

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A GOT slot and the dynamic symbol whose address the loader puts there. */
struct slot {
    uint64_t addr;
    const char *name; /* in the ELF file's string table */
};

struct relocs {
    struct slot *slots; /* by address */
    size_t nslots, cap;
    const char **plt; /* .rela.plt in order, for lazy entries' push index */
    size_t nplt, plt_cap;
};

static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The name of dynamic symbol INDEX of the table in section LINK. */
static const char *dynsym_name(Elf *elf, size_t link, uint64_t index)
{
    Elf_Scn *scn = elf_getscn(elf, link);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
        return NULL;
    Elf_Data *d = elf_getdata(scn, NULL);
    GElf_Sym sym;
    if (!d || index == 0 || index > INT32_MAX || !gelf_getsym(d, (int)index, &sym))
        return NULL;
    const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
    return name && *name ? name : NULL;
}

static void read_relocs(Elf *elf, size_t shstrndx, struct relocs *r)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
            continue;
        const char *secname = elf_strptr(elf, shstrndx, sh.sh_name);
        bool is_plt = secname && strcmp(secname, ".rela.plt") == 0;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
            GElf_Rela rela;
            if (!gelf_getrela(d, (int)i, &rela))
                break;
            uint32_t type = (uint32_t)GELF_R_TYPE(rela.r_info);
            const char *name = type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT
                                   ? dynsym_name(elf, sh.sh_link, GELF_R_SYM(rela.r_info))
                                   : NULL;
            if (is_plt) {
                r->plt = xgrow(r->plt, &r->plt_cap, r->nplt + 1, sizeof(*r->plt));
                r->plt[r->nplt++] = name;
            }
            if (name) {
                r->slots = xgrow(r->slots, &r->cap, r->nslots + 1, sizeof(*r->slots));
                r->slots[r->nslots++] = (struct slot){rela.r_offset, name};
            }
        }
    }
    if (r->nslots)
        qsort(r->slots, r->nslots, sizeof(*r->slots), slot_cmp);
}

static const char *slot_name(const struct relocs *r, uint64_t addr)
{
    struct slot key = {addr, NULL};
    const struct slot *s =
        r->nslots ? bsearch(&key, r->slots, r->nslots, sizeof(key), slot_cmp) : NULL;
    return s ? s->name : NULL;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The function the stub of LEN bytes at CODE (link-time address ADDR)
 * reaches, or NULL. */
static const char *stub_target(const struct relocs *r, const uint8_t *code, size_t len,
                               uint64_t addr)
{
    static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
    size_t at = 0;
    if (len >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0)
        at = sizeof(endbr64);
    size_t jmp = at + (at < len && code[at] == 0xf2); /* bnd */
    if (jmp + 6 <= len && code[jmp] == 0xff && code[jmp + 1] == 0x25) {
        int32_t disp = (int32_t)le32(code + jmp + 2);
        return slot_name(r, addr + jmp + 6 + (uint64_t)(int64_t)disp);
    }
    /* A lazy entry of the IBT layout: "push $index" into .rela.plt. */
    if (at + 5 <= len && code[at] == 0x68) {
        uint32_t index = le32(code + at + 1);
        return index < r->nplt ? r->plt[index] : NULL;
    }
    return NULL;
}

static void add_stub(struct plt_symbols *out, size_t *cap, uint64_t addr, uint64_t size,
                     const char *name)
{
    out->stubs = xgrow(out->stubs, cap, out->count + 1, sizeof(*out->stubs));
    out->stubs[out->count++] =
        (struct plt_stub){.addr = addr, .size = size, .name = xasprintf("%s" PLT_SUFFIX, name)};
}

void plt_symbols_read(Elf *elf, struct plt_symbols *out)
{
    memset(out, 0, sizeof(*out));
    GElf_Ehdr eh;
    size_t shstrndx;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
        elf_getshdrstrndx(elf, &shstrndx) != 0)
        return;
    struct relocs r = {0};
    read_relocs(elf, shstrndx, &r);
    size_t cap = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && (r.nslots || r.nplt);
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
            continue;
        const char *secname = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!secname || (strcmp(secname, ".plt") != 0 && strcmp(secname, ".plt.sec") != 0 &&
                         strcmp(secname, ".plt.got") != 0))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        uint64_t entsize = sh.sh_entsize ? sh.sh_entsize : 16;
        if (!d || !d->d_buf || entsize > 64)
            continue;
        for (uint64_t off = 0; off + entsize <= d->d_size; off += entsize) {
            const char *name =
                stub_target(&r, (const uint8_t *)d->d_buf + off, entsize, sh.sh_addr + off);
            if (name)
                add_stub(out, &cap, sh.sh_addr + off, entsize, name);
        }
    }
    free(r.slots);
    free(r.plt);
}

void plt_symbols_free(struct plt_symbols *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->stubs[i].name);
    free(t->stubs);
    memset(t, 0, sizeof(*t));
}
