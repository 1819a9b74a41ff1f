/*
 * test_pperf_maps.c - the original raw format as the original's own
 * post-processing reads it, on real runs of tests/workloads/placed.c (a PIE
 * and a -no-pie build: its own code, libc's getppid(), a dlopen'ed library;
 * it leaves its /proc/self/maps behind as the ground truth):
 *  - without -p the file carries the original's dummy PMU: magic 3 and 8
 *    bytes of 0.0 per sample;
 *  - the map table is exactly the r-x file lines of the program's maps
 *    (start, size, the path's base name), nothing bracketed;
 *  - each PC, placed from the file alone by the original's rule (the label
 *    opened as SEARCH_DIR + "/" + label, pc - start + p_vaddr of its
 *    executable PT_LOAD; the raw PC for ET_EXEC), lands in the symbol the
 *    kernel's own mapping gives;
 *  - ptprof report, info and convert name the same functions for that file
 *    and for the same run written as ptprof 0.2.0 did (load bases);
 *  - a binary gone from its path is said, and found next to the profile,
 *    in a directory given with -s (before a file at the label's path, which
 *    may be another machine's build) and by --binary;
 *  - -o - is refused when standard output is also the program's.
 * Every file is walked byte by byte here, independently of the reader.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/pperf_legacy.h"
#include "model/maps.h"
#include "record_native.h"
#include "test_record_common.h"

#define SECONDS "1.5"
/* Each of the three places holds about a third of the time; getppid()'s
 * third is mostly in the kernel, and fewer of its samples land in the
 * wrapper's code: one run in a full suite had 14.4 % there.  The rule checked is where each PC
 * lands, which every PC of the run tests; this only says each place was seen often enough to count.
 */
#define MIN_SHARE 0.10

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* --- a run and its file, read byte by byte --------------------------------- */

struct entry {
    uint64_t address, size;
    const char *label; /* into the file's bytes, NUL terminated */
};

struct run {
    char *dir, *profile, *maps_path, *exe; /* exe: its canonical path */
    unsigned char *d;
    size_t len, maps_at; /* where the map table begins */
    uint32_t magic, pmu_size;
    uint64_t nsamples;
    uint64_t *pcs; /* every thread record's PC, in file order */
    size_t npcs;
    struct entry *entries;
    uint32_t nentries;
    struct map_list truth; /* the program's own /proc/self/maps at its end */
};

static void walk(struct run *r)
{
    cr_assert_geq(r->len, PPERF_HEADER_SIZE);
    r->magic = le32(r->d);
    r->nsamples = le64(r->d + 20);
    r->pmu_size = le32(r->d + 28);
    r->nentries = le32(r->d + 32);
    size_t pos = PPERF_HEADER_SIZE;
    for (uint64_t i = 0; i < r->nsamples; i++) {
        cr_assert_leq(pos + 12 + r->pmu_size, r->len, "sample %" PRIu64 " cut short", i);
        uint32_t n = le32(r->d + pos + 8 + r->pmu_size);
        pos += 12 + r->pmu_size;
        cr_assert_leq(pos + (size_t)n * PPERF_THREAD_SIZE, r->len);
        r->pcs = realloc(r->pcs, (r->npcs + n) * sizeof(*r->pcs));
        for (uint32_t t = 0; t < n; t++)
            r->pcs[r->npcs++] = le64(r->d + pos + (size_t)t * PPERF_THREAD_SIZE + 4);
        pos += (size_t)n * PPERF_THREAD_SIZE;
    }
    r->maps_at = pos;
    cr_assert_eq(r->len - pos, (size_t)r->nentries * PPERF_MAP_SIZE, "the maps fill the rest");
    r->entries = calloc(r->nentries ? r->nentries : 1, sizeof(*r->entries));
    for (uint32_t i = 0; i < r->nentries; i++) {
        const unsigned char *e = r->d + pos + (size_t)i * PPERF_MAP_SIZE;
        const unsigned char *label = e + 16;
        size_t n = strnlen((const char *)label, PPERF_LABEL_SIZE);
        cr_assert_lt(n, PPERF_LABEL_SIZE, "label %" PRIu32 " is not terminated", i);
        for (size_t k = n; k < PPERF_LABEL_SIZE; k++)
            cr_assert_eq(label[k], 0, "label %" PRIu32 " is not NUL padded", i);
        r->entries[i] = (struct entry){le64(e), le64(e + 8), (const char *)label};
    }
}

