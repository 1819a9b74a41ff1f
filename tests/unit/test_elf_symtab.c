/*
 * test_elf_symtab.c - symbol/elf_symtab.h against programs built with cc
 * at test time: PIE, non-PIE, stripped, a shared library, aliases, unsized
 * symbols, and files that are not ELF.  Addresses come from nm and from the
 * built programs themselves (their own PC and load base at run time), never
 * from constants.
 */
#include "symbol/elf_symtab.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A program that reports a PC inside tiny_target and the start of its own
 * mapping at file offset 0, as the recorder would see them. */
static const char prog_src[] =
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include <unistd.h>\n"
    "__attribute__((noinline)) void *tiny_return_address(void)\n"
    "{ return __builtin_return_address(0); }\n"
    "__attribute__((noinline)) void *tiny_target(void)\n"
    "{ void *pc = tiny_return_address(); __asm__ volatile(\"\" ::: \"memory\"); return pc; }\n"
    "static __attribute__((noinline)) int tiny_local(int x) { return 3 * x + 1; }\n"
    "static unsigned long base_of(const char *suffix)\n"
    "{\n"
    "    FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
    "    char line[8192], path[4096];\n"
    "    unsigned long start, off, base = 0;\n"
    "    while (f && fgets(line, sizeof line, f)) {\n"
    "        if (sscanf(line, \"%lx-%*x %*s %lx %*s %*s %4095s\", &start, &off, path) != 3)\n"
    "            continue;\n"
    "        size_t n = strlen(path), m = strlen(suffix);\n"
    "        if (off == 0 && n >= m && strcmp(path + n - m, suffix) == 0) { base = start; break; "
    "}\n"
    "    }\n"
    "    if (f) fclose(f);\n"
    "    return base;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argc;\n"
    "    const char *slash = strrchr(argv[0], '/');\n"
    "    printf(\"%lx %lx %d\\n\", (unsigned long)(uintptr_t)tiny_target(),\n"
    "           base_of(slash ? slash : argv[0]), tiny_local(2));\n"
    "    return 0;\n"
    "}\n";

static char *tmpdir;

static void setup(void)
{
    char tmpl[] = "/tmp/ptprof-symtab-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    tmpdir = xstrdup(tmpl);
}

static void teardown(void)
{
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
    free(cmd);
    free(tmpdir);
}

static void setup_redirect(void)
{
    setup();
    cr_redirect_stderr();
}

TestSuite(elf_symtab, .init = setup, .fini = teardown);
/* Error cases capture stderr to check the messages name the file. */
TestSuite(elf_symtab_errors, .init = setup_redirect, .fini = teardown);

static char *in_tmp(const char *name)
{
    return xasprintf("%s/%s", tmpdir, name);
}

static void write_file(const char *name, const char *text)
{
    char *path = in_tmp(name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot create %s", path);
    fputs(text, f);
    fclose(f);
    free(path);
}

/* Run a shell command in the temp dir; fail the test when it fails. */
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

/* The address nm gives NAME in FILE (-D: the dynamic symbol table). */
static uint64_t nm_addr(const char *file, const char *name, bool dynamic)
{
    char *cmd = xasprintf("nm %s --defined-only '%s/%s'", dynamic ? "-D" : "", tmpdir, file);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[1024], sym[512], type;
    unsigned long long addr;
    uint64_t found = 0;
    while (fgets(line, sizeof(line), p))
        if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0)
            found = addr;
    pclose(p);
    free(cmd);
    cr_assert_neq(found, 0, "nm finds no %s in %s", name, file);
    return found;
}

/* Run a built program from the temp dir and read "PC BASE". */
static void run_prog(const char *name, uint64_t *pc, uint64_t *base)
{
    char *cmd = xasprintf("cd '%s' && ./%s", tmpdir, name);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    unsigned long long a = 0, b = 0;
    int n = fscanf(p, "%llx %llx", &a, &b);
    cr_assert_eq(pclose(p), 0, "%s failed", name);
    cr_assert_eq(n, 2);
    cr_assert_neq(b, 0, "%s found no mapping of itself at offset 0", name);
    free(cmd);
    *pc = a;
    *base = b;
}

static void load(const char *name, struct elf_symtab *tab)
{
    char *path = in_tmp(name);
    cr_assert_eq(elf_symtab_load(path, tab), 0, "cannot load %s", path);
    free(path);
}

