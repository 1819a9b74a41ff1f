/*
 * csv_samples_write.c - see csv_samples_write.h: one CSV row per thread
 * sample.
 */
#include "export/csv_samples_write.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/metrics.h"
#include "render/csv.h"
#include "symbol/symbolizer.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

/* Thread records sorted by tid, then start, to name a sample's thread as
 * it was called at that time (tids are reused). */
struct thread_index {
    const struct profile *p;
    size_t *order;
};

static int by_tid_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct prof_thread *x = &p->threads[*(const size_t *)a];
    const struct prof_thread *y = &p->threads[*(const size_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return 0;
}

static void index_threads(struct thread_index *ix, const struct profile *p)
{
    ix->p = p;
    ix->order = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*ix->order));
    for (size_t i = 0; i < p->nthreads; i++)
        ix->order[i] = i;
    qsort_r(ix->order, p->nthreads, sizeof(*ix->order), by_tid_start, (void *)p);
}

static const char *thread_name(const struct thread_index *ix, uint32_t tid, uint64_t time_ns)
{
    const struct profile *p = ix->p;
    size_t lo = 0, hi = p->nthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->threads[ix->order[mid]].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *name = "";
    for (size_t i = lo; i < p->nthreads && p->threads[ix->order[i]].tid == tid; i++) {
        const struct prof_thread *t = &p->threads[ix->order[i]];
        if (i == lo || t->start_ns <= time_ns)
            name = t->name ? t->name : "";
    }
    return name;
}

/* V so that strtod reads back the same double. */
static void put_exact(FILE *out, double v)
{
    char buf[40];
    if (isnan(v))
        return;
    snprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof(buf), "%.17g", v);
    fputs(buf, out);
}

static void put_seconds(FILE *out, double s)
{
    fprintf(out, "%.9f", s);
}

static uint64_t start_ns(const struct profile *p)
{
    uint64_t first = p->nsamples ? p->samples[0].time_ns : 0;
    const char *st = profile_meta(p, "start_time");
    if (st && *st) {
        char *end;
        unsigned long long v = strtoull(st, &end, 10);
        if (*end == '\0' && (!p->nsamples || v <= first))
            return v;
    }
    return first;
}

/* Thread samples that stand for several samples, or carry values, get
 * columns for them; a recording's CSV keeps its columns. */
static bool weighted(const struct profile *p)
{
    if (p->nvalue_types)
        return true;
    for (size_t i = 0; i < p->nsamples; i++)
        for (uint32_t j = 0; j < p->samples[i].nthreads; j++)
            if (prof_weight(&p->samples[i], j) != 1)
                return true;
    return false;
}

static void write_header(FILE *out, const struct profile *p, bool extra)
{
    fputs("time,time_s,pid,tid,thread,pc,cpu_s,wall_s,binary,function", out);
    for (size_t c = 0; c < p->nchannels; c++) {
        const struct prof_channel *ch = &p->channels[c];
        char *h =
            ch->unit && *ch->unit ? xasprintf("%s [%s]", ch->name, ch->unit) : xstrdup(ch->name);
        fputc(',', out);
        csv_field(out, h);
        free(h);
    }
    if (extra) {
        fputs(",samples", out);
        for (size_t k = 0; k < p->nvalue_types; k++) {
            fputc(',', out);
            csv_field(out, p->value_types[k].name);
        }
    }
    fputc('\n', out);
}

static int write_rows(const char *in_name, const struct profile *p, FILE *out,
                      const struct export_options *o)
{
    char *error = NULL;
    struct metrics *m = metrics_new(p, &o->session.walk.metrics, &error);
    if (!m) {
        pt_err("%s: %s", in_name, error ? error : "cannot compute the samples' times");
        free(error);
        return -1;
    }
    struct symbolizer *sym = session_symbolizer(in_name, p, &o->session);
    struct thread_index ix;
    index_threads(&ix, p);
    uint32_t most = 1;
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].nthreads > most)
            most = p->samples[i].nthreads;
    struct thread_metrics *tm = xcalloc(most, sizeof(*tm));
    uint64_t start = start_ns(p);

    bool extra = weighted(p);
    write_header(out, p, extra);
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        double unattributed, idle;
        metrics_sample(m, i, tm, &unattributed, &idle);
        for (uint32_t j = 0; j < s->nthreads; j++) {
            const struct prof_thread_sample *t = &s->threads[j];
            const struct sym_location *loc =
                symbolizer_resolve(sym, t->pid, s->time_ns, t->pc, false);
            fprintf(out, "%" PRIu64 ".%09" PRIu64 ",", s->time_ns / 1000000000,
                    s->time_ns % 1000000000);
            put_seconds(out, s->time_ns >= start ? (double)(s->time_ns - start) / 1e9
                                                 : -(double)(start - s->time_ns) / 1e9);
            fprintf(out, ",%" PRIu32 ",%" PRIu32 ",", t->pid, t->tid);
            csv_field(out, thread_name(&ix, t->tid, s->time_ns));
            fprintf(out, ",0x%" PRIx64 ",", t->pc);
            put_seconds(out, tm[j].q[Q_CPU]);
            fputc(',', out);
            put_seconds(out, tm[j].q[Q_WALL]);
            fputc(',', out);
            csv_field(out, loc && loc->nframes ? loc->frames[0].binary : "");
            fputc(',', out);
            csv_field(out, loc && loc->nframes ? loc->frames[0].function : "");
            for (size_t c = 0; c < p->nchannels; c++) {
                fputc(',', out);
                if (s->values)
                    put_exact(out, s->values[c]);
            }
            if (extra) {
                const uint64_t *v = prof_thread_values(p, s, j);
                fprintf(out, ",%" PRIu64, prof_weight(s, j));
                for (size_t k = 0; k < p->nvalue_types; k++)
                    fprintf(out, ",%" PRIu64, v ? v[k] : 0);
            }
            fputc('\n', out);
        }
    }
    free(tm);
    free(ix.order);
    symbolizer_free(sym);
    metrics_free(m);
    return 0;
}

int csv_samples_export(const char *in_name, const struct profile *p, const char *path,
                       const struct export_options *o)
{
    const char *out_name = strcmp(path, "-") == 0 ? "<stdout>" : path;
    if (o->metric) {
        pt_err("%s: --metric does not apply to the CSV of samples (every row has cpu_s and "
               "wall_s)",
               out_name);
        return -1;
    }
    struct outfile *of = outfile_open(path);
    if (!of)
        return -1;
    FILE *out = outfile_stream(of);
    if (write_rows(in_name, p, out, o) != 0) {
        outfile_abort(of);
        return -1;
    }
    if (fflush(out) != 0 || ferror(out)) {
        pt_err("%s: cannot write: %s", out_name, strerror(errno ? errno : EIO));
        outfile_abort(of);
        return -1;
    }
    return outfile_commit(of);
}
