/* process.c - see process.h */
#include "record/process.h"
#include "record/proc_maps.h"
#include "unwind/stack.h"
#include "symbol/build_id.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct process *process_find(struct process_table *t, pid_t pid)
{
    /* Newest first: events mostly concern recently created processes. */
    for (size_t i = t->count; i-- > 0;)
        if (t->procs[i].pid == pid && !t->procs[i].exited)
            return &t->procs[i];
    return NULL;
}

size_t process_add(struct process_table *t, pid_t pid, pid_t ppid)
{
    for (size_t i = t->count; i-- > 0;)
        if (t->procs[i].pid == pid && !t->procs[i].exited)
            return i;
    t->procs = xgrow(t->procs, &t->capacity, t->count + 1, sizeof(*t->procs));
    struct process *p = &t->procs[t->count];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->ppid = ppid;
    jit_owner_read((uint32_t)pid, &p->owner);
    return t->count++;
}

void process_table_free(struct process_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        maps_clear(&t->procs[i].maps);
        maps_clear(&t->procs[i].since_exec);
        if (t->procs[i].unwinder)
            dwarf_unwinder_free(t->procs[i].unwinder);
    }
    free(t->procs);
    memset(t, 0, sizeof(*t));
}

static bool same_mapping(const struct map_entry *a, const struct map_entry *b)
{
    return a->start == b->start && a->end == b->end && a->offset == b->offset &&
           a->inode == b->inode && a->perms == b->perms && strcmp(a->path, b->path) == 0;
}

static bool is_file_backed(const struct map_entry *e)
{
    return e->inode != 0 && e->path[0] == '/';
}

/* Build-ids are read once per file: a program maps each file several times
 * and every process of a tree maps the same libraries. */
struct build_id_cache_entry {
    char *path;
    uint64_t inode;
    int len;
    uint8_t id[PROF_BUILD_ID_MAX];
};
static struct build_id_cache_entry *bid_cache;
static size_t bid_count, bid_cap;

static int cached_build_id(const struct map_entry *e, uint8_t *out)
{
    for (size_t i = 0; i < bid_count; i++) {
        if (bid_cache[i].inode == e->inode && strcmp(bid_cache[i].path, e->path) == 0) {
            memcpy(out, bid_cache[i].id, (size_t)bid_cache[i].len);
            return bid_cache[i].len;
        }
    }
    bid_cache = xgrow(bid_cache, &bid_cap, bid_count + 1, sizeof(*bid_cache));
    struct build_id_cache_entry *c = &bid_cache[bid_count++];
    c->path = xstrdup(e->path);
    c->inode = e->inode;
    int n = build_id_read(e->path, c->id, sizeof(c->id));
    c->len = n > 0 ? n : 0;
    memcpy(out, c->id, (size_t)c->len);
    return c->len;
}

void process_report_map(const struct process *p, const struct map_entry *e, struct output *out,
                        uint64_t time_ns)
{
    struct prof_map m = {
        .pid = (uint32_t)p->pid,
        .time_ns = time_ns,
        .start = e->start,
        .end = e->end,
        .offset = e->offset,
        .inode = e->inode,
        .dev_major = e->dev_major,
        .dev_minor = e->dev_minor,
        .perms = e->perms,
        .path = e->path,
    };
    if (is_file_backed(e) && (e->perms & MAP_PERM_EXEC))
        m.build_id_len = (uint8_t)cached_build_id(e, m.build_id);
    output_map(out, &m);
}

bool process_capture_image(struct process *p, uint64_t start, uint64_t end, const char *name,
                           struct output *out)
{
    size_t size = end > start ? (size_t)(end - start) : 0;
    if (size == 0 || size > (1u << 20))
        return false;
    void *buf = xmalloc(size);
    struct iovec local = {buf, size};
    struct iovec remote = {(void *)(uintptr_t)start, size};
    bool ok = process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)size;
    if (ok)
        output_image(out, (uint32_t)p->pid, start, name, buf, size);
    free(buf);
    return ok;
}

static void capture_vdso(struct process *p, struct output *out)
{
    for (size_t i = 0; i < p->maps.count; i++) {
        const struct map_entry *e = &p->maps.entries[i];
        if (strcmp(e->path, "[vdso]") == 0) {
            p->vdso_captured = process_capture_image(p, e->start, e->end, "[vdso]", out);
            return;
        }
    }
}

/* Do we hold CAP_SYS_PTRACE, which lets a profiler past another user's
 * process?  (Root holds it.) */
static bool may_trace_others(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return geteuid() == 0;
    char line[256];
    unsigned long long caps = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            break;
    fclose(f);
    return caps & (1ull << 19); /* CAP_SYS_PTRACE */
}

bool process_of_another_user(pid_t pid, char *why, size_t size)
{
    struct jit_owner o;
    if (!jit_owner_read((uint32_t)pid, &o) || may_trace_others())
        return false;
    uid_t me = getuid();
    if (o.uid[0] == me && o.uid[1] == me && o.uid[2] == me)
        return false;
    uint32_t theirs = o.uid[0] != me ? o.uid[0] : o.uid[1] != me ? o.uid[1] : o.uid[2];
    snprintf(why, size,
             "process %d belongs to another user (uid %u; you are uid %u): only root or a "
             "profiler with CAP_SYS_PTRACE may record it",
             (int)pid, theirs, (unsigned)me);
    return true;
}

