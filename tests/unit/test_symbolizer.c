/*
 * test_symbolizer.c - symbol/symbolizer.h against programs built with cc
 * and g++ at test time.
 *
 * Synthetic profiles (format/profile.h) map a test-built file the way the
 * kernel does (one map per PT_LOAD, with its file offset and the build-id
 * on the executable one), and the answers are compared with addr2line -f -i
 * on the same link-time addresses: PIE, non-PIE and a shared library;
 * stripped copies; separate debug info found by build-id under
 * $PTPROF_DEBUG_ROOT; C++ names against c++filt; rebuilt, missing and
 * garbage binaries; the persistent cache (reuse without the binary, a
 * corrupt file, two writers at once); and .pbin symbol tables, which answer
 * without opening any binary.
 *
 * Real recordings (build/ptprof record, $PTPROF_BUILD) check what only a
 * running program shows: inline frames of the inlines workload under both
 * callers, the [vdso] of clockloop, the library dlopener loads mid-run,
 * and the C++ workload tests/workloads/cxx/shapes.cpp.
 */
#include "format/load.h"
#include "model/profile.h"
#include "symbol/build_id.h"
#include "symbol/elf_symtab.h"
#include "symbol/symbolizer.h"
#include "util/xalloc.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PID 4242
#define PIE_BASE 0x555555554000ULL
#define LIB_BASE 0x7f0012340000ULL
#define PAGE 0x1000ULL

/* alpha and beta are plain functions, beta a static one (only in .symtab);
 * gamma has an always-inline helper, so its code has an inline chain. */
static const char prog_src[] =
    "#include <stdint.h>\n"
    "#define KEEP __attribute__((noinline, noclone))\n"
    "static volatile uint64_t sink;\n"
    "KEEP uint64_t alpha(uint64_t x)\n"
    "{\n"
    "    for (int i = 0; i < 100; i++) {\n"
    "        x = x * 6364136223846793005ULL + 1;\n"
    "        sink += x;\n"
    "    }\n"
    "    return x;\n"
    "}\n"
    "KEEP static uint64_t beta(uint64_t x)\n"
    "{\n"
    "    for (int i = 0; i < 50; i++)\n"
    "        sink ^= x + (uint64_t)i;\n"
    "    return sink;\n"
    "}\n"
    "static inline __attribute__((always_inline)) uint64_t helper(uint64_t x)\n"
    "{\n"
    "    for (int i = 0; i < 30; i++)\n"
    "        x = (x >> 3) ^ (x * 31);\n"
    "    return x;\n"
    "}\n"
    "KEEP uint64_t gamma_fn(uint64_t x)\n"
    "{\n"
    "    uint64_t y = helper(x);\n"
    "    sink += y;\n"
    "    return y + 1;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argv;\n"
    "    return (int)(alpha((uint64_t)argc) + beta(2) + gamma_fn(3));\n"
    "}\n";

static const char lib_src[] = "#define KEEP __attribute__((noinline, noclone))\n"
                              "static volatile int sink;\n"
                              "KEEP int lib_work(int n)\n"
                              "{\n"
                              "    for (int i = 0; i < n; i++)\n"
                              "        sink += i * n;\n"
                              "    return sink;\n"
                              "}\n"
                              "KEEP static int lib_hidden(int n)\n"
                              "{\n"
                              "    for (int i = 0; i < n; i++)\n"
                              "        sink ^= i;\n"
                              "    return sink;\n"
                              "}\n"
                              "int lib_entry(int n)\n"
                              "{\n"
                              "    return lib_hidden(n) + lib_work(n) + 1;\n"
                              "}\n";

static char *tmpdir;

/* --- helpers ------------------------------------------------------------- */

static void setup_env(void)
{
    tmpdir = test_mkdtemp();
    /* Nothing from this machine's debug files or caches, nothing from the
     * network. */
    char *root = xasprintf("%s/no-debug", tmpdir);
    mkdir(root, 0755);
    setenv("PTPROF_DEBUG_ROOT", root, 1);
    free(root);
    char *xdg = xasprintf("%s/xdg", tmpdir);
    setenv("XDG_CACHE_HOME", xdg, 1);
    free(xdg);
    unsetenv("DEBUGINFOD_URLS");
}

static void teardown_env(void)
{
    if (tmpdir)
        test_rmtree(tmpdir);
    free(tmpdir);
    tmpdir = NULL;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    cr_assert_geq(vasprintf(&cmd, fmt, ap), 0);
    va_end(ap);
    char *full = xasprintf("cd '%s' && %s", tmpdir, cmd);
    cr_assert_eq(system(full), 0, "command failed: %s", cmd);
    free(full);
    free(cmd);
}

static char *tmp_path(const char *name)
{
    return xasprintf("%s/%s", tmpdir, name);
}

static void write_file(const char *name, const void *data, size_t len)
{
    char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    free(path);
}

/* The program and library above, built in tmpdir. */
static void build_prog(const char *name, const char *flags)
{
    write_file("prog.c", prog_src, sizeof(prog_src) - 1);
    sh("cc -std=gnu11 -O2 -g %s -o %s prog.c", flags, name);
}

static void build_lib(const char *name)
{
    write_file("lib.c", lib_src, sizeof(lib_src) - 1);
    sh("cc -std=gnu11 -O2 -g -fPIC -shared -o %s lib.c", name);
}

/* Link-time address and size of function NAME in PATH. */
static void func_addr(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(path, &tab), 0, "%s unreadable", path);
    bool found = false;
    for (size_t i = 0; i < tab.count && !found; i++) {
        if (strcmp(tab.syms[i].name, name) == 0) {
            *addr = tab.syms[i].addr;
            *size = tab.syms[i].size;
            found = true;
        }
    }
    elf_symtab_free(&tab);
    cr_assert(found, "%s has no symbol %s", path, name);
}

static void add_map(struct profile *p, uint32_t pid, uint64_t start, uint64_t end, uint64_t off,
                    uint32_t perms, const char *path, const uint8_t *id, size_t idlen)
{
    p->maps = xrealloc(p->maps, (p->nmaps + 1) * sizeof(*p->maps));
    struct prof_map *m = &p->maps[p->nmaps++];
    memset(m, 0, sizeof(*m));
    m->pid = pid;
    m->start = start;
    m->end = end;
    m->offset = off;
    m->perms = perms;
    m->inode = 1234;
    m->path = xstrdup(path);
    m->build_id_len = (uint8_t)idlen;
    if (idlen)
        memcpy(m->build_id, id, idlen);
}

/*
 * Maps LAYOUT_FILE into PID as the kernel does (one map per PT_LOAD, page
 * granular, with its file offset), under the recorded name PATH, at BASE
 * when it is position independent.  The build-id of ID_FILE (NULL: none)
 * goes on the executable mapping, as the recorder writes it.  Returns the
 * load bias: pc = bias + link-time address.
 */
static uint64_t map_file(struct profile *p, uint32_t pid, const char *layout_file, const char *path,
                         const char *id_file, uint64_t base)
{
    uint8_t id[PROF_BUILD_ID_MAX];
    int idlen = id_file ? build_id_read(id_file, id, sizeof(id)) : 0;
    cr_assert_geq(idlen, 0, "%s has no readable build-id", id_file);
    elf_version(EV_CURRENT);
    int fd = open(layout_file, O_RDONLY);
    cr_assert_geq(fd, 0, "%s missing", layout_file);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    cr_assert(elf && gelf_getehdr(elf, &eh), "%s is not ELF", layout_file);
    uint64_t bias = eh.e_type == ET_DYN ? base : 0;
    size_t n;
    cr_assert_eq(elf_getphdrnum(elf, &n), 0);
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        cr_assert(gelf_getphdr(elf, (int)i, &ph));
        if (ph.p_type != PT_LOAD)
            continue;
        uint64_t start = bias + (ph.p_vaddr & ~(PAGE - 1));
        uint64_t end = bias + ((ph.p_vaddr + ph.p_memsz + PAGE - 1) & ~(PAGE - 1));
        bool exec = ph.p_flags & PF_X;
        add_map(p, pid, start, end, ph.p_offset & ~(PAGE - 1), exec ? 5 : 1, path, id,
                exec ? (size_t)idlen : 0);
    }
    elf_end(elf);
    close(fd);
    return bias;
}

