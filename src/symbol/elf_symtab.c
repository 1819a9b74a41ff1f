/* elf_symtab.c - see elf_symtab.h */
#include "symbol/elf_symtab.h"
#include "symbol/symbol_alias.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A candidate before aliases are merged; NAME points into libelf's data. */
struct candidates {
    struct symbol_alias *items;
    size_t count, capacity;
};

/* How far lookup walks back for a symbol that encloses nested ones. */
#define ENCLOSING_WALK_LIMIT 16

static bool is_function(const GElf_Sym *sym)
{
    int type = GELF_ST_TYPE(sym->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_value != 0 &&
           sym->st_shndx != SHN_UNDEF;
}

static void collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct candidates *out)
{
    Elf_Data *data = NULL;
    while ((data = elf_getdata(scn, data)) != NULL) {
        if (shdr->sh_entsize == 0)
            return;
        size_t n = data->d_size / shdr->sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym) || !is_function(&sym))
                continue;
            const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            out->items = xgrow(out->items, &out->capacity, out->count + 1, sizeof(*out->items));
            out->items[out->count++] = (struct symbol_alias){
                .addr = sym.st_value,
                .size = sym.st_size,
                .name = name,
                .rank = symbol_alias_rank(&sym),
            };
        }
    }
}

/* The address file offset 0 is loaded at (see the contract in the header). */
static int find_load_vaddr(Elf *elf, uint64_t *out)
{
    size_t n;
    *out = 0;
    if (elf_getphdrnum(elf, &n) != 0)
        return -1;
    bool have_first = false;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            return -1;
        if (ph.p_type != PT_LOAD)
            continue;
        if (ph.p_offset == 0) {
            *out = ph.p_vaddr;
            return 0;
        }
        /* No segment maps offset 0 (unusual linkers): use where it would
         * lie in the first segment, which is congruent by construction. */
        if (!have_first) {
            *out = ph.p_vaddr - ph.p_offset;
            have_first = true;
        }
    }
    return 0;
}

/* Keep the PT_LOAD headers for elf_symtab_vaddr(). */
static int collect_segments(Elf *elf, struct elf_symtab *out)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return -1;
    out->segments = n ? xcalloc(n, sizeof(*out->segments)) : NULL;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            return -1;
        if (ph.p_type == PT_LOAD)
            out->segments[out->nsegments++] = (struct elf_segment){.offset = ph.p_offset,
                                                                   .filesz = ph.p_filesz,
                                                                   .vaddr = ph.p_vaddr,
                                                                   .flags = ph.p_flags};
    }
    return 0;
}

/* Merge aliases (the best-ranked comes first after sorting) and copy names
 * into one block so the table does not depend on libelf's memory. */
static void build_table(struct candidates *c, struct elf_symtab *out)
{
    if (c->count > 1) /* a stripped binary may have none: no array at all */
        qsort(c->items, c->count, sizeof(*c->items), symbol_alias_cmp);
    size_t kept = 0, bytes = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (kept > 0 && c->items[kept - 1].addr == c->items[i].addr) {
            if (c->items[kept - 1].size == 0)
                c->items[kept - 1].size = c->items[i].size;
            continue;
        }
        c->items[kept++] = c->items[i];
        bytes += strlen(c->items[i].name) + 1;
    }
    out->syms = xcalloc(kept, sizeof(*out->syms));
    out->strings = xmalloc(bytes);
    char *p = out->strings;
    for (size_t i = 0; i < kept; i++) {
        size_t len = strlen(c->items[i].name) + 1;
        memcpy(p, c->items[i].name, len);
        out->syms[i] =
            (struct elf_symbol){.addr = c->items[i].addr, .size = c->items[i].size, .name = p};
        p += len;
    }
    out->count = kept;
}

