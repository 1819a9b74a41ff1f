/*
 * gperftools_write.c - see gperftools.h: a struct profile as a 64-bit
 * little-endian gperftools CPU profile, CPU time counted in periods.
 */
#include "interop/gperftools.h"
#include "model/maps.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An open-addressing map from a pair of words to an index, for threads (tid)
 * and call chains (pc, stack id). */
struct pair_map {
    uint64_t *keys; /* 2 per bucket */
    size_t *vals;   /* index + 1, 0 = empty */
    size_t mask, used;
};

static size_t pair_hash(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15u)) * 0xff51afd7ed558ccdu;
    return (size_t)(h ^ (h >> 29));
}

static void pair_map_grow(struct pair_map *m)
{
    size_t size = m->mask ? (m->mask + 1) * 2 : 256;
    uint64_t *keys = xcalloc(size * 2, sizeof(*keys));
    size_t *vals = xcalloc(size, sizeof(*vals));
    for (size_t i = 0; m->mask && i <= m->mask; i++) {
        if (!m->vals[i])
            continue;
        size_t b = pair_hash(m->keys[2 * i], m->keys[2 * i + 1]) & (size - 1);
        while (vals[b])
            b = (b + 1) & (size - 1);
        keys[2 * b] = m->keys[2 * i];
        keys[2 * b + 1] = m->keys[2 * i + 1];
        vals[b] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->mask = size - 1;
}

/* The index stored for (A, B); a new key gets NEXT and *ADDED is set. */
static size_t pair_map_get(struct pair_map *m, uint64_t a, uint64_t b, size_t next, bool *added)
{
    if ((m->used + 1) * 2 > m->mask + 1)
        pair_map_grow(m);
    size_t i = pair_hash(a, b) & m->mask;
    for (; m->vals[i]; i = (i + 1) & m->mask)
        if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b) {
            *added = false;
            return m->vals[i] - 1;
        }
    m->keys[2 * i] = a;
    m->keys[2 * i + 1] = b;
    m->vals[i] = next + 1;
    m->used++;
    *added = true;
    return next;
}

static void pair_map_free(struct pair_map *m)
{
    free(m->keys);
    free(m->vals);
}

struct chain {
    uint64_t pc;
    uint32_t stack;
    uint64_t cpu_ns;
};

struct thread_cpu {
    uint64_t cpu_ns;
};

/* What the samples of the written process add up to. */
struct tally {
    struct chain *chains;
    size_t nchains, cap;
    uint64_t first_ns, last_ns; /* sample times with CPU time, for the maps */
    bool any;
    uint64_t other_samples; /* thread appearances of other processes */
};

static uint64_t period_us_of(const struct profile *p)
{
    if (p->frequency > 0) {
        double us = round(1e6 / p->frequency);
        return us < 1 ? 1 : us > 1e8 ? 100000000u : (uint64_t)us;
    }
    if (p->nsamples >= 2) {
        /* Samples standing for several (weights) stand for as many periods. */
        uint64_t first = p->samples[0].time_ns, last = p->samples[p->nsamples - 1].time_ns;
        uint64_t periods = 0;
        for (size_t i = 1; i < p->nsamples; i++)
            periods += p->samples[i].nthreads ? prof_weight(&p->samples[i], 0) : 1;
        uint64_t us = last > first ? (last - first) / periods / 1000 : 0;
        if (us > 0 && us <= 100000000u)
            return us;
    }
    return GPERFTOOLS_DEFAULT_PERIOD_US;
}

static uint32_t written_pid(const struct profile *p)
{
    if (p->nprocesses)
        return p->processes[0].pid;
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].nthreads)
            return p->samples[i].threads[0].pid;
    return 0;
}

/* Every thread's CPU time per (pc, stack) of process PID, as flat profiles
 * count it, except that a first appearance is worth at most one period per
 * sample it stands for. */
static void tally_samples(const struct profile *p, uint32_t pid, uint64_t period_ns,
                          struct tally *t)
{
    struct pair_map threads = {0}, chains = {0};
    struct thread_cpu *cpu = NULL;
    size_t ncpu = 0, cpu_cap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t k = 0; k < s->nthreads; k++) {
            const struct prof_thread_sample *th = &s->threads[k];
            if (th->pid != pid) {
                t->other_samples++;
                continue;
            }
            bool added;
            size_t ti = pair_map_get(&threads, th->tid, 0, ncpu, &added);
            uint64_t delta;
            if (added) {
                cpu = xgrow(cpu, &cpu_cap, ncpu + 1, sizeof(*cpu));
                ncpu++;
                uint64_t w = prof_weight(s, k); /* w periods at most: w x period <= cpu_ns */
                delta = th->cpu_ns / period_ns < w ? th->cpu_ns : period_ns * w;
            } else {
                /* Backwards: a reused tid; it counts from here. */
                delta = th->cpu_ns >= cpu[ti].cpu_ns ? th->cpu_ns - cpu[ti].cpu_ns : 0;
            }
            cpu[ti].cpu_ns = th->cpu_ns;
            if (delta == 0)
                continue;
            uint32_t stack = th->stack < p->nstacks ? th->stack : 0;
            size_t ci = pair_map_get(&chains, th->pc, stack, t->nchains, &added);
            if (added) {
                t->chains = xgrow(t->chains, &t->cap, t->nchains + 1, sizeof(*t->chains));
                t->chains[t->nchains++] = (struct chain){.pc = th->pc, .stack = stack};
            }
            t->chains[ci].cpu_ns += delta;
            if (!t->any || s->time_ns < t->first_ns)
                t->first_ns = s->time_ns;
            if (!t->any || s->time_ns > t->last_ns)
                t->last_ns = s->time_ns;
            t->any = true;
        }
    }
    free(cpu);
    pair_map_free(&threads);
    pair_map_free(&chains);
}