static void expect_symbol_at(const struct elf_symtab *tab, const char *file, const char *name,
                             bool dynamic)
{
    uint64_t addr = nm_addr(file, name, dynamic);
    const struct elf_symbol *s = elf_symtab_lookup(tab, addr);
    cr_assert_not_null(s, "%s: nothing at %s's address 0x%llx", file, name,
                       (unsigned long long)addr);
    cr_expect_str_eq(s->name, name);
    cr_expect_eq(s->addr, addr);
    /* A PC inside the function resolves to it too. */
    const struct elf_symbol *inside = elf_symtab_lookup(tab, addr + 1);
    cr_assert_not_null(inside);
    cr_expect_str_eq(inside->name, name);
}

static void expect_sorted(const struct elf_symtab *tab)
{
    for (size_t i = 1; i < tab->count; i++)
        cr_assert_lt(tab->syms[i - 1].addr, tab->syms[i].addr, "entries %zu and %zu", i - 1, i);
}

/* The PC a running program reported resolves through the load_vaddr rule. */
static void expect_runtime_pc_resolves(const struct elf_symtab *tab, uint64_t pc, uint64_t base,
                                       const char *name)
{
    const struct elf_symbol *s = elf_symtab_lookup(tab, pc - base + tab->load_vaddr);
    cr_assert_not_null(s, "pc 0x%llx base 0x%llx load_vaddr 0x%llx: no symbol",
                       (unsigned long long)pc, (unsigned long long)base,
                       (unsigned long long)tab->load_vaddr);
    cr_expect_str_eq(s->name, name);
}

Test(elf_symtab, pie_executable)
{
    write_file("prog.c", prog_src);
    sh("cc -O0 -fPIE -pie -o prog prog.c");
    struct elf_symtab tab;
    load("prog", &tab);
    expect_sorted(&tab);
    expect_symbol_at(&tab, "prog", "tiny_target", false);
    expect_symbol_at(&tab, "prog", "tiny_return_address", false);
    expect_symbol_at(&tab, "prog", "tiny_local", false);
    expect_symbol_at(&tab, "prog", "main", false);

    uint64_t pc, base;
    run_prog("prog", &pc, &base);
    expect_runtime_pc_resolves(&tab, pc, base, "tiny_target");
    elf_symtab_free(&tab);
}

Test(elf_symtab, non_pie_executable)
{
    write_file("prog.c", prog_src);
    sh("cc -O0 -fno-pie -no-pie -o prog prog.c");
    struct elf_symtab tab;
    load("prog", &tab);
    expect_symbol_at(&tab, "prog", "tiny_target", false);
    expect_symbol_at(&tab, "prog", "tiny_local", false);

    uint64_t pc, base;
    run_prog("prog", &pc, &base);
    /* A non-PIE executable is loaded where it was linked. */
    cr_expect_eq(tab.load_vaddr, base);
    expect_runtime_pc_resolves(&tab, pc, base, "tiny_target");
    elf_symtab_free(&tab);
}

Test(elf_symtab, stripped_executable_falls_back_to_dynsym)
{
    write_file("prog.c", prog_src);
    sh("cc -O0 -fPIE -pie -rdynamic -o prog prog.c && strip -o stripped prog");
    /* Make sure the copy really lost its .symtab. */
    sh("! nm stripped 2>/dev/null | grep -q tiny_local");
    struct elf_symtab tab;
    load("stripped", &tab);
    cr_assert_gt(tab.count, 0);
    expect_symbol_at(&tab, "stripped", "tiny_target", true);

    uint64_t pc, base;
    run_prog("stripped", &pc, &base);
    expect_runtime_pc_resolves(&tab, pc, base, "tiny_target");
    elf_symtab_free(&tab);
}

Test(elf_symtab, shared_library)
{
    write_file("lib.c", "__attribute__((noinline)) void *tiny_lib_ra(void)\n"
                        "{ return __builtin_return_address(0); }\n"
                        "void *tiny_lib_target(void)\n"
                        "{ void *pc = tiny_lib_ra(); __asm__ volatile(\"\" ::: \"memory\");"
                        " return pc; }\n");
    write_file("main.c", "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"
                         "void *tiny_lib_target(void);\n"
                         "int main(void)\n{\n"
                         "    FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
                         "    char line[8192], path[4096];\n"
                         "    unsigned long start, off, base = 0;\n"
                         "    while (f && fgets(line, sizeof line, f))\n"
                         "        if (sscanf(line, \"%lx-%*x %*s %lx %*s %*s %4095s\", &start,"
                         " &off, path) == 3 && off == 0 && strstr(path, \"/libtiny.so\"))\n"
                         "            { base = start; break; }\n"
                         "    printf(\"%lx %lx\\n\", (unsigned long)(uintptr_t)"
                         "tiny_lib_target(), base);\n"
                         "    return 0;\n}\n");
    sh("cc -O0 -fPIC -shared -o libtiny.so lib.c && "
       "cc -O0 -o uselib main.c -L. -ltiny -Wl,-rpath,\"$PWD\"");
    struct elf_symtab tab;
    load("libtiny.so", &tab);
    expect_symbol_at(&tab, "libtiny.so", "tiny_lib_target", false);

    uint64_t pc, base;
    run_prog("uselib", &pc, &base);
    expect_runtime_pc_resolves(&tab, pc, base, "tiny_lib_target");
    elf_symtab_free(&tab);

    /* The same library stripped still names its exports. */
    sh("strip -o libtiny-stripped.so libtiny.so");
    load("libtiny-stripped.so", &tab);
    expect_symbol_at(&tab, "libtiny-stripped.so", "tiny_lib_target", true);
    expect_runtime_pc_resolves(&tab, pc, base, "tiny_lib_target");
    elf_symtab_free(&tab);
}

