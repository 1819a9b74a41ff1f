/*
 * unwind_dwarf.c - see stack.h: DWARF CFI unwinding of a stack snapshot
 * with elfutils' libdwfl, after the target has been resumed.
 *
 * libdwfl unwinds a "process" whose threads, registers and memory it gets
 * from callbacks, and a Dwfl accepts those callbacks only once
 * (dwfl_attach_state).  So one Dwfl per process lives as long as the
 * process, and the callbacks read the sample being unwound from the
 * unwinder: its one thread is the sampled thread, its registers are the
 * snapshot's, and its memory is the copied top of the stack and nothing
 * else.  Refusing every other address is what makes unwinding after the
 * resume safe: the live stack has moved on, and a word read from it would
 * silently splice a later call chain onto the sampled one.  CFI programs
 * only load stack slots, so nothing is lost; an unwind that needs a word
 * above the copy ends there, and says so (docs/stacks.md).
 *
 * JIT-compiled code lies in no module and has no CFI: for such a frame
 * libdwfl falls back to the architecture's frame-pointer step (elfutils'
 * x86_64_unwind / aarch64_unwind), whose frame record is read through
 * memory_read from the same copy, and CFI resumes at the next frame that
 * has it (docs/stacks.md, "JIT-compiled code").
 */
#include "unwind/stack.h"
#include "unwind/regs.h"
#include "model/maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dwarf_unwinder {
    pid_t pid;
    Dwfl *dwfl;
    /* Offline (a process of a recorded file): its maps in /proc/PID/maps
     * form, reported instead of the live process's. */
    bool offline;
    char *maps_text;
    size_t maps_len;
    bool reported;      /* modules reported at least once */
    bool maps_changed;  /* report again before the next unwind */
    bool attached;      /* dwfl_attach_state done */
    bool attach_failed; /* until modules are reported again */
    bool warned;

    /* The sample being unwound, for the callbacks. */
    pid_t tid;
    const struct stack_snapshot *snap;
    uint64_t *pcs;
    int max, depth;
    bool hit_end; /* a word above the copy was asked for */
};

/*
 * No separate debug info while recording: .eh_frame, which every Debian
 * binary carries, is what unwinding needs, and opening a multi-megabyte
 * .debug file in the middle of a recording (libc's, at the first stack
 * that reaches start_thread) stalls sampling for half a second.
 */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
    (void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    struct dwarf_unwinder *u = arg;
    if (*thread_argp != NULL)
        return 0;
    *thread_argp = u;
    return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    struct dwarf_unwinder *u = arg;
    if (tid != u->tid)
        return false;
    *thread_argp = u;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct dwarf_unwinder *u = arg;
    const struct stack_snapshot *s = u->snap;
#if defined(__x86_64__)
    /* After `leave` GCC's CFI still has the caller's frame pointer saved
     * at CFA - 16, the word just below the stack pointer, which no copy
     * holds: leave popped it into the frame pointer register, so that
     * register holds it.  Only the innermost frame can ask for it (every
     * other frame's slots lie above the snapshot's stack pointer). */
    if (addr == s->sp - sizeof(*result) && !s->pc_sp_only) {
        *result = (Dwarf_Word)REGS_FP(s->regs);
        return true;
    }
#endif
    if (addr < s->sp || s->size < sizeof(*result) || addr - s->sp > s->size - sizeof(*result)) {
        if (addr >= s->sp)
            u->hit_end = true;
        return false;
    }
    memcpy(result, s->data + (addr - s->sp), sizeof(*result));
    return true;
}

/* The stack pointer's DWARF register number. */
#if defined(__x86_64__)
enum { DWARF_REG_SP = 7 };
#elif defined(__aarch64__)
enum { DWARF_REG_SP = 31 };
#elif defined(__riscv)
enum { DWARF_REG_SP = 2 };
#endif