/* sampler -o DIR/placed.pperf -- placed LIBRARY SECONDS DIR/maps, with the
 * workload BINARY and its library copied into DIR/bin when COPY. */
static void record_placed(struct run *r, const char *binary, bool copy)
{
    memset(r, 0, sizeof(*r));
    r->dir = test_mkdtemp();
    r->profile = test_path(r->dir, "placed.pperf");
    r->maps_path = test_path(r->dir, "maps");
    char *sampler = build_sampler(), *exe = build_workload(binary);
    char *lib = build_workload("libplugin.so");
    if (copy) {
        char *bin = test_path(r->dir, "bin");
        const char *argv[] = {
            "/bin/sh", "-c", "mkdir \"$1\" && cp \"$2\" \"$3\" \"$1\"/", "sh", bin, exe, lib, NULL};
        struct spawn_result res;
        run_argv(&res, argv, NULL, NULL, 30);
        cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
        spawn_result_free(&res);
        free(exe);
        free(lib);
        exe = test_path(bin, binary);
        lib = test_path(bin, "libplugin.so");
        free(bin);
    }
    const char *argv[] = {sampler, "-o", r->profile, "--", exe, lib, SECONDS, r->maps_path, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, r->dir, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    r->exe = realpath(exe, NULL);
    cr_assert_not_null(r->exe);

    r->d = (unsigned char *)test_read_file(r->profile, &r->len);
    cr_assert_not_null(r->d, "%s was not written", r->profile);
    walk(r);
    size_t mlen;
    char *text = test_read_file(r->maps_path, &mlen);
    cr_assert_not_null(text, "placed left no maps");
    cr_assert_eq(maps_parse(text, mlen, &r->truth), 0);
    free(text);
    free(sampler);
    free(exe);
    free(lib);
}

static void run_free(struct run *r)
{
    test_rmtree(r->dir);
    free(r->dir);
    free(r->profile);
    free(r->maps_path);
    free(r->exe);
    free(r->d);
    free(r->pcs);
    free(r->entries);
    maps_clear(&r->truth);
}

static bool is_exec_file_line(const struct map_entry *e)
{
    return (e->perms & MAP_PERM_EXEC) && e->path[0] == '/';
}

static const struct map_entry *truth_line(const struct run *r, uint64_t pc)
{
    for (size_t i = 0; i < r->truth.count; i++)
        if (pc >= r->truth.entries[i].start && pc < r->truth.entries[i].end)
            return &r->truth.entries[i];
    return NULL;
}

static const struct entry *entry_of(const struct run *r, uint64_t pc)
{
    for (uint32_t i = 0; i < r->nentries; i++)
        if (pc >= r->entries[i].address && pc - r->entries[i].address < r->entries[i].size)
            return &r->entries[i];
    return NULL;
}

/* --- the original's post-processing, from the file alone ------------------- */

/* One labelled ELF file as the original's post-processing sees it: its
 * type (readelf -h) and program headers (readelf -l), and its symbols. */
struct elf_file {
    const char *label;
    struct elf_symtab tab;
    bool is_exec;
};

/* The label's file as postprocess.py -s SEARCH opens it: SEARCH + "/" +
 * label, nothing else (a path label makes a path that does not exist). */
static struct elf_file *elf_of(struct elf_file *files, size_t *n, const char *search,
                               const char *label)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(files[i].label, label) == 0)
            return &files[i];
    struct elf_file *f = &files[(*n)++];
    f->label = label;
    char *path = NULL;
    cr_assert_geq(asprintf(&path, "%s/%s", search, label), 0);
    cr_assert_eq(elf_symtab_load(path, &f->tab), 0, "postprocess -s %s cannot read %s", search,
                 path);
    f->is_exec = elf_is_et_exec(path);
    free(path);
    return f;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A directory holding every file the program ran code of, by base name,
 * as a user gathers a board's binaries for postprocess.py -s DIR. */
