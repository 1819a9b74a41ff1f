/*
 * speedscope_write.c - see speedscope_write.h: each thread's call paths,
 * sample after sample, as speedscope's evented profiles.
 */
#include "export/speedscope_write.h"
#include "render/json.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct event {
    uint32_t frame;
    bool open;
    double at;
};

/* One thread: its events and the frames open now (outermost first). */
struct lane {
    uint32_t pid, tid;
    char *label; /* the walk's "NAME#N" */
    struct event *events;
    size_t nevents, events_cap;
    uint32_t *open;
    size_t nopen, open_cap;
    double at;
};

struct frame {
    uint32_t name; /* in the writer's strtab */
    uint32_t file; /* UINT32_MAX: none */
    long line;     /* 0: unknown */
};

struct writer {
    const struct strtab *keys, *names;
    bool by_key;
    struct metric metric;
    struct value_columns columns;
    struct lane *lanes; /* by thread slot */
    size_t nlanes;
    struct strtab *text;      /* frame names and files */
    struct strtab *frame_ids; /* "name\x1ffile" -> frame index */
    uint32_t *frame_of_key;   /* walk key id -> frame index + 1 (0: not yet) */
    size_t frame_of_key_cap;
    struct frame *frames;
    size_t nframes, frames_cap;
    uint32_t *path_buf;
    size_t path_cap;
};

static uint32_t frame_of(struct writer *w, const struct path_frame *pf)
{
    if (pf->key < w->frame_of_key_cap && w->frame_of_key[pf->key])
        return w->frame_of_key[pf->key] - 1;
    const char *id = strtab_get(w->keys, pf->key);
    char *name, *file = NULL;
    long line = 0;
    if (w->by_key) {
        name = key_display(id);
    } else { /* keys: procedure, file, line */
        name = key_part(id, 0);
        file = key_part(id, 1);
        char *l = key_part(id, 2);
        line = strtol(l, NULL, 10);
        free(l);
        if (strcmp(file, KEY_UNKNOWN) == 0) {
            free(file);
            file = NULL;
        }
    }
    char *ident = xasprintf("%s%c%s", name, KEY_SEP, file ? file : "");
    uint32_t f = strtab_intern_str(w->frame_ids, ident);
    if (f == w->nframes) {
        w->frames = xgrow(w->frames, &w->frames_cap, f + 1, sizeof(*w->frames));
        w->frames[f] = (struct frame){strtab_intern_str(w->text, name),
                                      file ? strtab_intern_str(w->text, file) : UINT32_MAX, 0};
        w->nframes++;
    }
    /* Several lines of one function: the lowest stands for it. */
    if (line > 0 && (w->frames[f].line == 0 || line < w->frames[f].line))
        w->frames[f].line = line;
    if (pf->key >= w->frame_of_key_cap) {
        size_t old = w->frame_of_key_cap;
        w->frame_of_key =
            xgrow(w->frame_of_key, &w->frame_of_key_cap, (size_t)pf->key + 1, sizeof(uint32_t));
        memset(w->frame_of_key + old, 0, (w->frame_of_key_cap - old) * sizeof(uint32_t));
    }
    w->frame_of_key[pf->key] = f + 1;
    free(ident);
    free(name);
    free(file);
    return f;
}

static void add_event(struct lane *l, uint32_t frame, bool open)
{
    l->events = xgrow(l->events, &l->events_cap, l->nevents + 1, sizeof(*l->events));
    l->events[l->nevents++] = (struct event){frame, open, l->at};
}

/* Close the frames above DEPTH, innermost first. */
static void close_to(struct lane *l, size_t depth)
{
    while (l->nopen > depth)
        add_event(l, l->open[--l->nopen], false);
}