static int check_magic(const char *path, int fd)
{
    unsigned char magic[SELFMAG];
    ssize_t got = pread(fd, magic, sizeof(magic), 0);
    if (got < 0) {
        pt_err("%s: %s", path, strerror(errno));
        return -1;
    }
    if ((size_t)got < sizeof(magic) || memcmp(magic, ELFMAG, SELFMAG) != 0) {
        pt_err("%s: offset 0: not an ELF file", path);
        return -1;
    }
    return 0;
}

int elf_symtab_load(const char *path, struct elf_symtab *out)
{
    memset(out, 0, sizeof(*out));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        pt_err("%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        pt_err("%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (check_magic(path, fd) != 0) {
        close(fd);
        return -1;
    }

    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        pt_err("%s: not a readable ELF file: %s", path, elf_errmsg(-1));
        elf_end(elf);
        close(fd);
        return -1;
    }

    int rc = -1;
    struct candidates c = {0};
    uint64_t load_vaddr;
    if (find_load_vaddr(elf, &load_vaddr) != 0) {
        pt_err("%s: damaged program headers: %s", path, elf_errmsg(-1));
        goto out;
    }

    Elf_Scn *symtab = NULL, *dynsym = NULL;
    GElf_Shdr symtab_hdr, dynsym_hdr;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB && !symtab) {
            symtab = scn;
            symtab_hdr = sh;
        } else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
            dynsym = scn;
            dynsym_hdr = sh;
        }
    }
    if (symtab)
        collect(elf, symtab, &symtab_hdr, &c);
    /* A stripped file keeps only what it exports; better than nothing. */
    if (c.count == 0 && dynsym)
        collect(elf, dynsym, &dynsym_hdr, &c);

    if (collect_segments(elf, out) != 0) {
        pt_err("%s: damaged program headers: %s", path, elf_errmsg(-1));
        free(out->segments);
        memset(out, 0, sizeof(*out));
        goto out;
    }
    out->path = xstrdup(path);
    out->load_vaddr = load_vaddr;
    build_table(&c, out);
    pt_debug("%s: %zu function symbols, load address 0x%llx", path, out->count,
             (unsigned long long)load_vaddr);
    rc = 0;
out:
    free(c.items);
    elf_end(elf);
    close(fd);
    return rc;
}

int elf_symtab_vaddr(const struct elf_symtab *tab, uint64_t file_offset, uint64_t *vaddr)
{
    /* Segments are page-aligned in memory, so a page may hold the end of
     * one and the start of the next: code wins, since PCs point at code. */
    const struct elf_segment *found = NULL;
    for (size_t i = 0; tab && i < tab->nsegments; i++) {
        const struct elf_segment *s = &tab->segments[i];
        if (file_offset < s->offset || file_offset - s->offset >= s->filesz)
            continue;
        if (!found || ((s->flags & PF_X) && !(found->flags & PF_X)))
            found = s;
    }
    if (!found)
        return -1;
    *vaddr = file_offset - found->offset + found->vaddr;
    return 0;
}

const struct elf_symbol *elf_symtab_lookup(const struct elf_symtab *tab, uint64_t addr)
{
    if (!tab || tab->count == 0 || addr < tab->syms[0].addr)
        return NULL;
    /* Last symbol starting at or below ADDR. */
    size_t lo = 0, hi = tab->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab->syms[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    const struct elf_symbol *nearest = &tab->syms[lo];
    if (nearest->size == 0 || addr - nearest->addr < nearest->size)
        return nearest;
    /* ADDR is past the end of the nearest symbol: it may still sit inside
     * an enclosing one that starts lower (assembly with nested labels).
     * Unsized symbols further down end where the next symbol starts. */
    for (size_t back = 1; back <= ENCLOSING_WALK_LIMIT && back <= lo; back++) {
        const struct elf_symbol *s = &tab->syms[lo - back];
        if (s->size != 0 && addr - s->addr < s->size)
            return s;
    }
    return NULL;
}

void elf_symtab_free(struct elf_symtab *tab)
{
    if (!tab)
        return;
    free(tab->path);
    free(tab->syms);
    free(tab->strings);
    free(tab->segments);
    memset(tab, 0, sizeof(*tab));
}
