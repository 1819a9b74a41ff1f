/* test_record_common.c - see test_record_common.h. */
#include "test_record_common.h"
#include "engines.h"
#include "format/load.h"
#include "symbol/binary_finder.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void run_argv(struct spawn_result *res, const char *const *argv, const char *const *env,
              const char *cwd, double timeout_s)
{
    struct spawn_opts opts = {.argv = argv, .env = env, .cwd = cwd, .timeout_s = timeout_s};
    spawn_run(&opts, res);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* The layout of the original format, walked without the project's reader,
 * so a reader and a writer that agree on a mistake are still caught. */
static void walk_raw(const char *path, const unsigned char *d, size_t len)
{
    cr_assert_geq(len, PPERF_HEADER_SIZE, "%s: %zu bytes, shorter than a header", path, len);
    uint64_t nsamples = get_u64(d + 20);
    uint32_t pmu_size = get_u32(d + 28), nmaps = get_u32(d + 32);
    size_t pos = PPERF_HEADER_SIZE;
    uint64_t records = 0;
    while (records < nsamples && len - pos >= 12u + pmu_size) {
        uint32_t n = get_u32(d + pos + 8 + pmu_size);
        pos += 12u + pmu_size;
        if ((len - pos) / PPERF_THREAD_SIZE < n)
            break;
        pos += (size_t)n * PPERF_THREAD_SIZE;
        records++;
    }
    cr_assert_eq(records, nsamples, "%s: header says %" PRIu64 " samples, %" PRIu64 " records fit",
                 path, nsamples, records);
    cr_assert_eq(len - pos, (size_t)nmaps * PPERF_MAP_SIZE,
                 "%s: %zu bytes after the samples, %" PRIu32 " maps need %zu", path, len - pos,
                 nmaps, (size_t)nmaps * PPERF_MAP_SIZE);
    for (uint32_t i = 0; i < nmaps; i++) {
        const unsigned char *label = d + pos + (size_t)i * PPERF_MAP_SIZE + 16;
        cr_assert(memchr(label, '\0', PPERF_LABEL_SIZE), "%s: map %" PRIu32 " label unterminated",
                  path, i);
    }
}

void load_valid_profile(const char *path, struct pperf_profile *prof)
{
    size_t len;
    unsigned char *raw = (unsigned char *)test_read_file(path, &len);
    cr_assert(raw, "profile %s was not written", path);
    walk_raw(path, raw, len);
    free(raw);

    cr_assert_eq(pperf_load(path, prof), 0, "pperf_load(%s) rejected the profile", path);
    cr_assert_leq(prof->latency_us, prof->wall_us,
                  "%s: latency %" PRIu64 " us > wall %" PRIu64 " us", path, prof->latency_us,
                  prof->wall_us);
    for (uint64_t i = 0; i < prof->nsamples; i++) {
        const struct pperf_sample *s = &prof->samples[i];
        if (i > 0)
            cr_assert_geq(s->wall_us, prof->samples[i - 1].wall_us,
                          "%s: sample %" PRIu64 " is earlier than the one before", path, i);
        for (uint32_t a = 0; a < s->nthreads; a++)
            for (uint32_t b = a + 1; b < s->nthreads; b++)
                cr_assert_neq(s->threads[a].tid, s->threads[b].tid,
                              "%s: sample %" PRIu64 " lists thread %" PRIu32 " twice", path, i,
                              s->threads[a].tid);
    }
}

const struct pperf_map *profile_map_for(const struct pperf_profile *prof, const char *label,
                                        uint64_t pc)
{
    for (uint32_t i = 0; i < prof->nmaps; i++) {
        const struct pperf_map *m = &prof->maps[i];
        const char *slash = strrchr(m->label, '/');
        const char *base = slash ? slash + 1 : m->label;
        if (strcmp(base, label) == 0 && pc >= m->address && pc - m->address < m->size)
            return m;
    }
    return NULL;
}

uint64_t original_file_address(uint64_t start, const struct elf_symtab *tab, bool et_exec,
                               uint64_t pc)
{
    if (et_exec)
        return pc;
    for (size_t i = 0; i < tab->nsegments; i++)
        if (tab->segments[i].flags & PF_X)
            return pc - start + tab->segments[i].vaddr;
    cr_assert_fail("%s has no executable PT_LOAD", tab->path);
    return 0;
}

bool elf_is_et_exec(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "open %s", path);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    cr_assert(elf && gelf_getehdr(elf, &eh), "%s is not ELF", path);
    bool et_exec = eh.e_type == ET_EXEC;
    elf_end(elf);
    close(fd);
    return et_exec;
}

