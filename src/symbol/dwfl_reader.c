/* dwfl_reader.c - see dwfl_reader.h */
#include "symbol/dwfl_reader.h"
#include "symbol/symbol_alias.h"
#include "symbol/debug_server.h"
#include "symbol/demangle.h"
#include "symbol/addr_table.h"
#include "symbol/elf_symtab.h"
#include "symbol/fde_index.h"
#include "symbol/plt_symbols.h"
#include "util/xalloc.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deeper inline nesting than this is cut (outer frames kept). */
#define MAX_SCOPES 128
/* How far a lookup walks back for a symbol or function that encloses
 * others (assembly with nested labels, GNU C nested functions). */
#define ENCLOSING_WALK 16
/* Namespaces and classes nest at most this deep when functions are indexed. */
#define MAX_NESTING 32
/* Below every rank symbol_alias_rank() gives: a real symbol at a stub's
 * address names it. */
#define PLT_RANK 16

/* A function symbol: libdwfl's answer, sorted once for binary search
 * (dwfl_module_addrinfo() scans the whole table on every call). */
/* A code range of a concrete DW_TAG_subprogram. */
struct fn_range {
    Dwarf_Addr low, high; /* CU-relative (DWARF) addresses */
    Dwarf_Die die;
};

/* The functions of one compilation unit, indexed on its first use so that
 * a lookup walks one function's DIEs instead of the whole unit's. */
struct cu_index {
    struct fn_range *ranges;
    size_t count;
};

struct dwfl_reader {
    Dwfl_Callbacks callbacks; /* libdwfl keeps a pointer to it */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    GElf_Addr bias;         /* module address = link-time address + bias */
    struct elf_symtab segs; /* only the PT_LOAD headers, for elf_symtab_vaddr() */
    int has_dwarf;          /* -1: not looked for yet */
    bool syms_loaded;
    struct symbol_alias *syms;
    size_t nsyms;
    struct plt_symbols plt; /* owns the names of the stubs in syms */
    int fetch_error;        /* a debuginfod server's error (errno), 0 if none */
    bool fdes_loaded;
    struct fde_index fdes; /* function bounds from the CFI, for unnamed code */
    struct addr_table cus; /* CU DIE offset -> index in cu_ix + 1 */
    struct cu_index *cu_ix;
    size_t ncu, cu_cap;
};

static int collect_segments(Elf *elf, struct elf_symtab *out)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return -1;
    out->segments = xcalloc(n ? n : 1, sizeof(*out->segments));
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
    return out->nsegments ? 0 : -1;
}

/* elfutils' own search (the .build-id tree, .gnu_debuglink, then the
 * debuginfod servers), remembering how a server failed: libdwfl returns
 * the client's negative errno as the descriptor. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    struct dwfl_reader *r = *userdata;
    int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                          debuglink_crc, debuginfo_file_name);
    if (fd < -1 && r)
        r->fetch_error = -fd;
    return fd;
}

struct dwfl_reader *dwfl_reader_open(const char *path, int fd, char **debuginfo_path,
                                     const char **why)
{
    struct dwfl_reader *r = xcalloc(1, sizeof(*r));
    r->has_dwarf = -1;
    r->callbacks = (Dwfl_Callbacks){
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = debuginfo_path,
    };
    *why = "cannot start libdwfl";
    r->dwfl = dwfl_begin(&r->callbacks);
    if (!r->dwfl)
        goto fail;
    /* libdwfl owns the descriptor it is given once it succeeds; a copy
     * keeps the ownership of FD simple on either outcome. */
    int own = -1;
    if (fd >= 0) {
        own = dup(fd);
        close(fd);
        if (own < 0)
            goto fail;
    }
    dwfl_report_begin(r->dwfl);
    r->mod = dwfl_report_offline(r->dwfl, path, path, own);
    dwfl_report_end(r->dwfl, NULL, NULL);
    *why = "not a readable ELF file";
    if (!r->mod)
        goto fail;
    void **userdata;
    dwfl_module_info(r->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
    *userdata = r;
    debug_server_check_client(r->dwfl);
    Elf *elf = dwfl_module_getelf(r->mod, &r->bias);
    if (!elf)
        goto fail;
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
        *why = "not an executable or shared library";
        goto fail;
    }
    if (collect_segments(elf, &r->segs) != 0) {
        *why = "damaged or missing program headers";
        goto fail;
    }
    *why = NULL;
    return r;