struct a2l {
    char function[512];
    char file[1024];
    uint32_t line;
};

/* addr2line -f -i: the frames of ADDR in PATH, innermost first. */
static int addr2line(const char *path, uint64_t addr, struct a2l *out, int max)
{
    char *cmd = xasprintf("addr2line -f -i -e '%s' 0x%llx", path, (unsigned long long)addr);
    FILE *f = popen(cmd, "r");
    cr_assert(f, "%s", cmd);
    char fn[512], pos[1024];
    int n = 0;
    while (n < max && fgets(fn, sizeof(fn), f) && fgets(pos, sizeof(pos), f)) {
        fn[strcspn(fn, "\n")] = '\0';
        pos[strcspn(pos, "\n")] = '\0';
        char *disc = strstr(pos, " (discriminator");
        if (disc)
            *disc = '\0';
        char *colon = strrchr(pos, ':');
        cr_assert(colon, "addr2line said %s", pos);
        *colon = '\0';
        struct a2l *a = &out[n++];
        snprintf(a->function, sizeof(a->function), "%s", strcmp(fn, "??") ? fn : "");
        snprintf(a->file, sizeof(a->file), "%s", strcmp(pos, "??") ? pos : "");
        a->line = (uint32_t)strtoul(colon + 1, NULL, 10);
    }
    pclose(f);
    free(cmd);
    return n;
}

/* LOC must show what addr2line shows for ADDR in PATH. */
static void expect_addr2line(const struct sym_location *loc, const char *path, uint64_t addr)
{
    struct a2l want[16];
    int n = addr2line(path, addr, want, 16);
    cr_assert_gt(n, 0);
    cr_assert_eq(loc->nframes, (uint32_t)n, "0x%llx in %s: %u frames, addr2line %d (%s)",
                 (unsigned long long)addr, path, loc->nframes, n, loc->frames[0].function);
    for (int i = 0; i < n; i++) {
        const struct sym_frame *f = &loc->frames[i];
        cr_expect_str_eq(f->function, want[i].function, "0x%llx frame %d: %s, addr2line %s",
                         (unsigned long long)addr, i, f->function, want[i].function);
        cr_expect_str_eq(f->file, want[i].file, "0x%llx frame %d: %s, addr2line %s",
                         (unsigned long long)addr, i, f->file, want[i].file);
        cr_expect_eq(f->line, want[i].line, "0x%llx frame %d: line %u, addr2line %u",
                     (unsigned long long)addr, i, f->line, want[i].line);
        cr_expect_eq(f->inlined, i < n - 1, "0x%llx frame %d", (unsigned long long)addr, i);
    }
}

/* Every 4th byte of function NAME (and its first and last), looked up
 * directly and as a return address one byte further. */
static void check_function(struct symbolizer *s, const char *file, const char *name, uint64_t bias,
                           const char *binary)
{
    uint64_t addr, size;
    func_addr(file, name, &addr, &size);
    cr_assert_gt(size, 0);
    for (uint64_t d = 0; d < size; d += (d + 4 < size ? 4 : (d + 1 < size ? size - 1 - d : 1))) {
        const struct sym_location *loc = symbolizer_resolve(s, PID, 10, bias + addr + d, false);
        cr_assert_str_eq(loc->frames[loc->nframes - 1].binary, binary);
        cr_assert_str_eq(loc->frames[0].path, file);
        expect_addr2line(loc, file, addr + d);
        const struct sym_location *ra = symbolizer_resolve(s, PID, 10, bias + addr + d + 1, true);
        expect_addr2line(ra, file, addr + d);
    }
}

/* Standard error of the enclosed calls, into a file. */
static int capture_begin(void)
{
    fflush(stderr);
    int saved = dup(2);
    char *path = tmp_path("stderr.txt");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    free(path);
    cr_assert_geq(fd, 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static char *capture_end(int saved)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *path = tmp_path("stderr.txt");
    char *text = test_read_file(path, NULL);
    free(path);
    return text ? text : xstrdup("");
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static struct symbolizer *new_symbolizer(const struct profile *p, bool cache)
{
    struct symbolizer_options o = {.cache = cache};
    return symbolizer_new(p, &o);
}

/* PC's offset in its file, by the maps of the synthetic profile. */
static uint64_t file_offset(const struct profile *p, uint32_t pid, uint64_t pc)
{
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && pc >= m->start && pc < m->end)
            return pc - m->start + m->offset;
    }
    cr_assert_fail("0x%llx is not mapped", (unsigned long long)pc);
    return 0;
}

static void expect_unnamed(const struct sym_location *loc, const char *binary, uint64_t offset)
{
    char want[256];
    snprintf(want, sizeof(want), "%s+0x%llx", binary, (unsigned long long)offset);
    cr_assert_eq(loc->nframes, 1);
    cr_expect_eq(loc->offset, offset);
    cr_expect_str_eq(loc->frames[0].binary, binary);
    cr_expect_str_eq(loc->frames[0].function, want);
    cr_expect_str_eq(loc->frames[0].mangled, "");
    cr_expect_str_eq(loc->frames[0].file, "");
    cr_expect_eq(loc->frames[0].line, 0);
}

/* --- PIE, non-PIE, shared library, stripped ------------------------------- */

TestSuite(symbolizer, .init = setup_env, .fini = teardown_env, .timeout = 120);

Test(symbolizer, pie_executable_matches_addr2line)
{
    build_prog("pie", "-fPIE -pie");
    char *bin = tmp_path("pie");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    cr_assert_eq(bias, PIE_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);
    check_function(s, bin, "alpha", bias, "pie");
    check_function(s, bin, "beta", bias, "pie");
    check_function(s, bin, "gamma_fn", bias, "pie");
    check_function(s, bin, "main", bias, "pie");
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

Test(symbolizer, non_pie_executable_matches_addr2line)
{
    build_prog("nopie", "-fno-pie -no-pie");
    char *bin = tmp_path("nopie");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    cr_assert_eq(bias, 0, "a non-PIE executable is loaded where it was linked");
    struct symbolizer *s = new_symbolizer(&p, false);
    check_function(s, bin, "alpha", bias, "nopie");
    check_function(s, bin, "gamma_fn", bias, "nopie");
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

Test(symbolizer, shared_library_matches_addr2line)
{
    build_prog("pie", "-fPIE -pie");
    build_lib("libwork.so");
    char *bin = tmp_path("pie"), *lib = tmp_path("libwork.so");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    uint64_t lbias = map_file(&p, PID, lib, lib, lib, LIB_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);
    check_function(s, lib, "lib_work", lbias, "libwork.so");
    check_function(s, lib, "lib_hidden", lbias, "libwork.so");
    check_function(s, bin, "alpha", bias, "pie");
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
    free(lib);
}

Test(symbolizer, stripped_files_keep_their_symbol_names)
{
    build_prog("pie", "-fPIE -pie");
    build_lib("libwork.so");
    sh("strip --strip-debug -o pie-nodebug pie && strip --strip-all -o libwork-stripped.so "
       "libwork.so");
    char *bin = tmp_path("pie-nodebug"), *lib = tmp_path("libwork-stripped.so");
    char *orig_lib = tmp_path("libwork.so");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    uint64_t lbias = map_file(&p, PID, lib, lib, lib, LIB_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);

    /* .symtab without DWARF: names, no lines. */
    const char *names[] = {"alpha", "beta", "gamma_fn"};
    for (size_t i = 0; i < 3; i++) {
        uint64_t addr, size;
        func_addr(bin, names[i], &addr, &size);
        const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 2, false);
        cr_assert_eq(loc->nframes, 1, "%s: no DWARF, no inline chain", names[i]);
        cr_expect_str_eq(loc->frames[0].function, names[i]);
        cr_expect_str_eq(loc->frames[0].file, "");
        cr_expect_eq(loc->frames[0].line, 0);
    }
    /* .dynsym only: the exported function keeps its name; the static one
     * has none left, and gets no wrong one. */
    uint64_t addr, size;
    func_addr(orig_lib, "lib_work", &addr, &size);
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, lbias + addr + 3, false);
    cr_assert_eq(loc->nframes, 1);
    cr_expect_str_eq(loc->frames[0].function, "lib_work");
    cr_expect_str_eq(loc->frames[0].binary, "libwork-stripped.so");
    cr_expect_str_eq(loc->frames[0].file, "");
    func_addr(orig_lib, "lib_hidden", &addr, &size);
    loc = symbolizer_resolve(s, PID, 1, lbias + addr + 3, false);
    cr_assert_eq(loc->nframes, 1);
    cr_expect(strncmp(loc->frames[0].function, "libwork-stripped.so+0x", 22) == 0,
              "a static function of a stripped library: %s", loc->frames[0].function);
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
    free(lib);
    free(orig_lib);
}

