/* test_pbin.c - format/pbin.h and the LOCATION records of format/native.h:
 * any profile written back in the native format, .pbin symbol tables, and
 * a reader that survives hostile ones. */
#include "../lib/spawn.h"
#include "format/load.h"
#include "format/native.h"
#include "format/pbin.h"
#include "interop/pperf.h"
#include "model/profile.h"
#include "model/maps.h"
#include "symbol/symbolizer.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------- */

static void remove_dir(const char *dir, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        char *p = test_path(dir, names[i]);
        unlink(p);
        free(p);
    }
    rmdir(dir);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    *len = (size_t)st.st_size;
    unsigned char *b = malloc(*len ? *len : 1);
    cr_assert_not_null(b);
    cr_assert_eq(read(fd, b, *len), (ssize_t)*len);
    close(fd);
    return b;
}

/* Load a buffer with the reader's warnings (expected here) kept off the
 * test output. */
static int load_quiet(const void *data, size_t len, struct profile *p)
{
    fflush(stderr);
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    close(null);
    int rc = native_load_buffer("t.pbin", data, len, p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return rc;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Offsets of the records of type TYPE in a native file image, walked with
 * the documented layout (not the reader). */
static size_t record_offsets(const unsigned char *d, size_t len, unsigned type, size_t *out,
                             size_t max)
{
    size_t n = 0;
    for (size_t at = 16; at + 8 <= len;) {
        unsigned t = (unsigned)(d[at] | d[at + 1] << 8);
        size_t plen = le32(d + at + 4);
        if (t == type && n < max)
            out[n++] = at;
        at += 8 + plen;
    }
    return n;
}

/* A record built by hand, for inputs no writer would produce. */
struct rec_buf {
    unsigned char *p;
    size_t len, cap;
};

static void rb_put(struct rec_buf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
        cr_assert_not_null(b->p);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void rb_u8(struct rec_buf *b, uint8_t v)
{
    rb_put(b, &v, 1);
}

static void rb_u32(struct rec_buf *b, uint32_t v)
{
    unsigned char t[4];
    put32(t, v);
    rb_put(b, t, 4);
}

static void rb_u64(struct rec_buf *b, uint64_t v)
{
    rb_u32(b, (uint32_t)v);
    rb_u32(b, (uint32_t)(v >> 32));
}

static void rb_str(struct rec_buf *b, const char *s)
{
    rb_u32(b, (uint32_t)strlen(s));
    rb_put(b, s, strlen(s));
}

/* A whole record: header with PAYLOAD's length, then PAYLOAD. */
static void rb_record(struct rec_buf *file, unsigned type, const struct rec_buf *payload)
{
    unsigned char h[8] = {(unsigned char)type, (unsigned char)(type >> 8), 0, 0};
    put32(h + 4, (uint32_t)payload->len);
    rb_put(file, h, 8);
    rb_put(file, payload->p, payload->len);
}

/* --- a profile with every kind of content -------------------------------- */

#define T0 1700000000000000000ull

static struct prof_sym_frame frame(const char *fn, const char *mangled, const char *file,
                                   uint32_t line, bool inlined)
{
    return (struct prof_sym_frame){
        .binary = strdup("app"),
        .path = strdup("/opt/app/bin/app"),
        .function = strdup(fn),
        .mangled = strdup(mangled),
        .file = strdup(file),
        .line = line,
        .inlined = inlined,
    };
}

static void add_location(struct profile *p, uint32_t pid, uint64_t pc, bool ra, uint64_t offset,
                         uint32_t nframes, const struct prof_sym_frame *frames)
{
    p->locations = realloc(p->locations, (p->nlocations + 1) * sizeof(*p->locations));
    cr_assert_not_null(p->locations);
    struct prof_location *l = &p->locations[p->nlocations++];
    *l = (struct prof_location){pid, pc, ra, offset, nframes, NULL};
    if (nframes) {
        l->frames = calloc(nframes, sizeof(*l->frames));
        memcpy(l->frames, frames, nframes * sizeof(*frames));
    }
}

static struct prof_map map_of(uint32_t pid, uint64_t t, uint64_t start, uint64_t end,
                              uint64_t offset, const char *path, uint64_t unmap)
{
    return (struct prof_map){
        .pid = pid,
        .time_ns = t,
        .start = start,
        .end = end,
        .offset = offset,
        .inode = start ^ 0x55,
        .dev_major = 8,
        .dev_minor = 1,
        .perms = MAP_PERM_READ | MAP_PERM_EXEC,
        .path = strdup(path),
        .unmap_ns = unmap,
    };
}

static void set_thread(struct prof_thread_sample *t, uint32_t pid, uint32_t tid, uint64_t pc,
                       uint64_t cpu, uint32_t stack)
{
    *t = (struct prof_thread_sample){pid, tid, pc, cpu, stack, -1, 0};
}

/* Three processes (one execs after forking, one forks without exec), a map
 * replaced at the time another starts, maps ended by an exec and by an
 * unmap, an empty map, images, shared stacks (one written twice), system
 * calls, two channels, a META key given twice, and symbol tables with
 * inline chains, empty and odd strings.  Every array is in time order, as
 * a recording's are. */
static void build_profile(struct profile *p)
{
    profile_init(p);
    p->format = strdup("native");

    static const char *const meta[][2] = {{"command", "app --x 'a b'"},
                                          {"frequency", "1000"},
                                          {"host", "first"},
                                          {"stacks", "dwarf"},
                                          {"host", "second"}};
    p->nmeta = sizeof(meta) / sizeof(meta[0]);
    p->meta = calloc(p->nmeta, sizeof(*p->meta));
    for (size_t i = 0; i < p->nmeta; i++)
        p->meta[i] = (struct prof_meta){strdup(meta[i][0]), strdup(meta[i][1])};
    p->frequency = 1000;

    p->nchannels = 2;
    p->channels = calloc(2, sizeof(*p->channels));
    p->channels[0] = (struct prof_channel){strdup("package-0"), strdup("J"), PMU_KIND_ENERGY};
    p->channels[1] = (struct prof_channel){strdup("board"), strdup("W"), PMU_KIND_POWER};

    p->nprocesses = 3;
    p->processes = calloc(3, sizeof(*p->processes));
    p->processes[0] =
        (struct prof_process){100, 0, T0, T0 + 9000, true, 3 << 8, strdup("/opt/app/bin/app")};
    p->processes[1] =
        (struct prof_process){200, 100, T0 + 3000, T0 + 8000, true, 9, strdup("/bin/true")};
    p->processes[2] = (struct prof_process){300, 100, T0 + 4000, 0, false, 0, strdup("")};

    p->nthreads = 4;
    p->threads = calloc(4, sizeof(*p->threads));
    p->threads[0] = (struct prof_thread){100, 100, T0, 0, strdup("app")};
    p->threads[1] = (struct prof_thread){100, 101, T0 + 2000, T0 + 5000, strdup("worker")};
    p->threads[2] = (struct prof_thread){200, 200, T0 + 3000, T0 + 8000, strdup("true")};
    p->threads[3] = (struct prof_thread){300, 300, T0 + 4000, 0, strdup("")};

    p->nmaps = 8;
    p->maps = calloc(8, sizeof(*p->maps));
    p->maps[0] = map_of(100, T0, 0x400000, 0x401000, 0, "/opt/app/bin/app", 0);
    p->maps[0].build_id_len = 20;
    for (int i = 0; i < 20; i++)
        p->maps[0].build_id[i] = (uint8_t)(0xa0 + i);
    p->maps[1] = map_of(100, T0, 0x7f0000, 0x7f8000, 0x1000, "/lib/libc.so.6", T0 + 4000);
    p->maps[2] = map_of(100, T0 + 1000, 0x900000, 0x901000, 0, "", T0 + 6000);
    p->maps[2].perms = MAP_PERM_READ | MAP_PERM_WRITE;
    p->maps[3] = map_of(100, T0 + 2000, 0xa00000, 0xa00000, 0, "[empty]", 0);
    p->maps[4] = map_of(200, T0 + 3000, 0x400000, 0x402000, 0, "/opt/app/bin/app", T0 + 3500);
    p->maps[5] = map_of(200, T0 + 3500, 0x500000, 0x501000, 0, "/bin/true", 0);
    p->maps[6] = map_of(100, T0 + 4000, 0x7f0000, 0x7f4000, 0x2000, "/lib/libc.so.6", 0);
    p->maps[7] = map_of(300, T0 + 4000, 0x400000, 0x401000, 0, "/opt/app/bin/app", 0);

    p->nimages = 2;
    p->images = calloc(2, sizeof(*p->images));
    p->images[0] = (struct prof_image){100, 0x7ff000, strdup("[vdso]"), malloc(64), 64};
    for (int i = 0; i < 64; i++)
        p->images[0].data[i] = (uint8_t)(i * 7);
    p->images[1] = (struct prof_image){200, 0x7fe000, strdup("[vdso]"), malloc(3), 3};
    memcpy(p->images[1].data, "abc", 3);

    static const uint64_t s1[] = {0x400010, 0x400100, 0x400200};
    static const uint64_t s2[] = {0x7f0010, 0x400100};
    const uint64_t *stacks[] = {NULL, s1, s2, s1};
    const uint32_t depths[] = {0, 3, 2, 3};
    p->nstacks = 4;
    p->stacks = calloc(4, sizeof(*p->stacks));
    for (size_t i = 1; i < 4; i++) {
        p->stacks[i].depth = depths[i];
        p->stacks[i].pcs = malloc(depths[i] * sizeof(uint64_t));
        memcpy(p->stacks[i].pcs, stacks[i], depths[i] * sizeof(uint64_t));
    }

    p->nsamples = 5;
    p->samples = calloc(5, sizeof(*p->samples));
    const uint32_t nthreads[] = {1, 2, 2, 1, 0};
    const double values[5][2] = {
        {1.5, 2.0}, {-0.0, 1e300}, {3.25, 0.1}, {4.0, 5e-324}, {7.0, -2.5}};
    for (size_t i = 0; i < 5; i++) {
        struct prof_sample *s = &p->samples[i];
        s->time_ns = T0 + 500 + 1000 * i;
        s->values = malloc(2 * sizeof(double));
        memcpy(s->values, values[i], sizeof(values[i]));
        s->nthreads = nthreads[i];
        s->threads = s->nthreads ? calloc(s->nthreads, sizeof(*s->threads)) : NULL;
    }
    set_thread(&p->samples[0].threads[0], 100, 100, 0x400010, 100, 1);
    set_thread(&p->samples[1].threads[0], 100, 100, 0x7f0010, 200, 2);
    set_thread(&p->samples[1].threads[1], 100, 101, 0x400100, 50, 3);
    p->samples[1].threads[1].syscall = 7;
    p->samples[1].threads[1].flags = PROF_THREAD_IN_SYSCALL;
    set_thread(&p->samples[2].threads[0], 200, 200, 0x500010, 10, 0);
    set_thread(&p->samples[2].threads[1], 100, 100, 0x400010, 300, 1);
    p->samples[2].threads[1].flags = PROF_THREAD_STOPPED;
    set_thread(&p->samples[3].threads[0], 300, 300, 0x400020, 5, 0);

    p->totals = (struct prof_totals){9000, 100, 5, 9};
    p->has_totals = true;

    struct prof_sym_frame f0[] = {frame("inner", "", "src/a.c", 10, true),
                                  frame("outer(int)", "_Z5outeri", "src/a.c", 20, false)};
    add_location(p, 100, 0x400010, false, 0x10, 2, f0);
    struct prof_sym_frame f1[] = {frame("main", "main", "src/\"main\".c", 30, false)};
    add_location(p, 100, 0x400100, true, 0x100, 1, f1);
    add_location(p, 200, 0x500010, false, 0x10, 0, NULL);
    struct prof_sym_frame f3[] = {frame("", "", "", 0, false)};
    free(f3[0].binary);
    f3[0].binary = strdup("caf\xc3\xa9 \\ \t.so");
    add_location(p, 300, 0x400020, false, 0x20, 1, f3);
}

/* --- comparing profiles --------------------------------------------------- */

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static void expect_same_frames(const struct prof_location *a, const struct prof_location *b,
                               size_t i)
{
    cr_expect_eq(a->pid, b->pid, "location %zu", i);
    cr_expect_eq(a->pc, b->pc, "location %zu", i);
    cr_expect_eq(a->return_address, b->return_address, "location %zu", i);
    cr_expect_eq(a->offset, b->offset, "location %zu", i);
    cr_assert_eq(a->nframes, b->nframes, "location %zu", i);
    for (uint32_t f = 0; f < a->nframes; f++) {
        const struct prof_sym_frame *x = &a->frames[f], *y = &b->frames[f];
        cr_expect_str_eq(x->binary, y->binary, "location %zu frame %u", i, f);
        cr_expect_str_eq(x->path, y->path, "location %zu frame %u", i, f);
        cr_expect_str_eq(x->function, y->function, "location %zu frame %u", i, f);
        cr_expect_str_eq(x->mangled, y->mangled, "location %zu frame %u", i, f);
        cr_expect_str_eq(x->file, y->file, "location %zu frame %u", i, f);
        cr_expect_eq(x->line, y->line, "location %zu frame %u", i, f);
        cr_expect_eq(x->inlined, y->inlined, "location %zu frame %u", i, f);
    }
}

/* Everything but the format name, stacks compared by their frames (equal
 * stacks may share an id once written). */
static void expect_same_profile(const struct profile *a, const struct profile *b)
{
    cr_assert_eq(a->nmeta, b->nmeta);
    for (size_t i = 0; i < a->nmeta; i++) {
        cr_expect_str_eq(a->meta[i].key, b->meta[i].key);
        cr_expect_str_eq(a->meta[i].value, b->meta[i].value);
    }
    cr_assert_eq(a->nchannels, b->nchannels);
    for (size_t i = 0; i < a->nchannels; i++) {
        cr_expect_str_eq(a->channels[i].name, b->channels[i].name);
        cr_expect_str_eq(a->channels[i].unit, b->channels[i].unit);
        cr_expect_eq(a->channels[i].kind, b->channels[i].kind);
    }
    cr_assert_eq(a->nprocesses, b->nprocesses);
    for (size_t i = 0; i < a->nprocesses; i++) {
        const struct prof_process *x = &a->processes[i], *y = &b->processes[i];
        cr_expect_eq(x->pid, y->pid, "process %zu", i);
        cr_expect_eq(x->ppid, y->ppid, "process %zu", i);
        cr_expect_eq(x->start_ns, y->start_ns, "process %zu", i);
        cr_expect_eq(x->exited, y->exited, "process %zu", i);
        cr_expect_eq(x->exit_ns, y->exit_ns, "process %zu", i);
        cr_expect_eq(x->exit_status, y->exit_status, "process %zu", i);
        cr_expect_str_eq(x->exe, y->exe, "process %zu", i);
    }
    cr_assert_eq(a->nthreads, b->nthreads);
    for (size_t i = 0; i < a->nthreads; i++) {
        const struct prof_thread *x = &a->threads[i], *y = &b->threads[i];
        cr_expect_eq(x->pid, y->pid, "thread %zu", i);
        cr_expect_eq(x->tid, y->tid, "thread %zu", i);
        cr_expect_eq(x->start_ns, y->start_ns, "thread %zu", i);
        cr_expect_eq(x->end_ns, y->end_ns, "thread %zu", i);
        cr_expect_str_eq(x->name, y->name, "thread %zu", i);
    }
    cr_assert_eq(a->nmaps, b->nmaps);
    for (size_t i = 0; i < a->nmaps; i++) {
        const struct prof_map *x = &a->maps[i], *y = &b->maps[i];
        cr_expect_eq(x->pid, y->pid, "map %zu", i);
        cr_expect_eq(x->time_ns, y->time_ns, "map %zu", i);
        cr_expect_eq(x->start, y->start, "map %zu", i);
        cr_expect_eq(x->end, y->end, "map %zu", i);
        cr_expect_eq(x->offset, y->offset, "map %zu", i);
        cr_expect_eq(x->inode, y->inode, "map %zu", i);
        cr_expect_eq(x->dev_major, y->dev_major, "map %zu", i);
        cr_expect_eq(x->dev_minor, y->dev_minor, "map %zu", i);
        cr_expect_eq(x->perms, y->perms, "map %zu", i);
        cr_expect_eq(x->build_id_len, y->build_id_len, "map %zu", i);
        cr_expect_eq(memcmp(x->build_id, y->build_id, x->build_id_len), 0, "map %zu", i);
        cr_expect_str_eq(x->path, y->path, "map %zu", i);
        cr_expect_eq(x->unmap_ns, y->unmap_ns, "map %zu: unmapped at %llu, not %llu", i,
                     (unsigned long long)y->unmap_ns, (unsigned long long)x->unmap_ns);
    }
    cr_assert_eq(a->nimages, b->nimages);
    for (size_t i = 0; i < a->nimages; i++) {
        cr_expect_eq(a->images[i].pid, b->images[i].pid);
        cr_expect_eq(a->images[i].start, b->images[i].start);
        cr_expect_str_eq(a->images[i].name, b->images[i].name);
        cr_assert_eq(a->images[i].size, b->images[i].size);
        cr_expect_eq(memcmp(a->images[i].data, b->images[i].data, a->images[i].size), 0);
    }
    cr_assert_eq(a->nsamples, b->nsamples);
    for (size_t i = 0; i < a->nsamples; i++) {
        const struct prof_sample *x = &a->samples[i], *y = &b->samples[i];
        cr_expect_eq(x->time_ns, y->time_ns, "sample %zu", i);
        for (size_t c = 0; c < a->nchannels; c++)
            cr_expect(same_double(x->values[c], y->values[c]), "sample %zu value %zu", i, c);
        cr_assert_eq(x->nthreads, y->nthreads, "sample %zu", i);
        for (uint32_t t = 0; t < x->nthreads; t++) {
            const struct prof_thread_sample *u = &x->threads[t], *v = &y->threads[t];
            cr_expect_eq(u->pid, v->pid);
            cr_expect_eq(u->tid, v->tid);
            cr_expect_eq(u->pc, v->pc);
            cr_expect_eq(u->cpu_ns, v->cpu_ns);
            cr_expect_eq(u->syscall, v->syscall);
            cr_expect_eq(u->flags, v->flags);
            const struct prof_stack *su = &a->stacks[u->stack], *sv = &b->stacks[v->stack];
            cr_assert_eq(su->depth, sv->depth, "sample %zu thread %u", i, t);
            if (su->depth)
                cr_expect_eq(memcmp(su->pcs, sv->pcs, su->depth * sizeof(uint64_t)), 0);
        }
    }
    cr_expect_eq(a->has_totals, b->has_totals);
    cr_expect_eq(memcmp(&a->totals, &b->totals, sizeof(a->totals)), 0);
    cr_expect(same_double(a->frequency, b->frequency));
    cr_assert_eq(a->nlocations, b->nlocations);
    for (size_t i = 0; i < a->nlocations; i++)
        expect_same_frames(&a->locations[i], &b->locations[i], i);
}

static void write_and_load(const struct profile *p, const char *path, struct profile *back)
{
    cr_assert_eq(native_write_profile(path, p), 0, "cannot write %s", path);
    cr_assert_eq(profile_load(path, back), 0, "cannot read %s back", path);
    cr_expect_str_eq(back->format, "native");
    cr_expect_not(back->truncated, "%s reads as truncated at %llu", path,
                  (unsigned long long)back->truncated_at);
}

/* --- writing whole profiles ---------------------------------------------- */

Test(pbin_write, every_part_of_a_profile_reads_back_the_same)
{
    char *dir = test_mkdtemp();
    const char *names[] = {"p.pbin", "p.pbin.gz", "p.pbin.zst", NULL};
    struct profile p;
    build_profile(&p);
    for (size_t i = 0; names[i]; i++) {
        char *path = test_path(dir, names[i]);
        struct profile back;
        write_and_load(&p, path, &back);
        expect_same_profile(&p, &back);
        /* Equal stacks share one id in the written file. */
        cr_expect_eq(back.nstacks, 3, "%s: %zu stacks", names[i], back.nstacks);
        profile_free(&back);
        free(path);
    }
    profile_free(&p);
    remove_dir(dir, names);
    free(dir);
}

Test(pbin_write, a_profile_whose_recorder_never_finished_stays_so)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "killed.pbin");
    struct profile p, back;
    build_profile(&p);
    p.has_totals = false;
    memset(&p.totals, 0, sizeof(p.totals));
    write_and_load(&p, path, &back);
    expect_same_profile(&p, &back);
    cr_expect_not(back.has_totals);
    profile_free(&back);
    profile_free(&p);
    const char *names[] = {"killed.pbin", NULL};
    remove_dir(dir, names);
    free(path);
    free(dir);
}

Test(pbin_write, a_written_profile_is_written_the_same_again)
{
    char *dir = test_mkdtemp();
    char *a = test_path(dir, "a.pbin"), *b = test_path(dir, "b.pbin");
    struct profile p, back;
    build_profile(&p);
    write_and_load(&p, a, &back);
    cr_assert_eq(native_write_profile(b, &back), 0);
    size_t la, lb;
    unsigned char *da = read_file(a, &la), *db = read_file(b, &lb);
    cr_expect_eq(la, lb);
    cr_expect_eq(memcmp(da, db, la < lb ? la : lb), 0, "a copy of a copy differs");
    free(da);
    free(db);
    profile_free(&back);
    profile_free(&p);
    const char *names[] = {"a.pbin", "b.pbin", NULL};
    remove_dir(dir, names);
    free(a);
    free(b);
    free(dir);
}

/* The original raw format becomes a native file with the same content. */
Test(pbin_write, a_profile_in_the_original_format_becomes_native)
{
    char *dir = test_mkdtemp();
    char *raw = test_path(dir, "run.data"), *out = test_path(dir, "run.pbin");
    struct pperf_writer *w = pperf_writer_open(raw, 3, 8);
    cr_assert_not_null(w);
    for (uint32_t i = 0; i < 20; i++) {
        struct pperf_thread th[2] = {{4000, 0x401000 + i * 16, 1000 * i},
                                     {4001, 0x7f0000 + i, 500 * i}};
        double power = 10.0 + i;
        cr_assert_eq(pperf_writer_sample(w, 1000000 + 1000 * i, &power, 1 + (i % 2), th), 0);
    }
    struct pperf_map maps[2] = {{0x400000, 0x2000, "app"}, {0x7f0000, 0x1000, "libc.so.6"}};
    cr_assert_eq(pperf_writer_finish(w, 25000, 300, maps, 2), 0);

    struct profile p, back;
    cr_assert_eq(profile_load(raw, &p), 0);
    cr_assert_str_eq(p.format, "pperf");
    struct prof_sym_frame f[] = {frame("hot", "hot", "hot.c", 5, false)};
    add_location(&p, 4000, 0x401000, false, 0x1000, 1, f);
    write_and_load(&p, out, &back);
    expect_same_profile(&p, &back);
    cr_expect_eq(back.nprocesses, 1);
    cr_expect_eq(back.nthreads, 2);
    profile_free(&back);
    profile_free(&p);
    const char *names[] = {"run.data", "run.pbin", NULL};
    remove_dir(dir, names);
    free(raw);
    free(out);
    free(dir);
}

/* A model from a reader that has no process records still writes a file
 * the native reader accepts whole. */
Test(pbin_write, pids_without_a_process_get_one)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "orphans.pbin");
    struct profile p, back;
    build_profile(&p);
    p.maps[7].pid = 77;
    p.threads[3].pid = 78;
    p.locations[3].pid = 79;
    write_and_load(&p, path, &back);
    cr_expect_eq(back.nprocesses, 6);
    cr_expect_eq(back.nlocations, p.nlocations);
    cr_expect_eq(back.locations[3].pid, 79);
    cr_expect_eq(back.maps[7].pid, 77);
    cr_expect_eq(back.threads[3].pid, 78);
    cr_expect_eq(back.nsamples, p.nsamples);
    profile_free(&back);
    profile_free(&p);
    const char *names[] = {"orphans.pbin", NULL};
    remove_dir(dir, names);
    free(path);
    free(dir);
}