double perf_ticks_line(const char *err, long *relaxed)
{
    const char *line = strstr(err, "[debug] ticks:");
    cr_assert(line, "no ticks line in:\n%.3000s", err);
    const char *paren = strchr(line, '('), *close = paren ? strchr(paren, ')') : NULL;
    cr_assert(close && close[1] == ',', "ticks line without a rate: %.80s", line);
    *relaxed = atol(close + 2);
    return atof(paren + 1);
}

double workload_value(const char *out, const char *name)
{
    size_t len = strlen(name);
    for (const char *line = out; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, name, len) == 0 && line[len] == ' ')
            return strtod(line + len + 1, NULL);
    }
    return NAN;
}

int count_occurrences(const char *text, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);
    for (const char *p = strstr(text, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        if (*p == '\n')
            n++;
    if (*text && text[strlen(text) - 1] != '\n')
        n++;
    return n;
}

const char *record_format_for(const char *engine)
{
    return engine_is_perf(engine) ? "native" : "pperf";
}

void load_engine_profile(const char *engine, const char *path, struct profile *out)
{
    if (!engine_is_perf(engine)) {
        struct pperf_profile raw;
        load_valid_profile(path, &raw);
        pperf_free(&raw);
    }
    /* The original format labels each map by its file's base name, which
     * is looked up in the search directories as its own postprocess.py
     * does: the workloads' directory, as `report -s` would give it. */
    char *workloads = build_path("workloads");
    const char *const dirs[] = {workloads};
    const struct binary_search search = {.dirs = dirs, .ndirs = 1};
    cr_assert_eq(profile_load_with(path, &search, out), 0,
                 "profile_load(%s) rejected what the %s engine wrote", path, engine);
    free(workloads);
    cr_assert(out->has_totals, "%s: the %s engine did not finish its profile", path, engine);
    cr_assert_leq(out->totals.latency_ns, out->totals.wall_ns, "%s: latency above wall time", path);
    for (size_t i = 1; i < out->nsamples; i++)
        cr_assert_geq(out->samples[i].time_ns, out->samples[i - 1].time_ns,
                      "%s: sample %zu is earlier than the one before (%s engine)", path, i, engine);
}

double build_tolerance(double tolerance)
{
#if defined(__SANITIZE_ADDRESS__)
    return 2 * tolerance;
#else
    return tolerance;
#endif
}

uint64_t cpu_pressure_total_us(void)
{
    char *text = test_read_file("/proc/pressure/cpu", NULL);
    const char *at = text ? strstr(text, "total=") : NULL;
    uint64_t total = at ? strtoull(at + 6, NULL, 10) : 0;
    free(text);
    return total;
}

double cpu_pressure(double seconds)
{
    uint64_t total[2];
    for (int i = 0; i < 2; i++) {
        if (i == 1) {
            struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
            nanosleep(&ts, NULL);
        }
        total[i] = cpu_pressure_total_us();
    }
    return total[1] > total[0] ? (double)(total[1] - total[0]) / 1e6 / seconds : 0;
}

void machine_mark(struct machine_mark *m)
{
    memset(m, 0, sizeof(*m));
    char *text = test_read_file("/proc/stat", NULL);
    unsigned long long v[8] = {0};
    if (text && sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        /* user nice system idle iowait irq softirq steal: all but idle and
         * iowait were taken from someone (steal by the host's other work). */
        m->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        m->all_ticks = m->busy_ticks + v[3] + v[4];
    }
    free(text);
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    const struct timeval *tv[] = {&self.ru_utime, &self.ru_stime, &children.ru_utime,
                                  &children.ru_stime};
    for (size_t i = 0; i < 4; i++)
        m->ours_s += (double)tv[i]->tv_sec + (double)tv[i]->tv_usec / 1e6;
}

double others_busy_since(const struct machine_mark *m)
{
    struct machine_mark now;
    machine_mark(&now);
    if (now.all_ticks <= m->all_ticks)
        return 0;
    double hz = (double)sysconf(_SC_CLK_TCK);
    double busy = (double)(now.busy_ticks - m->busy_ticks) / hz;
    double all = (double)(now.all_ticks - m->all_ticks) / hz;
    double others = busy - (now.ours_s - m->ours_s);
    return others > 0 ? others / all : 0;
}

/* Some task waited for a CPU more than this share of the time, or other
 * processes used more than this share of the CPUs: busy (busy_watch). */
#define BUSY_PRESSURE 0.15
#define BUSY_OTHERS 0.25

void busy_watch_start(struct busy_watch *w)
{
    memset(w, 0, sizeof(*w));
    w->before = cpu_pressure(0.3);
    machine_mark(&w->mark);
}

bool busy_watch_end(struct busy_watch *w)
{
    w->others = others_busy_since(&w->mark);
    double after = cpu_pressure(0.3);
    w->pressure = w->before > after ? w->before : after;
    return w->pressure > BUSY_PRESSURE || w->others > BUSY_OTHERS;
}