Test(symbolizer, separate_debug_info_by_build_id)
{
    build_prog("pie", "-fPIE -pie");
    sh("cp pie pie-orig && objcopy --only-keep-debug pie pie.debug && strip --strip-all pie");
    char *bin = tmp_path("pie"), *orig = tmp_path("pie-orig");
    uint8_t id[PROF_BUILD_ID_MAX];
    int idlen = build_id_read(bin, id, sizeof(id));
    cr_assert_gt(idlen, 1);
    char hex[2 * PROF_BUILD_ID_MAX + 1];
    build_id_hex(id, (size_t)idlen, hex);
    sh("mkdir -p debugroot/.build-id/%.2s && mv pie.debug debugroot/.build-id/%.2s/%s.debug", hex,
       hex, hex + 2);
    char *root = tmp_path("debugroot");
    setenv("PTPROF_DEBUG_ROOT", root, 1);

    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);
    const char *names[] = {"alpha", "beta", "gamma_fn"};
    for (size_t i = 0; i < 3; i++) {
        uint64_t addr, size;
        func_addr(orig, names[i], &addr, &size);
        for (uint64_t d = 0; d < size; d += 7) {
            const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + d, false);
            cr_assert_str_eq(loc->frames[loc->nframes - 1].binary, "pie");
            expect_addr2line(loc, orig, addr + d);
        }
    }
    symbolizer_free(s);
    profile_free(&p);

    /* The binary gone: a debug file alone cannot place file offsets (its
     * PT_LOAD headers have lost them), so the frame is unnamed, not wrong. */
    cr_assert_eq(unlink(bin), 0);
    profile_init(&p);
    bias = map_file(&p, PID, orig, bin, orig, PIE_BASE);
    s = new_symbolizer(&p, false);
    uint64_t addr, size;
    func_addr(orig, "alpha", &addr, &size);
    int saved = capture_begin();
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 4, false);
    free(capture_end(saved));
    expect_unnamed(loc, "pie", file_offset(&p, PID, bias + addr + 4));
    symbolizer_free(s);
    profile_free(&p);
    free(root);
    free(bin);
    free(orig);
}

/* Overwrites the contents of section NAME of PATH with bytes from SEED. */
static bool scramble_section(const char *path, const char *name, unsigned seed)
{
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    cr_assert(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
    uint64_t off = 0, size = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (n && strcmp(n, name) == 0 && sh.sh_type != SHT_NOBITS) {
            off = sh.sh_offset;
            size = sh.sh_size;
        }
    }
    elf_end(elf);
    srand(seed);
    for (uint64_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)rand();
        cr_assert_eq(pwrite(fd, &c, 1, (off_t)(off + i)), 1);
    }
    close(fd);
    return size > 0;
}

Test(symbolizer, garbage_dwarf_never_crashes)
{
    build_prog("prog", "-fPIE -pie");
    char *bin = tmp_path("prog"), *orig = tmp_path("orig");
    sh("cp prog orig");
    static const char *const sections[] = {".debug_info", ".debug_abbrev", ".debug_line",
                                           ".debug_str", ".debug_rnglists"};
    const char *names[] = {"alpha", "beta", "gamma_fn", "main"};
    for (unsigned seed = 1; seed <= 6; seed++) {
        sh("cp orig prog");
        /* One section at a time, then all of them. */
        for (size_t k = 0; k < 5; k++)
            if (seed == 6 || k == seed - 1)
                scramble_section(bin, sections[k], seed * 31 + (unsigned)k);
        struct profile p;
        profile_init(&p);
        uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
        int saved = capture_begin();
        struct symbolizer *s = new_symbolizer(&p, false);
        for (size_t i = 0; i < 4; i++) {
            uint64_t addr, size;
            func_addr(orig, names[i], &addr, &size);
            for (uint64_t d = 0; d < size; d += 3) {
                const struct sym_location *loc =
                    symbolizer_resolve(s, PID, 1, bias + addr + d, d & 1);
                /* The symbol table is intact: the function keeps its name
                 * whatever the DWARF says. */
                cr_assert_geq(loc->nframes, 1);
                cr_expect_str_eq(loc->frames[loc->nframes - 1].function, names[i],
                                 "seed %u: %s+%llu named %s", seed, names[i], (unsigned long long)d,
                                 loc->frames[loc->nframes - 1].function);
            }
        }
        symbolizer_free(s);
        free(capture_end(saved));
        profile_free(&p);
    }
    free(bin);
    free(orig);
}

/* --- unreadable binaries --------------------------------------------------- */

Test(symbolizer, rebuilt_binary_is_not_misread)
{
    build_prog("prog", "-fPIE -pie");
    char *bin = tmp_path("prog"), *keep = tmp_path("prog-v1");
    sh("cp prog prog-v1");
    uint64_t addr, size;
    func_addr(bin, "alpha", &addr, &size);
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, keep, bin, keep, PIE_BASE);
    /* Rebuilt with more code in front: alpha's old address is in
     * something else now. */
    static const char extra[] = "int pad_fn(int x) { int s = 0; for (int i = 0; i < x; i++) "
                                "s += i * x ^ (s >> 3); return s; }\n";
    char *src = xasprintf("%s%s", extra, prog_src);
    write_file("prog2.c", src, strlen(src));
    free(src);
    sh("cc -std=gnu11 -O0 -g -fPIE -pie -o prog prog2.c");

    int saved = capture_begin();
    struct symbolizer *s = new_symbolizer(&p, false);
    for (int k = 0; k < 3; k++) {
        uint64_t pc = bias + addr + (uint64_t)k * 4;
        const struct sym_location *loc = symbolizer_resolve(s, PID, 1, pc, false);
        expect_unnamed(loc, "prog", file_offset(&p, PID, pc));
    }
    symbolizer_free(s);
    char *err = capture_end(saved);
    cr_expect_eq(count_of(err, bin), 1, "one warning for the rebuilt binary:\n%s", err);
    cr_expect(strstr(err, "build-id"), "the warning says why:\n%s", err);
    free(err);
    profile_free(&p);
    free(bin);
    free(keep);
}

Test(symbolizer, missing_and_garbage_binaries)
{
    build_prog("prog", "-fPIE -pie");
    char *bin = tmp_path("prog");
    char *gone = xasprintf("%s/gone/prog", tmpdir);
    char *garbage = tmp_path("garbage.so");
    unsigned char junk[8192];
    srand(7);
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (unsigned char)rand();
    write_file("garbage.so", junk, sizeof(junk));

    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, gone, bin, PIE_BASE);
    uint64_t gbias = map_file(&p, PID, bin, garbage, NULL, LIB_BASE);
    uint64_t addr, size;
    func_addr(bin, "alpha", &addr, &size);

    int saved = capture_begin();
    struct symbolizer *s = new_symbolizer(&p, false);
    symbolizer_prepare(s);
    for (int k = 0; k < 4; k++) {
        uint64_t pc = bias + addr + (uint64_t)k;
        expect_unnamed(symbolizer_resolve(s, PID, 1, pc, k & 1), "prog", file_offset(&p, PID, pc));
        pc = gbias + addr + (uint64_t)k;
        expect_unnamed(symbolizer_resolve(s, PID, 1, pc, k & 1), "garbage.so",
                       file_offset(&p, PID, pc));
    }
    /* Outside every map. */
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, 0x10, false);
    cr_assert_eq(loc->nframes, 1);
    cr_expect_str_eq(loc->frames[0].binary, "[unmapped]");
    cr_expect_str_eq(loc->frames[0].function, "[unmapped]");
    loc = symbolizer_resolve(s, PID + 1, 1, bias + addr, false);
    cr_expect_str_eq(loc->frames[0].function, "[unmapped]", "maps belong to their process");
    symbolizer_free(s);
    char *err = capture_end(saved);
    cr_expect_eq(count_of(err, gone), 1, "one warning for the missing binary:\n%s", err);
    cr_expect_eq(count_of(err, garbage), 1, "one warning for the garbage file:\n%s", err);
    free(err);
    profile_free(&p);
    free(bin);
    free(gone);
    free(garbage);
}