Test(pbin_write, an_unwritable_path_fails_and_leaves_nothing)
{
    struct profile p;
    build_profile(&p);
    fflush(stderr);
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    close(null);
    int rc = native_write_profile("/nonexistent-dir/x.pbin", &p);
    dup2(saved, 2);
    close(saved);
    cr_expect_eq(rc, -1);
    cr_expect_neq(access("/nonexistent-dir/x.pbin", F_OK), 0);
    profile_free(&p);
}

/* --- LOCATION records ----------------------------------------------------- */

static struct native_writer *open_plain(const char *path)
{
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    cr_assert_eq(native_write_process(w, 1, 0, T0), 0);
    return w;
}

Test(pbin_location, an_absurd_inline_chain_keeps_its_innermost_frames_and_its_function)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "deep.pbin");
    enum { N = 300 };
    struct prof_sym_frame *frames = calloc(N, sizeof(*frames));
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        frames[i] = (struct prof_sym_frame){.binary = "b",
                                            .path = "",
                                            .function = strdup(name),
                                            .mangled = "",
                                            .file = "x.c",
                                            .line = (uint32_t)i,
                                            .inlined = i + 1 < N};
    }
    struct prof_location loc = {1, 0x1234, true, 0x234, N, frames};
    struct native_writer *w = open_plain(path);
    cr_assert_eq(native_write_location(w, &loc), 0);
    cr_assert_eq(native_writer_finish(w, &(struct prof_totals){0}), 0);

    struct profile back;
    cr_assert_eq(profile_load(path, &back), 0);
    cr_assert_eq(back.nlocations, 1);
    const struct prof_location *l = &back.locations[0];
    cr_assert_eq(l->nframes, NATIVE_LOCATION_FRAMES_MAX);
    for (uint32_t i = 0; i + 1 < l->nframes; i++)
        cr_expect_str_eq(l->frames[i].function, frames[i].function);
    cr_expect_str_eq(l->frames[l->nframes - 1].function, "f299");
    cr_expect_not(l->frames[l->nframes - 1].inlined);
    cr_expect(l->return_address);
    profile_free(&back);
    for (int i = 0; i < N; i++)
        free(frames[i].function);
    free(frames);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

