/*
 * test_memory.c - ptprof's memory follows what a profile holds (issue 19,
 * point 5): the peak RSS of `ptprof report` on a large valid pprof file of
 * many tiny samples (as many distinct stacks as samples, the shape that
 * cost 1.4 GB at 34 MB) stays within the target: 4x the input, or 256 MB
 * above the distinct stacks it holds, whichever is larger.  The file is
 * made by the test; the peak is the child's ru_maxrss (getrusage), so the
 * check holds however busy the machine is.  And every reader's commands
 * on the files bench/memory.sh measures (folded, gperftools, native, a
 * gmon.out as programs fill it, the original sampler's raw format) and on
 * a recording of perf record -g and its perf script text, under the same
 * target.  bench/memory.sh holds the table of every format and command.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/spawn.h"

#define MB (1024.0 * 1024.0)

/* xorshift: the same file every run. */
static uint32_t next_below(uint64_t *state, uint32_t n)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state % n);
}

static void varint(FILE *f, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        fputc((int)(v & 0x7f) | 0x80, f);
    fputc((int)v, f);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* A length-delimited field's tag and length. */
static void field(FILE *f, unsigned number, size_t len)
{
    varint(f, (uint64_t)number << 3 | 2);
    varint(f, len);
}

/* Writes to PATH a pprof profile ("samples"/"count") of at least BYTES:
 * NFUNCTIONS functions each at a location of its own, then samples of
 * value 1 whose stacks are 1-8 locations drawn at random.  Returns the
 * frames of its stacks (leaves included) in *FRAMES and the samples. */
static size_t write_pprof(const char *path, uint64_t bytes, uint64_t *frames)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    const unsigned nfunctions = 4096;
    field(f, 1, 4); /* sample_type {type 1, unit 2} */
    fputs("\x08\x01\x10\x02", f);
    /* The string table: "", the sample type, then one name per function. */
    static const char *const fixed[] = {"", "samples", "count"};
    for (size_t i = 0; i < 3; i++) {
        field(f, 6, strlen(fixed[i]));
        fputs(fixed[i], f);
    }
    for (unsigned i = 1; i <= nfunctions; i++) {
        char name[32];
        int n = snprintf(name, sizeof(name), "function_%u", i);
        field(f, 6, (size_t)n);
        fputs(name, f);
        /* Function {id i, name 2 + i}. */
        field(f, 5, 1 + varint_len(i) + 1 + varint_len(2 + i));
        fputc(0x08, f);
        varint(f, i);
        fputc(0x10, f);
        varint(f, 2 + i);
        /* Location {id i, address, line {function_id i}}. */
        uint64_t addr = 0x400000 + 16ull * i;
        size_t line_len = 1 + varint_len(i);
        field(f, 4, 1 + varint_len(i) + 1 + varint_len(addr) + 1 + varint_len(line_len) + line_len);
        fputc(0x08, f);
        varint(f, i);
        fputc(0x18, f);
        varint(f, addr);
        field(f, 4, line_len);
        fputc(0x08, f);
        varint(f, i);
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    size_t nsamples = 0;
    *frames = 0;
    while ((uint64_t)ftell(f) < bytes) {
        uint32_t ids[8];
        unsigned depth = 1 + next_below(&state, 8);
        size_t ids_len = 0;
        for (unsigned d = 0; d < depth; d++) {
            ids[d] = 1 + next_below(&state, nfunctions);
            ids_len += varint_len(ids[d]);
        }
        /* Sample {location_id packed, value [1]}. */
        field(f, 2, 1 + varint_len(ids_len) + ids_len + 2);
        field(f, 1, ids_len);
        for (unsigned d = 0; d < depth; d++)
            varint(f, ids[d]);
        fputs("\x10\x01", f);
        *frames += depth;
        nsamples++;
    }
    cr_assert_eq(fclose(f), 0);
    return nsamples;
}

/* Runs PROGRAM with ARGV (ARGV[0] its name), standard output to OUT
 * (NULL: discarded) and standard error discarded; it must exit 0.  Its
 * peak RSS in bytes. */
static double run_peak_rss(const char *program, char *const argv[], const char *out)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        int to = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : null;
        if (null < 0 || to < 0 || dup2(to, 1) < 0 || dup2(null, 2) < 0)
            _exit(127);
        execv(program, argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s: %s", argv[0], argv[1],
              spawn_status_text(status));
    return (double)ru.ru_maxrss * 1024.0; /* kilobytes on Linux */
}

/* The peak RSS in bytes of `ptprof CMD FILE [OPTION]` (output discarded:
 * -o /dev/null for a flame graph). */