static void on_sample(void *ctx, const struct walk_event *e)
{
    struct writer *w = ctx;
    if (e->slot >= w->nlanes)
        return;
    double v = metric_of(&w->metric, e->q, e->values, 0);
    if (!(v > 0))
        return;
    struct lane *l = &w->lanes[e->slot];
    if (!l->label)
        l->label = xstrdup(e->thread);
    const struct path *path = e->path;
    w->path_buf = xgrow(w->path_buf, &w->path_cap, path->nframes + 1, sizeof(*w->path_buf));
    size_t n = 0;
    for (uint32_t k = path->nframes; k-- > 0;) /* outermost first */
        w->path_buf[n++] = frame_of(w, &path->frames[k]);
    size_t common = 0;
    while (common < n && common < l->nopen && l->open[common] == w->path_buf[common])
        common++;
    close_to(l, common);
    l->open = xgrow(l->open, &l->open_cap, n + 1, sizeof(*l->open));
    for (size_t i = common; i < n; i++) {
        add_event(l, w->path_buf[i], true);
        l->open[l->nopen++] = w->path_buf[i];
    }
    l->at += v;
}

/* The walk numbers threads by first appearance of their tid (metrics.h). */
static void index_lanes(struct writer *w, const struct profile *p)
{
    struct strtab *seen = strtab_new();
    size_t cap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        for (uint32_t j = 0; j < p->samples[i].nthreads; j++) {
            const struct prof_thread_sample *t = &p->samples[i].threads[j];
            char tid[16];
            snprintf(tid, sizeof(tid), "%u", t->tid);
            if (strtab_intern_str(seen, tid) < w->nlanes)
                continue;
            w->lanes = xgrow(w->lanes, &cap, w->nlanes + 1, sizeof(*w->lanes));
            w->lanes[w->nlanes++] = (struct lane){.pid = t->pid, .tid = t->tid};
        }
    }
    strtab_free(seen);
}

/* The order the lanes are written in (the lanes stay by thread slot):
 * each process's main thread moved up to before the first lane of its
 * process, the others keeping their order. */
static size_t *lanes_in_order(const struct writer *w)
{
    size_t *order = xcalloc(w->nlanes ? w->nlanes : 1, sizeof(*order));
    for (size_t i = 0; i < w->nlanes; i++) {
        size_t to = i;
        if (w->lanes[i].tid == w->lanes[i].pid)
            for (size_t k = 0; k < i; k++)
                if (w->lanes[order[k]].pid == w->lanes[i].pid) {
                    to = k;
                    break;
                }
        memmove(&order[to + 1], &order[to], (i - to) * sizeof(*order));
        order[to] = i;
    }
    return order;
}

static const char *program_of(const struct profile *p, uint32_t pid)
{
    const char *exe = "";
    for (size_t i = 0; i < p->nprocesses; i++) /* the last exec wins */
        if (p->processes[i].pid == pid && p->processes[i].exe && *p->processes[i].exe)
            exe = p->processes[i].exe;
    const char *slash = strrchr(exe, '/');
    return slash ? slash + 1 : *exe ? exe : "[unknown]";
}

/* speedscope's unit for the metric, and the scale from the metric as shown. */
static const char *unit_of(const struct metric *m)
{
    if (m->kind == METRIC_CPU || m->kind == METRIC_WALL || strcmp(m->unit, "s") == 0)
        return "seconds";
    if (strcmp(m->unit, "bytes") == 0)
        return "bytes";
    return "none";
}

static void write_document(FILE *f, struct writer *w, const struct profile *p, const char *name)
{
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"shared\":{\"frames\":[",
          f);
    for (size_t i = 0; i < w->nframes; i++) {
        const struct frame *fr = &w->frames[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        json_string(f, strtab_get(w->text, fr->name));
        if (fr->file != UINT32_MAX) {
            fputs(",\"file\":", f);
            json_string(f, strtab_get(w->text, fr->file));
        }
        if (fr->line > 0)
            fprintf(f, ",\"line\":%ld", fr->line);
        fputc('}', f);
    }
    fputs("]},\n\"profiles\":[", f);
    bool first = true;
    size_t *order = lanes_in_order(w);
    for (size_t i = 0; i < w->nlanes; i++) {
        struct lane *l = &w->lanes[order[i]];
        if (!l->nevents)
            continue;
        close_to(l, 0);
        char *title = xasprintf("%s[%u] %s (tid %u) - %s%s%s", program_of(p, l->pid), l->pid,
                                l->label ? l->label : "", l->tid, w->metric.name,
                                *w->metric.unit ? " " : "", w->metric.unit);
        fputs(first ? "\n{\"type\":\"evented\",\"name\":" : ",\n{\"type\":\"evented\",\"name\":",
              f);
        first = false;
        json_string(f, title);
        free(title);
        /* Full precision, as the events: the last closes exactly at the end. */
        fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.17g,\"events\":[",
                unit_of(&w->metric), l->at);
        for (size_t k = 0; k < l->nevents; k++) {
            const struct event *ev = &l->events[k];
            fprintf(f, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%.17g}", k ? "," : "",
                    ev->open ? 'O' : 'C', ev->frame, ev->at);
        }
        fputs("]}", f);
    }
    free(order);
    fputs("],\n\"name\":", f);
    json_string(f, name);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"ptprof " PTPROF_VERSION "\"}\n", f);
}