/* Strings of up to 1 MiB in 256 frames would not fit one record: they are
 * cut to an equal share rather than losing the location. */
Test(pbin_location, strings_too_large_for_one_record_are_cut_to_fit)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "big.pbin");
    size_t big_len = 100 * 1024;
    char *big = malloc(big_len + 1);
    memset(big, 'x', big_len);
    big[big_len] = '\0';
    enum { N = NATIVE_LOCATION_FRAMES_MAX };
    struct prof_sym_frame *frames = calloc(N, sizeof(*frames));
    for (int i = 0; i < N; i++)
        frames[i] = (struct prof_sym_frame){big, big, big, big, big, 1, false};
    struct prof_location loc = {1, 0x10, false, 0x10, N, frames};
    struct native_writer *w = open_plain(path);
    cr_assert_eq(native_write_location(w, &loc), 0);
    cr_assert_eq(native_writer_finish(w, &(struct prof_totals){0}), 0);

    struct profile back;
    cr_assert_eq(profile_load(path, &back), 0);
    cr_expect_not(back.truncated);
    cr_assert_eq(back.nlocations, 1);
    cr_assert_eq(back.locations[0].nframes, N);
    size_t len = strlen(back.locations[0].frames[0].function);
    cr_expect_gt(len, 0);
    cr_expect_lt(len, big_len);
    cr_expect_leq(len * 5 * N, 64u << 20);
    profile_free(&back);
    free(frames);
    free(big);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