Test(symbolizer, search_dirs_find_moved_binaries)
{
    build_prog("prog", "-fPIE -pie");
    sh("mkdir -p moved && mv prog moved/prog && cp moved/prog layout");
    char *layout = tmp_path("layout"), *moved = tmp_path("moved");
    /* The original raw format records base names only. */
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, layout, "prog", NULL, PIE_BASE);
    uint64_t addr, size;
    func_addr(layout, "alpha", &addr, &size);
    const char *dirs[] = {moved};
    struct symbolizer_options o = {.search_dirs = dirs, .nsearch_dirs = 1};
    struct symbolizer *s = symbolizer_new(&p, &o);
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 1, false);
    cr_assert_str_eq(loc->frames[0].function, "alpha");
    char *want = xasprintf("%s/prog", moved);
    cr_expect_str_eq(loc->frames[0].path, want);
    free(want);
    symbolizer_free(s);
    profile_free(&p);
    free(layout);
    free(moved);
}

/* --- C++ ------------------------------------------------------------------- */

static char *cxx_source(void)
{
    /* tests/unit/test_symbolizer.c -> tests/workloads/cxx/shapes.cpp, from
     * the repository root (where the tests run) or next to the build. */
    const char *cut = strstr(__FILE__, "unit/test_symbolizer.c");
    cr_assert(cut, "unexpected __FILE__ %s", __FILE__);
    char *rel = xasprintf("%.*sworkloads/cxx/shapes.cpp", (int)(cut - __FILE__), __FILE__);
    if (access(rel, R_OK) == 0)
        return rel;
    char *alt = build_path("../tests/workloads/cxx/shapes.cpp");
    free(rel);
    cr_assert(access(alt, R_OK) == 0, "cannot find tests/workloads/cxx/shapes.cpp");
    return alt;
}

/* shapes.cpp built in tmpdir as "shapes". */
static void build_cxx(void)
{
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof(cwd)));
    char *src = cxx_source();
    char *abs_src = src[0] == '/' ? xstrdup(src) : xasprintf("%s/%s", cwd, src);
    sh("g++ -O2 -g -o shapes '%s'", abs_src);
    free(src);
    free(abs_src);
}

static char *cxxfilt(const char *mangled)
{
    char *cmd = xasprintf("c++filt '%s'", mangled);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    char line[1024] = "";
    cr_assert(fgets(line, sizeof(line), f));
    pclose(f);
    free(cmd);
    line[strcspn(line, "\n")] = '\0';
    return xstrdup(line);
}

Test(symbolizer, cxx_names_are_demangled)
{
    build_cxx();
    char *bin = tmp_path("shapes");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);

    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(bin, &tab), 0);
    int checked = 0;
    bool method = false, scale_int = false, scale_double = false, templ = false, virt = false;
    for (size_t i = 0; i < tab.count; i++) {
        const struct elf_symbol *sym = &tab.syms[i];
        if (strncmp(sym->name, "_ZN3geo", 7) != 0 && strncmp(sym->name, "_ZNK3geo", 8) != 0)
            continue;
        const struct sym_location *loc =
            symbolizer_resolve(s, PID, 1, bias + sym->addr + sym->size / 2, false);
        const struct sym_frame *outer = &loc->frames[loc->nframes - 1];
        char *want = cxxfilt(sym->name);
        cr_expect_str_eq(outer->function, want);
        cr_expect_str_eq(outer->mangled, sym->name);
        method |= strcmp(outer->function, "geo::detail::Klass::method(int)") == 0;
        scale_int |= strcmp(outer->function, "geo::scale(int)") == 0;
        scale_double |= strcmp(outer->function, "geo::scale(double)") == 0;
        templ |= strstr(outer->function, "geo::accumulate<double>(") != NULL;
        virt |= strcmp(outer->function, "geo::Square::area(int) const") == 0;
        free(want);
        checked++;
    }
    elf_symtab_free(&tab);
    cr_expect(method && scale_int && scale_double && templ && virt,
              "method %d, scale(int) %d, scale(double) %d, template %d, virtual %d", method,
              scale_int, scale_double, templ, virt);
    cr_expect_geq(checked, 5);
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

/* --- recordings ------------------------------------------------------------ */

/* Records ARGV (a NULL-terminated command) with -g MODE into tmpdir/NAME
 * and loads it. */
static void record(const char *name, const char *mode, const char *const *argv, struct profile *out)
{
    char *ptprof = build_ptprof();
    if (access(ptprof, X_OK) != 0)
        cr_skip_test("no ptprof binary at %s (set PTPROF_BUILD, run make)", ptprof);
    char *path = tmp_path(name);
    const char *args[16] = {ptprof, "record", "-g", mode, "-o", path, "--"};
    size_t n = 7;
    for (size_t i = 0; argv[i] && n < 15; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    struct spawn_opts o = {.argv = args, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record %s: %s\n%s", argv[0],
                 spawn_status_text(res.status), res.err);
    spawn_result_free(&res);
    cr_assert_eq(profile_load(path, out), 0, "cannot load %s", path);
    free(path);
    free(ptprof);
}

static char *workload(const char *name)
{
    char *w = build_workload(name);
    if (access(w, X_OK) != 0)
        cr_skip_test("no workload %s (run make workloads)", w);
    return w;
}

Test(symbolizer, inline_frames_under_both_callers)
{
    char *w = workload("inlines");
    const char *argv[] = {w, "1", NULL};
    struct profile p;
    record("inlines.ptp", "dwarf", argv, &p);
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(w, &tab), 0);
    struct symbolizer *s = new_symbolizer(&p, false);
    symbolizer_prepare(s);
    int total = 0, under[2] = {0, 0}, compared = 0;
    uint32_t call_line[2] = {0, 0};
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *smp = &p.samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            const struct sym_location *loc =
                symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            total++;
            if (loc->nframes < 2 || strcmp(loc->frames[0].function, "mix") != 0)
                continue;
            const struct sym_frame *in = &loc->frames[0], *caller = &loc->frames[1];
            cr_assert(in->inlined, "mix is an inlined frame");
            cr_assert(!caller->inlined);
            int c = strcmp(caller->function, "caller_a") == 0   ? 0
                    : strcmp(caller->function, "caller_b") == 0 ? 1
                                                                : -1;
            cr_assert_geq(c, 0, "mix inlined into %s", caller->function);
            under[c]++;
            /* mix's own lines are not its caller's line. */
            cr_expect_neq(in->line, caller->line);
            cr_expect(strstr(in->file, "inlines.c") && strstr(caller->file, "inlines.c"));
            /* One call site per caller. */
            if (call_line[c] == 0)
                call_line[c] = caller->line;
            cr_expect_eq(caller->line, call_line[c], "%s calls mix from one line",
                         caller->function);
            /* And exactly what addr2line says, for a few samples. */
            if (compared < 40) {
                uint64_t vaddr;
                cr_assert_eq(elf_symtab_vaddr(&tab, loc->offset, &vaddr), 0);
                expect_addr2line(loc, w, vaddr);
                compared++;
            }
        }
    }
    cr_log_info("inlines: %d samples, mix under caller_a %d, under caller_b %d", total, under[0],
                under[1]);
    cr_expect_gt(under[0], total / 10, "mix under caller_a in %d of %d samples", under[0], total);
    cr_expect_gt(under[1], total / 10, "mix under caller_b in %d of %d samples", under[1], total);
    cr_expect_neq(call_line[0], call_line[1], "each caller has its own call site");
    elf_symtab_free(&tab);
    symbolizer_free(s);
    profile_free(&p);
    free(w);
}