fail:
    dwfl_reader_close(r);
    return NULL;
}

void dwfl_reader_close(struct dwfl_reader *r)
{
    if (!r)
        return;
    if (r->dwfl)
        dwfl_end(r->dwfl);
    free(r->segs.segments);
    free(r->syms);
    plt_symbols_free(&r->plt);
    fde_index_free(&r->fdes);
    for (size_t i = 0; i < r->ncu; i++)
        free(r->cu_ix[i].ranges);
    free(r->cu_ix);
    addr_table_free(&r->cus);
    free(r);
}

int dwfl_reader_fetch_error(const struct dwfl_reader *r)
{
    return r->fetch_error;
}

bool dwfl_reader_has_dwarf(struct dwfl_reader *r)
{
    if (r->has_dwarf < 0) {
        Dwarf_Addr b;
        r->has_dwarf = dwfl_module_getdwarf(r->mod, &b) != NULL;
    }
    return r->has_dwarf;
}

static const char *die_string(Dwarf_Die *die, unsigned int name)
{
    Dwarf_Attribute attr;
    /* _integrate follows DW_AT_abstract_origin and DW_AT_specification:
     * an inlined instance or an out-of-class method definition carries its
     * names on the declaration it points to. */
    return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

/* Function and mangled names of FRAME from a symbol or DWARF name.  A PLT
 * stub's name is its target's, demangled, with "@plt" after it. */
static void set_names(struct sym_frame *frame, const char *linkage, const char *plain,
                      struct strpool *pool)
{
    const char *raw = linkage && *linkage ? linkage : plain;
    size_t len = strlen(raw), slen = strlen(PLT_SUFFIX);
    bool stub = len > slen && strcmp(raw + len - slen, PLT_SUFFIX) == 0;
    char *target = stub ? xasprintf("%.*s", (int)(len - slen), raw) : NULL;
    char *readable = demangle(stub ? target : raw);
    frame->mangled = strpool_intern(pool, raw);
    if (readable && stub) {
        char *full = xasprintf("%s" PLT_SUFFIX, readable);
        frame->function = strpool_intern(pool, full);
        free(full);
    } else {
        frame->function = readable ? strpool_intern(pool, readable) : frame->mangled;
    }
    free(readable);
    free(target);
}

static bool set_die_names(struct sym_frame *frame, Dwarf_Die *die, struct strpool *pool)
{
    const char *linkage = die_string(die, DW_AT_linkage_name);
    if (!linkage)
        linkage = die_string(die, DW_AT_MIPS_linkage_name);
    const char *plain = die_string(die, DW_AT_name);
    if (!(linkage && *linkage) && !(plain && *plain))
        return false;
    set_names(frame, linkage, plain, pool);
    return true;
}

/* FILE as a path a user can open: a relative name in the line table is
 * relative to the compilation directory of its unit (as addr2line shows
 * it). */
static const char *source_path(Dwarf_Die *cu, const char *file, struct strpool *pool)
{
    if (!file || !*file)
        return "";
    Dwarf_Attribute attr;
    const char *dir =
        file[0] == '/' || !cu ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    if (!dir || !*dir)
        return strpool_intern(pool, file);
    char *full = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file);
    const char *out = strpool_intern(pool, full);
    free(full);
    return out;
}