/* A valid file of PROCESS 1, then three LOCATION records, then END. */
static unsigned char *three_locations(size_t *len, size_t offsets[3])
{
    char dir_tmpl[] = "/tmp/ptprof-test-pbin-XXXXXX";
    cr_assert_not_null(mkdtemp(dir_tmpl));
    char *path = test_path(dir_tmpl, "l.pbin");
    struct native_writer *w = open_plain(path);
    struct prof_sym_frame fr[2] = {frame("in", "", "a.c", 1, true),
                                   frame("out", "_Z3outv", "a.c", 2, false)};
    for (uint32_t i = 0; i < 3; i++) {
        struct prof_location loc = {1, 0x100 + i, i == 1, i, i == 2 ? 0 : 2, fr};
        cr_assert_eq(native_write_location(w, &loc), 0);
    }
    cr_assert_eq(native_writer_finish(w, &(struct prof_totals){1, 2, 3, 4}), 0);
    unsigned char *d = read_file(path, len);
    cr_assert_eq(record_offsets(d, *len, 64, offsets, 3), 3);
    for (int i = 0; i < 2; i++) {
        free(fr[i].binary);
        free(fr[i].path);
        free(fr[i].function);
        free(fr[i].mangled);
        free(fr[i].file);
    }
    unlink(path);
    rmdir(dir_tmpl);
    free(path);
    return d;
}