static void put_slot(FILE *out, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    fwrite(b, 1, sizeof(b), out);
}

/* One record per chain.  Counts round the running total, so they add up to
 * the rounded whole and no chain is off by a period or more.  Returns the
 * ticks left out because the chain starts at PC 0, which some readers take
 * for the trailer. */
static uint64_t write_records(const struct profile *p, const struct tally *t, uint64_t period_ns,
                              FILE *out)
{
    uint64_t cum_ns = 0, written = 0, dropped = 0;
    for (size_t i = 0; i < t->nchains; i++) {
        const struct chain *c = &t->chains[i];
        cum_ns += c->cpu_ns;
        uint64_t target = cum_ns / period_ns + (cum_ns % period_ns >= (period_ns + 1) / 2);
        uint64_t count = target - written;
        written = target;
        if (count == 0)
            continue;
        if (c->pc == 0) {
            dropped += count;
            continue;
        }
        const struct prof_stack *st = &p->stacks[c->stack];
        /* Stacks start at the sampled PC; one that does not gets it in front. */
        bool own_leaf = st->depth > 0 && st->pcs[0] == c->pc;
        put_slot(out, count);
        put_slot(out, (uint64_t)st->depth + !own_leaf);
        if (!own_leaf)
            put_slot(out, c->pc);
        for (uint32_t d = 0; d < st->depth; d++)
            put_slot(out, st->pcs[d]);
    }
    return dropped;
}

static bool map_live(const struct prof_map *m, const struct tally *t)
{
    if (!t->any)
        return true;
    return m->time_ns <= t->last_ns && (m->unmap_ns == 0 || m->unmap_ns > t->first_ns);
}

static void write_maps(const struct profile *p, uint32_t pid, const struct tally *t, FILE *out)
{
    struct map_list seen = {0};
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid != pid || m->end <= m->start || !map_live(m, t))
            continue;
        struct map_entry e = {
            .start = m->start, .end = m->end, .offset = m->offset, .path = m->path ? m->path : ""};
        size_t before = seen.count;
        maps_add_unique(&seen, &e);
        if (seen.count == before)
            continue;
        fprintf(out,
                "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64 " %02x:%02x %-11" PRIu64 " %s\n",
                m->start, m->end, m->perms & MAP_PERM_READ ? 'r' : '-',
                m->perms & MAP_PERM_WRITE ? 'w' : '-', m->perms & MAP_PERM_EXEC ? 'x' : '-',
                m->perms & MAP_PERM_SHARED ? 's' : 'p', m->offset, m->dev_major, m->dev_minor,
                m->inode, e.path);
    }
    maps_clear(&seen);
}

int gperftools_write(const struct profile *p, const char *name, FILE *out)
{
    uint64_t period_us = period_us_of(p);
    uint64_t period_ns = period_us * 1000;
    uint32_t pid = written_pid(p);
    struct tally t = {0};
    tally_samples(p, pid, period_ns, &t);
    if (t.other_samples)
        pt_warn("%s: a gperftools profile holds one process: %" PRIu64
                " thread samples of processes other than %" PRIu32 " left out",
                name, t.other_samples, pid);

    const uint64_t header[] = {0, 3, 0, period_us, 0};
    for (size_t i = 0; i < sizeof(header) / sizeof(header[0]); i++)
        put_slot(out, header[i]);
    uint64_t dropped = write_records(p, &t, period_ns, out);
    const uint64_t trailer[] = {0, 1, 0};
    for (size_t i = 0; i < sizeof(trailer) / sizeof(trailer[0]); i++)
        put_slot(out, trailer[i]);
    write_maps(p, pid, &t, out);
    free(t.chains);
    if (dropped)
        pt_warn("%s: %" PRIu64 " ticks at PC 0 left out (readers would take them for the end)",
                name, dropped);
    if (fflush(out) != 0 || ferror(out)) {
        pt_err("%s: cannot write: %s", name, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int gperftools_write_path(const struct profile *p, const char *path)
{
    struct outfile *of = outfile_open(path);
    if (!of)
        return -1;
    if (gperftools_write(p, strcmp(path, "-") == 0 ? "<stdout>" : path, outfile_stream(of)) != 0) {
        outfile_abort(of);
        return -1;
    }
    return outfile_commit(of);
}
