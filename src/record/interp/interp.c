/*
 * interp.c - which traced process runs which interpreter, the reads and
 * their counts (interp.h).  A process is probed again only when its maps
 * changed since the last look.
 */
#include "record/interp/interp.h"
#include "record/interp/interp_names.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct interp_ops *const modules[] = {&python_interp_ops, NULL};

/* What is known of one process. */
struct interp_proc {
    pid_t pid;
    uint64_t maps_version; /* of the last look */
    bool looked;
    const struct interp_ops *ops; /* NULL: no interpreter we read */
    void *rt;
    bool warned;
};

struct interp {
    struct output *out;
    struct interp_names *names;
    struct interp_proc *procs;
    size_t nprocs, procs_cap;
    size_t last;     /* the process looked up last */
    char found[128]; /* the first runtime found, described */
    uint64_t reads, read_ok, frames, cut;
    uint64_t read_ns;   /* spent reading (the ptrace engine: inside the stop window) */
    uint64_t finish_ns; /* spent naming deferred frames (after the resume) */
    uint64_t finishes;
    uint64_t failures[INTERP_FAILURES];
};

static const char *const failure_names[INTERP_FAILURES] = {
    [INTERP_NO_THREAD] = "no thread state",
    [INTERP_BAD_READ] = "unreadable memory",
    [INTERP_BAD_OBJECT] = "invalid objects",
    [INTERP_TORN] = "torn (changed during the read)",
    [INTERP_STALE] = "moved since the sample",
    [INTERP_UNCHECKED] = "nothing to check against the sample",
    [INTERP_LATE] = "too late after the sample",
};

bool interp_wanted(bool stacks)
{
    const char *env = getenv("PTPROF_INTERP");
    return stacks && !(env && strcmp(env, "0") == 0);
}

struct interp *interp_new(struct output *out, bool stacks)
{
    if (!interp_wanted(stacks))
        return NULL;
    struct interp *in = xcalloc(1, sizeof(*in));
    in->out = out;
    in->names = interp_names_new(out);
    /* The symbolizer must still read the binaries for the other frames. */
    output_meta(out, "locations", "interpreter");
    return in;
}

static struct interp_proc *proc_of(struct interp *in, pid_t pid)
{
    if (in->last < in->nprocs && in->procs[in->last].pid == pid)
        return &in->procs[in->last];
    for (size_t i = 0; i < in->nprocs; i++) {
        if (in->procs[i].pid == pid) {
            in->last = i;
            return &in->procs[i];
        }
    }
    in->procs = xgrow(in->procs, &in->procs_cap, in->nprocs + 1, sizeof(*in->procs));
    in->procs[in->nprocs] = (struct interp_proc){.pid = pid};
    in->last = in->nprocs;
    return &in->procs[in->nprocs++];
}

static void drop_runtime(struct interp_proc *ip)
{
    if (ip->ops && ip->rt)
        ip->ops->release(ip->rt);
    ip->ops = NULL;
    ip->rt = NULL;
}

/* P's interpreter, probed again when its maps changed. */
static struct interp_proc *look(struct interp *in, const struct process *p)
{
    struct interp_proc *ip = proc_of(in, p->pid);
    if (ip->looked && ip->maps_version == p->maps_version)
        return ip;
    ip->looked = true;
    ip->maps_version = p->maps_version;
    if (ip->ops && ip->ops->still_mapped(ip->rt, &p->maps))
        return ip;
    drop_runtime(ip);
    for (size_t m = 0; modules[m]; m++) {
        char why[256] = "";
        void *rt = modules[m]->probe(p->pid, &p->maps, why, sizeof(why));
        if (rt) {
            ip->ops = modules[m];
            ip->rt = rt;
            pt_debug("process %d runs %s: its frames are read", (int)p->pid, ip->ops->describe(rt));
            if (!in->found[0])
                snprintf(in->found, sizeof(in->found), "%s", ip->ops->describe(rt));
            break;
        }
        if (why[0] && !ip->warned) {
            pt_warn("process %d: %s; its native frames only", (int)p->pid, why);
            ip->warned = true;
        }
    }
    return ip;
}

static void count_failure(struct interp *in, enum interp_failure why)
{
    in->failures[why < INTERP_FAILURES ? why : INTERP_BAD_READ]++;
}

static void count_read(struct interp *in, const struct interp_stack *st)
{
    in->read_ok++;
    in->frames += st->n;
    in->cut += st->cut;
}