static bool clock_in_vdso(void)
{
    char *cs =
        test_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL);
    bool ok = cs && (strncmp(cs, "tsc", 3) == 0 || strncmp(cs, "kvm-clock", 9) == 0 ||
                     strncmp(cs, "arch_sys_counter", 16) == 0);
    free(cs);
    return ok;
}

static bool is_clock_gettime(const char *function)
{
    return strcmp(function, "__vdso_clock_gettime") == 0 || strcmp(function, "clock_gettime") == 0;
}

/* Whether TH (a sample of SMP in P) is in code of the [vdso] that no
 * symbol covers, called from clock_gettime: its stack's first caller. */
static bool helper_of_clock_gettime(struct symbolizer *s, const struct profile *p,
                                    const struct prof_sample *smp,
                                    const struct prof_thread_sample *th)
{
    const struct sym_location *leaf = symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
    if (strncmp(leaf->frames[leaf->nframes - 1].function, "[vdso]+", 7) != 0 ||
        th->stack >= p->nstacks)
        return false;
    const struct prof_stack *st = &p->stacks[th->stack];
    uint32_t caller = st->depth > 0 && st->pcs[0] == th->pc ? 1 : 0;
    if (caller >= st->depth)
        return false;
    const struct sym_location *loc =
        symbolizer_resolve(s, th->pid, smp->time_ns, st->pcs[caller], true);
    return is_clock_gettime(loc->frames[loc->nframes - 1].function);
}

Test(symbolizer, vdso_samples_name_clock_gettime)
{
    char *w = workload("clockloop");
    const char *argv[] = {w, "0.5", NULL};
    struct profile p;
    record("clock.ptp", "dwarf", argv, &p);
    cr_assert_gt(p.nimages, 0, "the recorder captured the [vdso]");
    struct symbolizer *s = new_symbolizer(&p, false);
    int total = 0, vdso = 0, named = 0, helped = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *smp = &p.samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            const struct sym_location *loc =
                symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            total++;
            const struct sym_frame *outer = &loc->frames[loc->nframes - 1];
            if (strcmp(outer->binary, "[vdso]") != 0)
                continue;
            vdso++;
            if (is_clock_gettime(outer->function))
                named++;
            else if (helper_of_clock_gettime(s, &p, smp, th))
                helped++;
            else
                cr_log_warn("[vdso] sample named %s", outer->function);
        }
    }
    cr_log_info("clockloop: %d samples, %d in [vdso], %d named clock_gettime, %d in a helper it "
                "called",
                total, vdso, named, helped);
    if (vdso == 0 && !clock_in_vdso())
        cr_skip_test("this machine's clock source does not run in the vDSO");
    cr_expect_gt(vdso, total / 3, "%d of %d samples in [vdso]", vdso, total);
    /* Kernels that keep a helper out of line (6.18's vread_pvclock for
     * kvm-clock) have samples there, which the [vdso]'s exported symbols do
     * not name: the stack says clock_gettime called it. */
    cr_expect_geq(10 * (named + helped), 9 * vdso,
                  "[vdso] samples in clock_gettime or a helper it called: %d and %d of %d", named,
                  helped, vdso);
    symbolizer_free(s);
    profile_free(&p);
    free(w);
}

Test(symbolizer, dlopened_library_resolves)
{
    char *w = workload("dlopener");
    char *lib = build_workload("libplugin.so");
    if (access(lib, R_OK) != 0)
        cr_skip_test("no %s (run make workloads)", lib);
    const char *argv[] = {w, lib, "0.3", "0.7", NULL};
    struct profile p;
    record("dlopen.ptp", "dwarf", argv, &p);
    struct symbolizer *s = new_symbolizer(&p, false);
    symbolizer_prepare(s);
    int total = 0, plugin = 0, hot = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *smp = &p.samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            const struct sym_location *loc =
                symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            total++;
            const struct sym_frame *outer = &loc->frames[loc->nframes - 1];
            if (strcmp(outer->binary, "libplugin.so") != 0)
                continue;
            plugin++;
            cr_expect(strncmp(outer->function, "libplugin.so+", 13) != 0, "plugin code unnamed: %s",
                      outer->function);
            if (strcmp(outer->function, "plugin_hot") == 0) {
                hot++;
                cr_expect(strstr(outer->file, "plugin.c"), "plugin_hot in %s", outer->file);
                cr_expect_str_eq(outer->path, lib);
            }
        }
    }
    cr_log_info("dlopener: %d samples, %d in libplugin.so, %d in plugin_hot", total, plugin, hot);
    cr_expect_gt(hot, total / 4, "%d of %d samples in plugin_hot", hot, total);
    symbolizer_free(s);
    profile_free(&p);
    free(w);
    free(lib);
}

Test(symbolizer, cxx_recording_names_the_method)
{
    build_cxx();
    char *bin = tmp_path("shapes");
    const char *argv[] = {bin, "0.5", NULL};
    struct profile p;
    record("shapes.ptp", "dwarf", argv, &p);
    struct symbolizer *s = new_symbolizer(&p, false);
    int total = 0, method = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        const struct prof_sample *smp = &p.samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            const struct sym_location *loc =
                symbolizer_resolve(s, th->pid, smp->time_ns, th->pc, false);
            const struct sym_frame *outer = &loc->frames[loc->nframes - 1];
            total++;
            if (strcmp(outer->function, "geo::detail::Klass::method(int)") == 0) {
                method++;
                cr_expect_str_eq(outer->mangled, "_ZN3geo6detail5Klass6methodEi");
                cr_expect(strstr(outer->file, "shapes.cpp"));
            }
        }
    }
    cr_expect_gt(method, total / 3, "%d of %d samples in Klass::method", method, total);
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

/* --- the persistent cache ---------------------------------------------------- */

static char *cache_file(const char *bin)
{
    uint8_t id[PROF_BUILD_ID_MAX];
    int n = build_id_read(bin, id, sizeof(id));
    cr_assert_gt(n, 0);
    char hex[2 * PROF_BUILD_ID_MAX + 1];
    build_id_hex(id, (size_t)n, hex);
    return xasprintf("%s/xdg/ptprof/%s.sym", tmpdir, hex);
}

/* Resolves alpha, beta and gamma_fn (+ DELTA) of the program recorded at
 * PATH; with EXPECT, checks the names. */
static void resolve_three(const char *layout, const char *path, bool cache, uint64_t delta,
                          bool expect)
{
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, layout, path, layout, PIE_BASE);
    struct symbolizer *s = new_symbolizer(&p, cache);
    const char *names[] = {"alpha", "beta", "gamma_fn"};
    for (size_t i = 0; i < 3; i++) {
        uint64_t addr, size;
        func_addr(layout, names[i], &addr, &size);
        const struct sym_location *loc =
            symbolizer_resolve(s, PID, 1, bias + addr + delta % size, false);
        if (expect)
            cr_expect_str_eq(loc->frames[loc->nframes - 1].function, names[i], "%s+%llu", names[i],
                             (unsigned long long)(delta % size));
    }
    symbolizer_free(s);
    profile_free(&p);
}