/* The snapshot's registers in the DWARF numbering of the architecture. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    const struct stack_snapshot *snap = ((struct dwarf_unwinder *)arg)->snap;
    const struct user_regs_struct *r = &snap->regs;
    if (snap->pc_sp_only) {
        Dwarf_Word sp = (Dwarf_Word)REGS_SP(*r);
        if (!dwfl_thread_state_registers(thread, DWARF_REG_SP, 1, &sp))
            return false;
        dwfl_thread_state_register_pc(thread, (Dwarf_Word)REGS_PC(*r));
        return true;
    }
#if defined(__x86_64__)
    const Dwarf_Word regs[17] = {
        r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
        r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
    };
    return dwfl_thread_state_registers(thread, 0, 17, regs);
#elif defined(__aarch64__)
    Dwarf_Word regs[32];
    for (int i = 0; i < 31; i++)
        regs[i] = r->regs[i];
    regs[31] = r->sp;
    if (!dwfl_thread_state_registers(thread, 0, 32, regs))
        return false;
    dwfl_thread_state_register_pc(thread, r->pc);
    return true;
#elif defined(__riscv)
    /* user_regs_struct is pc, then x1..x31 in order; x0 is zero. */
    Dwarf_Word regs[32];
    const unsigned long *x = (const unsigned long *)r;
    regs[0] = 0;
    for (int i = 1; i < 32; i++)
        regs[i] = x[i];
    if (!dwfl_thread_state_registers(thread, 0, 32, regs))
        return false;
    dwfl_thread_state_register_pc(thread, r->pc);
    return true;
#endif
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

struct dwarf_unwinder *dwarf_unwinder_new(pid_t pid)
{
    Dwfl *dwfl = dwfl_begin(&proc_callbacks);
    if (dwfl == NULL) {
        pt_err("libdwfl: %s", dwfl_errmsg(-1));
        return NULL;
    }
    struct dwarf_unwinder *u = xcalloc(1, sizeof(*u));
    u->pid = pid;
    u->dwfl = dwfl;
    return u;
}

struct dwarf_unwinder *dwarf_unwinder_new_offline(pid_t pid)
{
    struct dwarf_unwinder *u = dwarf_unwinder_new(pid);
    if (u)
        u->offline = true;
    return u;
}

void dwarf_unwinder_set_maps(struct dwarf_unwinder *u, const struct map_entry *maps, size_t n)
{
    free(u->maps_text);
    u->maps_text = NULL;
    u->maps_len = 0;
    FILE *f = open_memstream(&u->maps_text, &u->maps_len);
    if (!f)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct map_entry *m = &maps[i];
        if (m->path[0] != '/')
            continue; /* anonymous memory, [vdso], [stack]: no file to read */
        /* Each mapping as if it began at its file's offset 0: libdwfl takes
         * a module's load address from the first mapping of its file, and
         * a recording may know only the executable one. */
        uint64_t base = m->start >= m->offset ? m->start - m->offset : m->start;
        fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 %02x:%02x %" PRIu64 " %s\n", base, m->end,
                m->dev_major, m->dev_minor, m->inode, m->path);
    }
    fclose(f);
    dwarf_unwinder_maps_changed(u);
}

void dwarf_unwinder_maps_changed(struct dwarf_unwinder *u)
{
    u->maps_changed = true;
    /* A process caught between vfork and exec has no modules of its own
     * yet; with new maps, attaching may work. */
    u->attach_failed = false;
}

static int load_vdso(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                     void *arg)
{
    (void)userdata, (void)start, (void)arg;
    Dwarf_Addr bias;
    if (strncmp(name, "[vdso", 5) == 0)
        dwfl_module_getelf(mod, &bias);
    return DWARF_CB_OK;
}

/* The maps an offline unwinder was given, as modules.  The live vDSO has
 * no file; its lines were left out. */