static double peak_rss(const char *cmd, const char *file, const char *option)
{
    char *ptprof = build_ptprof();
    char *argv[6] = {"ptprof", (char *)cmd, (char *)file};
    size_t n = 3;
    if (strcmp(cmd, "flamegraph") == 0) {
        argv[n++] = "-o";
        argv[n++] = "/dev/null";
    } else if (option) {
        argv[n++] = (char *)option;
    }
    argv[n] = NULL;
    double rss = run_peak_rss(ptprof, argv, NULL);
    free(ptprof);
    return rss;
}

/* Under AddressSanitizer a peak RSS is mostly its shadow and quarantine,
 * not ptprof's memory: the tests that measure one skip there. */
static void skip_under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("peak RSS is not ptprof's under AddressSanitizer");
#endif
}

/* A pprof of MB megabytes of many distinct tiny samples in a new directory
 * *DIR, at *FILE: its samples, its frames in *FRAMES, its stat in *ST
 * (skipped under AddressSanitizer). */
static size_t many_tiny_samples(char **dir, char **file, uint64_t *frames, struct stat *st,
                                unsigned mb)
{
    skip_under_asan();
    *dir = test_mkdtemp();
    *file = NULL;
    cr_assert_geq(asprintf(file, "%s/many.pprof", *dir), 0);
    size_t nsamples = write_pprof(*file, (uint64_t)mb << 20, frames);
    cr_assert_eq(stat(*file, st), 0);
    return nsamples;
}

/* `ptprof CMD [OPTION]` on a pprof of MB megabytes of many tiny samples
 * stays within the target: 4x the input, or 256 MB above what the profile
 * holds (every stack distinct, its frames as 8-byte addresses), whichever
 * is larger. */
static void option_stays_in_proportion(const char *cmd, const char *option, unsigned mb)
{
    char *dir, *file;
    uint64_t frames;
    struct stat st;
    size_t nsamples = many_tiny_samples(&dir, &file, &frames, &st, mb);
    double held = (double)frames * 8.0;
    double bound = 4.0 * (double)st.st_size;
    if (bound < 256 * MB + held)
        bound = 256 * MB + held;
    double rss = peak_rss(cmd, file, option);
    const char *sep = option ? " " : "", *opt = option ? option : "";
    cr_log_info(
        "%s%s%s: %zu samples, %.0f MB of stacks, %.1f MB input: peak %.0f MB, bound %.0f MB", cmd,
        sep, opt, nsamples, held / MB, (double)st.st_size / MB, rss / MB, bound / MB);
    cr_expect_leq(rss, bound,
                  "ptprof %s%s%s on %.1f MB of pprof (%zu samples) peaked at %.0f MB, over %.0f MB",
                  cmd, sep, opt, (double)st.st_size / MB, nsamples, rss / MB, bound / MB);
    test_rmtree(dir);
    free(file);
    free(dir);
}

static void stays_in_proportion(const char *cmd, unsigned mb)
{
    option_stays_in_proportion(cmd, NULL, mb);
}

Test(memory, report_of_a_pprof_of_many_distinct_tiny_samples_stays_in_proportion, .timeout = 300)
{
    stays_in_proportion("report", 10);
}

/* At the 34 MB (2.4 million samples, as many distinct stacks) the
 * profile itself is most of the peak: with a 48-byte sample and a 40-byte
 * thread sample each `info` and `report` took 373 MB, over the bound of
 * 338; a sample and a thread sample of 32 bytes each (profile.h) make it
 * 323 MB. */
Test(memory, info_and_report_of_a_34_mb_pprof_of_tiny_samples_stay_in_proportion, .timeout = 300)
{
    stays_in_proportion("info", 34);
    stays_in_proportion("report", 34);
}

/* A flame graph draws at most about 12,000 frames a level: the tree of a
 * node for every distinct prefix of these stacks (3 million nodes) made
 * it peak at 307 MB; the paths the walk keeps instead take less than the
 * profile (226 MB). */
Test(memory, flamegraph_of_a_pprof_of_many_distinct_tiny_samples_stays_in_proportion,
     .timeout = 300)
{
    stays_in_proportion("flamegraph", 10);
}

/* At 34 MB (2.4 million samples, 2 million distinct paths) the tree kept
 * wide held its paths on top of the profile (268 MB): 4 doubles of sums,
 * 4 bytes an element, 12 of offsets and the path cache's 131,072 paths
 * made `flamegraph` and `report --tree` peak at 459 MB, and glibc's moving
 * mmap threshold left the old copies of grown arrays resident in the heap.
 * Sums of the columns that are not all 0, elements as varints, 4-byte
 * offsets, a cache that shrinks when its paths are not asked for again and
 * a fixed threshold (session.c) make it 322 MB. */
Test(memory, flamegraph_and_tree_of_a_34_mb_pprof_of_tiny_samples_stay_in_proportion,
     .timeout = 300)
{
    stays_in_proportion("flamegraph", 34);
    option_stays_in_proportion("report", "--tree", 34);
}