Test(pbin_location, records_read_back_in_file_order)
{
    size_t len, off[3];
    unsigned char *d = three_locations(&len, off);
    struct profile p;
    cr_assert_eq(native_load_buffer("l.pbin", d, len, &p), 0);
    cr_assert_eq(p.nlocations, 3);
    cr_expect(p.has_totals);
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_eq(p.locations[i].pc, 0x100 + i);
        cr_expect_eq(p.locations[i].offset, i);
        cr_expect_eq(p.locations[i].return_address, i == 1);
    }
    cr_assert_eq(p.locations[0].nframes, 2);
    cr_expect_str_eq(p.locations[0].frames[0].function, "in");
    cr_expect(p.locations[0].frames[0].inlined);
    cr_expect_str_eq(p.locations[0].frames[1].mangled, "_Z3outv");
    cr_expect_eq(p.locations[0].frames[1].line, 2);
    cr_expect_eq(p.locations[2].nframes, 0);
    profile_free(&p);
    free(d);
}

/* Cut anywhere: every whole record before the cut is kept, and a cut
 * inside a record is reported at that record's offset. */
Test(pbin_location, a_cut_at_every_offset_keeps_every_whole_location)
{
    size_t len, off[3];
    unsigned char *d = three_locations(&len, off);
    for (size_t cut = off[0]; cut < len; cut++) {
        unsigned char *c = malloc(cut);
        memcpy(c, d, cut);
        struct profile p;
        cr_assert_eq(load_quiet(c, cut, &p), 0, "cut at %zu", cut);
        size_t whole = 0, inside = 0;
        for (size_t i = 0; i < 3; i++) {
            size_t end = i + 1 < 3 ? off[i + 1] : len - 40; /* END is 8 + 32 bytes */
            whole += end <= cut;
            if (off[i] < cut && cut < end)
                inside = off[i];
        }
        cr_expect_eq(p.nlocations, whole, "cut at %zu", cut);
        cr_expect_eq(p.truncated,
                     cut != off[1] && cut != off[2] && cut != len - 40 && cut != off[0],
                     "cut at %zu", cut);
        if (inside)
            cr_expect_eq(p.truncated_at, inside, "cut at %zu", cut);
        cr_expect_eq(p.nprocesses, 1);
        profile_free(&p);
        free(c);
    }
    free(d);
}