Test(symbolizer, cache_answers_without_the_binary)
{
    build_prog("prog", "-fPIE -pie");
    sh("cp prog layout");
    char *bin = tmp_path("prog"), *layout = tmp_path("layout");
    char *file = cache_file(bin);

    resolve_three(layout, bin, false, 1, true);
    cr_assert(!test_file_exists(file), "no cache file unless asked for");
    resolve_three(layout, bin, true, 1, true);
    cr_assert(test_file_exists(file), "%s written", file);

    /* The binary is gone, its build-id's cache file answers, silently. */
    cr_assert_eq(unlink(bin), 0);
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, layout, bin, layout, PIE_BASE);
    uint64_t addr, size;
    func_addr(layout, "gamma_fn", &addr, &size);
    int saved = capture_begin();
    struct symbolizer *s = new_symbolizer(&p, true);
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 1, false);
    char *err = capture_end(saved);
    cr_expect_str_eq(err, "", "no warning when the cache answers");
    free(err);
    saved = capture_begin();
    expect_addr2line(loc, layout, addr + 1);
    cr_expect_str_eq(loc->frames[0].path, bin, "the file that answered when the cache was made");
    /* What the cache does not hold needs the binary. */
    loc = symbolizer_resolve(s, PID, 1, bias + addr + 2, false);
    cr_expect(strncmp(loc->frames[0].function, "prog+0x", 7) == 0, "%s", loc->frames[0].function);
    symbolizer_free(s);
    profile_free(&p);
    free(file);
    free(bin);
    free(layout);
}

Test(symbolizer, corrupt_cache_is_ignored_and_rewritten)
{
    build_prog("prog", "-fPIE -pie");
    sh("cp prog layout");
    char *bin = tmp_path("prog"), *layout = tmp_path("layout");
    char *file = cache_file(bin);
    resolve_three(layout, bin, true, 5, true);
    size_t len;
    char *good = test_read_file(file, &len);
    cr_assert(good && len > 40);

    /* Cut short, then garbage with the right magic: both ignored, both
     * replaced by a valid file. */
    for (int round = 0; round < 2; round++) {
        FILE *f = fopen(file, "w");
        cr_assert(f);
        if (round == 0) {
            fwrite(good, 1, len / 2, f);
        } else {
            fwrite(good, 1, 8, f);
            for (int i = 0; i < 4000; i++)
                fputc((i * 7919) & 0xff, f);
        }
        fclose(f);
        resolve_three(layout, bin, true, 5, true);
        size_t now;
        char *text = test_read_file(file, &now);
        cr_expect_eq(now, len, "round %d: the file is rewritten whole", round);
        free(text);
    }
    free(good);
    cr_assert_eq(unlink(bin), 0);
    resolve_three(layout, bin, true, 5, true);
    free(file);
    free(bin);
    free(layout);
}

Test(symbolizer, cache_made_without_debug_info_yields_to_it)
{
    build_prog("pie", "-fPIE -pie");
    /* Not "pie.debug": libdwfl would find that next to the binary. */
    sh("cp pie orig && objcopy --only-keep-debug pie kept.dbg && strip --strip-debug pie");
    char *bin = tmp_path("pie"), *orig = tmp_path("orig");
    uint64_t addr, size;
    func_addr(orig, "alpha", &addr, &size);
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            /* The debug file is installed after a run cached names only. */
            uint8_t id[PROF_BUILD_ID_MAX];
            int idlen = build_id_read(bin, id, sizeof(id));
            char hex[2 * PROF_BUILD_ID_MAX + 1];
            build_id_hex(id, (size_t)idlen, hex);
            sh("mkdir -p debugroot/.build-id/%.2s && mv kept.dbg "
               "debugroot/.build-id/%.2s/%s.debug",
               hex, hex, hex + 2);
            char *root = tmp_path("debugroot");
            setenv("PTPROF_DEBUG_ROOT", root, 1);
            free(root);
        }
        struct profile p;
        profile_init(&p);
        uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
        struct symbolizer *s = new_symbolizer(&p, true);
        const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 3, false);
        cr_assert_str_eq(loc->frames[loc->nframes - 1].function, "alpha");
        if (round == 0)
            cr_expect_str_eq(loc->frames[0].file, "", "no DWARF yet");
        else
            expect_addr2line(loc, orig, addr + 3);
        symbolizer_free(s);
        profile_free(&p);
    }
    free(bin);
    free(orig);
}

Test(symbolizer, concurrent_cache_writers)
{
    build_prog("prog", "-fPIE -pie");
    sh("cp prog layout");
    char *bin = tmp_path("prog"), *layout = tmp_path("layout");
    char *file = cache_file(bin);
    enum { ROUNDS = 12 };
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        cr_assert_geq(kids[k], 0);
        if (kids[k] == 0) {
            /* Each writer adds its own offsets, run after run. */
            for (int r = 0; r < ROUNDS; r++)
                resolve_three(layout, bin, true, (uint64_t)(2 * r + k), false);
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int status;
        cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    cr_assert(test_file_exists(file));
    /* Without the binary, every offset either writer resolved is there. */
    cr_assert_eq(unlink(bin), 0);
    for (int r = 0; r < 2 * ROUNDS; r++)
        resolve_three(layout, bin, true, (uint64_t)r, true);
    free(file);
    free(bin);
    free(layout);
}

/* --- .pbin symbol tables ------------------------------------------------------ */

static struct prof_sym_frame table_frame(const char *fn, const char *file, uint32_t line,
                                         bool inlined)
{
    return (struct prof_sym_frame){.binary = xstrdup("prog"),
                                   .path = xstrdup("/elsewhere/prog"),
                                   .function = xstrdup(fn),
                                   .mangled = xstrdup(fn),
                                   .file = xstrdup(file),
                                   .line = line,
                                   .inlined = inlined};
}

Test(symbolizer, symbol_tables_answer_without_binaries)
{
    /* The maps name a real binary whose alpha is at the PC: an answer of
     * "alpha" would mean the binary was read instead of the table. */
    build_prog("prog", "-fPIE -pie");
    char *bin = tmp_path("prog");
    uint64_t addr, size;
    func_addr(bin, "alpha", &addr, &size);
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    map_file(&p, PID + 1, bin, "/nonexistent/prog", NULL, PIE_BASE);
    uint64_t pc = bias + addr + 2;
    p.locations = xcalloc(2, sizeof(*p.locations));
    p.nlocations = 2;
    p.locations[0] = (struct prof_location){
        .pid = PID, .pc = pc, .return_address = false, .offset = 0x1234, .nframes = 2};
    p.locations[0].frames = xcalloc(2, sizeof(struct prof_sym_frame));
    p.locations[0].frames[0] = table_frame("inner", "/src/a.c", 11, true);
    p.locations[0].frames[1] = table_frame("outer", "/src/b.c", 22, false);
    p.locations[1] = (struct prof_location){
        .pid = PID + 1, .pc = pc, .return_address = true, .offset = 0x99, .nframes = 1};
    p.locations[1].frames = xcalloc(1, sizeof(struct prof_sym_frame));
    p.locations[1].frames[0] = table_frame("caller", "/src/c.c", 33, false);

    int saved = capture_begin();
    struct symbolizer *s = new_symbolizer(&p, true);
    symbolizer_prepare(s);
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, pc, false);
    cr_assert_eq(loc->nframes, 2);
    cr_expect_eq(loc->offset, 0x1234);
    cr_expect_str_eq(loc->frames[0].function, "inner");
    cr_expect_str_eq(loc->frames[0].file, "/src/a.c");
    cr_expect_eq(loc->frames[0].line, 11);
    cr_expect(loc->frames[0].inlined);
    cr_expect_str_eq(loc->frames[1].function, "outer");
    cr_expect_str_eq(loc->frames[1].path, "/elsewhere/prog");
    cr_expect(!loc->frames[1].inlined);
    loc = symbolizer_resolve(s, PID + 1, 1, pc, true);
    cr_assert_eq(loc->nframes, 1);
    cr_expect_str_eq(loc->frames[0].function, "caller");
    /* Not in the table: named by the map alone, the binary unread. */
    loc = symbolizer_resolve(s, PID, 1, pc, true);
    expect_unnamed(loc, "prog", file_offset(&p, PID, pc));
    loc = symbolizer_resolve(s, PID + 1, 1, pc + 1, false);
    expect_unnamed(loc, "prog", file_offset(&p, PID + 1, pc + 1));
    symbolizer_free(s);
    char *err = capture_end(saved);
    cr_expect_str_eq(err, "", "nothing to read, nothing to warn about");
    free(err);
    char *xdg = xasprintf("%s/xdg/ptprof", tmpdir);
    cr_expect(!test_file_exists(xdg), "no cache written from a symbol table");
    free(xdg);
    profile_free(&p);
    free(bin);
}