/* The source position a function was inlined at: its caller's line. */
static void call_site(Dwarf_Die *inlined, const char **file, uint32_t *line, struct strpool *pool)
{
    *file = "";
    *line = 0;
    Dwarf_Attribute attr;
    Dwarf_Word v;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &v) == 0 && v <= UINT32_MAX)
        *line = (uint32_t)v;
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &v) == 0 &&
        dwarf_diecu(inlined, &cu, NULL, NULL) && dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 &&
        v < nfiles)
        *file = source_path(&cu, dwarf_filesrc(files, v, NULL, NULL), pool);
}

/* --- symbols ----------------------------------------------------------------- */

static bool is_code_symbol(const GElf_Sym *sym)
{
    int type = GELF_ST_TYPE(sym->st_info);
    return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

/* libdwfl picks the table (.symtab, the separate debug file's, .dynsym,
 * plus the MiniDebugInfo one); we sort its function symbols once. */
static void load_symbols(struct dwfl_reader *r)
{
    r->syms_loaded = true;
    int n = dwfl_module_getsymtab(r->mod);
    size_t cap = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(r->mod, i, &sym, &addr, &shndx, NULL, NULL);
        /* Undefined, absolute, or in a section not loaded: not code. */
        if (!name || !*name || !is_code_symbol(&sym) || shndx == SHN_UNDEF || shndx == SHN_ABS ||
            shndx == (GElf_Word)-1 || addr == 0)
            continue;
        /* Section and file names pose as NOTYPE labels in some tables. */
        if (GELF_ST_TYPE(sym.st_info) == STT_NOTYPE && GELF_ST_BIND(sym.st_info) == STB_LOCAL &&
            (name[0] == '.' || name[0] == '$'))
            continue;
        r->syms = xgrow(r->syms, &cap, r->nsyms + 1, sizeof(*r->syms));
        r->syms[r->nsyms++] = (struct symbol_alias){
            .addr = addr, .size = sym.st_size, .name = name, .rank = symbol_alias_rank(&sym)};
    }
    GElf_Addr bias;
    plt_symbols_read(dwfl_module_getelf(r->mod, &bias), &r->plt);
    for (size_t i = 0; i < r->plt.count; i++) {
        const struct plt_stub *st = &r->plt.stubs[i];
        r->syms = xgrow(r->syms, &cap, r->nsyms + 1, sizeof(*r->syms));
        r->syms[r->nsyms++] = (struct symbol_alias){
            .addr = st->addr + bias, .size = st->size, .name = st->name, .rank = PLT_RANK};
    }
    if (r->nsyms == 0)
        return;
    qsort(r->syms, r->nsyms, sizeof(*r->syms), symbol_alias_cmp);
    /* One entry per address: the best name, with a size if any alias has. */
    size_t kept = 0;
    for (size_t i = 0; i < r->nsyms; i++) {
        if (kept > 0 && r->syms[kept - 1].addr == r->syms[i].addr) {
            if (r->syms[kept - 1].size == 0)
                r->syms[kept - 1].size = r->syms[i].size;
            continue;
        }
        r->syms[kept++] = r->syms[i];
    }
    r->nsyms = kept;
}

/* The symbol containing ADDR: a sized one that holds it, or the nearest
 * unsized one below it (up to the next symbol); NULL otherwise. */
static const char *symbol_at(struct dwfl_reader *r, Dwarf_Addr addr)
{
    if (!r->syms_loaded)
        load_symbols(r);
    if (r->nsyms == 0 || addr < r->syms[0].addr)
        return NULL;
    size_t lo = 0, hi = r->nsyms;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->syms[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    const struct symbol_alias *near = &r->syms[lo];
    if (near->size == 0 || addr - near->addr < near->size)
        return near->name;
    for (size_t back = 1; back <= ENCLOSING_WALK && back <= lo; back++) {
        const struct symbol_alias *f = &r->syms[lo - back];
        if (f->size != 0 && addr - f->addr < f->size)
            return f->name;
    }
    return NULL;
}

/* --- DWARF functions and inline chains ------------------------------------- */

static void add_ranges(Dwarf_Die *die, struct cu_index *ix, size_t *cap)
{
    Dwarf_Addr base, start, end;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
        if (end <= start)
            continue;
        ix->ranges = xgrow(ix->ranges, cap, ix->count + 1, sizeof(*ix->ranges));
        ix->ranges[ix->count++] = (struct fn_range){start, end, *die};
    }
}