/* Copy D with the u32 at byte AT replaced by V. */
static unsigned char *patched(const unsigned char *d, size_t len, size_t at, uint32_t v)
{
    unsigned char *c = malloc(len);
    memcpy(c, d, len);
    put32(c + at, v);
    return c;
}

/* Each damage must truncate at the damaged record, keep the one before it,
 * and allocate nothing from the bad numbers. */
Test(pbin_location, hostile_counts_and_lengths_truncate_without_allocating)
{
    size_t len, off[3];
    unsigned char *d = three_locations(&len, off);
    test_limit_address_space();
    /* Payload layout: pid 0, pc 4, flags 12, offset 13, nframes 21, then
     * the first frame's binary length at 25. */
    const size_t at = off[1] + 8;
    struct {
        size_t field;
        uint32_t value;
    } cases[] = {
        {21, NATIVE_LOCATION_FRAMES_MAX + 1},
        {21, UINT32_MAX},
        {21, 200},        /* more frames than the record can hold */
        {25, UINT32_MAX}, /* absurd string length */
        {25, 1u << 20},   /* a long string that is not there */
        {25, 1000},
        {0, 4242}, /* a pid no PROCESS introduced */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *c = patched(d, len, at + cases[i].field, cases[i].value);
        struct profile p;
        cr_assert_eq(load_quiet(c, len, &p), 0, "case %zu", i);
        cr_expect(p.truncated, "case %zu", i);
        cr_expect_eq(p.truncated_at, off[1], "case %zu: truncated at %llu", i,
                     (unsigned long long)p.truncated_at);
        cr_expect_eq(p.nlocations, 1, "case %zu", i);
        cr_expect_not(p.has_totals, "case %zu", i);
        profile_free(&p);
        free(c);
    }
    /* A record header claiming far more than the file holds. */
    unsigned char *c = patched(d, len, off[1] + 4, 60u << 20);
    struct profile p;
    cr_assert_eq(load_quiet(c, len, &p), 0);
    cr_expect(p.truncated);
    cr_expect_eq(p.truncated_at, off[1]);
    profile_free(&p);
    free(c);
    free(d);
}

/* Inputs no writer produces: a string over the 1 MiB limit although all
 * its bytes are there, a NUL inside a string, a location after END. */
Test(pbin_location, malformed_records_built_by_hand_truncate)
{
    struct rec_buf head = {0}, proc = {0};
    rb_put(&head, NATIVE_MAGIC, 8);
    rb_u32(&head, NATIVE_MAJOR | NATIVE_MINOR << 16);
    rb_u32(&head, 0);
    rb_u32(&proc, 1);
    rb_u32(&proc, 0);
    rb_u64(&proc, T0);
    rb_record(&head, 3, &proc);

    char *huge = malloc((1u << 20) + 2);
    memset(huge, 'a', (1u << 20) + 1);
    huge[(1u << 20) + 1] = '\0';
    const char *functions[] = {huge, "ab\0cd", "fine"};
    const size_t flen[] = {(1u << 20) + 1, 5, 4};
    for (size_t i = 0; i < 3; i++) {
        struct rec_buf loc = {0}, file = {0};
        rb_u32(&loc, 1);
        rb_u64(&loc, 0x10);
        rb_u8(&loc, 0);
        rb_u64(&loc, 0x10);
        rb_u32(&loc, 1);
        rb_str(&loc, "bin");
        rb_str(&loc, "/bin");
        rb_u32(&loc, (uint32_t)flen[i]);
        rb_put(&loc, functions[i], flen[i]);
        rb_str(&loc, "");
        rb_str(&loc, "f.c");
        rb_u32(&loc, 3);
        rb_u8(&loc, 0);
        rb_put(&file, head.p, head.len);
        struct rec_buf end = {0};
        if (i == 2) {
            /* Valid, but after END. */
            for (int k = 0; k < 4; k++)
                rb_u64(&end, 1);
            rb_record(&file, 13, &end);
        }
        size_t at = file.len;
        rb_record(&file, 64, &loc);
        struct profile p;
        cr_assert_eq(load_quiet(file.p, file.len, &p), 0, "case %zu", i);
        cr_expect(p.truncated, "case %zu", i);
        cr_expect_eq(p.truncated_at, at, "case %zu", i);
        cr_expect_eq(p.nlocations, 0, "case %zu", i);
        profile_free(&p);
        free(loc.p);
        free(file.p);
        free(end.p);
    }
    free(huge);
    free(head.p);
    free(proc.p);
}