/* What the pprof reader holds beyond the profile it builds, the input it
 * reads included: its per-sample tables once made `info` peak at 163 MB on
 * this 10 MB file, 60 MB (6x the input) over the profile; keeping 8 bytes
 * a sample, it peaks 23 MB over.  The profile's own share is counted from
 * the file: per sample a 32-byte sample and a 32-byte thread sample
 * (profile.h), per stack (all distinct) a 16-byte entry and its frames as
 * 8-byte addresses (in the profile's arena, stack_table.h). */
Test(memory, info_of_a_pprof_of_many_distinct_tiny_samples_holds_little_beyond_the_profile,
     .timeout = 300)
{
    char *dir, *file;
    uint64_t frames;
    struct stat st;
    size_t nsamples = many_tiny_samples(&dir, &file, &frames, &st, 10);
    double profile = (double)nsamples * (32 + 32 + 16) + (double)frames * 8.0;
    double bound = profile + 4.0 * (double)st.st_size;
    double rss = peak_rss("info", file, NULL);
    cr_log_info("info: %zu samples, %.0f MB of profile, %.1f MB input: peak %.0f MB, bound %.0f MB",
                nsamples, profile / MB, (double)st.st_size / MB, rss / MB, bound / MB);
    cr_expect_leq(rss, bound,
                  "ptprof info on %.1f MB of pprof (%zu samples) peaked at %.0f MB, %.0f MB over "
                  "its profile's %.0f MB (bound: 4x the input over it)",
                  (double)st.st_size / MB, nsamples, rss / MB, (rss - profile) / MB, profile / MB);
    test_rmtree(dir);
    free(file);
    free(dir);
}

/* More distinct stacks than the analysis caches paths for (paths.c's
 * PATH_CACHE_MAX, 131,072): the cache starts over, and a path built after
 * that may sit where a dropped one was.  The folded writer once took a
 * path's address for its line and merged unrelated stacks: 200,000
 * distinct lines came out as 131,162 with wrong counts. */
Test(memory, a_folded_file_of_more_stacks_than_the_path_cache_converts_line_for_line,
     .timeout = 300)
{
    enum { NLINES = 200000 };
    char *dir = test_mkdtemp();
    char *in = test_path(dir, "many.folded"), *out = test_path(dir, "back.folded");
    FILE *f = fopen(in, "w");
    cr_assert(f, "%s", in);
    for (unsigned i = 0; i < NLINES; i++)
        fprintf(f, "main;f%u;g%u %u\n", i, i % 7, 1 + i % 5);
    cr_assert_eq(fclose(f), 0);

    char *ptprof = build_ptprof();
    struct spawn_result r;
    spawn_run(&(struct spawn_opts){.argv = (const char *[]){ptprof, "convert", in, "-o", out, NULL},
                                   .timeout_s = 240},
              &r);
    cr_assert_eq(spawn_exit_code(r.status), 0, "convert: %s", r.err);
    spawn_result_free(&r);

    size_t len;
    char *text = test_read_file(out, &len);
    cr_assert(text, "%s", out);
    unsigned char *seen = calloc(NLINES, 1);
    size_t lines = 0, wrong = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        unsigned fn, g, count;
        if (sscanf(line, "main;f%u;g%u %u", &fn, &g, &count) != 3 || fn >= NLINES || seen[fn]++ ||
            g != fn % 7 || count != 1 + fn % 5)
            wrong++;
    }
    cr_expect_eq(lines, NLINES, "%zu lines of %d", lines, NLINES);
    cr_expect_eq(wrong, 0, "%zu lines not as written", wrong);
    free(seen);
    free(text);
    free(ptprof);
    test_rmtree(dir);
    free(in);
    free(out);
    free(dir);
}

/* --- every reader, on the benchmark's files ---------------------------------- */

/* bench/memory_gen.c's file of MB megabytes of FORMAT (ARG: its optional
 * third argument, or NULL) at DIR/NAME, as bench/memory.sh makes them. */
static char *memory_gen(const char *dir, const char *name, const char *format, const char *mb,
                        const char *arg)
{
    char *gen = build_path("bench/memory_gen"), *file = test_path(dir, name);
    char *argv[] = {"memory_gen", (char *)format, (char *)mb, (char *)arg, NULL};
    run_peak_rss(gen, argv, file);
    free(gen);
    return file;
}

/* Every command that reads a whole profile, on FILE: within 4x the file,
 * or 256 MB above HELD (the distinct stacks and names it holds), whichever
 * is larger. */