/* Concrete functions under PARENT: at the top of the unit, or inside
 * namespaces and classes (C++ may define them there). */
static void collect_functions(Dwarf_Die *parent, struct cu_index *ix, size_t *cap, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_NESTING || dwarf_child(parent, &child) != 0)
        return;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
        case DW_TAG_entry_point:
            add_ranges(&child, ix, cap);
            break;
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
            collect_functions(&child, ix, cap, depth + 1);
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *pa, const void *pb)
{
    const struct fn_range *a = pa, *b = pb;
    if (a->low != b->low)
        return a->low < b->low ? -1 : 1;
    /* The wider (enclosing) range first, so the walk back from the last
     * candidate meets the innermost first. */
    return a->high > b->high ? -1 : a->high < b->high;
}

static const struct cu_index *cu_functions(struct dwfl_reader *r, Dwarf_Die *cu)
{
    uint64_t key = dwarf_dieoffset(cu), v;
    if (addr_table_get(&r->cus, key, 0, &v))
        return &r->cu_ix[v];
    r->cu_ix = xgrow(r->cu_ix, &r->cu_cap, r->ncu + 1, sizeof(*r->cu_ix));
    struct cu_index *ix = &r->cu_ix[r->ncu];
    *ix = (struct cu_index){0};
    size_t cap = 0;
    collect_functions(cu, ix, &cap, 0);
    if (ix->count)
        qsort(ix->ranges, ix->count, sizeof(*ix->ranges), range_cmp);
    addr_table_put(&r->cus, key, 0, r->ncu);
    return &r->cu_ix[r->ncu++];
}