Test(pbin_location, dump_prints_each_location_and_its_frames)
{
    size_t len, off[3];
    unsigned char *d = three_locations(&len, off);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    cr_assert_eq(native_dump_buffer("l.pbin", d, len, f), 0);
    fclose(f);
    char line[512];
    snprintf(line, sizeof(line),
             "@%zu LOCATION pid=1 pc=0x101 flags=0x1 (return address) offset=0x1 frames=2\n"
             "    function=\"in\" mangled=\"\" file=\"a.c\" line=1 binary=\"app\" "
             "path=\"/opt/app/bin/app\" inlined\n"
             "    function=\"out\" mangled=\"_Z3outv\" file=\"a.c\" line=2 binary=\"app\" "
             "path=\"/opt/app/bin/app\"\n",
             off[1]);
    cr_expect_not_null(strstr(text, line), "missing\n%s\nin\n%s", line, text);
    snprintf(line, sizeof(line), "@%zu LOCATION pid=1 pc=0x102 flags=0x0 offset=0x2 frames=0\n",
             off[2]);
    cr_expect_not_null(strstr(text, line), "missing\n%s\nin\n%s", line, text);
    free(text);
    free(d);
}

/* --- end to end: record, postprocess, lose the binary ---------------------- */

static void run_ok(const char *const *argv, const char *cache)
{
    char *env_cache = NULL;
    cr_assert_geq(asprintf(&env_cache, "XDG_CACHE_HOME=%s", cache), 0);
    const char *env[] = {env_cache, NULL};
    struct spawn_opts o = {.argv = argv, .env = env, .timeout_s = 60};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "%s %s: %s\n%s", argv[0],
              argv[1], spawn_status_text(res.status), res.err);
    spawn_result_free(&res);
    free(env_cache);
}

static void copy_file(const char *from, const char *to)
{
    size_t len;
    unsigned char *d = read_file(from, &len);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, d, len), (ssize_t)len);
    close(fd);
    free(d);
}

/* How a symbolizer over P names an address, as one string. */
static char *names_of(struct symbolizer *s, uint32_t pid, uint64_t t, uint64_t pc, bool ra)
{
    const struct sym_location *l = symbolizer_resolve(s, pid, t, pc, ra);
    char *out = strdup("");
    for (uint32_t f = 0; f < l->nframes; f++) {
        char *next = NULL;
        cr_assert_geq(asprintf(&next, "%s%s:%s:%s:%u;", out, l->frames[f].binary,
                               l->frames[f].function, l->frames[f].file, l->frames[f].line),
                      0);
        free(out);
        out = next;
    }
    return out;
}

/* Every address the samples use, as REF and PBIN name it; returns how many
 * leaf frames of the workload's own binary were named FUNCTION. */
static size_t expect_same_names(const struct profile *ref, struct symbolizer *rs,
                                const struct profile *pbin, struct symbolizer *ps,
                                const char *function)
{
    size_t named = 0;
    cr_assert_eq(ref->nsamples, pbin->nsamples);
    for (size_t i = 0; i < ref->nsamples; i++) {
        const struct prof_sample *a = &ref->samples[i], *b = &pbin->samples[i];
        cr_assert_eq(a->nthreads, b->nthreads);
        for (uint32_t t = 0; t < a->nthreads; t++) {
            const struct prof_thread_sample *x = &a->threads[t], *y = &b->threads[t];
            char *want = names_of(rs, x->pid, a->time_ns, x->pc, false);
            char *got = names_of(ps, y->pid, b->time_ns, y->pc, false);
            cr_expect_str_eq(got, want, "sample %zu thread %u leaf", i, t);
            named += strstr(got, function) != NULL;
            free(want);
            free(got);
            const struct prof_stack *sa = &ref->stacks[x->stack], *sb = &pbin->stacks[y->stack];
            cr_assert_eq(sa->depth, sb->depth);
            for (uint32_t k = 1; k < sa->depth; k++) {
                want = names_of(rs, x->pid, a->time_ns, sa->pcs[k], true);
                got = names_of(ps, y->pid, b->time_ns, sb->pcs[k], true);
                cr_expect_str_eq(got, want, "sample %zu thread %u frame %u", i, t, k);
                free(want);
                free(got);
            }
        }
    }
    return named;
}

