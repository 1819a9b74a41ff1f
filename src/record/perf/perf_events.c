/* perf_events.c - see perf_events.h */
#include "record/perf/perf_events.h"
#include "unwind/perf_regs.h"
#include "record/process.h"
#include "record/recorder.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The ring buffer per CPU: at least 512 KiB, what `perf record` takes and
 * what kernel.perf_event_mlock_kb (516 KiB) lets any user lock per CPU;
 * more for the records of RING_HOLD_MS at the requested rate, up to
 * 64 MiB (ring_pages_for()). */
#define RING_PAGES 128
#define RING_PAGES_MAX 16384
#define RING_PAGES_MIN 8
#define RING_HOLD_MS 250
/* The stack the kernel copies with each sample for -g dwarf, unless
 * --stack-size says otherwise (docs/stacks.md: how it was chosen). */
#define PERF_STACK_COPY_DEFAULT (32u * 1024u)
/* A sample record is at most 64 KiB (its size is a u16): the stack copy
 * must leave room for the rest. */
#define PERF_STACK_COPY_MAX 65000u
/* -g fp: the bytes of stack each sample brings along so the innermost
 * frameless frames can be unwound by CFI (a vDSO or libc leaf needs tens of
 * bytes; a signal frame a few hundred more). */
#define PERF_FP_REPAIR_STACK 2048u

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                               unsigned long flags)
{
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static int read_int_file(const char *path, int fallback)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return fallback;
    int v;
    if (fscanf(f, "%d", &v) != 1)
        v = fallback;
    fclose(f);
    return v;
}

int perf_event_paranoid(void)
{
    return read_int_file("/proc/sys/kernel/perf_event_paranoid", INT32_MIN);
}

static void describe_paranoid(char *buf, size_t size)
{
    int p = perf_event_paranoid();
    if (p == INT32_MIN)
        snprintf(buf, size, "kernel.perf_event_paranoid unreadable");
    else
        snprintf(buf, size, "kernel.perf_event_paranoid = %d", p);
}

/* The sampling event for OPTS: see perf_events.h.  KERNEL: it samples
 * kernel mode too (each sample then carries the user registers, whose PC
 * is where the thread entered the kernel). */
static void sampling_attr(struct perf_event_attr *a, const struct record_options *opts, bool kernel)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK;
    uint64_t period = (uint64_t)llround(1e9 / opts->frequency);
    a->sample_period = period ? period : 1;
    /* CPU: a thread has an event per CPU, and a value read with a sample
     * is that CPU's event's. */
    a->sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
    if (opts->stack_mode == STACK_FP) {
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
        a->exclude_callchain_kernel = 1;
        int max = read_int_file("/proc/sys/kernel/perf_event_max_stack", 127);
        a->sample_max_stack =
            (uint16_t)(max < STACK_MAX_DEPTH ? (max > 0 ? max : 1) : STACK_MAX_DEPTH);
        /* The registers and the top of the stack, to mend the chain through
         * frameless innermost frames (stack_repair_fp(), docs/stacks.md). */
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = PERF_REGS_USER_MASK;
        a->sample_stack_user = PERF_FP_REPAIR_STACK;
    } else if (opts->stack_mode == STACK_DWARF) {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = PERF_REGS_USER_MASK;
        a->sample_stack_user = (uint32_t)perf_events_stack_copy(opts);
    } else if (kernel) {
        a->sample_type |= PERF_SAMPLE_REGS_USER;
        a->sample_regs_user = PERF_REGS_USER_MASK;
    }
    a->disabled = 1;
    a->inherit = 1;
    a->exclude_kernel = !kernel;
    a->exclude_hv = 1;
    a->mmap = 1;
    a->mmap2 = 1;
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
}

size_t perf_events_stack_copy(const struct record_options *opts)
{
    size_t copy = opts->stack_size ? opts->stack_size : PERF_STACK_COPY_DEFAULT;
    if (copy > PERF_STACK_COPY_MAX)
        copy = PERF_STACK_COPY_MAX;
    return copy & ~(size_t)7;
}