static void every_command_stays_in_proportion(const char *file, double held)
{
    struct stat st;
    cr_assert_eq(stat(file, &st), 0, "%s", file);
    double bound = 4.0 * (double)st.st_size;
    if (bound < 256 * MB + held)
        bound = 256 * MB + held;
    const char *commands[][2] = {
        {"info", NULL}, {"report", NULL}, {"report", "--tree"}, {"flamegraph", NULL}};
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        double rss = peak_rss(commands[i][0], file, commands[i][1]);
        cr_log_info("%s %s %s: %.1f MB input: peak %.0f MB, bound %.0f MB", commands[i][0],
                    commands[i][1] ? commands[i][1] : "", file, (double)st.st_size / MB, rss / MB,
                    bound / MB);
        cr_expect_leq(rss, bound, "ptprof %s %s on %.1f MB of %s peaked at %.0f MB, over %.0f MB",
                      commands[i][0], commands[i][1] ? commands[i][1] : "", (double)st.st_size / MB,
                      file, rss / MB, bound / MB);
    }
}

static char *memory_dir(void)
{
    skip_under_asan();
    return test_mkdtemp();
}

/* every_command_stays_in_proportion() on memory_gen's file (HELD: 0). */
static void generated_stays_in_proportion(const char *name, const char *format, const char *mb,
                                          const char *arg)
{
    char *dir = memory_dir(), *file = memory_gen(dir, name, format, mb, arg);
    every_command_stays_in_proportion(file, 0);
    test_rmtree(dir);
    free(file);
    free(dir);
}

/* 10 MB of stacks of 8-40 frames over 5,000 names, a line per distinct
 * stack. */
Test(memory, every_command_on_folded_stacks_stays_in_proportion, .timeout = 300)
{
    generated_stays_in_proportion("stacks.folded", "folded", "10", NULL);
}

/* A 64-bit CPU profile of 34 MB, records of 1-30 PCs over 4,096
 * addresses: a tree of a node per distinct stack prefix (a flame graph's,
 * `report --tree`'s) took 414 MB of it. */
Test(memory, every_command_on_a_gperftools_profile_stays_in_proportion, .timeout = 300)
{
    generated_stays_in_proportion("cpu.prof", "gperftools", "34", NULL);
}

/* The folded stacks as ptprof's own format: 15,213 samples, a stack each,
 * and the names of their frames as LOCATION records, which are most of
 * the file: its size is what it holds. */
Test(memory, every_command_on_a_native_profile_stays_in_proportion, .timeout = 300)
{
    char *dir = memory_dir(), *folded = memory_gen(dir, "stacks.folded", "folded", "10", NULL);
    char *file = test_path(dir, "stacks.data"), *ptprof = build_ptprof();
    char *argv[] = {"ptprof", "convert", folded, "-o", file, NULL};
    run_peak_rss(ptprof, argv, NULL);
    struct stat st;
    cr_assert_eq(stat(file, &st), 0, "%s", file);
    every_command_stays_in_proportion(file, (double)st.st_size);
    test_rmtree(dir);
    free(ptprof);
    free(file);
    free(folded);
    free(dir);
}

/* A gmon.out of 5 million bins, one in a hundred hit, as programs hit
 * theirs (bench/RESULTS.md: one whose every bin was hit, read without its
 * binary, is still beyond the target). */
Test(memory, every_command_on_a_gmon_out_stays_in_proportion, .timeout = 300)
{
    generated_stays_in_proportion("gmon.out", "gmon", "10", "1");
}

/* The original sampler's raw format, 10 MB: 150,119 samples of 1-4
 * threads at 4,096 PCs of a binary not at hand, a power reading each. */
Test(memory, every_command_on_the_original_samplers_raw_format_stays_in_proportion, .timeout = 300)
{
    generated_stays_in_proportion("run.pperf", "pperf", "10", NULL);
}

/* What `perf record -g` writes in 3 s at 20 kHz (some 10 MB on an idle
 * machine, less on a busy one: the bound is 256 MB either way), and the
 * same samples as the text of `perf script` (three times the size). */
Test(memory, every_command_on_perf_data_and_perf_script_stays_in_proportion, .timeout = 300)
{
    skip_under_asan();
    char *perf = test_need_tool("perf"), *dir = memory_dir(), *callers = build_workload("callers");
    char *data = test_path(dir, "perf.data"), *script = test_path(dir, "perf.script");
    char *record[] = {"perf",  "record", "-q", "-g", "-e",    "cpu-clock", "-F",
                      "20000", "-o",     data, "--", callers, "3",         NULL};
    run_peak_rss(perf, record, NULL);
    char *text[] = {"perf", "script", "-i", data, NULL};
    run_peak_rss(perf, text, script);
    every_command_stays_in_proportion(data, 0);
    every_command_stays_in_proportion(script, 0);
    test_rmtree(dir);
    free(data);
    free(script);
    free(callers);
    free(perf);
    free(dir);
}