Test(pbin_e2e, a_pbin_names_every_frame_after_the_binary_is_gone, .timeout = 120)
{
    char *ptprof = build_ptprof();
    char *workload = build_workload("callers");
    if (access(ptprof, X_OK) != 0 || access(workload, X_OK) != 0)
        cr_skip_test("no %s or %s (make tests; PTPROF_BUILD)", ptprof, workload);
    char *dir = test_mkdtemp();
    char *exe = test_path(dir, "callers"), *raw = test_path(dir, "run.data");
    char *pbin = test_path(dir, "run.pbin"), *cache = test_path(dir, "cache");
    copy_file(workload, exe);

    const char *rec[] = {ptprof, "record", "-f", "300", "-o", raw, "--", exe, "1", NULL};
    run_ok(rec, cache);
    const char *pp[] = {ptprof, "postprocess", raw, NULL};
    run_ok(pp, cache);

    /* The .pbin holds the raw profile and the tables this process makes
     * of it while the binary is there. */
    struct profile ref, back;
    struct symbolizer_options nocache = {0};
    cr_assert_eq(profile_load(raw, &ref), 0);
    cr_assert_eq(pbin_symbolize(&ref, &nocache), 0);
    cr_assert_eq(profile_load(pbin, &back), 0);
    cr_expect_str_eq(profile_meta(&back, "symbolized"), "1");
    cr_assert_gt(back.nlocations, 10);
    expect_same_profile(&ref, &back);
    profile_free(&ref);

    /* The reference names: the raw profile read from the binary, every
     * address resolved before the binary goes. */
    cr_assert_eq(profile_load(raw, &ref), 0);
    struct symbolizer *rs = symbolizer_new(&ref, &nocache);
    symbolizer_prepare(rs);
    unlink(exe);
    struct symbolizer *ps = symbolizer_new(&back, &nocache);
    size_t hot = expect_same_names(&ref, rs, &back, ps, ":hot:");
    cr_expect_gt(hot, ref.nsamples / 4, "only %zu of %zu samples in hot()", hot, ref.nsamples);
    symbolizer_free(ps);

    /* Without the tables the same addresses are now nameless. */
    struct profile bare;
    cr_assert_eq(profile_load(raw, &bare), 0);
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    struct symbolizer *bs = symbolizer_new(&bare, &nocache);
    /* A perf-engine tick may hold no thread (nobody ran, nobody slept). */
    size_t mid = bare.nsamples / 2;
    while (mid < bare.nsamples && bare.samples[mid].nthreads == 0)
        mid++;
    cr_assert_lt(mid, bare.nsamples, "no sample with a thread after the middle");
    const struct prof_thread_sample *t0 = &bare.samples[mid].threads[0];
    char *gone = names_of(bs, t0->pid, bare.samples[mid].time_ns, t0->pc, false);
    dup2(saved, 2);
    close(saved);
    close(null);
    cr_expect_not_null(strstr(gone, "callers:callers+0x"), "%s", gone);
    free(gone);
    symbolizer_free(bs);
    profile_free(&bare);

    const char *info[] = {ptprof, "info", pbin, NULL};
    run_ok(info, cache);
    char *dumped = test_path(dir, "dump.txt");
    const char *dump[] = {ptprof, "dump", pbin, NULL};
    struct spawn_opts o = {.argv = dump};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_expect_eq(res.status, 0);
    cr_expect_not_null(strstr(res.out, " LOCATION pid="));
    cr_expect_not_null(strstr(res.out, "function=\"hot\""));
    spawn_result_free(&res);

    symbolizer_free(rs);
    profile_free(&ref);
    profile_free(&back);
    test_rmtree(dir);
    free(dumped);
    free(exe);
    free(raw);
    free(pbin);
    free(cache);
    free(dir);
    free(ptprof);
    free(workload);
}

/* The original format names binaries by base name: -s finds them, and the
 * .pbin it becomes is native and self-contained. */
Test(pbin_e2e, a_profile_in_the_original_format_becomes_a_pbin, .timeout = 120)
{
    char *ptprof = build_ptprof();
    char *workload = build_workload("callers");
    if (access(ptprof, X_OK) != 0 || access(workload, X_OK) != 0)
        cr_skip_test("no %s or %s (make tests; PTPROF_BUILD)", ptprof, workload);
    char *dir = test_mkdtemp();
    char *bindir = test_path(dir, "bin"), *exe = test_path(dir, "bin/callers");
    char *raw = test_path(dir, "run.data"), *pbin = test_path(dir, "run.pbin.gz");
    char *cache = test_path(dir, "cache");
    cr_assert_eq(mkdir(bindir, 0755), 0);
    copy_file(workload, exe);

    const char *rec[] = {ptprof, "record", "--format", "pperf", "-f", "300",
                         "-o",   raw,      "--",       exe,     "1",  NULL};
    run_ok(rec, cache);
    const char *pp[] = {ptprof, "postprocess", raw, "-s", bindir, "-o", pbin, NULL};
    run_ok(pp, cache);
    unlink(exe);

    size_t len;
    unsigned char *head = read_file(pbin, &len);
    cr_assert_gt(len, 2);
    cr_expect(head[0] == 0x1f && head[1] == 0x8b, "not gzip-compressed");
    free(head);

    struct profile p;
    cr_assert_eq(profile_load(pbin, &p), 0);
    cr_expect_str_eq(p.format, "native");
    cr_assert_gt(p.nlocations, 0);
    struct symbolizer_options nocache = {0};
    struct symbolizer *s = symbolizer_new(&p, &nocache);
    size_t hot = 0, threads = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        for (uint32_t t = 0; t < p.samples[i].nthreads; t++) {
            const struct prof_thread_sample *th = &p.samples[i].threads[t];
            const struct sym_location *l =
                symbolizer_resolve(s, th->pid, p.samples[i].time_ns, th->pc, false);
            const struct sym_frame *outer = &l->frames[l->nframes - 1];
            hot += strcmp(outer->function, "hot") == 0 && strcmp(outer->binary, "callers") == 0;
            threads++;
        }
    }
    cr_expect_gt(hot, threads / 4, "only %zu of %zu thread samples in hot()", hot, threads);
    symbolizer_free(s);
    profile_free(&p);

    const char *info[] = {ptprof, "info", pbin, NULL};
    run_ok(info, cache);
    test_rmtree(dir);
    free(bindir);
    free(exe);
    free(raw);
    free(pbin);
    free(cache);
    free(dir);
    free(ptprof);
    free(workload);
}