bool perf_events_permitted(const struct record_options *opts, char *why, size_t size)
{
    struct perf_event_attr a;
    sampling_attr(&a, opts, false);
    pid_t pid = opts->attach_pid ? opts->attach_pid : 0;
    int fd = sys_perf_event_open(&a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    int err = errno;
    char paranoid[64];
    describe_paranoid(paranoid, sizeof(paranoid));
    if (fd >= 0) {
        close(fd);
        snprintf(why, size, "perf_event_open permitted (%s)", paranoid);
        return true;
    }
    switch (err) {
    case EACCES:
    case EPERM: {
        int p = perf_event_paranoid();
        char other[256];
        if (pid && process_of_another_user(pid, other, sizeof(other)))
            snprintf(why, size, "perf_event_open is not permitted: %s", other);
        else if (p != INT32_MIN && p > 2)
            snprintf(why, size,
                     "perf_event_open is not permitted (%s; 2 or below, or CAP_PERFMON, lets a "
                     "user sample their own programs)",
                     paranoid);
        else
            snprintf(why, size,
                     "perf_event_open is not permitted (%s, %s: a seccomp filter, a security "
                     "module or a container forbids it)",
                     strerror(err), paranoid);
        break;
    }
    case ENOSYS:
        snprintf(why, size,
                 "perf_event_open does not exist here (%s, %s: a kernel without perf events, or "
                 "a seccomp filter)",
                 strerror(err), paranoid);
        break;
    case ESRCH:
        snprintf(why, size, "no process %d for perf_event_open (%s)", (int)pid, paranoid);
        break;
    default:
        snprintf(why, size, "perf_event_open of the task-clock event failed (%s, %s)",
                 strerror(err), paranoid);
        break;
    }
    return false;
}

/* "0-3,5" from /sys/devices/system/cpu/online. */
static void online_cpus(struct perf_event_set *s)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    size_t cap = n > 0 ? (size_t)n : 1;
    s->cpus = xcalloc(cap, sizeof(*s->cpus));
    s->ncpus = 0;
    FILE *f = fopen("/sys/devices/system/cpu/online", "re");
    char line[4096];
    if (f && fgets(line, sizeof(line), f)) {
        char *p = line;
        while (*p && *p != '\n') {
            char *end;
            long lo = strtol(p, &end, 10), hi = lo;
            if (end == p)
                break;
            p = end;
            if (*p == '-') {
                hi = strtol(p + 1, &end, 10);
                p = end;
            }
            for (long c = lo; c <= hi && c >= 0; c++) {
                if (s->ncpus == cap) {
                    cap *= 2;
                    s->cpus = xrealloc(s->cpus, cap * sizeof(*s->cpus));
                }
                s->cpus[s->ncpus++] = (int)c;
            }
            if (*p == ',')
                p++;
        }
    }
    if (f)
        fclose(f);
    if (s->ncpus == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < online && (size_t)c < cap; c++)
            s->cpus[s->ncpus++] = (int)c;
    }
}

/* May this user count events in kernel mode (kernel.perf_event_paranoid
 * 1 or below, or CAP_PERFMON)?  Asked of the kernel itself: a counting
 * event on ourselves, opened and closed. */