static bool has_pc_attrs(Dwarf_Die *die)
{
    return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* The child of PARENT (looking through blocks without addresses of their
 * own) that is an inlined instance or a block containing PC. */
static bool containing_child(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_NESTING || dwarf_child(parent, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
            tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
            continue;
        if (has_pc_attrs(&child)) {
            if (dwarf_haspc(&child, pc) == 1) {
                *out = child;
                return true;
            }
        } else if (tag != DW_TAG_inlined_subroutine &&
                   containing_child(&child, pc, out, depth + 1)) {
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* The function scopes holding ADDR, innermost first, ending with the
 * subprogram the code was compiled into; returns how many (0 without
 * DWARF for ADDR). */
static int function_scopes(struct dwfl_reader *r, Dwarf_Addr addr, Dwarf_Die *out, int max)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(r->mod, addr, &bias);
    if (!cu)
        return 0;
    Dwarf_Addr pc = addr - bias;
    const struct cu_index *ix = cu_functions(r, cu);
    size_t lo = 0, hi = ix->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->ranges[mid].low <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct fn_range *fn = NULL;
    for (size_t k = lo, walked = 0; k-- > 0 && walked < ENCLOSING_WALK; walked++) {
        if (pc < ix->ranges[k].high) {
            fn = &ix->ranges[k];
            break;
        }
    }
    if (!fn)
        return 0;
    /* Down from the function through the inlined instances holding PC:
     * the chain comes out outermost first. */
    Dwarf_Die chain[MAX_SCOPES];
    int n = 0;
    chain[n++] = fn->die;
    Dwarf_Die cur = fn->die, next;
    for (int depth = 0; depth < 4 * MAX_SCOPES && containing_child(&cur, pc, &next, 0); depth++) {
        if (dwarf_tag(&next) == DW_TAG_inlined_subroutine) {
            if (n == MAX_SCOPES)
                break;
            chain[n++] = next;
        }
        cur = next;
    }
    int count = n < max ? n : max;
    for (int i = 0; i < count; i++)
        out[i] = chain[n - 1 - i];
    return count;
}

/* --- functions without a name: their call frame information ----------------- */

/* The file offset of module address ADDR, through the PT_LOAD header whose
 * addresses hold it. */
static bool file_offset_of(const struct dwfl_reader *r, Dwarf_Addr addr, uint64_t *off)
{
    uint64_t vaddr = addr - r->bias;
    for (size_t i = 0; i < r->segs.nsegments; i++) {
        const struct elf_segment *seg = &r->segs.segments[i];
        if (vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->filesz) {
            *off = vaddr - seg->vaddr + seg->offset;
            return true;
        }
    }
    return false;
}

bool dwfl_reader_function_start(struct dwfl_reader *r, uint64_t file_offset, uint64_t *start)
{
    uint64_t vaddr, fn;
    if (elf_symtab_vaddr(&r->segs, file_offset, &vaddr) != 0)
        return false;
    if (!r->fdes_loaded) {
        r->fdes_loaded = true;
        GElf_Addr bias;
        fde_index_build(dwfl_module_getelf(r->mod, &bias), &r->fdes);
    }
    return fde_index_find(&r->fdes, vaddr, &fn) && file_offset_of(r, fn + r->bias, start);
}

size_t dwfl_reader_frames(struct dwfl_reader *r, uint64_t file_offset, struct strpool *pool,
                          struct sym_frame *out, size_t max)
{
    uint64_t vaddr;
    if (max == 0 || elf_symtab_vaddr(&r->segs, file_offset, &vaddr) != 0)
        return 0;
    Dwarf_Addr addr = vaddr + r->bias;

    const char *symname = symbol_at(r, addr);
    /* glibc's .symtab names versioned symbols "clock_gettime@@GLIBC_2.17":
     * the version is not part of the function's name. */
    const char *at = symname ? strchr(symname, '@') : NULL;
    if (at && at > symname && strcmp(at, PLT_SUFFIX) != 0)
        symname = strpool_intern_len(pool, symname, (size_t)(at - symname));

    Dwarf_Die scopes[MAX_SCOPES];
    int nscopes = dwfl_reader_has_dwarf(r) ? function_scopes(r, addr, scopes, MAX_SCOPES) : 0;

    /* The innermost frame's position is the line table's. */
    const char *file = "";
    uint32_t line = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(r->mod, addr);
    if (dl) {
        int lineno = 0;
        file =
            source_path(dwfl_linecu(dl), dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL), pool);
        line = lineno > 0 ? (uint32_t)lineno : 0;
    }

    size_t n = 0;
    bool outer_done = false;
    for (int k = 0; k < nscopes && n < max; k++) {
        Dwarf_Die *die = &scopes[k];
        bool inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
        struct sym_frame f = {.file = "", .inlined = inlined};
        bool named;
        if (!inlined && symname) {
            set_names(&f, symname, symname, pool);
            named = true;
        } else {
            named = set_die_names(&f, die, pool);
        }
        f.file = file;
        f.line = line;
        /* What called this frame's function is the next frame, at the
         * call site recorded on this inlined instance. */
        if (inlined)
            call_site(die, &file, &line, pool);
        if (named)
            out[n++] = f;
        if (!inlined)
            outer_done = true;
    }
    if (!outer_done && n < max && symname) {
        /* No DWARF (stripped, or a chain without its subprogram): the
         * symbol names the function. */
        struct sym_frame f = {.inlined = false};
        set_names(&f, symname, symname, pool);
        f.file = file;
        f.line = line;
        out[n++] = f;
    }
    if (n > 0)
        out[n - 1].inlined = false;
    return n;
}