static char *search_dir(const struct run *r)
{
    char *dir = test_path(r->dir, "search");
    cr_assert(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
    for (size_t i = 0; i < r->truth.count; i++) {
        const struct map_entry *e = &r->truth.entries[i];
        if (!is_exec_file_line(e))
            continue;
        char *link = test_path(dir, base_name(e->path));
        cr_assert(symlink(e->path, link) == 0 || errno == EEXIST, "symlink %s", link);
        free(link);
    }
    return dir;
}

struct placed_counts {
    size_t own, libc, plugin; /* own_work, getppid, plugin_hot */
};

/* Every PC of R placed by the original's rule must land in the symbol the
 * program's own mapping gives; returns how many landed where the workload
 * spends its time. */
static struct placed_counts check_the_originals_rule(const struct run *r, const char *libc)
{
    struct elf_file files[64];
    size_t nfiles = 0, placed = 0;
    struct placed_counts c = {0};
    char *search = search_dir(r);
    for (size_t i = 0; i < r->npcs; i++) {
        uint64_t pc = r->pcs[i];
        const struct map_entry *line = truth_line(r, pc);
        cr_assert_not_null(line, "pc 0x%" PRIx64 " is in no mapping of the program", pc);
        const struct entry *e = entry_of(r, pc);
        if (!e) {
            /* Only code that is not a file's (the vDSO) has no entry. */
            cr_assert(!is_exec_file_line(line), "pc 0x%" PRIx64 " in %s has no entry", pc,
                      line->path);
            continue;
        }
        cr_assert_lt(nfiles + 1, sizeof(files) / sizeof(files[0]));
        struct elf_file *f = elf_of(files, &nfiles, search, e->label);
        uint64_t addr = original_file_address(e->address, &f->tab, f->is_exec, pc);
        const struct elf_symbol *got = elf_symtab_lookup(&f->tab, addr);

        uint64_t truth_addr;
        cr_assert_eq(elf_symtab_vaddr(&f->tab, pc - line->start + line->offset, &truth_addr), 0);
        const struct elf_symbol *want = elf_symtab_lookup(&f->tab, truth_addr);
        cr_assert(got == want,
                  "pc 0x%" PRIx64 " in %s: the original's rule gives %s (0x%" PRIx64
                  "), the kernel's mapping %s (0x%" PRIx64 ")",
                  pc, e->label, got ? got->name : "nothing", addr, want ? want->name : "nothing",
                  truth_addr);
        placed++;
        const char *name = got ? got->name : "";
        c.own += strcmp(e->label, base_name(r->exe)) == 0 && strcmp(name, "own_work") == 0;
        c.libc += strcmp(e->label, base_name(libc)) == 0 && strcmp(name, "getppid") == 0;
        c.plugin += strcmp(e->label, "libplugin.so") == 0 && strcmp(name, "plugin_hot") == 0;
    }
    for (size_t i = 0; i < nfiles; i++)
        elf_symtab_free(&files[i].tab);
    test_rmtree(search);
    free(search);
    double n = (double)r->npcs;
    cr_assert_gt(r->npcs, 300, "%zu thread records", r->npcs);
    cr_assert_geq((double)placed / n, 0.9, "only %zu of %zu PCs are in an entry", placed, r->npcs);
    cr_assert_geq(c.own / n, MIN_SHARE, "%zu of %zu PCs in own_work of %s", c.own, r->npcs, r->exe);
    cr_assert_geq(c.libc / n, MIN_SHARE, "%zu of %zu PCs in getppid of %s", c.libc, r->npcs, libc);
    cr_assert_geq(c.plugin / n, MIN_SHARE, "%zu of %zu PCs in plugin_hot", c.plugin, r->npcs);
    return c;
}

/* libc's path as the program mapped it. */
static const char *libc_path(const struct run *r)
{
    for (size_t i = 0; i < r->truth.count; i++) {
        const struct map_entry *e = &r->truth.entries[i];
        if (is_exec_file_line(e) && strstr(e->path, "/libc.so"))
            return e->path;
    }
    cr_assert_fail("no libc in the program's maps");
    return NULL;
}

/* --- the three points, byte by byte ----------------------------------------- */

static void check_bytes(const char *binary)
{
    struct run r;
    record_placed(&r, binary, false);

    /* 1. Without -p: the dummy PMU, power 0.0 in every sample. */
    cr_assert_eq(r.magic, 3, "magic %" PRIu32, r.magic);
    cr_assert_eq(r.pmu_size, 8, "PMU size %" PRIu32, r.pmu_size);
    size_t pos = PPERF_HEADER_SIZE;
    for (uint64_t i = 0; i < r.nsamples; i++) {
        for (int k = 0; k < 8; k++)
            cr_assert_eq(r.d[pos + 8 + k], 0, "sample %" PRIu64 ": PMU byte %d", i, k);
        pos += 12 + r.pmu_size + (size_t)le32(r.d + pos + 8 + r.pmu_size) * PPERF_THREAD_SIZE;
    }

    /* 2 and 3. Entries are the r-x file lines, exactly, and only those. */
    bool vdso = false;
    size_t lines = 0;
    for (size_t i = 0; i < r.truth.count; i++) {
        const struct map_entry *e = &r.truth.entries[i];
        vdso = vdso || strcmp(e->path, "[vdso]") == 0;
        if (!is_exec_file_line(e))
            continue;
        lines++;
        bool listed = false;
        for (uint32_t k = 0; k < r.nentries && !listed; k++)
            listed = r.entries[k].address == e->start && r.entries[k].size == e->end - e->start &&
                     strcmp(r.entries[k].label, base_name(e->path)) == 0;
        cr_assert(listed, "no entry for %" PRIx64 "-%" PRIx64 " %s", e->start, e->end, e->path);
    }
    cr_assert(vdso, "the program had no [vdso]: the test proves nothing about it");
    cr_assert_eq(r.nentries, lines, "%" PRIu32 " entries for %zu r-x lines", r.nentries, lines);
    const char *want[] = {base_name(r.exe), base_name(libc_path(&r)), "libplugin.so", "ld-linux"};
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        bool found = false;
        for (uint32_t k = 0; k < r.nentries && !found; k++)
            found = strstr(r.entries[k].label, want[w]) != NULL;
        cr_assert(found, "no entry for %s", want[w]);
    }
    for (uint32_t k = 0; k < r.nentries; k++)
        cr_assert_neq(r.entries[k].label[0], '[', "entry %s", r.entries[k].label);
    /* The original's post-processing names the profile after entry 0. */
    cr_assert_str_eq(r.entries[0].label, base_name(r.exe));
    run_free(&r);
}