static bool kernel_counting_permitted(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.disabled = 1;
    int fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* The counters of -e, and in which modes they count (perf_counters.h). */
static int init_counters(struct perf_event_set *s, const char *spec)
{
    if (perf_counters_parse(spec, &s->counters) != 0)
        return -1;
    if (s->kernel)
        return 0;
    for (size_t k = 0; k < s->counters.n; k++) {
        if (s->counters.c[k]->kernel_only) {
            char paranoid[64];
            describe_paranoid(paranoid, sizeof(paranoid));
            pt_err("-e %s: the kernel counts it in kernel mode only, which this user may not "
                   "count (%s; 1 or below, or CAP_PERFMON, allows it)",
                   s->counters.c[k]->name, paranoid);
            return -1;
        }
    }
    return 0;
}

/* Can the kernel read an inherited event's own value with each of its
 * samples (Linux 6.12 or later)?  Asked with A itself, on ourselves. */
static bool sample_read_supported(const struct perf_event_attr *a)
{
    struct perf_event_attr probe = *a;
    probe.sample_type |= PERF_SAMPLE_READ;
    probe.read_format = 0;
    int fd = sys_perf_event_open(&probe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* Does the kernel write each sampled thread's context switches
 * (PERF_RECORD_SWITCH, Linux 4.3 or later)?  Asked with A, on ourselves. */
static bool context_switches_supported(const struct perf_event_attr *a)
{
    struct perf_event_attr probe = *a;
    probe.context_switch = 1;
    int fd = sys_perf_event_open(&probe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/*
 * A ring buffer that holds RING_HOLD_MS of the records at the requested
 * rate (a CPU takes at most one sample per period of CPU time, whatever
 * the threads), so that a profiler kept off its CPU that long by a busy
 * machine loses nothing; at least RING_PAGES, at most RING_PAGES_MAX, a
 * power of two.  map_ring() halves it where the locked-memory limit
 * refuses it.
 */
static size_t ring_pages_for(const struct perf_event_attr *a, double hz)
{
    size_t record = 64 + (a->sample_type & PERF_SAMPLE_CALLCHAIN ? 8u * a->sample_max_stack : 0) +
                    (a->sample_type & PERF_SAMPLE_REGS_USER ? 8u * 33 : 0) +
                    (a->sample_type & PERF_SAMPLE_STACK_USER ? 16u + a->sample_stack_user : 0);
    double bytes = hz * (double)record * RING_HOLD_MS / 1000.0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = RING_PAGES;
    while (pages < RING_PAGES_MAX && (double)(pages * page) < bytes)
        pages *= 2;
    return pages;
}

int perf_events_init(struct perf_event_set *s, const struct record_options *opts)
{
    memset(s, 0, sizeof(*s));
    /* Kernel mode is sampled and counted where this user may: recent
     * kernels drop the samples of an exclude_kernel task-clock that land
     * in the kernel instead of taking them at the user PC. */
    s->kernel = kernel_counting_permitted();
    if (opts->events && init_counters(s, opts->events) != 0)
        return -1;
    if (opts->stack_mode == STACK_DWARF && opts->stack_size > PERF_STACK_COPY_MAX)
        pt_warn("--stack-size: the perf engine copies at most %u bytes of stack a sample",
                PERF_STACK_COPY_MAX);
    sampling_attr(&s->attr, opts, s->kernel);
    /* Each sample reads the thread's own CPU time (its task-clock,
     * exact) and the counters; an older kernel, whose samples carry the
     * periods alone, cannot read counters (perf_events_open_task()). */
    s->read_cpu = sample_read_supported(&s->attr);
    if (s->read_cpu || s->counters.n) {
        s->attr.sample_type |= PERF_SAMPLE_READ;
        s->attr.read_format = s->counters.n ? PERF_FORMAT_GROUP : 0;
    }
    /* When each thread leaves its CPU for a wait and comes back, stamped
     * by the kernel: the wall-clock view's waits (docs/recording.md). */
    s->switches = context_switches_supported(&s->attr);
    s->attr.context_switch = s->switches;
    s->layout = (struct perf_layout){
        .sample_type = s->attr.sample_type,
        .read_format = s->attr.read_format,
        .regs_user_mask = s->attr.sample_regs_user,
        .sample_id_all = true,
        .type = s->attr.type,
        .config = s->attr.config,
        .period = s->attr.sample_period,
        .use_clockid = true,
        .clockid = CLOCK_MONOTONIC,
        .exclude_kernel = !s->kernel,
    };
    online_cpus(s);
    for (size_t i = 0; i < s->ncpus; i++)
        if ((size_t)s->cpus[i] + 1 > s->slots_of_cpus)
            s->slots_of_cpus = (size_t)s->cpus[i] + 1;
    s->slot_of_cpu = xmalloc(s->slots_of_cpus * sizeof(*s->slot_of_cpu));
    for (size_t c = 0; c < s->slots_of_cpus; c++)
        s->slot_of_cpu[c] = -1;
    for (size_t i = 0; i < s->ncpus; i++)
        s->slot_of_cpu[s->cpus[i]] = (int)i;
    s->rings = xcalloc(s->ncpus, sizeof(*s->rings));
    s->ring_fd = xmalloc(s->ncpus * sizeof(*s->ring_fd));
    for (size_t i = 0; i < s->ncpus; i++)
        s->ring_fd[i] = -1;
    s->ring_pages = ring_pages_for(&s->attr, opts->frequency);
    return 0;
}

/* Map CPU I's ring on FD, with fewer pages if the locked-memory limit
 * refuses the default. */
static int map_ring(struct perf_event_set *s, size_t i, int fd)
{
    size_t pages = s->ring_pages;
    for (;;) {
        if (perf_ring_map(&s->rings[i], fd, pages) == 0) {
            s->ring_pages = pages; /* the next CPUs need not try more */
            s->ring_fd[i] = fd;
            return 0;
        }
        if (errno != EPERM || pages <= RING_PAGES_MIN) {
            pt_err("perf engine: cannot map a ring buffer of %zu KiB: %s%s", pages * 4,
                   strerror(errno),
                   errno == EPERM ? " (see kernel.perf_event_mlock_kb and ulimit -l)" : "");
            return -1;
        }
        pages /= 2;
    }
}

static void remember(int **fds, size_t *n, size_t *cap, int fd)
{
    *fds = xgrow(*fds, cap, *n + 1, sizeof(**fds));
    (*fds)[(*n)++] = fd;
}

static int open_counter(const struct perf_event_set *s, const struct perf_counter *c, pid_t tid,
                        int cpu, int leader)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = c->type;
    a.config = c->config;
    a.inherit = 1;
    a.exclude_kernel = !s->kernel;
    a.exclude_hv = 1;
    a.disabled = 0; /* follows its leader */
    /* Every event of a group must use its leader's clock. */
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    int fd = sys_perf_event_open(&a, tid, cpu, leader, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0)
        return fd;
    int err = errno;
    if (perf_counter_is_hardware(c) && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
        pt_err("-e %s: this CPU has no hardware counter for it (perf_event_open: %s)", c->name,
               strerror(err));
    else if (perf_counter_is_hardware(c) && (err == EINVAL || err == ENOSPC))
        pt_err("-e: the CPU cannot count these hardware events at once (more events than "
               "counters; perf_event_open of %s: %s)",
               c->name, strerror(err));
    else
        pt_err("-e %s: perf_event_open: %s", c->name, strerror(err));
    return -1;
}

int perf_events_open_task(struct perf_event_set *s, pid_t tid, bool on_exec)
{
    for (size_t i = 0; i < s->ncpus; i++) {
        struct perf_event_attr a = s->attr;
        a.disabled = on_exec ? 1 : 0;
        a.enable_on_exec = on_exec ? 1 : 0;
        /* Wake the reader when half the ring is full, not at every record. */
        a.watermark = 1;
        a.wakeup_watermark = (uint32_t)(s->ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 2);
        int fd = sys_perf_event_open(&a, tid, s->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == ESRCH)
                return -1; /* the thread is gone: nothing to sample */
            if (s->counters.n && err == EINVAL)
                pt_err("-e: this kernel cannot read counters with each sample of inherited "
                       "events (perf_event_open: %s; Linux 6.12 or later can)",
                       strerror(err));
            else
                pt_err("perf engine: perf_event_open of task %d on CPU %d: %s", (int)tid,
                       s->cpus[i], strerror(err));
            return -1;
        }
        remember(&s->leaders, &s->nleaders, &s->leaders_cap, fd);
        if (s->ring_fd[i] < 0) {
            if (map_ring(s, i, fd) != 0)
                return -1;
        } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_fd[i]) != 0) {
            pt_err("perf engine: PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
            return -1;
        }
        for (size_t k = 0; k < s->counters.n; k++) {
            int cfd = open_counter(s, s->counters.c[k], tid, s->cpus[i], fd);
            if (cfd < 0)
                return -1;
            remember(&s->members, &s->nmembers, &s->members_cap, cfd);
        }
    }
    return 0;
}

int perf_events_cpu_slot(const struct perf_event_set *s, uint32_t cpu)
{
    return cpu < s->slots_of_cpus ? s->slot_of_cpu[cpu] : -1;
}

uint64_t perf_events_task_clock(const struct perf_event_set *s)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->nleaders; i++) {
        /* With counters the leader reads as a group: nr, then the values,
         * the leader's first. */
        uint64_t buf[2 + PERF_COUNTERS_MAX];
        ssize_t n = read(s->leaders[i], buf, sizeof(buf));
        if ((s->attr.read_format & PERF_FORMAT_GROUP) && n >= 16)
            total += buf[1];
        else if (!(s->attr.read_format & PERF_FORMAT_GROUP) && n >= 8)
            total += buf[0];
    }
    return total;
}

void perf_events_disable(struct perf_event_set *s)
{
    for (size_t i = 0; i < s->nleaders; i++)
        ioctl(s->leaders[i], PERF_EVENT_IOC_DISABLE, 0);
}

void perf_events_close(struct perf_event_set *s)
{
    for (size_t i = 0; i < s->ncpus && s->rings; i++)
        perf_ring_unmap(&s->rings[i]);
    for (size_t i = 0; i < s->nmembers; i++)
        close(s->members[i]);
    for (size_t i = 0; i < s->nleaders; i++)
        close(s->leaders[i]);
    free(s->members);
    free(s->leaders);
    free(s->rings);
    free(s->ring_fd);
    free(s->cpus);
    free(s->slot_of_cpu);
    memset(s, 0, sizeof(*s));
}