bool interp_read(struct interp *in, struct process *p, pid_t tid, const struct interp_when *when,
                 struct interp_stack *st)
{
    if (!st)
        return false;
    st->n = 0;
    st->ndeferred = 0;
    st->cut = false;
    if (!in || !p || p->exited)
        return false;
    struct interp_proc *ip = look(in, p);
    if (!ip->ops)
        return false;
    in->reads++;
    if (when && when->sample && when->max_age_ns && when->age_ns > when->max_age_ns) {
        in->failures[INTERP_LATE]++;
        return false;
    }
    enum interp_failure why = INTERP_BAD_READ;
    uint64_t start = monotonic_ns();
    bool ok = ip->ops->read_thread(ip->rt, tid, when, in->names, (uint32_t)p->pid, st, &why);
    in->read_ns += monotonic_ns() - start;
    if (!ok) {
        st->n = 0;
        st->ndeferred = 0;
        count_failure(in, why);
        return false;
    }
    if (st->ndeferred == 0)
        count_read(in, st);
    return true;
}

bool interp_finish(struct interp *in, const struct process *p, struct interp_stack *st)
{
    if (!st || st->ndeferred == 0)
        return true;
    struct interp_proc *ip = in && p ? proc_of(in, p->pid) : NULL;
    enum interp_failure why = INTERP_BAD_READ;
    bool ok = false;
    if (ip && ip->ops && ip->ops->finish_thread && !p->exited) {
        uint64_t start = monotonic_ns();
        ok = ip->ops->finish_thread(ip->rt, in->names, (uint32_t)p->pid, st, &why);
        in->finish_ns += monotonic_ns() - start;
        in->finishes++;
    }
    st->ndeferred = 0;
    if (!ok) {
        st->n = 0;
        if (in)
            count_failure(in, why);
        return false;
    }
    count_read(in, st);
    return true;
}

int interp_merge(struct interp *in, const struct process *p, const struct interp_stack *st,
                 uint64_t *pcs, int depth, int max)
{
    if (!in || !p || !st || st->n == 0 || st->ndeferred)
        return depth; /* nothing, or not named yet */
    struct interp_proc *ip = proc_of(in, p->pid);
    if (!ip->ops)
        return depth;
    return interp_merge_stack(ip->ops->is_eval_pc, ip->rt, st, pcs, depth, max);
}

static uint64_t unreadable(const struct interp *in)
{
    uint64_t n = 0;
    for (int i = 0; i < INTERP_FAILURES; i++)
        if (i != INTERP_NO_THREAD)
            n += in->failures[i];
    return n;
}

bool interp_found(const struct interp *in)
{
    return in && in->found[0];
}

void interp_print_summary(const struct interp *in, FILE *f)
{
    if (!in)
        return;
    if (!in->found[0]) {
        fprintf(f, "[debug] interpreter: none found (native frames only)\n");
        return;
    }
    fprintf(f,
            "[debug] interpreter: %s; %" PRIu64 " stacks read (%.1f frames each), %" PRIu64
            " cut at %d frames, %zu names; %.2f us per read\n",
            in->found, in->read_ok, in->read_ok ? (double)in->frames / (double)in->read_ok : 0.0,
            in->cut, INTERP_MAX_FRAMES, interp_names_count(in->names),
            in->reads ? (double)in->read_ns / 1e3 / (double)in->reads : 0.0);
    if (in->finishes)
        fprintf(f,
                "[debug] interpreter: %" PRIu64 " reads named known frames after the resume: "
                "%.2f us each\n",
                in->finishes, (double)in->finish_ns / 1e3 / (double)in->finishes);
    fprintf(f, "[debug] interpreter: %" PRIu64 " of %" PRIu64 " reads unreadable (", unreadable(in),
            in->reads);
    for (int i = 0; i < INTERP_FAILURES; i++)
        fprintf(f, "%s%s %" PRIu64, i ? ", " : "", failure_names[i], in->failures[i]);
    fprintf(f, "): native frames kept\n");
}

void interp_write_meta(const struct interp *in, struct output *out, const char *consistency)
{
    if (!in || !in->found[0])
        return;
    char buf[64];
    output_meta(out, "interp", in->found);
    output_meta(out, "interp_consistency", consistency);
    snprintf(buf, sizeof(buf), "%" PRIu64, in->read_ok);
    output_meta(out, "interp_stacks", buf);
    snprintf(buf, sizeof(buf), "%" PRIu64, unreadable(in));
    output_meta(out, "interp_unreadable", buf);
    snprintf(buf, sizeof(buf), "%" PRIu64, in->failures[INTERP_TORN]);
    output_meta(out, "interp_torn", buf);
}

void interp_free(struct interp *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->nprocs; i++)
        drop_runtime(&in->procs[i]);
    free(in->procs);
    interp_names_free(in->names);
    free(in);
}