int process_check_attachable(pid_t pid)
{
    pid_t tgid = pid, ppid = 0;
    if (proc_status_ids(pid, &tgid, &ppid) != 0) {
        pt_err("no process %d", (int)pid);
        return -1;
    }
    if (tgid != pid) {
        pt_err("%d is a thread of process %d; attach to the process", (int)pid, (int)tgid);
        return -1;
    }
    char why[256];
    if (process_of_another_user(pid, why, sizeof(why))) {
        pt_err("cannot attach: %s", why);
        return -1;
    }
    return 0;
}

/* Is E (from a list sorted by start) also in SORTED?  Binary search on the
 * start, then a look at the few entries sharing it. */
static bool contains(const struct map_list *sorted, const struct map_entry *e)
{
    size_t lo = 0, hi = sorted->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted->entries[mid].start < e->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < sorted->count && sorted->entries[k].start == e->start; k++)
        if (same_mapping(&sorted->entries[k], e))
            return true;
    return false;
}

bool process_refresh_maps(struct process *p, struct output *out, uint64_t time_ns)
{
    struct map_list now = {0};
    if (maps_read(p->pid, &now) != 0) {
        maps_clear(&now);
        return false;
    }
    bool changed = false;
    /* Removals first, so a range that was replaced (mprotect, a new mmap at
     * the same place) ends before its successor begins. */
    for (size_t i = 0; i < p->maps.count; i++) {
        if (!contains(&now, &p->maps.entries[i])) {
            output_unmap(out, (uint32_t)p->pid, time_ns, p->maps.entries[i].start,
                         p->maps.entries[i].end);
            changed = true;
        }
    }
    for (size_t j = 0; j < now.count; j++) {
        if (!contains(&p->maps, &now.entries[j])) {
            process_report_map(p, &now.entries[j], out, time_ns);
            if (is_file_backed(&now.entries[j]) && (now.entries[j].perms & MAP_PERM_EXEC))
                maps_add_unique(&p->since_exec, &now.entries[j]);
            changed = true;
        }
    }
    maps_clear(&p->maps);
    p->maps = now;
    if (changed)
        p->maps_version++;
    if (!p->vdso_captured)
        capture_vdso(p, out);
    return changed;
}

void process_exec(struct process *p)
{
    maps_clear(&p->maps);
    maps_clear(&p->since_exec);
    p->vdso_captured = false;
    p->maps_version++;
    struct jit_owner now;
    if (jit_owner_read((uint32_t)p->pid, &now))
        p->owner = now; /* a set-user-ID program runs as another user */
    if (p->unwinder) {
        dwarf_unwinder_free(p->unwinder);
        p->unwinder = NULL;
    }
}

/* The first mapping (sorted, never overlapping) that ends above ADDR: the
 * one holding it, else the next one up; NULL past the last. */
static const struct map_entry *first_ending_above(const struct process *p, uint64_t addr)
{
    size_t lo = 0, hi = p->maps.count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->maps.entries[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->maps.count ? &p->maps.entries[lo] : NULL;
}

const struct map_entry *process_map_at(const struct process *p, uint64_t addr)
{
    const struct map_entry *e = first_ending_above(p, addr);
    return e && e->start <= addr ? e : NULL;
}

const struct map_entry *process_stack_at(const struct process *p, uint64_t sp)
{
    const struct map_entry *e = first_ending_above(p, sp);
    if (e && (e->start <= sp || strcmp(e->path, "[stack]") == 0))
        return e;
    return NULL;
}

bool process_knows_pc(const struct process *p, uint64_t pc)
{
    return process_map_at(p, pc) != NULL;
}

bool process_knows_code(const struct process *p, uint64_t pc)
{
    const struct map_entry *e = process_map_at(p, pc);
    return e && (e->perms & MAP_PERM_EXEC);
}

int proc_status_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int found = 0;
    while (found < 2 && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Tgid:", 5) == 0) {
            *tgid = (pid_t)atoi(line + 5);
            found++;
        } else if (strncmp(line, "PPid:", 5) == 0) {
            *ppid = (pid_t)atoi(line + 5);
            found++;
        }
    }
    fclose(f);
    return found == 2 ? 0 : -1;
}

void proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(buf, (int)size, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

void proc_exe(pid_t pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
}

void proc_cmdline(pid_t pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
}

const char *proc_stat_state(pid_t pid, pid_t tid, char *buf, size_t size)
{
    char path[64];
    if (tid > 0)
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    else
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    /* "PID (COMM) STATE ...": the name may hold anything, ')' and spaces
     * included, so the fields follow the last ')'. */
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] == '\0')
        return NULL;
    return p + 2;
}

bool proc_zombie_status(pid_t pid, int *status)
{
    char buf[1024];
    /* Field 3 is the state, field 52 the exit code. */
    const char *p = proc_stat_state(pid, 0, buf, sizeof(buf));
    if (!p || *p != 'Z')
        return false;
    for (int field = 3; field < 52; field++) {
        p = strchr(p, ' ');
        if (!p)
            return false;
        p++;
    }
    char *end;
    long code = strtol(p, &end, 10);
    if (end == p)
        return false;
    *status = (int)code;
    return true;
}