static int choose_metric(const char *name, const struct profile *p, const struct export_options *o,
                         struct writer *w)
{
    char *error = NULL;
    for (size_t k = 0; k < p->nvalue_types; k++)
        value_columns_add(&w->columns, &p->value_types[k], &error);
    free(error);
    const char *want = o->metric ? o->metric : p->default_metric ? p->default_metric : "cpu";
    if (metric_resolve(want, &w->columns, &w->metric) != 0) {
        if (o->metric || metric_resolve("cpu", &w->columns, &w->metric) != 0) {
            char list[1024];
            metric_list(&w->columns, list, sizeof(list));
            pt_err("%s: no metric '%s' in the profile (it has %s)", name, want, list);
            return -1;
        }
    }
    if (!metric_additive(&w->metric)) {
        pt_err("%s: speedscope's timelines add up sample by sample; the %s metric does not "
               "(samples, cpu, wall, energy or a value such as alloc_space)",
               name, w->metric.name);
        return -1;
    }
    return 0;
}

static void writer_free(struct writer *w)
{
    for (size_t i = 0; i < w->nlanes; i++) {
        free(w->lanes[i].label);
        free(w->lanes[i].events);
        free(w->lanes[i].open);
    }
    free(w->lanes);
    free(w->frames);
    free(w->frame_of_key);
    free(w->path_buf);
    strtab_free(w->text);
    strtab_free(w->frame_ids);
    value_columns_free(&w->columns);
}

int speedscope_export(const char *in_name, const struct profile *p, const char *path,
                      const struct export_options *o)
{
    const char *name = strcmp(in_name, "-") == 0 ? "<stdin>" : in_name;
    struct writer w = {.text = strtab_new(), .frame_ids = strtab_new()};
    if (choose_metric(name, p, o, &w) != 0) {
        writer_free(&w);
        return -1;
    }
    /* Frames are functions with their file and line unless -k names them. */
    struct session_options so = o->session;
    w.by_key = o->keys_given;
    if (!o->keys_given)
        so.walk.keys = (struct key_spec){.kinds = {KEY_PROCEDURE, KEY_FILE, KEY_LINE}, .count = 3};
    index_lanes(&w, p);
    struct strtab *keys = strtab_new(), *names = strtab_new();
    w.keys = keys;
    w.names = names;
    struct walk_visitor v = {on_sample, NULL, &w, &w.columns};
    struct walk_totals totals;
    int rc = session_walk_profile(in_name, p, &so, keys, names, &v, &totals);
    if (rc == 0 && w.metric.kind == METRIC_ENERGY && !totals.has_energy) {
        pt_err("%s: the profile has no energy measurements (--metric energy)", name);
        rc = -1;
    }
    if (rc == 0) {
        struct outfile *of = outfile_open(path);
        if (!of) {
            rc = -1;
        } else {
            FILE *f = outfile_stream(of);
            const char *slash = strrchr(name, '/');
            write_document(f, &w, p, slash ? slash + 1 : name);
            if (ferror(f)) {
                pt_err("%s: cannot write", path);
                outfile_abort(of);
                rc = -1;
            } else {
                rc = outfile_commit(of);
            }
        }
    }
    writer_free(&w);
    strtab_free(keys);
    strtab_free(names);
    return rc;
}