/* --- PLT stubs and functions without a name -------------------------------- */

static const char plt_src[] = "#include <stdio.h>\n"
                              "#include <stdlib.h>\n"
                              "#include <string.h>\n"
                              "void (*volatile keep)(void *) = free;\n"
                              "int main(int argc, char **argv)\n"
                              "{\n"
                              "    char *p = malloc(64);\n"
                              "    strcpy(p, argv[0]);\n"
                              "    printf(\"%zu\\n\", strlen(p));\n"
                              "    free(p);\n"
                              "    return argc > 5 ? (int)(size_t)keep : 0;\n"
                              "}\n";

/* Every stub objdump names "NAME@plt" in BIN, resolved (its first byte,
 * one inside, and as a return address) as "NAME@plt"; returns how many. */
static int check_plt(struct symbolizer *s, const char *bin, uint64_t bias, const char *binary)
{
    char *cmd = xasprintf("objdump -d '%s'", bin);
    FILE *f = popen(cmd, "r");
    cr_assert(f, "%s", cmd);
    char line[1024];
    int checked = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long addr;
        char name[512];
        size_t len;
        /* Not "<free@plt-0x10>", the PLT header named after its neighbour. */
        if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2 || (len = strlen(name)) < 5 ||
            strcmp(name + len - 4, "@plt") != 0)
            continue;
        for (uint64_t d = 0; d < 3; d++) {
            const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + d, d == 2);
            cr_assert_eq(loc->nframes, 1);
            cr_expect_str_eq(loc->frames[0].function, name, "%s+0x%llx", bin, addr + d);
            cr_expect_str_eq(loc->frames[0].binary, binary);
        }
        checked++;
    }
    pclose(f);
    free(cmd);
    return checked;
}

Test(symbolizer, plt_stubs_are_named_as_objdump_names_them)
{
    write_file("plt.c", plt_src, sizeof(plt_src) - 1);
    /* Lazy .plt (+ .plt.got for free, whose address is taken), the IBT
     * layout (.plt.sec), bound at start-up, a non-PIE executable. */
    static const char *const builds[][2] = {
        {"plt-pie", "-fPIE -pie"},
        {"plt-ibt", "-fPIE -pie -fcf-protection=full -Wl,-z,ibtplt"},
        {"plt-now", "-fPIE -pie -Wl,-z,now"},
        {"plt-nopie", "-fno-pie -no-pie"},
    };
    for (size_t b = 0; b < sizeof(builds) / sizeof(builds[0]); b++) {
        sh("cc -std=gnu11 -O2 %s -o %s plt.c", builds[b][1], builds[b][0]);
        char *bin = tmp_path(builds[b][0]);
        struct profile p;
        profile_init(&p);
        uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
        struct symbolizer *s = new_symbolizer(&p, false);
        int n = check_plt(s, bin, bias, builds[b][0]);
        cr_expect_geq(n, 4, "%s: %d stubs (malloc, strcpy, printf, free...)", bin, n);
        /* free@plt: a stub both in .plt and, with -z ibtplt, in .plt.sec. */
        symbolizer_free(s);
        profile_free(&p);
        free(bin);
    }
    /* A shared library calls its own exported functions through its PLT. */
    build_lib("libwork.so");
    char *lib = tmp_path("libwork.so");
    struct profile p;
    profile_init(&p);
    uint64_t lbias = map_file(&p, PID, lib, lib, lib, LIB_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);
    check_plt(s, lib, lbias, "libwork.so");
    symbolizer_free(s);
    profile_free(&p);
    free(lib);
}

Test(symbolizer, cxx_plt_stubs_are_demangled)
{
    build_cxx();
    char *bin = tmp_path("shapes");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    struct symbolizer *s = new_symbolizer(&p, false);
    char *cmd = xasprintf("objdump -d '%s'", bin); /* names as the binary spells them */
    FILE *f = popen(cmd, "r");
    char line[1024];
    int checked = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long addr;
        char name[512];
        if (!strstr(line, "@plt>:") || sscanf(line, "%llx <_Z%500[^@>]@plt>:", &addr, name) != 2)
            continue;
        char *mangled = xasprintf("_Z%s", name), *want_fn = cxxfilt(mangled);
        char *want = xasprintf("%s@plt", want_fn);
        const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + 1, false);
        cr_expect_str_eq(loc->frames[0].function, want);
        char *raw = xasprintf("%s@plt", mangled);
        cr_expect_str_eq(loc->frames[0].mangled, raw);
        free(raw);
        free(want);
        free(want_fn);
        free(mangled);
        checked++;
    }
    if (f)
        pclose(f);
    cr_expect_gt(checked, 0, "shapes calls C++ library functions through its PLT");
    free(cmd);
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

/* Every byte of function NAME (of UNSTRIPPED) in the stripped copy mapped
 * at BIAS is named "BINARY+0x" the file offset of its first byte, as a PC
 * and as a return address; returns that name (allocated). */
static char *expect_grouped(struct symbolizer *s, const struct profile *p, const char *unstripped,
                            const char *name, uint64_t bias, const char *binary)
{
    uint64_t addr, size;
    func_addr(unstripped, name, &addr, &size);
    char *want =
        xasprintf("%s+0x%llx", binary, (unsigned long long)file_offset(p, PID, bias + addr));
    for (uint64_t d = 0; d < size; d += 3) {
        const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + addr + d, false);
        cr_assert_eq(loc->nframes, 1);
        cr_expect_str_eq(loc->frames[0].function, want, "%s+%llu", name, (unsigned long long)d);
        cr_expect_str_eq(loc->frames[0].mangled, "", "an unnamed function has no symbol");
        cr_expect_eq(loc->offset, file_offset(p, PID, bias + addr + d), "the PC's own offset");
        loc = symbolizer_resolve(s, PID, 1, bias + addr + d + 1, true);
        cr_expect_str_eq(loc->frames[0].function, want, "%s+%llu as a return address", name,
                         (unsigned long long)d);
    }
    return want;
}

Test(symbolizer, unnamed_functions_are_grouped_by_their_fde)
{
    build_prog("pie", "-fPIE -pie");
    build_lib("libwork.so");
    sh("strip --strip-all -o pie-stripped pie && strip --strip-all -o libwork-stripped.so "
       "libwork.so");
    char *orig = tmp_path("pie"), *bin = tmp_path("pie-stripped");
    char *orig_lib = tmp_path("libwork.so"), *lib = tmp_path("libwork-stripped.so");
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    uint64_t lbias = map_file(&p, PID, lib, lib, lib, LIB_BASE);
    struct symbolizer *s = new_symbolizer(&p, true);
    const char *fns[] = {"alpha", "beta", "gamma_fn", "main"};
    char *names[4];
    for (size_t i = 0; i < 4; i++) {
        names[i] = expect_grouped(s, &p, orig, fns[i], bias, "pie-stripped");
        for (size_t k = 0; k < i; k++)
            cr_expect_str_neq(names[i], names[k], "%s and %s", fns[i], fns[k]);
    }
    char *hidden = expect_grouped(s, &p, orig_lib, "lib_hidden", lbias, "libwork-stripped.so");
    symbolizer_free(s);
    /* The cache keeps the grouping: a second run without the binaries
     * answers the same. */
    sh("mv pie-stripped pie-gone && mv libwork-stripped.so libwork-gone.so");
    s = new_symbolizer(&p, true);
    for (size_t i = 0; i < 4; i++)
        free(expect_grouped(s, &p, orig, fns[i], bias, "pie-stripped"));
    symbolizer_free(s);
    for (size_t i = 0; i < 4; i++)
        free(names[i]);
    free(hidden);
    profile_free(&p);
    free(orig);
    free(bin);
    free(orig_lib);
    free(lib);
}

/* --- JIT code ------------------------------------------------------------------ */

static void add_jit_image(struct profile *p, uint32_t pid, const char *text)
{
    p->images = xrealloc(p->images, (p->nimages + 1) * sizeof(*p->images));
    p->images[p->nimages++] = (struct prof_image){.pid = pid,
                                                  .name = xstrdup("[perf-map]"),
                                                  .data = (uint8_t *)xstrdup(text),
                                                  .size = strlen(text)};
}

