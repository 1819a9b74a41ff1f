/*
 * test_record_common.h - what the end-to-end tests of "ptprof record" and
 * "sampler" share: running a command line, loading the profile it wrote and
 * checking the properties every valid profile has.
 */
#ifndef PTPROF_TESTS_E2E_RECORD_COMMON_H
#define PTPROF_TESTS_E2E_RECORD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"
#include "interop/pperf.h"
#include "symbol/elf_symtab.h"
#include "../lib/spawn.h"

/* "ptprof record" writing the original raw format, which these tests read
 * with pperf_load() (the native format is record's default). */
#define RECORD_PPERF "record", "--format", "pperf"

/* "ptprof record" with ENGINE ("perf" or "ptrace", engines.h): the ptrace
 * engine writes the original raw format as these suites always had it
 * (that format is the ptrace engine's alone), the perf engine the native
 * one. */
#define RECORD_WITH(engine) "record", "--engine", (engine), "--format", record_format_for(engine)
const char *record_format_for(const char *engine);

/* Load what RECORD_WITH(ENGINE) wrote into OUT, failing the test unless it
 * is well-formed: the original format passes load_valid_profile() first;
 * either way latency <= wall time and sample times never go back. */
void load_engine_profile(const char *engine, const char *path, struct profile *out);

/* Run ARGV (NULL-terminated) with ENV changes (may be NULL) in CWD (may be
 * NULL), failing the test if it outlives TIMEOUT_S. */
void run_argv(struct spawn_result *res, const char *const *argv, const char *const *env,
              const char *cwd, double timeout_s);

/* Load PATH, failing the test (with the loader's message) unless it is a
 * well-formed profile: pperf_load() accepts it, an independent walk of the
 * bytes finds exactly the header's number of sample records followed by
 * exactly its number of maps, latency <= wall time, sample wall times never
 * go back, and no sample lists a thread twice. */
void load_valid_profile(const char *path, struct pperf_profile *prof);

/* The map entry of the file named LABEL (its base name) that contains PC,
 * or NULL. */
const struct pperf_map *profile_map_for(const struct pperf_profile *prof, const char *label,
                                        uint64_t pc);

/* The file address of PC in a map entry starting at START, by the original
 * post-processing's rule: pc - start + the p_vaddr of the first executable
 * PT_LOAD of the entry's file (TAB), or PC itself when the file is ET_EXEC
 * (elf_is_et_exec). */
uint64_t original_file_address(uint64_t start, const struct elf_symtab *tab, bool et_exec,
                               uint64_t pc);
bool elf_is_et_exec(const char *path);

/* The perf engine's -d line "[debug] ticks: N (R Hz: ...), M relaxed to
 * ..." in ERR: the rate R, and M in *RELAXED; fails the test without it. */
double perf_ticks_line(const char *err, long *relaxed);

/* The room a share checked against a program's own truth gets in this
 * build: TOLERANCE, or twice it when the recorder under test is the
 * ASan+UBSan build.  That recorder spends several times the plain one's
 * CPU per sample and falls behind on a busy machine where the plain one
 * keeps up; the shares' bounds are the plain build's claim, judged in the
 * plain pass, and a misattribution (the wrong function, a lost phase) is
 * still many times wider than either. */
double build_tolerance(double tolerance);

/* Occurrences of NEEDLE in TEXT. */
/* The number after "NAME " at the start of a line of OUT (a workload's
 * own measure, "work_alpha 1234"), or NAN. */
double workload_value(const char *out, const char *name);

int count_occurrences(const char *text, const char *needle);
/* Lines in TEXT (a final line without '\n' counts too). */
int count_lines(const char *text);

/* A failed assertion's context: the command's status, stdout and stderr.
 * RUN_CONTEXT(res) alone, or "own text %d; " RUN_FMT, own_args, RUN_ARGS(res). */
#define RUN_FMT "status: %s\n--- stdout ---\n%.2000s\n--- stderr ---\n%.4000s"
#define RUN_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err
#define RUN_CONTEXT(res) RUN_FMT, RUN_ARGS(res)

/* The kernel's CPU pressure (/proc/pressure/cpu): microseconds that some
 * task spent waiting for a CPU since boot (0 where the kernel has no PSI),
 * and the share of SECONDS (slept here) in which some task waited. */
uint64_t cpu_pressure_total_us(void);
double cpu_pressure(double seconds);

/* The machine's CPU time at a mark (/proc/stat), and this process's and
 * its reaped children's: others_busy_since() is the share (0 to 1) of the
 * machine's CPU time since the mark that other processes used.  Two
 * CPU-bound jobs on two CPUs show no pressure until a third task wants a
 * CPU, but they take all of it: this sees them while a command ran. */
struct machine_mark {
    uint64_t busy_ticks, all_ticks; /* USER_HZ ticks over all CPUs */
    double ours_s;                  /* this process and its reaped children */
};
void machine_mark(struct machine_mark *m);
double others_busy_since(const struct machine_mark *m);

/* Whether other work kept the CPUs busy while a command ran: the kernel's
 * CPU pressure over 0.3 s before and after it (some task waiting for a CPU
 * more than 15% of that time) or other processes using more than 25% of
 * the CPUs during it.  busy_watch_start() before the command,
 * busy_watch_end() after it: true when busy, with what was seen in
 * W->pressure (the larger of the two) and W->others, for the message. */
struct busy_watch {
    double before, pressure, others;
    struct machine_mark mark;
};
void busy_watch_start(struct busy_watch *w);
bool busy_watch_end(struct busy_watch *w);

#endif