Test(elf_symtab, global_name_wins_over_local_and_weak_aliases)
{
    write_file("alias.c",
               "static int zz_local_impl(int x) { return x * 7 + 3; }\n"
               "int aa_weak_alias(int) __attribute__((weak, alias(\"zz_local_impl\")));\n"
               "int mm_global_alias(int) __attribute__((alias(\"zz_local_impl\")));\n");
    sh("cc -O0 -fPIC -shared -o libalias.so alias.c");
    uint64_t addr = nm_addr("libalias.so", "mm_global_alias", false);
    cr_assert_eq(nm_addr("libalias.so", "zz_local_impl", false), addr);
    cr_assert_eq(nm_addr("libalias.so", "aa_weak_alias", false), addr);
    struct elf_symtab tab;
    load("libalias.so", &tab);
    const struct elf_symbol *s = elf_symtab_lookup(&tab, addr);
    cr_assert_not_null(s);
    cr_expect_str_eq(s->name, "mm_global_alias");
    expect_sorted(&tab);
    elf_symtab_free(&tab);
}

Test(elf_symtab, unsized_symbol_covers_up_to_the_next_one)
{
    write_file("asm.s", "    .text\n"
                        "    .globl nosize_fn\n"
                        "    .type nosize_fn, @function\n"
                        "nosize_fn:\n"
                        "    nop\n    nop\n    nop\n    nop\n    ret\n"
                        "    .globl sized_fn\n"
                        "    .type sized_fn, @function\n"
                        "sized_fn:\n"
                        "    nop\n    ret\n"
                        "    .size sized_fn, .-sized_fn\n");
    sh("cc -shared -nostdlib -o libasm.so asm.s");
    uint64_t nosize = nm_addr("libasm.so", "nosize_fn", false);
    uint64_t sized = nm_addr("libasm.so", "sized_fn", false);
    struct elf_symtab tab;
    load("libasm.so", &tab);
    const struct elf_symbol *s = elf_symtab_lookup(&tab, nosize + 3);
    cr_assert_not_null(s);
    cr_expect_str_eq(s->name, "nosize_fn");
    cr_expect_eq(s->size, 0);
    s = elf_symtab_lookup(&tab, sized + 1);
    cr_assert_not_null(s);
    cr_expect_str_eq(s->name, "sized_fn");
    /* Past the end of a sized symbol nothing is claimed. */
    cr_expect_null(elf_symtab_lookup(&tab, sized + s->size));
    cr_expect_null(elf_symtab_lookup(&tab, nosize - 1));
    elf_symtab_free(&tab);
}

static char *stderr_text(void)
{
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    return buf;
}

Test(elf_symtab_errors, text_file_is_an_error_naming_it)
{
    write_file("notes.txt", "this is not an ELF file\n");
    char *path = in_tmp("notes.txt");
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(path, &tab), -1);
    cr_expect_eq(tab.count, 0);
    cr_expect_null(elf_symtab_lookup(&tab, 0x1000));
    elf_symtab_free(&tab);
    cr_expect_not_null(strstr(stderr_text(), path));
    free(path);
}

Test(elf_symtab_errors, missing_file_and_directory_are_errors)
{
    char *missing = in_tmp("no-such-file");
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(missing, &tab), -1);
    cr_assert_eq(elf_symtab_load(tmpdir, &tab), -1);
    /* A file cut short inside the ELF header. */
    write_file("short", "\177ELF\002\001");
    char *shortf = in_tmp("short");
    cr_assert_eq(elf_symtab_load(shortf, &tab), -1);
    const char *err = stderr_text();
    cr_expect_not_null(strstr(err, missing));
    cr_expect_not_null(strstr(err, shortf));
    free(missing);
    free(shortf);
}