Test(symbolizer, jit_code_is_named_by_its_perf_map_and_elf_code_is_not)
{
    build_prog("pie", "-fPIE -pie");
    char *bin = tmp_path("pie");
    uint64_t addr, size;
    func_addr(bin, "alpha", &addr, &size);
    struct profile p;
    profile_init(&p);
    uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
    const uint64_t anon = 0x7f0000100000ull;
    add_map(&p, PID, anon, anon + 0x10000, 0, 5, "", NULL, 0);
    add_map(&p, PID + 1, anon, anon + 0x10000, 0, 5, "", NULL, 0);
    /* Two pieces overlap (the JIT reused memory: the later wins); one
     * names the binary's alpha, which is not the JIT's to name; one lies
     * where no map was read yet; a line is garbage. */
    char *text = xasprintf("%llx 100 JS:~old\n"
                           "%llx 40 JS:*hotLoop /app/hot.js:1:17\n"
                           "%llx %llx bogus-alpha\n"
                           "%llx 20 late_code\n"
                           "zz 10 garbage\n"
                           "%llx 0 empty\n",
                           (unsigned long long)anon, (unsigned long long)anon + 0x40,
                           (unsigned long long)(bias + addr), (unsigned long long)size,
                           (unsigned long long)0x7f0000900000ull, (unsigned long long)anon + 0x200);
    add_jit_image(&p, PID, text);
    add_jit_image(&p, PID + 1, "7f0000100000 80 other_process_fn\n");
    free(text);
    struct symbolizer *s = new_symbolizer(&p, false);
    const struct sym_location *loc = symbolizer_resolve(s, PID, 1, anon + 0x10, false);
    cr_assert_eq(loc->nframes, 1);
    cr_expect_str_eq(loc->frames[0].function, "JS:~old");
    cr_expect_str_eq(loc->frames[0].binary, "[jit]");
    loc = symbolizer_resolve(s, PID, 1, anon + 0x50, false);
    cr_expect_str_eq(loc->frames[0].function, "JS:*hotLoop /app/hot.js:1:17", "the later piece");
    /* A return address just past the piece names the call inside it. */
    loc = symbolizer_resolve(s, PID, 1, anon + 0x80, true);
    cr_expect_str_eq(loc->frames[0].function, "JS:*hotLoop /app/hot.js:1:17");
    loc = symbolizer_resolve(s, PID, 1, anon + 0x80, false);
    cr_expect_str_eq(loc->frames[0].function, "JS:~old");
    loc = symbolizer_resolve(s, PID, 1, anon + 0x100, false);
    cr_expect_str_eq(loc->frames[0].function, "[anon]+0x100", "past every piece: unnamed");
    loc = symbolizer_resolve(s, PID, 1, anon + 0x200, false);
    cr_expect_str_eq(loc->frames[0].function, "[anon]+0x200", "an empty piece names nothing");
    loc = symbolizer_resolve(s, PID, 1, 0x7f0000900008ull, false);
    cr_expect_str_eq(loc->frames[0].function, "late_code", "JIT code no map held yet");
    /* Each process has its own list, at the same addresses. */
    loc = symbolizer_resolve(s, PID + 1, 1, anon + 0x10, false);
    cr_expect_str_eq(loc->frames[0].function, "other_process_fn");
    /* ELF code is the ELF symbolizer's, whatever a JIT list says. */
    loc = symbolizer_resolve(s, PID, 1, bias + addr + 2, false);
    cr_expect_str_eq(loc->frames[loc->nframes - 1].function, "alpha");
    symbolizer_free(s);
    profile_free(&p);
    free(bin);
}

Test(symbolizer, garbage_unwind_tables_plt_and_jit_lists_never_crash)
{
    write_file("plt.c", plt_src, sizeof(plt_src) - 1);
    sh("cc -std=gnu11 -O2 -fPIE -pie -fcf-protection=full -Wl,-z,ibtplt -o orig plt.c && "
       "strip --strip-all -o stripped orig");
    char *bin = tmp_path("prog");
    static const char *const sections[] = {".eh_frame", ".eh_frame_hdr", ".rela.plt", ".plt",
                                           ".plt.sec",  ".rela.dyn",     ".dynsym"};
    const size_t nsec = sizeof(sections) / sizeof(sections[0]);
    for (unsigned seed = 1; seed <= nsec + 1; seed++) {
        sh("cp stripped prog");
        for (size_t k = 0; k < nsec; k++)
            if (seed == nsec + 1 || k == seed - 1)
                scramble_section(bin, sections[k], seed * 17 + (unsigned)k);
        struct profile p;
        profile_init(&p);
        uint64_t bias = map_file(&p, PID, bin, bin, bin, PIE_BASE);
        /* And a JIT list of random bytes; then every byte of the first
         * pages (headers, PLT, code) and of the JIT's memory. */
        unsigned char junk[512];
        srand(seed);
        for (size_t i = 0; i < sizeof(junk); i++)
            junk[i] = (unsigned char)(i % 7 == 0 ? '\n' : i % 5 == 0 ? ' ' : rand());
        p.images = xcalloc(1, sizeof(*p.images));
        p.nimages = 1;
        p.images[0] = (struct prof_image){.pid = PID,
                                          .name = xstrdup("[perf-map]"),
                                          .data = xmalloc(sizeof(junk)),
                                          .size = sizeof(junk)};
        memcpy(p.images[0].data, junk, sizeof(junk));
        add_map(&p, PID, 0x7f0000000000ull, 0x7f0000100000ull, 0, 5, "", NULL, 0);
        int saved = capture_begin();
        struct symbolizer *s = new_symbolizer(&p, false);
        for (uint64_t a = 0; a < 0x3000; a++) {
            const struct sym_location *loc = symbolizer_resolve(s, PID, 1, bias + a, a & 1);
            cr_assert_geq(loc->nframes, 1);
            cr_assert(loc->frames[0].function && loc->frames[0].function[0]);
        }
        for (uint64_t a = 0; a < 0x100000; a += 0x1001)
            cr_assert_geq(symbolizer_resolve(s, PID, 1, 0x7f0000000000ull + a, false)->nframes, 1);
        symbolizer_free(s);
        free(capture_end(saved));
        profile_free(&p);
    }
    free(bin);
}

Test(symbolizer, return_addresses_where_no_code_is_are_marked)
{
    struct profile p;
    profile_init(&p);
    add_map(&p, PID, 0x10000, 0x20000, 0, 3, "[heap]", NULL, 0);         /* rw- */
    add_map(&p, PID, 0x20000, 0x30000, 0, 3, "", NULL, 0);               /* rw- anonymous */
    add_map(&p, PID, 0x30000, 0x40000, 0, 5, "", NULL, 0);               /* r-x anonymous (JIT) */
    add_map(&p, PID, 0x40000, 0x50000, 0, 0, "/unknown/perms", NULL, 0); /* perms unknown */
    struct symbolizer *s = new_symbolizer(&p, false);
    cr_expect(symbolizer_resolve(s, PID, 1, 0x10100, true)->not_code, "the heap");
    cr_expect(symbolizer_resolve(s, PID, 1, 0x20100, true)->not_code, "data");
    cr_expect_not(symbolizer_resolve(s, PID, 1, 0x30100, true)->not_code, "code");
    cr_expect_not(symbolizer_resolve(s, PID, 1, 0x40100, true)->not_code, "maybe code");
    /* A sampled PC is where the thread was, whatever the memory. */
    cr_expect_not(symbolizer_resolve(s, PID, 1, 0x10100, false)->not_code);
    cr_expect_not(symbolizer_resolve(s, PID, 1, 0x20100, false)->not_code);
    /* The same offset of anonymous memory as code, then as data: each by
     * its own mapping. */
    cr_expect_not(symbolizer_resolve(s, PID, 1, 0x30200, true)->not_code);
    cr_expect(symbolizer_resolve(s, PID, 1, 0x20200, true)->not_code);
    symbolizer_free(s);
    profile_free(&p);
}