Test(pperf_original, pie_libc_and_dlopen_are_written_as_the_original_does, .timeout = 90)
{
    check_bytes("placed");
}

Test(pperf_original, a_non_pie_program_is_written_as_the_original_does, .timeout = 90)
{
    check_bytes("placed-nopie");
}

Test(pperf_original, each_pc_lands_in_its_symbol_by_the_originals_rule, .timeout = 90)
{
    struct run r;
    record_placed(&r, "placed", false);
    check_the_originals_rule(&r, libc_path(&r));
    run_free(&r);
}

Test(pperf_original, each_pc_of_a_non_pie_program_lands_in_its_symbol, .timeout = 90)
{
    struct run r;
    record_placed(&r, "placed-nopie", false);
    cr_assert(elf_is_et_exec(r.exe), "%s is not ET_EXEC", r.exe);
    check_the_originals_rule(&r, libc_path(&r));
    run_free(&r);
}

/* --- ptprof's own reading of both forms ------------------------------------ */

/* The same run as ptprof 0.2.0 wrote it: the samples, then its table. */
static char *write_legacy(const struct run *r)
{
    struct pperf_map *legacy = NULL;
    size_t n = legacy_pperf_maps(&r->truth, &legacy);
    size_t len = r->maps_at + n * PPERF_MAP_SIZE;
    unsigned char *d = calloc(1, len);
    cr_assert_not_null(d);
    memcpy(d, r->d, r->maps_at);
    put_le32(d + 32, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        unsigned char *e = d + r->maps_at + i * PPERF_MAP_SIZE;
        put_le64(e, legacy[i].address);
        put_le64(e + 8, legacy[i].size);
        memcpy(e + 16, legacy[i].label, PPERF_LABEL_SIZE);
    }
    char *path = test_path(r->dir, "legacy.pperf");
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(d, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
    free(d);
    free(legacy);
    return path;
}

/* "ptprof ARGS..." must succeed; its stdout (allocated) and stderr. */
static char *ptprof_ok(const char *const *args, char **err)
{
    const char *argv[16];
    char *ptprof = build_ptprof();
    size_t n = 0;
    argv[n++] = ptprof;
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(n + 1, sizeof(argv) / sizeof(argv[0]));
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    char *out = strdup(res.out);
    if (err)
        *err = strdup(res.err);
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

/* The total_samples column of a CSV report's "binary:procedure" row: the
 * samples in that function, frames inlined into it included (the original's
 * rule knows only the ELF symbol). */
static size_t csv_samples(const char *csv, const char *key)
{
    int column = 0;
    const char *at = csv;
    for (; *at && *at != '\n' && strncmp(at, "total_samples,", 14) != 0; at++)
        column += *at == ',';
    cr_assert(strncmp(at, "total_samples,", 14) == 0, "no total_samples column:\n%s", csv);
    size_t klen = strlen(key);
    for (const char *line = strchr(csv, '\n'); line; line = strchr(line + 1, '\n')) {
        if (strncmp(line + 1, key, klen) != 0 || line[1 + klen] != ',')
            continue;
        const char *field = line + 1;
        for (int c = 0; c < column && field; c++)
            field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
        cr_assert_not_null(field);
        return strtoull(field, NULL, 10);
    }
    return 0;
}

static void check_report(const char *file, const char *search, const char *exe,
                         const struct placed_counts *want)
{
    const char *args[] = {"report", file, "-m", "samples", "--format", "csv", "-s", search, NULL};
    char *csv = ptprof_ok(args, NULL);
    char own[300];
    snprintf(own, sizeof(own), "%s:own_work", exe);
    size_t got_own = csv_samples(csv, own), got_libc = csv_samples(csv, "libc.so.6:getppid"),
           got_plugin = csv_samples(csv, "libplugin.so:plugin_hot");
    cr_assert(got_own == want->own && got_libc == want->libc && got_plugin == want->plugin,
              "%s: own_work %zu, getppid %zu, plugin_hot %zu samples; by the original's rule "
              "%zu, %zu, %zu\n%.3000s",
              file, got_own, got_libc, got_plugin, want->own, want->libc, want->plugin, csv);
    free(csv);
}

/* info names the form; report, and report on what convert made of either
 * file, count the same samples in the same functions as the original's
 * rule does on the file as written. */
Test(pperf_read, both_forms_give_the_same_functions, .timeout = 180)
{
    struct run r;
    record_placed(&r, "placed", false);
    struct placed_counts want = check_the_originals_rule(&r, libc_path(&r));
    char *legacy = write_legacy(&r);
    char *bindir = strdup(r.exe);
    *strrchr(bindir, '/') = '\0';

    const char *info_args[] = {"info", r.profile, legacy, NULL};
    char *info = ptprof_ok(info_args, NULL);
    const char *second = strstr(info, legacy);
    cr_assert_not_null(second, "%s", info);
    const char *orig = strstr(info, "the original sampler's form"),
               *old = strstr(info, "ptprof 0.2.0's form");
    cr_assert(orig && orig < second && old && old > second, "info:\n%s", info);
    cr_assert(strstr(info, "dummy PMU"), "info:\n%s", info);
    free(info);

    const char *files[] = {r.profile, legacy};
    for (size_t i = 0; i < 2; i++) {
        /* The 0.2.0 form names the executable by its base name only. */
        check_report(files[i], bindir, "placed", &want);
        char *native = test_path(r.dir, i ? "legacy.data" : "placed.data");
        const char *conv[] = {"convert", files[i], "-o",   native, "-t",
                              "native",  "-s",     bindir, NULL};
        free(ptprof_ok(conv, NULL));
        check_report(native, bindir, "placed", &want);
        free(native);
    }
    free(bindir);
    free(legacy);
    run_free(&r);
}

static void shell(const char *script, const char *a1, const char *a2, const char *a3);

/* The original's form names files by base name: one found nowhere is said
 * (once), and one next to the profile is found and placed right. */
Test(pperf_read, binaries_moved_next_to_the_profile_are_placed, .timeout = 90)
{
    struct run r;
    record_placed(&r, "placed", true);
    struct placed_counts want = check_the_originals_rule(&r, libc_path(&r));
    char *moved = test_path(r.dir, "placed"), *bin = test_path(r.dir, "bin");
    cr_assert_eq(rename(r.exe, moved), 0, "rename %s", r.exe);
    shell("mv \"$1\"/libplugin.so \"$2\"/", bin, r.dir, NULL);
    free(bin);

    /* Next to the profile: found, no warning, the same functions. */
    char *err;
    const char *args[] = {"report", r.profile, "-m", "samples", "--format", "csv", NULL};
    char *csv = ptprof_ok(args, &err);
    cr_assert_eq(csv_samples(csv, "placed:own_work"), want.own, "want %zu\n%s\n%s", want.own, csv,
                 err);
    cr_assert_null(strstr(err, "cannot read"), "%s", err);
    free(csv);
    free(err);

    /* Nowhere: said once, naming the profile and the file. */
    cr_assert_eq(unlink(moved), 0);
    const char *info_args[] = {"info", r.profile, NULL};
    free(ptprof_ok(info_args, &err));
    const char *at = strstr(err, "cannot read the executable segments of placed ");
    cr_assert(at && strstr(err, r.profile), "%s", err);
    cr_assert_null(strstr(at + 1, "cannot read the executable segments"), "%s", err);
    free(err);
    free(moved);
    run_free(&r);
}

/* --- binaries moved: -s DIR and --binary --------------------------------- */

/* sh -c SCRIPT with $1..: moves and copies, which must succeed. */
static void shell(const char *script, const char *a1, const char *a2, const char *a3)
{
    const char *argv[] = {"/bin/sh", "-c", script, "sh", a1, a2, a3, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
}

/* The per-function CSV report of PROFILE with EXTRA options (up to four,
 * NULL-terminated); the run must warn of no file it cannot read. */
static char *function_report(const char *profile, const char *const *extra)
{
    const char *args[12] = {"report", profile, "-m", "samples", "--format", "csv", NULL};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    char *err;
    char *csv = ptprof_ok(args, &err);
    cr_assert_null(strstr(err, "cannot read"), "%s", err);
    cr_assert_null(strstr(err, "fits neither"), "%s", err);
    free(err);
    return csv;
}

/* A PIE program and its dlopen'ed library recorded in DIR/bin, then moved
 * where nothing but -s DIR or --binary PATH says: the map entries are
 * placed in the files found there, so every function gets the samples it
 * got before the move (placing them as if each mapping began its file
 * would shift the PIE's and the library's PCs by their code's offset). */
Test(pperf_read, binaries_moved_into_a_search_dir_or_named_are_placed, .timeout = 180)
{
    struct run r;
    record_placed(&r, "placed", true);
    struct placed_counts want = check_the_originals_rule(&r, libc_path(&r));
    char *bin = test_path(r.dir, "bin"), *moved = test_path(r.dir, "moved");
    const char *recorded_in[] = {"-s", bin, NULL};
    char *before = function_report(r.profile, recorded_in);
    cr_assert_eq(csv_samples(before, "placed:own_work"), want.own, "%s", before);
    cr_assert_eq(csv_samples(before, "libplugin.so:plugin_hot"), want.plugin, "%s", before);

    shell("mkdir \"$2\" && mv \"$1\"/placed \"$1\"/libplugin.so \"$2\"/", bin, moved, NULL);
    const char *search[] = {"-s", moved, NULL};
    char *after = function_report(r.profile, search);
    cr_assert_str_eq(after, before, "with -s %s", moved);
    free(after);

    /* Named one by one, the program under another name. */
    char *named = test_path(r.dir, "named"), *program = test_path(named, "placed-v1");
    char *plugin = test_path(named, "libplugin.so");
    shell("mkdir \"$2\" && mv \"$1\"/placed \"$3\" && mv \"$1\"/libplugin.so \"$2\"/", moved, named,
          program);
    const char *given[] = {"--binary", program, "--binary", plugin, NULL};
    after = function_report(r.profile, given);
    cr_assert_str_eq(after, before, "with --binary %s --binary %s", program, plugin);
    free(after);

    free(program);
    free(plugin);
    free(named);
    free(moved);
    free(bin);
    free(before);
    run_free(&r);
}

/* A profile brought from another machine names that machine's files; a
 * file of the same name here (next to the profile, in the current
 * directory, in the library directories) is another build.  Without
 * build-ids nothing tells them apart, so the directory the user gives
 * comes first: the entries are placed in its file and named from it. */
Test(pperf_read, a_search_dir_wins_over_another_file_of_the_label_name, .timeout = 180)
{
    struct run r;
    record_placed(&r, "placed", true);
    check_the_originals_rule(&r, libc_path(&r));
    char *bin = test_path(r.dir, "bin"), *board = test_path(r.dir, "board");
    const char *recorded_in[] = {"-s", bin, NULL};
    char *before = function_report(r.profile, recorded_in);

    char *other = build_workload("placed-nopie");
    shell("mkdir \"$2\" && mv \"$1\"/placed \"$1\"/libplugin.so \"$2\"/ && cp \"$3\" "
          "\"$2\"/../placed",
          bin, board, other);
    const char *search[] = {"-s", board, NULL};
    char *after = function_report(r.profile, search);
    cr_assert_str_eq(after, before, "with -s %s and another program next to the profile", board);
    free(after);

    free(other);
    free(board);
    free(bin);
    free(before);
    run_free(&r);
}

/* --- -o - ---------------------------------------------------------------- */

Test(record_stdout, dash_is_refused_when_the_program_shares_standard_output)
{
    char *dir = test_mkdtemp(), *marker = test_path(dir, "ran");
    char *sampler = build_sampler(), *ptprof = build_ptprof();
    const char *sampler_argv[] = {sampler, "-o", "-", "--", "/usr/bin/touch", marker, NULL};
    const char *record_argv[] = {ptprof, RECORD_PPERF,     "-o",   "-",
                                 "--",   "/usr/bin/touch", marker, NULL};
    const char *const *argvs[] = {sampler_argv, record_argv};
    for (size_t i = 0; i < 2; i++) {
        struct spawn_result res;
        run_argv(&res, argvs[i], NULL, dir, 30);
        cr_assert_eq(spawn_exit_code(res.status), 1, RUN_CONTEXT(&res));
        cr_assert_eq(res.out_len, 0, RUN_CONTEXT(&res));
        cr_assert_eq(count_lines(res.err), 1, RUN_CONTEXT(&res));
        cr_assert(strstr(res.err, "-o -"), RUN_CONTEXT(&res));
        cr_assert_not(test_file_exists(marker), "the command ran; " RUN_CONTEXT(&res));
        spawn_result_free(&res);
    }
    free(sampler);
    free(ptprof);
    free(marker);
    test_rmtree(dir);
    free(dir);
}

/* Attached to a process that writes elsewhere, -o - is the profile alone;
 * when the process writes to the same file as the profiler, it is refused. */
Test(record_stdout, dash_with_pid_depends_on_the_process_stdout, .timeout = 60)
{
    char *timeloop = build_workload("timeloop"), *ptprof = build_ptprof();
    const char *targv[] = {timeloop, "30", NULL};
    struct spawn_opts topts = {.argv = targv, .timeout_s = 60};
    struct spawn_proc tp;
    spawn_start(&topts, &tp);
    spawn_pump_until(&tp, "tick 2\n", 10);
    pid_t pid = (pid_t)parse_after(tp.out, "timeloop: pid ");
    char pidtext[32];
    snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);

    const char *argv[] = {ptprof, RECORD_PPERF, "--pid", pidtext, "--duration",
                          "0.5",  "-o",         "-",     NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    struct pperf_profile prof;
    cr_assert_eq(pperf_load_buffer("stdout", res.out, res.out_len, &prof), 0, RUN_CONTEXT(&res));
    cr_assert_gt(prof.nsamples, 0);
    pperf_free(&prof);
    spawn_result_free(&res);

    /* The profiler's standard output opened on the process's own. */
    char script[256];
    snprintf(script, sizeof(script), "exec \"$0\" record --pid %d -o - > /proc/%d/fd/1", (int)pid,
             (int)pid);
    const char *shargv[] = {"/bin/sh", "-c", script, ptprof, NULL};
    run_argv(&res, shargv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 1, RUN_CONTEXT(&res));
    cr_assert(strstr(res.err, "-o -") && strstr(res.err, "process"), RUN_CONTEXT(&res));
    spawn_result_free(&res);

    cr_assert_eq(kill(pid, SIGTERM), 0);
    spawn_finish(&tp, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "timeloop:\n%s", res.out);
    spawn_result_free(&res);
    free(timeloop);
    free(ptprof);
}