static void report_offline_modules(struct dwarf_unwinder *u)
{
    dwfl_report_begin(u->dwfl);
    FILE *f = fmemopen(u->maps_text, u->maps_len, "r");
    int rc = f ? dwfl_linux_proc_maps_report(u->dwfl, f) : -1;
    if (f)
        fclose(f);
    if (dwfl_report_end(u->dwfl, NULL, NULL) != 0 || rc != 0)
        pt_debug("unwind: modules of recorded process %d: %s", (int)u->pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
    u->reported = true;
    u->maps_changed = false;
    u->attach_failed = false;
}

static void report_modules(struct dwarf_unwinder *u)
{
    if (u->offline) {
        report_offline_modules(u);
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)u->pid);
    /* Reporting starts by forgetting every module: when the process has
     * gone (its last samples are unwound after it exited), keep what we
     * know instead. */
    if (access(path, R_OK) != 0)
        return;
    dwfl_report_begin(u->dwfl);
    int rc = dwfl_linux_proc_report(u->dwfl, u->pid);
    /* A module that could not be reported leaves its PCs unwound to the PC
     * alone; the others are still worth having, so this is not fatal. */
    if (dwfl_report_end(u->dwfl, NULL, NULL) != 0 || rc != 0)
        pt_debug("unwind: modules of process %d: %s", (int)u->pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
    u->reported = true;
    u->maps_changed = false;
    u->attach_failed = false;
    /* The vDSO image is read from the process's memory on first use; do it
     * now, while the process is certainly there. */
    dwfl_getmodules(u->dwfl, load_vdso, NULL, 0);
}

/*
 * The ELF libdwfl takes the architecture's unwinding backend from.  Given
 * none, it borrows the backend of the first module it finds and frees it
 * with that module, when the maps are reported again without it: the next
 * unwind called through freed memory (a JIT's process, whose maps change
 * all the time: node --perf-basic-prof crashed the recorder in 2 of 6 runs
 * on a busy machine).  Given an ELF, the backend is the Dwfl's own.  The
 * recorder's own executable: the registers it hands over are its own
 * architecture's.  Opened once for every unwinder (a recording may unwind
 * hundreds of processes) and open until the recorder exits; NULL
 * (libdwfl's choice) if it cannot be opened.
 */
static Elf *own_elf;

static void open_own_elf(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
        own_elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
}

static Elf *arch_elf(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, open_own_elf);
    return own_elf;
}

static int frame_callback(Dwfl_Frame *frame, void *arg)
{
    struct dwarf_unwinder *u = arg;
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, NULL))
        return DWARF_CB_ABORT;
    u->pcs[u->depth++] = pc;
    return u->depth < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

struct Dwfl *dwarf_unwinder_modules(struct dwarf_unwinder *u)
{
    if (!u->reported || u->maps_changed)
        report_modules(u);
    return u->reported ? u->dwfl : NULL;
}

int dwarf_unwind(struct dwarf_unwinder *u, pid_t tid, const struct stack_snapshot *s, uint64_t *pcs,
                 int max, bool *truncated)
{
    if (truncated)
        *truncated = false;
    if (max <= 0)
        return 0;
    if (!u->reported || u->maps_changed)
        report_modules(u);
    if (u->reported && !u->attached && !u->attach_failed) {
        u->attached = dwfl_attach_state(u->dwfl, arch_elf(), u->pid, &thread_callbacks, u);
        if (!u->attached) {
            /* Expected for a vfork child before its exec: not worth a
             * warning; its samples keep their PC. */
            if (!u->warned)
                pt_debug("DWARF unwinding unavailable for process %d: %s", (int)u->pid,
                         dwfl_errmsg(-1));
            u->warned = true;
            u->attach_failed = true;
        }
    }

    u->tid = tid;
    u->snap = s;
    u->pcs = pcs;
    u->max = max;
    u->depth = 0;
    u->hit_end = false;
    if (u->attached)
        dwfl_getthread_frames(u->dwfl, tid, frame_callback, u);
    /* End of stack and an unreadable word look alike to libdwfl (-1): the
     * frames found so far are the answer either way, but a word asked for
     * above a copy that stops short of the stack's top means the stack
     * went on. */
    if (truncated && u->hit_end && !s->complete && u->depth < max)
        *truncated = true;
    if (u->depth == 0)
        pcs[u->depth++] = (uint64_t)REGS_PC(s->regs);
    u->snap = NULL;
    return u->depth;
}

void dwarf_unwinder_free(struct dwarf_unwinder *u)
{
    if (u == NULL)
        return;
    dwfl_end(u->dwfl);
    free(u->maps_text);
    free(u);
}
