/* fde_index.c - see fde_index.h */
#include "symbol/fde_index.h"
#include "util/xalloc.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* A CIE's encoding of its FDEs' addresses. */
struct cie_encoding {
    Dwarf_Off offset;
    uint8_t encoding;
};

struct reader {
    const uint8_t *p, *end;
    bool big_endian;
    unsigned addr_size;
};

static bool read_leb(struct reader *r, bool is_signed, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (is_signed && shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            *out = v;
            return true;
        }
    }
    return false;
}

static bool read_fixed(struct reader *r, unsigned size, bool is_signed, uint64_t *out)
{
    if ((size_t)(r->end - r->p) < size)
        return false;
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++) {
        unsigned shift = r->big_endian ? 8 * (size - 1 - i) : 8 * i;
        v |= (uint64_t)r->p[i] << shift;
    }
    r->p += size;
    if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    *out = v;
    return true;
}

/* A value in ENCODING's format (its low four bits), without applying it. */
static bool read_encoded(struct reader *r, uint8_t encoding, uint64_t *out)
{
    switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
        return read_fixed(r, r->addr_size, false, out);
    case DW_EH_PE_uleb128:
        return read_leb(r, false, out);
    case DW_EH_PE_sleb128:
        return read_leb(r, true, out);
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
        return read_fixed(r, 2, encoding & DW_EH_PE_signed, out);
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
        return read_fixed(r, 4, encoding & DW_EH_PE_signed, out);
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        return read_fixed(r, 8, encoding & DW_EH_PE_signed, out);
    default:
        return false;
    }
}

/* The 'R' encoding of a CIE's "z..." augmentation; absolute addresses
 * without one.  False for an augmentation this reader does not know. */
static bool fde_encoding(const Dwarf_CIE *cie, struct reader base, uint8_t *out)
{
    *out = DW_EH_PE_absptr;
    const char *aug = cie->augmentation;
    if (!aug || aug[0] == '\0')
        return true;
    if (aug[0] != 'z' || !cie->augmentation_data)
        return false;
    struct reader r = base;
    r.p = cie->augmentation_data;
    r.end = r.p + cie->augmentation_data_size;
    for (const char *c = aug + 1; *c; c++) {
        uint64_t skip;
        switch (*c) {
        case 'R':
            if (r.p >= r.end)
                return false;
            *out = *r.p++;
            return true;
        case 'L':
            if (r.p >= r.end)
                return false;
            r.p++;
            break;
        case 'P': {
            if (r.p >= r.end)
                return false;
            uint8_t enc = *r.p++;
            if (!read_encoded(&r, enc, &skip))
                return false;
            break;
        }
        case 'S':
        case 'B':
            break;
        default:
            return false;
        }
    }
    return true;
}

static const struct cie_encoding *find_cie(const struct cie_encoding *cies, size_t n, Dwarf_Off off)
{
    for (size_t i = n; i-- > 0;)
        if (cies[i].offset == off)
            return &cies[i];
    return NULL;
}

static int range_cmp(const void *a, const void *b)
{
    const struct fde_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Every FDE of section SCN (.eh_frame when EH, else .debug_frame). */
static void read_section(Elf *elf, Elf_Scn *scn, bool eh, struct fde_index *out)
{
    GElf_Shdr sh;
    Elf_Data *d = gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
    const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
    if (!d || !d->d_buf || !ident || sh.sh_type == SHT_NOBITS)
        return;
    struct reader base = {.big_endian = ident[EI_DATA] == ELFDATA2MSB,
                          .addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4};
    struct cie_encoding *cies = NULL;
    size_t ncies = 0, cies_cap = 0, cap = 0;
    Dwarf_Off off = 0, next;
    for (;;) {
        Dwarf_CFI_Entry e;
        int rc = dwarf_next_cfi(ident, d, eh, off, &next, &e);
        if (rc > 0 || next == (Dwarf_Off)-1 || next <= off)
            break;
        Dwarf_Off here = off;
        off = next;
        if (rc != 0)
            continue;
        if (dwarf_cfi_cie_p(&e)) {
            uint8_t enc;
            if (fde_encoding(&e.cie, base, &enc)) {
                cies = xgrow(cies, &cies_cap, ncies + 1, sizeof(*cies));
                cies[ncies++] = (struct cie_encoding){here, enc};
            }
            continue;
        }
        const struct cie_encoding *cie = find_cie(cies, ncies, e.fde.CIE_pointer);
        uint8_t app = cie ? cie->encoding & 0x70 : 0xff;
        if (!cie || cie->encoding == DW_EH_PE_omit || (app != 0 && app != DW_EH_PE_pcrel))
            continue;
        struct reader r = base;
        r.p = e.fde.start;
        r.end = e.fde.end;
        uint64_t field = sh.sh_addr + (uint64_t)(e.fde.start - (const uint8_t *)d->d_buf);
        uint64_t start, size;
        if (!read_encoded(&r, cie->encoding, &start) || !read_encoded(&r, cie->encoding, &size) ||
            size == 0)
            continue;
        if (app == DW_EH_PE_pcrel)
            start += field;
        if (start + size < start)
            continue;
        out->ranges = xgrow(out->ranges, &cap, out->count + 1, sizeof(*out->ranges));
        out->ranges[out->count++] = (struct fde_range){start, start + size};
    }
    free(cies);
}

void fde_index_build(Elf *elf, struct fde_index *out)
{
    memset(out, 0, sizeof(*out));
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return;
    Elf_Scn *eh = NULL, *debug = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name && strcmp(name, ".eh_frame") == 0)
            eh = scn;
        else if (name && strcmp(name, ".debug_frame") == 0)
            debug = scn;
    }
    if (eh)
        read_section(elf, eh, true, out);
    if (out->count == 0 && debug)
        read_section(elf, debug, false, out);
    if (out->count)
        qsort(out->ranges, out->count, sizeof(*out->ranges), range_cmp);
}

bool fde_index_find(const struct fde_index *ix, uint64_t addr, uint64_t *start)
{
    size_t lo = 0, hi = ix->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->ranges[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The last range starting at or below ADDR; FDEs do not overlap. */
    if (lo == 0 || addr >= ix->ranges[lo - 1].end)
        return false;
    *start = ix->ranges[lo - 1].start;
    return true;
}

void fde_index_free(struct fde_index *ix)
{
    free(ix->ranges);
    memset(ix, 0, sizeof(*ix));
}
