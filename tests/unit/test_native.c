/* test_native.c - format/native.h: ptprof's streaming profile format. */
#include "../lib/spawn.h"
#include "format/load.h"
#include "format/native.h"
#include "model/profile.h"
#include "model/maps.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------- */

static unsigned char *read_fd_all(int fd, size_t *len)
{
    size_t cap = 65536, n = 0;
    unsigned char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (;;) {
        if (n == cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert_not_null(buf);
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        cr_assert_geq(got, 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *len = n;
    return buf;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
    unsigned char *b = read_fd_all(fileno(f), len);
    fclose(f);
    return b;
}

struct load_args {
    const char *name;
    const void *data;
    size_t len;
    struct profile *p;
};

static int do_load(void *arg)
{
    struct load_args *a = arg;
    return native_load_buffer(a->name, a->data, a->len, a->p);
}

/* Load quietly: damaged inputs warn on stderr by design. */
static int load_quiet(const void *data, size_t len, struct profile *p, char **msg)
{
    struct load_args a = {"t.prof", data, len, p};
    int rc;
    char *text = test_capture_stderr(do_load, &a, &rc);
    if (msg)
        *msg = text;
    else
        free(text);
    return rc;
}

/* Little-endian decoding written out here, independent of the reader. */
static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Record boundaries of a well-formed file, found without the reader. */
struct layout {
    size_t n;
    size_t offset[512];
    unsigned type[512];
};

static void walk(const unsigned char *d, size_t len, struct layout *l)
{
    l->n = 0;
    size_t pos = 16;
    while (pos < len) {
        cr_assert_leq(pos + 8, len);
        cr_assert_lt(l->n, 512);
        l->offset[l->n] = pos;
        l->type[l->n] = le16(d + pos);
        l->n++;
        pos += 8 + le32(d + pos + 4);
    }
    cr_assert_eq(pos, len, "records do not end at the end of the file");
}

/* A hand-made file, for inputs the writer would never produce. */
struct bb {
    unsigned char *d;
    size_t len, cap, rec;
};

static void bb_put(struct bb *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        cr_assert_not_null(b->d);
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
}

static void bb_u16(struct bb *b, uint16_t v)
{
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    bb_put(b, x, 2);
}

static void bb_u32(struct bb *b, uint32_t v)
{
    unsigned char x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    bb_put(b, x, 4);
}

static void bb_u64(struct bb *b, uint64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    bb_put(b, x, 8);
}

static void bb_str(struct bb *b, const char *s)
{
    bb_u32(b, (uint32_t)strlen(s));
    bb_put(b, s, strlen(s));
}

static void bb_file_header(struct bb *b, uint16_t major)
{
    bb_put(b, "\x89PTPROF\n", 8);
    bb_u16(b, major);
    bb_u16(b, 0);
    bb_u32(b, 0);
}

/* Start a record; returns its offset.  bb_end() fills in the length. */
static size_t bb_begin(struct bb *b, uint16_t type, uint16_t flags)
{
    b->rec = b->len;
    bb_u16(b, type);
    bb_u16(b, flags);
    bb_u32(b, 0);
    return b->rec;
}

static void bb_end(struct bb *b)
{
    uint32_t n = (uint32_t)(b->len - b->rec - 8);
    for (int i = 0; i < 4; i++)
        b->d[b->rec + 4 + i] = (unsigned char)(n >> (8 * i));
}

static void bb_process(struct bb *b, uint32_t pid)
{
    bb_begin(b, 3, 0);
    bb_u32(b, pid);
    bb_u32(b, 0);
    bb_u64(b, 1000);
    bb_end(b);
}

static void bb_stack(struct bb *b, uint32_t id, uint32_t parent, uint32_t count)
{
    bb_begin(b, 11, 0);
    bb_u32(b, id);
    bb_u32(b, parent);
    bb_u32(b, count);
    for (uint32_t i = 0; i < count; i++)
        bb_u64(b, 0x1000 + i);
    bb_end(b);
}

/* A SAMPLE with no values and one thread on STACK. */
static void bb_sample(struct bb *b, uint32_t stack)
{
    bb_begin(b, 12, 0);
    bb_u64(b, 5000);
    bb_u32(b, 0);
    bb_u32(b, 1);
    bb_u32(b, 7);
    bb_u32(b, 7);
    bb_u64(b, 0x401000);
    bb_u64(b, 123);
    bb_u32(b, stack);
    bb_u32(b, (uint32_t)-1);
    bb_u32(b, 0);
    bb_end(b);
}

/* --- the reference profile ------------------------------------------------ */

#define T0 1700000000000000000ULL
static const uint64_t stack_a[] = {0x401234, 0x401100, 0x400f00};
static const uint64_t stack_b[] = {0x7f0000001234};
static const unsigned char build_id[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                           7,    8,    9,    10,   11, 12, 13, 14, 15, 16};

static struct prof_map ref_map(uint32_t pid, uint64_t time, uint64_t start, uint64_t end,
                               const char *path)
{
    struct prof_map m = {
        .pid = pid,
        .time_ns = time,
        .start = start,
        .end = end,
        .offset = 0x1000,
        .inode = 1234567,
        .dev_major = 8,
        .dev_minor = 1,
        .perms = MAP_PERM_READ | MAP_PERM_EXEC,
        .build_id_len = sizeof(build_id),
        .path = (char *)path,
        .unmap_ns = 99, /* ignored by the writer */
    };
    memcpy(m.build_id, build_id, sizeof(build_id));
    return m;
}

/* Every record type.  FINISH false leaves the file as a killed recorder
 * would after publishing: no END. */
static int write_reference(const char *path, bool finish)
{
    struct native_writer *w = native_writer_open(path);
    if (!w)
        return -1;
    struct pmu_channel ch[2] = {{"package-0", "W", PMU_KIND_POWER}, {"core", "J", PMU_KIND_ENERGY}};
    unsigned char image[64];
    for (size_t i = 0; i < sizeof(image); i++)
        image[i] = (unsigned char)(i * 7);
    int rc = 0;
    rc |= native_write_meta(w, "command", "./demo 'a b'");
    rc |= native_write_meta(w, "frequency", "997");
    rc |= native_write_meta(w, "stacks", "fp");
    rc |= native_write_meta(w, "start_time", "1700000000000000000");
    rc |= native_write_channel(w, 0, &ch[0]);
    rc |= native_write_channel(w, 1, &ch[1]);
    rc |= native_write_process(w, 100, 0, T0);
    rc |= native_write_thread(w, 100, 100, T0, "demo");
    struct prof_map m1 = ref_map(100, T0 + 1, 0x400000, 0x401000, "/usr/bin/demo");
    struct prof_map m2 = ref_map(100, T0 + 1, 0x7fff0000, 0x7fff2000, "[vdso]");
    m2.build_id_len = 0;
    rc |= native_write_map(w, &m1);
    rc |= native_write_map(w, &m2);
    rc |= native_write_image(w, 100, 0x7fff0000, "[vdso]", image, sizeof(image));
    rc |= native_writer_publish(w);
    rc |= native_write_process(w, 101, 100, T0 + 10);
    rc |= native_write_thread(w, 101, 101, T0 + 10, "demo");
    rc |= native_write_thread(w, 100, 102, T0 + 11, "worker");
    struct prof_map m3 = ref_map(101, T0 + 12, 0x400000, 0x401000, "/usr/bin/demo");
    rc |= native_write_map(w, &m3);

    uint32_t a = native_stack_id(w, stack_a, 3);
    uint32_t b = native_stack_id(w, stack_b, 1);
    uint32_t a2 = native_stack_id(w, stack_a, 3);
    if (a != 1 || b != 2 || a2 != a || native_stack_id(w, stack_a, 0) != 0)
        rc = -1;
    double v1[2] = {1.5, 10.25};
    struct prof_thread_sample t1[3] = {
        {100, 100, 0x401234, 5000000, a, -1, 0},
        {100, 102, 0x7f0000001234, 12, b, 230, PROF_THREAD_IN_SYSCALL},
        {101, 101, 0x400100, 0, 0, -1, PROF_THREAD_STOPPED},
    };
    rc |= native_write_sample(w, T0 + 1000000, v1, 2, t1, 3);
    rc |= native_write_exec(w, 101, T0 + 2000000, "/bin/sh");
    rc |= native_write_unmap(w, 100, T0 + 3000000, 0x400800, 0x400900);
    double v2[2] = {-0.0, 1e-300};
    struct prof_thread_sample t2[1] = {{100, 100, 0x401100, 6000000, a2, -1, 0}};
    rc |= native_write_sample(w, T0 + 4000000, v2, 2, t2, 1);
    rc |= native_write_thread_exit(w, 102, T0 + 5000000);
    rc |= native_write_exit(w, 101, T0 + 6000000, SIGSEGV);
    rc |= native_write_exit(w, 100, T0 + 7000000, 3 << 8);
    if (rc != 0) {
        native_writer_abort(w);
        return -1;
    }
    if (!finish) {
        native_writer_abort(w);
        return 0;
    }
    struct prof_totals tot = {8000000, 12345, 2, 3};
    return native_writer_finish(w, &tot);
}

static unsigned char *reference_bytes(bool finish, size_t *len)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "ref.prof");
    cr_assert_eq(write_reference(path, finish), 0);
    unsigned char *b = read_file(path, len);
    test_rmtree(dir);
    free(path);
    free(dir);
    return b;
}

static void check_reference(const struct profile *p)
{
    cr_assert_str_eq(p->format, "native");
    cr_assert_eq(p->nmeta, 4);
    cr_assert_str_eq(profile_meta(p, "command"), "./demo 'a b'");
    cr_assert_str_eq(profile_meta(p, "stacks"), "fp");
    cr_assert_null(profile_meta(p, "host"));
    cr_assert_eq(p->frequency, 997.0);

    cr_assert_eq(p->nchannels, 2);
    cr_assert_str_eq(p->channels[0].name, "package-0");
    cr_assert_str_eq(p->channels[0].unit, "W");
    cr_assert_eq(p->channels[0].kind, PMU_KIND_POWER);
    cr_assert_str_eq(p->channels[1].name, "core");
    cr_assert_str_eq(p->channels[1].unit, "J");
    cr_assert_eq(p->channels[1].kind, PMU_KIND_ENERGY);

    cr_assert_eq(p->nprocesses, 2);
    const struct prof_process *p0 = &p->processes[0], *p1 = &p->processes[1];
    cr_assert_eq(p0->pid, 100);
    cr_assert_eq(p0->ppid, 0);
    cr_assert_eq(p0->start_ns, T0);
    cr_assert(p0->exited);
    cr_assert_eq(p0->exit_status, 3 << 8);
    cr_assert_eq(p0->exit_ns, T0 + 7000000);
    cr_assert_str_eq(p0->exe, "");
    cr_assert_eq(p1->pid, 101);
    cr_assert_eq(p1->ppid, 100);
    cr_assert_eq(p1->start_ns, T0 + 10);
    cr_assert_str_eq(p1->exe, "/bin/sh");
    cr_assert(p1->exited);
    cr_assert_eq(p1->exit_status, SIGSEGV);
    cr_assert_eq(p1->exit_ns, T0 + 6000000);

    cr_assert_eq(p->nthreads, 3);
    cr_assert_eq(p->threads[0].tid, 100);
    cr_assert_str_eq(p->threads[0].name, "demo");
    cr_assert_eq(p->threads[0].end_ns, 0);
    cr_assert_eq(p->threads[1].pid, 101);
    cr_assert_eq(p->threads[1].tid, 101);
    cr_assert_eq(p->threads[2].pid, 100);
    cr_assert_eq(p->threads[2].tid, 102);
    cr_assert_eq(p->threads[2].start_ns, T0 + 11);
    cr_assert_str_eq(p->threads[2].name, "worker");
    cr_assert_eq(p->threads[2].end_ns, T0 + 5000000);

    cr_assert_eq(p->nmaps, 3);
    const struct prof_map *m = &p->maps[0];
    cr_assert_eq(m->pid, 100);
    cr_assert_eq(m->time_ns, T0 + 1);
    cr_assert_eq(m->start, 0x400000);
    cr_assert_eq(m->end, 0x401000);
    cr_assert_eq(m->offset, 0x1000);
    cr_assert_eq(m->inode, 1234567);
    cr_assert_eq(m->dev_major, 8);
    cr_assert_eq(m->dev_minor, 1);
    cr_assert_eq(m->perms, MAP_PERM_READ | MAP_PERM_EXEC);
    cr_assert_eq(m->build_id_len, sizeof(build_id));
    cr_assert_arr_eq(m->build_id, build_id, sizeof(build_id));
    cr_assert_str_eq(m->path, "/usr/bin/demo");
    /* UNMAP of a range inside it ends it; the vdso is untouched. */
    cr_assert_eq(m->unmap_ns, T0 + 3000000);
    cr_assert_str_eq(p->maps[1].path, "[vdso]");
    cr_assert_eq(p->maps[1].build_id_len, 0);
    cr_assert_eq(p->maps[1].unmap_ns, 0);
    /* EXEC ends every map of its process. */
    cr_assert_eq(p->maps[2].pid, 101);
    cr_assert_eq(p->maps[2].unmap_ns, T0 + 2000000);

    cr_assert_eq(p->nimages, 1);
    cr_assert_eq(p->images[0].pid, 100);
    cr_assert_eq(p->images[0].start, 0x7fff0000);
    cr_assert_str_eq(p->images[0].name, "[vdso]");
    cr_assert_eq(p->images[0].size, 64);
    for (size_t i = 0; i < 64; i++)
        cr_assert_eq(p->images[0].data[i], (unsigned char)(i * 7));

    cr_assert_eq(p->nstacks, 3);
    cr_assert_eq(p->stacks[0].depth, 0);
    cr_assert_eq(p->stacks[1].depth, 3);
    cr_assert_arr_eq(p->stacks[1].pcs, stack_a, sizeof(stack_a));
    cr_assert_eq(p->stacks[2].depth, 1);
    cr_assert_eq(p->stacks[2].pcs[0], stack_b[0]);

    cr_assert_eq(p->nsamples, 2);
    const struct prof_sample *s = &p->samples[0];
    cr_assert_eq(s->time_ns, T0 + 1000000);
    cr_assert_eq(s->values[0], 1.5);
    cr_assert_eq(s->values[1], 10.25);
    cr_assert_eq(s->nthreads, 3);
    cr_assert_eq(s->threads[0].pid, 100);
    cr_assert_eq(s->threads[0].tid, 100);
    cr_assert_eq(s->threads[0].pc, 0x401234);
    cr_assert_eq(s->threads[0].cpu_ns, 5000000);
    cr_assert_eq(s->threads[0].stack, 1);
    cr_assert_eq(s->threads[0].syscall, -1);
    cr_assert_eq(s->threads[0].flags, 0);
    cr_assert_eq(s->threads[1].tid, 102);
    cr_assert_eq(s->threads[1].pc, 0x7f0000001234);
    cr_assert_eq(s->threads[1].stack, 2);
    cr_assert_eq(s->threads[1].syscall, 230);
    cr_assert_eq(s->threads[1].flags, PROF_THREAD_IN_SYSCALL);
    cr_assert_eq(s->threads[2].pid, 101);
    cr_assert_eq(s->threads[2].stack, 0);
    cr_assert_eq(s->threads[2].flags, PROF_THREAD_STOPPED);
    s = &p->samples[1];
    cr_assert_eq(s->nthreads, 1);
    cr_assert_eq(s->threads[0].stack, 1, "the same stack must get the same id");
    cr_assert(s->values[0] == 0 && signbit(s->values[0]), "-0.0 must survive");
    cr_assert_eq(s->values[1], 1e-300);
}

/* --- round trip ----------------------------------------------------------- */

Test(native_roundtrip, every_record_type_reads_back_exactly)
{
    size_t len;
    unsigned char *b = reference_bytes(true, &len);
    struct profile p;
    cr_assert_eq(native_load_buffer("ref.prof", b, len, &p), 0);
    check_reference(&p);
    cr_assert(p.has_totals);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.totals.wall_ns, 8000000);
    cr_assert_eq(p.totals.latency_ns, 12345);
    cr_assert_eq(p.totals.samples, 2);
    cr_assert_eq(p.totals.ideal_samples, 3);
    profile_free(&p);
    cr_assert_eq(p.nsamples, 0);
    profile_free(&p); /* harmless twice */
    free(b);
}

Test(native_roundtrip, layout_is_as_documented)
{
    size_t len;
    unsigned char *b = reference_bytes(true, &len);
    cr_assert(native_is_native(b, len));
    cr_assert_eq(memcmp(b, "\x89PTPROF\n", 8), 0);
    cr_assert_eq(le16(b + 8), 1);
    cr_assert_eq(le16(b + 10), 1);
    cr_assert_eq(le32(b + 12), 0);

    struct layout l;
    walk(b, len, &l);
    unsigned stacks = 0, samples = 0;
    for (size_t i = 0; i < l.n; i++) {
        const unsigned char *r = b + l.offset[i];
        if (l.type[i] == 11) {
            stacks++;
            cr_assert_eq(le32(r + 8), stacks, "stack ids are 1, 2, ...");
            cr_assert_eq(le32(r + 12), 0, "full stacks have no parent");
        }
        if (l.type[i] == 12 && samples++ == 0) {
            /* time, 2 values, 3 threads of 36 bytes each */
            cr_assert_eq(le32(r + 4), 8 + 4 + 16 + 4 + 3 * 36);
            cr_assert_eq(le64(r + 8), T0 + 1000000);
            cr_assert_eq(le32(r + 16), 2);
            const unsigned char *t = r + 8 + 8 + 4 + 16 + 4 + 36; /* second thread */
            cr_assert_eq(le32(t + 4), 102);
            cr_assert_eq(le64(t + 8), 0x7f0000001234);
            cr_assert_eq(le32(t + 24), 2);
            cr_assert_eq(le32(t + 28), 230);
            cr_assert_eq(le32(t + 32), 1);
        }
        cr_assert_eq(le16(r + 2), 0, "flags of version-1.0 records are 0");
    }
    cr_assert_eq(stacks, 2, "stack A written twice must give one STACK record");
    cr_assert_eq(samples, 2);
    cr_assert_eq(l.type[l.n - 1], 13, "END comes last");
    cr_assert_eq(le32(b + l.offset[l.n - 1] + 4), 32);
    free(b);
}

Test(native_roundtrip, a_file_without_end_has_no_totals)
{
    size_t len;
    unsigned char *b = reference_bytes(false, &len);
    struct profile p;
    cr_assert_eq(native_load_buffer("noend.prof", b, len, &p), 0);
    check_reference(&p);
    cr_assert_not(p.has_totals);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.totals.samples, 0);
    profile_free(&p);
    free(b);
}

/* Run write_reference("-") in a child whose stdout is a pipe. */
Test(native_roundtrip, writing_into_a_pipe_works)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        _exit(write_reference("-", true) == 0 ? 0 : 1);
    }
    close(fds[1]);
    size_t len;
    unsigned char *b = read_fd_all(fds[0], &len);
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer child failed");

    size_t flen;
    unsigned char *fb = reference_bytes(true, &flen);
    cr_assert_eq(len, flen);
    cr_assert_arr_eq(b, fb, len, "a pipe must get the same bytes as a file");
    struct profile p;
    cr_assert_eq(native_load_buffer("<pipe>", b, len, &p), 0);
    check_reference(&p);
    cr_assert(p.has_totals);
    profile_free(&p);
    free(fb);
    free(b);
}

Test(native_roundtrip, records_larger_than_the_buffer_and_deep_stacks)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "big.prof");
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    size_t isize = 700 * 1024; /* more than the writer's buffer */
    unsigned char *image = malloc(isize);
    for (size_t i = 0; i < isize; i++)
        image[i] = (unsigned char)(i * 31 + 7);
    cr_assert_eq(native_write_process(w, 1, 0, 5), 0);
    cr_assert_eq(native_write_image(w, 1, 0x1000, "blob", image, isize), 0);

    uint64_t deep[5000];
    for (size_t i = 0; i < 5000; i++)
        deep[i] = 0x400000 + i;
    uint32_t id = native_stack_id(w, deep, 5000);
    cr_assert_eq(id, 1);
    /* Thousands of distinct stacks: the dedup table must grow. */
    for (uint32_t i = 0; i < 3000; i++) {
        uint64_t pcs[2] = {i, 0x1234};
        cr_assert_eq(native_stack_id(w, pcs, 2), i + 2);
    }
    for (uint32_t i = 0; i < 3000; i += 7) {
        uint64_t pcs[2] = {i, 0x1234};
        cr_assert_eq(native_stack_id(w, pcs, 2), i + 2);
    }
    struct prof_totals t = {0};
    cr_assert_eq(native_writer_finish(w, &t), 0);

    size_t len;
    unsigned char *b = read_file(path, &len);
    struct profile p;
    cr_assert_eq(native_load_buffer("big.prof", b, len, &p), 0);
    cr_assert_eq(p.nimages, 1);
    cr_assert_eq(p.images[0].size, isize);
    cr_assert_arr_eq(p.images[0].data, image, isize);
    cr_assert_eq(p.nstacks, 3002);
    /* Cut to the format's limit, keeping the frames nearest the leaf. */
    cr_assert_eq(p.stacks[1].depth, 4096);
    cr_assert_arr_eq(p.stacks[1].pcs, deep, 4096 * sizeof(uint64_t));
    cr_assert_eq(p.stacks[3001].pcs[0], 2999);
    profile_free(&p);
    free(b);
    free(image);
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* A recorder killed with SIGKILL after publishing leaves what it wrote up
 * to its last flush, and it flushes at least every 250 ms. */
Test(native_roundtrip, a_killed_writer_leaves_a_readable_profile)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "killed.prof");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct native_writer *w = native_writer_open(path);
        if (!w || native_writer_publish(w) != 0)
            _exit(1);
        native_write_meta(w, "command", "victim");
        native_write_process(w, 1, 0, 1);
        struct prof_thread_sample t = {1, 1, 0x1000, 1, 0, -1, 0};
        native_write_sample(w, 10, NULL, 0, &t, 1);
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
        native_write_sample(w, 20, NULL, 0, &t, 1); /* due for a flush now */
        raise(SIGKILL);
        _exit(2);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child did not die by SIGKILL");

    size_t len;
    unsigned char *b = read_file(path, &len);
    struct profile p;
    cr_assert_eq(native_load_buffer("killed.prof", b, len, &p), 0);
    cr_assert_str_eq(profile_meta(&p, "command"), "victim");
    cr_assert_eq(p.nsamples, 2);
    cr_assert_not(p.has_totals);
    profile_free(&p);
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}

Test(native_roundtrip, abort_before_publish_leaves_nothing)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "never.prof");
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    cr_assert_eq(native_write_meta(w, "command", "x"), 0);
    native_writer_abort(w);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "an aborted, unpublished profile must not appear");
    DIR *d = opendir(dir);
    struct dirent *de;
    while ((de = readdir(d)))
        cr_assert(de->d_name[0] == '.' && (de->d_name[1] == '\0' || de->d_name[1] == '.'),
                  "left behind: %s", de->d_name);
    closedir(d);
    test_rmtree(dir);
    free(path);
    free(dir);
}

/* --- damage --------------------------------------------------------------- */

static size_t count_type(const struct layout *l, size_t upto, unsigned type)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n && l->offset[i] < upto; i++)
        n += l->type[i] == type;
    return n;
}

Test(native_damage, a_cut_at_every_offset_keeps_every_whole_record)
{
    size_t len;
    unsigned char *b = reference_bytes(true, &len);
    struct layout l;
    walk(b, len, &l);
    struct profile full;
    cr_assert_eq(native_load_buffer("full", b, len, &full), 0);

    for (size_t cut = 16; cut < len; cut++) {
        /* An exact-size copy, so a sanitizer sees any read past the cut. */
        unsigned char *c = malloc(cut);
        memcpy(c, b, cut);
        struct profile p;
        cr_assert_eq(load_quiet(c, cut, &p, NULL), 0, "cut at %zu refused", cut);

        /* The records wholly before the cut. */
        size_t whole = 0;
        while (whole < l.n && l.offset[whole] + 8 + le32(b + l.offset[whole] + 4) <= cut)
            whole++;
        bool at_boundary = whole == l.n || l.offset[whole] == cut;
        if (at_boundary) {
            cr_assert_not(p.truncated, "cut at boundary %zu marked truncated", cut);
        } else {
            cr_assert(p.truncated, "cut at %zu not marked truncated", cut);
            cr_assert_eq(p.truncated_at, l.offset[whole], "cut at %zu: truncated at %llu", cut,
                         (unsigned long long)p.truncated_at);
        }
        cr_assert_not(p.has_totals, "cut at %zu before END has totals", cut);

        size_t upto = whole < l.n ? l.offset[whole] : len;
        cr_assert_eq(p.nmeta, count_type(&l, upto, 1));
        cr_assert_eq(p.nchannels, count_type(&l, upto, 2));
        cr_assert_eq(p.nprocesses, count_type(&l, upto, 3));
        cr_assert_eq(p.nthreads, count_type(&l, upto, 6));
        cr_assert_eq(p.nmaps, count_type(&l, upto, 8));
        cr_assert_eq(p.nimages, count_type(&l, upto, 10));
        cr_assert_eq(p.nstacks, 1 + count_type(&l, upto, 11));
        cr_assert_eq(p.nsamples, count_type(&l, upto, 12));
        cr_assert_eq(p.frequency, p.nmeta >= 2 ? 997.0 : 0.0);
        for (size_t i = 0; i < p.nmeta; i++)
            cr_assert_str_eq(p.meta[i].value, full.meta[i].value);
        for (size_t i = 0; i < p.nchannels; i++)
            cr_assert_str_eq(p.channels[i].name, full.channels[i].name);
        for (size_t i = 1; i < p.nstacks; i++) {
            cr_assert_eq(p.stacks[i].depth, full.stacks[i].depth);
            cr_assert_arr_eq(p.stacks[i].pcs, full.stacks[i].pcs,
                             p.stacks[i].depth * sizeof(uint64_t));
        }
        for (size_t i = 0; i < p.nsamples; i++) {
            cr_assert_eq(p.samples[i].time_ns, full.samples[i].time_ns);
            cr_assert_eq(p.samples[i].nthreads, full.samples[i].nthreads);
            for (uint32_t t = 0; t < p.samples[i].nthreads; t++) {
                const struct prof_thread_sample *x = &p.samples[i].threads[t];
                const struct prof_thread_sample *y = &full.samples[i].threads[t];
                cr_assert(x->pid == y->pid && x->tid == y->tid && x->pc == y->pc &&
                              x->cpu_ns == y->cpu_ns && x->stack == y->stack &&
                              x->syscall == y->syscall && x->flags == y->flags,
                          "cut at %zu: sample %zu thread %u differs", cut, i, t);
            }
            cr_assert_arr_eq(p.samples[i].values, full.samples[i].values,
                             p.nchannels * sizeof(double));
        }
        for (size_t i = 0; i < p.nmaps; i++) {
            cr_assert_str_eq(p.maps[i].path, full.maps[i].path);
            cr_assert_eq(p.maps[i].start, full.maps[i].start);
        }
        for (size_t i = 0; i < p.nimages; i++)
            cr_assert_eq(p.images[i].size, full.images[i].size);
        profile_free(&p);
        free(c);
    }
    profile_free(&full);
    free(b);
}

Test(native_damage, unknown_records_are_skipped_unless_critical)
{
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_process(&b, 7);
    bb_begin(&b, 40, 0); /* reserved for the recorder, unknown here */
    bb_u64(&b, 1);
    bb_end(&b);
    bb_begin(&b, 9999, 0x8000 | 0x2); /* other flag bits are not "critical" */
    bb_end(&b);
    bb_stack(&b, 1, 0, 2);
    /* A known record with fields appended by a newer minor version. */
    bb_begin(&b, 12, 0);
    bb_u64(&b, 5000);
    bb_u32(&b, 0);
    bb_u32(&b, 0);
    bb_u32(&b, 0);        /* 1.1: no weights */
    bb_u32(&b, 0);        /* 1.1: no values */
    bb_u64(&b, 0xabcdef); /* the future */
    bb_end(&b);
    size_t crit = bb_begin(&b, 77, 1);
    bb_u32(&b, 5);
    bb_end(&b);
    bb_sample(&b, 1);

    struct profile p;
    char *msg;
    /* Up to the critical record: everything else reads. */
    cr_assert_eq(load_quiet(b.d, crit, &p, &msg), 0, "%s", msg);
    cr_assert_eq(p.nprocesses, 1);
    cr_assert_eq(p.nstacks, 2);
    cr_assert_eq(p.nsamples, 1);
    cr_assert_eq(p.samples[0].time_ns, 5000);
    cr_assert_not(p.truncated);
    profile_free(&p);
    free(msg);

    cr_assert_eq(load_quiet(b.d, b.len, &p, &msg), -1);
    char want[64];
    snprintf(want, sizeof(want), "t.prof: offset %zu: ", crit);
    cr_assert_not_null(strstr(msg, want), "message lacks '%s': %s", want, msg);
    cr_assert_eq(p.nsamples, 0, "a refused file leaves an empty profile");
    cr_assert_null(p.format);
    profile_free(&p);
    free(msg);
    free(b.d);
}

Test(native_damage, bad_headers_are_errors)
{
    struct bb b = {0};
    bb_file_header(&b, 1);
    struct profile p;
    char *msg;

    cr_assert_eq(load_quiet(b.d, b.len, &p, &msg), 0, "an empty profile is valid: %s", msg);
    cr_assert_eq(p.nsamples, 0);
    cr_assert_not(p.has_totals);
    profile_free(&p);
    free(msg);

    cr_assert_eq(load_quiet(b.d, 10, &p, &msg), -1);
    cr_assert_not_null(strstr(msg, "t.prof: offset 10: "), "%s", msg);
    free(msg);

    b.d[0] = 'P';
    cr_assert_not(native_is_native(b.d, b.len));
    cr_assert_eq(load_quiet(b.d, b.len, &p, &msg), -1);
    cr_assert_not_null(strstr(msg, "t.prof: offset 0: "), "%s", msg);
    free(msg);
    b.d[0] = 0x89;

    b.d[8] = 2; /* major 2 */
    cr_assert(native_is_native(b.d, b.len));
    cr_assert_eq(load_quiet(b.d, b.len, &p, &msg), -1);
    cr_assert_not_null(strstr(msg, "t.prof: offset 8: "), "%s", msg);
    free(msg);
    b.d[8] = 1;
    b.d[10] = 9; /* a newer minor version reads */
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    profile_free(&p);
    free(b.d);
}

/* A valid prefix (process 7, stack 1, one sample): what must survive. */
static void hostile_prefix(struct bb *b)
{
    memset(b, 0, sizeof(*b));
    bb_file_header(b, 1);
    bb_process(b, 7);
    bb_stack(b, 1, 0, 3);
    bb_sample(b, 1);
}

/* B must load, truncated at AT, with the prefix intact. */
static void expect_truncated_at(struct bb *b, size_t at, const char *what)
{
    struct profile p;
    char *msg;
    cr_assert_eq(load_quiet(b->d, b->len, &p, &msg), 0, "%s: refused: %s", what, msg);
    cr_assert(p.truncated, "%s: not truncated", what);
    cr_assert_eq(p.truncated_at, at, "%s: truncated at %llu, not %zu", what,
                 (unsigned long long)p.truncated_at, at);
    char want[64];
    snprintf(want, sizeof(want), "t.prof: offset %zu: ", at);
    cr_assert_not_null(strstr(msg, want), "%s: message lacks '%s': %s", what, want, msg);
    cr_assert_eq(p.nprocesses, 1, "%s", what);
    cr_assert_geq(p.nstacks, 2, "%s", what);
    cr_assert_eq(p.stacks[1].depth, 3, "%s", what);
    cr_assert_geq(p.nsamples, 1, "%s", what);
    cr_assert_eq(p.samples[0].threads[0].stack, 1, "%s", what);
    profile_free(&p);
    free(msg);
    free(b->d);
}

Test(native_damage, hostile_lengths_and_counts_truncate_without_allocating)
{
    test_limit_address_space();
    struct bb b;
    size_t at;

    hostile_prefix(&b);
    at = bb_begin(&b, 12, 0);
    bb_u64(&b, 1);
    b.d[at + 4] = b.d[at + 5] = b.d[at + 6] = b.d[at + 7] = 0xff; /* length 4 GiB */
    expect_truncated_at(&b, at, "record length");

    hostile_prefix(&b);
    at = bb_begin(&b, 1, 0);
    bb_end(&b);
    b.d[at + 7] = 0x04; /* 64 MiB + ... */
    b.d[at + 4] = 1;
    bb_put(&b, "xxxxxxxx", 8);
    expect_truncated_at(&b, at, "record length just over the limit");

    hostile_prefix(&b);
    at = bb_begin(&b, 12, 0); /* SAMPLE claiming 4 billion threads */
    bb_u64(&b, 1);
    bb_u32(&b, 0);
    bb_u32(&b, UINT32_MAX);
    bb_u64(&b, 0);
    bb_end(&b);
    expect_truncated_at(&b, at, "thread count");

    hostile_prefix(&b);
    at = bb_begin(&b, 12, 0); /* nthreads * 36 wraps 32 bits */
    bb_u64(&b, 1);
    bb_u32(&b, 0);
    bb_u32(&b, UINT32_MAX / 36 + 1);
    bb_end(&b);
    expect_truncated_at(&b, at, "wrapping thread count");

    hostile_prefix(&b);
    at = bb_begin(&b, 12, 0);
    bb_u64(&b, 1);
    bb_u32(&b, 0x7fffffff); /* values */
    bb_u32(&b, 0);
    bb_end(&b);
    expect_truncated_at(&b, at, "value count");

    hostile_prefix(&b);
    at = bb_begin(&b, 1, 0);
    bb_u32(&b, UINT32_MAX); /* key length */
    bb_str(&b, "v");
    bb_end(&b);
    expect_truncated_at(&b, at, "string length");

    hostile_prefix(&b);
    at = bb_begin(&b, 1, 0);
    size_t big = (1u << 20) + 1; /* present, but over the 1 MiB limit */
    bb_u32(&b, (uint32_t)big);
    char *s = malloc(big);
    memset(s, 'k', big);
    bb_put(&b, s, big);
    free(s);
    bb_str(&b, "v");
    bb_end(&b);
    expect_truncated_at(&b, at, "string over 1 MiB");

    hostile_prefix(&b);
    at = bb_begin(&b, 1, 0);
    bb_u32(&b, 3);
    bb_put(&b, "a\0b", 3);
    bb_str(&b, "v");
    bb_end(&b);
    expect_truncated_at(&b, at, "NUL in a string");

    hostile_prefix(&b);
    at = bb_begin(&b, 11, 0); /* STACK of 4 billion frames */
    bb_u32(&b, 2);
    bb_u32(&b, 0);
    bb_u32(&b, UINT32_MAX);
    bb_end(&b);
    expect_truncated_at(&b, at, "frame count");

    hostile_prefix(&b);
    at = bb_begin(&b, 8, 0); /* MAP with a 65-byte build-id */
    bb_u32(&b, 7);
    for (int i = 0; i < 5; i++)
        bb_u64(&b, 0);
    for (int i = 0; i < 3; i++)
        bb_u32(&b, 0);
    bb_u32(&b, 65);
    for (int i = 0; i < 65; i++)
        bb_put(&b, "x", 1);
    bb_str(&b, "/x");
    bb_end(&b);
    expect_truncated_at(&b, at, "build-id length");

    hostile_prefix(&b);
    at = bb_begin(&b, 10, 0); /* IMAGE whose data runs past its record */
    bb_u32(&b, 7);
    bb_u64(&b, 0);
    bb_str(&b, "[vdso]");
    bb_u32(&b, 1u << 30);
    bb_u64(&b, 0);
    bb_end(&b);
    expect_truncated_at(&b, at, "image size");

    hostile_prefix(&b);
    at = bb_begin(&b, 5, 0); /* EXIT too short for its fields */
    bb_u32(&b, 7);
    bb_end(&b);
    expect_truncated_at(&b, at, "short record");

    hostile_prefix(&b);
    at = b.len;
    bb_put(&b, "\x0c\x00\x00", 3); /* the file ends inside a record header */
    expect_truncated_at(&b, at, "cut header");
}

Test(native_damage, references_to_missing_records_truncate)
{
    test_limit_address_space();
    struct bb b;
    size_t at;

    hostile_prefix(&b);
    at = b.len;
    bb_stack(&b, 2, 2, 1); /* its own parent: a cycle */
    expect_truncated_at(&b, at, "parent == id");

    hostile_prefix(&b);
    at = b.len;
    bb_stack(&b, 2, 5, 1);
    expect_truncated_at(&b, at, "parent > id");

    hostile_prefix(&b);
    at = b.len;
    bb_stack(&b, 3, 0, 1); /* id 2 skipped */
    expect_truncated_at(&b, at, "stack ids out of order");

    hostile_prefix(&b);
    at = b.len;
    bb_stack(&b, 1, 0, 1); /* id 1 again */
    expect_truncated_at(&b, at, "stack id repeated");

    hostile_prefix(&b);
    at = b.len;
    bb_sample(&b, 2);
    expect_truncated_at(&b, at, "sample names a missing stack");

    hostile_prefix(&b);
    at = b.len;
    bb_sample(&b, UINT32_MAX);
    expect_truncated_at(&b, at, "sample names stack 2^32-1");

    hostile_prefix(&b);
    at = b.len;
    bb_stack(&b, 2, 1, 4094); /* 3 + 4094 frames */
    expect_truncated_at(&b, at, "depth over 4096 through the parent");

    hostile_prefix(&b);
    at = bb_begin(&b, 2, 0); /* CHANNEL after a SAMPLE */
    bb_u32(&b, 0);
    bb_u32(&b, 3);
    bb_str(&b, "late");
    bb_str(&b, "W");
    bb_end(&b);
    expect_truncated_at(&b, at, "channel after samples");

    hostile_prefix(&b);
    at = bb_begin(&b, 4, 0); /* EXEC of a process never introduced */
    bb_u32(&b, 8);
    bb_u64(&b, 1);
    bb_str(&b, "/bin/x");
    bb_end(&b);
    expect_truncated_at(&b, at, "exec of an unknown pid");

    hostile_prefix(&b);
    at = bb_begin(&b, 7, 0); /* THREAD_EXIT of a thread never introduced */
    bb_u32(&b, 9);
    bb_u64(&b, 1);
    bb_end(&b);
    expect_truncated_at(&b, at, "exit of an unknown thread");

    hostile_prefix(&b);
    bb_begin(&b, 13, 0);
    for (int i = 0; i < 4; i++)
        bb_u64(&b, 1);
    bb_end(&b);
    at = b.len;
    bb_process(&b, 9);
    expect_truncated_at(&b, at, "a record after END");
}

Test(native_damage, channel_ids_and_value_counts_must_match)
{
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_begin(&b, 2, 0);
    bb_u32(&b, 0);
    bb_u32(&b, 42); /* an unknown kind reads as custom */
    bb_str(&b, "x");
    bb_str(&b, "");
    bb_end(&b);
    size_t bad = bb_begin(&b, 2, 0);
    bb_u32(&b, 2); /* id 1 skipped */
    bb_u32(&b, 3);
    bb_str(&b, "y");
    bb_str(&b, "W");
    bb_end(&b);
    struct profile p;
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert(p.truncated);
    cr_assert_eq(p.truncated_at, bad);
    cr_assert_eq(p.nchannels, 1);
    cr_assert_eq(p.channels[0].kind, PMU_KIND_CUSTOM);
    profile_free(&p);

    b.len = bad;
    bad = b.len;
    bb_sample(&b, 0); /* no values for one channel */
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert(p.truncated);
    cr_assert_eq(p.truncated_at, bad);
    cr_assert_eq(p.nsamples, 0);
    profile_free(&p);
    free(b.d);
}

/* Stacks naming a parent expand in memory: a file of tiny records naming a
 * 4096-frame parent must stop expanding long before memory runs out. */
Test(native_damage, stack_expansion_is_bounded_by_the_input)
{
    test_limit_address_space();
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_stack(&b, 1, 0, 4096);
    const uint32_t n = 20000; /* 20-byte records, 32 KiB each if expanded */
    for (uint32_t id = 2; id <= n; id++)
        bb_stack(&b, id, 1, 0);
    struct profile p;
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert(p.truncated, "20000 x 4096 frames expanded from %zu bytes", b.len);
    cr_assert_gt(p.nstacks, 100, "the budget must allow ordinary expansion");
    cr_assert_lt(p.nstacks, n);
    cr_assert_eq(p.truncated_at, 16 + (8 + 12 + 4096 * 8) + (p.nstacks - 2) * 20);
    cr_assert_eq(p.stacks[p.nstacks - 1].depth, 4096);
    cr_assert_eq(p.stacks[p.nstacks - 1].pcs[4095], 0x1000 + 4095);
    profile_free(&p);
    free(b.d);
}

Test(native_damage, a_parent_chain_builds_full_stacks)
{
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_stack(&b, 1, 0, 2); /* 0x1000 0x1001 */
    bb_stack(&b, 2, 1, 1); /* 0x1000, then stack 1 */
    bb_stack(&b, 3, 2, 0); /* the same frames as 2 */
    struct profile p;
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.nstacks, 4);
    uint64_t want[3] = {0x1000, 0x1000, 0x1001};
    cr_assert_eq(p.stacks[2].depth, 3);
    cr_assert_arr_eq(p.stacks[2].pcs, want, sizeof(want));
    cr_assert_eq(p.stacks[3].depth, 3);
    cr_assert_arr_eq(p.stacks[3].pcs, want, sizeof(want));
    profile_free(&p);
    free(b.d);
}

Test(native_maps, a_new_map_replaces_what_it_overlaps)
{
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_process(&b, 7);
    bb_process(&b, 8);
    const uint64_t ranges[4][3] = {
        /* pid, start, end */
        {7, 0x1000, 0x3000},
        {8, 0x1000, 0x3000}, /* another process: untouched */
        {7, 0x5000, 0x6000},
        {7, 0x2000, 0x2800}, /* mmap over part of the first */
    };
    for (int i = 0; i < 4; i++) {
        bb_begin(&b, 8, 0);
        bb_u32(&b, (uint32_t)ranges[i][0]);
        bb_u64(&b, 100 + (uint64_t)i);
        bb_u64(&b, ranges[i][1]);
        bb_u64(&b, ranges[i][2]);
        bb_u64(&b, 0);
        bb_u64(&b, 0);
        for (int k = 0; k < 3; k++)
            bb_u32(&b, 0);
        bb_u32(&b, 0);
        bb_str(&b, "m");
        bb_end(&b);
    }
    bb_begin(&b, 9, 0); /* UNMAP touching nothing of process 7's */
    bb_u32(&b, 7);
    bb_u64(&b, 200);
    bb_u64(&b, 0x3000);
    bb_u64(&b, 0x5000);
    bb_end(&b);
    bb_begin(&b, 9, 0); /* UNMAP of the tail of the map at 0x5000 */
    bb_u32(&b, 7);
    bb_u64(&b, 300);
    bb_u64(&b, 0x5fff);
    bb_u64(&b, 0x7000);
    bb_end(&b);
    struct profile p;
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert_eq(p.nmaps, 4);
    cr_assert_eq(p.maps[0].unmap_ns, 103);
    cr_assert_eq(p.maps[1].unmap_ns, 0);
    cr_assert_eq(p.maps[2].unmap_ns, 300);
    cr_assert_eq(p.maps[3].unmap_ns, 0);
    profile_free(&p);
    free(b.d);
}

/* The reader's live-map bookkeeping against a brute-force model: random
 * MAP and UNMAP records over a small address space, so that they overlap
 * often, including empty and inverted ranges. */
Test(native_maps, random_maps_and_unmaps_match_a_simple_model)
{
    enum { N = 3000 };
    static uint64_t start[N], end[N], unmap[N];
    static bool is_map[N], live[N];
    struct bb b = {0};
    bb_file_header(&b, 1);
    bb_process(&b, 7);
    unsigned seed = 12345;
    size_t nmaps = 0;
    size_t map_of[N];
    for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        is_map[i] = (seed >> 16) % 3 != 0;
        seed = seed * 1103515245u + 12345u;
        start[i] = ((seed >> 16) % 200) * 0x1000;
        seed = seed * 1103515245u + 12345u;
        uint64_t len = ((seed >> 16) % 12) * 0x1000;
        end[i] = (seed >> 8) % 50 == 0 ? start[i] - len : start[i] + len;
        uint64_t time = 1000 + i;
        /* The model: every live map overlapping the range ends now. */
        for (size_t k = 0; k < i; k++) {
            if (!live[k] || !(start[k] < end[i] && start[i] < end[k]) || start[i] >= end[i])
                continue;
            live[k] = false;
            unmap[k] = time;
        }
        live[i] = is_map[i] && start[i] < end[i];
        bb_begin(&b, is_map[i] ? 8 : 9, 0);
        bb_u32(&b, 7);
        bb_u64(&b, time);
        bb_u64(&b, start[i]);
        bb_u64(&b, end[i]);
        if (is_map[i]) {
            map_of[nmaps++] = i;
            bb_u64(&b, 0);
            bb_u64(&b, 0);
            for (int k = 0; k < 3; k++)
                bb_u32(&b, 0);
            bb_u32(&b, 0);
            bb_str(&b, "m");
        }
        bb_end(&b);
    }
    struct profile p;
    cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.nmaps, nmaps);
    for (size_t m = 0; m < nmaps; m++) {
        size_t i = map_of[m];
        cr_assert_eq(p.maps[m].unmap_ns, unmap[i], "map %zu [%#llx, %#llx): %llu, model %llu", m,
                     (unsigned long long)start[i], (unsigned long long)end[i],
                     (unsigned long long)p.maps[m].unmap_ns, (unsigned long long)unmap[i]);
    }
    profile_free(&p);
    free(b.d);
}

/* --- dump ----------------------------------------------------------------- */

static char *dump_to_string(const void *data, size_t len, int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    cr_assert_not_null(f);
    fflush(stderr);
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    close(null);
    *rc = native_dump_buffer("d.prof", data, len, f);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    return text;
}

static size_t count_lines_starting(const char *text, const char *prefix)
{
    size_t n = 0, plen = strlen(prefix);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += strncmp(l, prefix, plen) == 0;
    return n;
}

Test(native_dump, one_line_per_record_in_file_order)
{
    size_t len;
    unsigned char *b = reference_bytes(true, &len);
    struct layout l;
    walk(b, len, &l);
    int rc;
    char *text = dump_to_string(b, len, &rc);
    cr_assert_eq(rc, 0);
    /* Every record's line starts with its offset, in order. */
    const char *at = text;
    for (size_t i = 0; i < l.n; i++) {
        char want[32];
        snprintf(want, sizeof(want), "\n@%zu ", l.offset[i]);
        const char *hit = strstr(at, want);
        cr_assert_not_null(hit, "no line for the record at %zu", l.offset[i]);
        at = hit + 1;
    }
    cr_assert_eq(count_lines_starting(text, "@0 HEADER ptprof native 1.1"), 1);
    cr_assert_eq(count_lines_starting(text, "    pid="), 4, "sample threads are indented");
    cr_assert_not_null(strstr(text, "META \"command\" = \"./demo 'a b'\""));
    cr_assert_not_null(strstr(text, " STACK id=1 parent=0 count=3 pcs=0x401234,0x401100,0x400f00"));
    cr_assert_not_null(strstr(text, "status=0xb (killed by SIGSEGV)"));
    cr_assert_not_null(strstr(text, "status=0x300 (exit 3)"));
    cr_assert_not_null(strstr(text, "values=[1.5,10.25] threads=3"));
    cr_assert_not_null(strstr(text, " END wall_ns=8000000 latency_ns=12345 samples=2"));
    char eof[32];
    snprintf(eof, sizeof(eof), "@%zu EOF\n", len);
    cr_assert_not_null(strstr(text, eof));
    free(text);

    text = dump_to_string(b, len - 1, &rc);
    cr_assert_eq(rc, 0, "damage is printed, not an error");
    char trunc[32];
    snprintf(trunc, sizeof(trunc), "@%zu TRUNCATED ", l.offset[l.n - 1]);
    cr_assert_not_null(strstr(text, trunc), "%s", text);
    free(text);

    b[0] = 'x';
    text = dump_to_string(b, len, &rc);
    cr_assert_eq(rc, -1);
    free(text);
    free(b);
}

/* --- per-sample weights and values (format 1.1) ----------------------------- */

/* Two value types; a sample whose threads carry weights and values, one
 * that carries neither. */
static unsigned char *valued_bytes(size_t *len)
{
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "values.prof");
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    int rc = native_write_meta(w, "default_metric", "alloc_space");
    rc |= native_write_value_type(w, 0, "alloc_space", "bytes", PROF_VALUE_SUM);
    rc |= native_write_value_type(w, 1, "instructions", "count", PROF_VALUE_COUNTER);
    rc |= native_write_process(w, 7, 0, T0);
    uint32_t a = native_stack_id(w, stack_a, 3);
    struct prof_thread_sample t[2] = {{7, 7, 0x401234, 100, a, -1, 0},
                                      {7, 8, 0x401100, 200, a, -1, PROF_THREAD_STACK_TRUNCATED}};
    const uint64_t weights[2] = {3, (uint64_t)1 << 40};
    const uint64_t values[4] = {UINT64_MAX, 5, 0, (uint64_t)1 << 60};
    rc |= native_write_sample_values(w, T0 + 10, NULL, 0, t, 2, weights, values);
    rc |= native_write_sample_values(w, T0 + 20, NULL, 0, t, 1, NULL, NULL);
    const uint64_t ones[1] = {1};
    rc |= native_write_sample_values(w, T0 + 30, NULL, 0, t, 1, ones, NULL);
    cr_assert_eq(rc, 0);
    struct prof_totals tot = {30, 0, 3, 3};
    cr_assert_eq(native_writer_finish(w, &tot), 0);
    unsigned char *b = read_file(path, len);
    test_rmtree(dir);
    free(path);
    free(dir);
    return b;
}

Test(native_values, weights_values_and_value_types_read_back_exactly)
{
    size_t len;
    unsigned char *b = valued_bytes(&len);
    struct profile p;
    char *msg;
    cr_assert_eq(load_quiet(b, len, &p, &msg), 0, "%s", msg);
    free(msg);
    cr_assert_not(p.truncated);
    cr_assert_eq(p.nvalue_types, 2);
    cr_assert_str_eq(p.value_types[0].name, "alloc_space");
    cr_assert_str_eq(p.value_types[0].unit, "bytes");
    cr_assert_eq(p.value_types[0].agg, PROF_VALUE_SUM);
    cr_assert_str_eq(p.value_types[1].name, "instructions");
    cr_assert_eq(p.value_types[1].agg, PROF_VALUE_COUNTER);
    cr_assert_str_eq(p.default_metric, "alloc_space");
    cr_assert_eq(p.nsamples, 3);
    const struct prof_sample *s = &p.samples[0];
    cr_assert_eq(prof_weight(s, 0), 3);
    cr_assert_eq(prof_weight(s, 1), (uint64_t)1 << 40);
    cr_assert_eq(prof_thread_values(&p, s, 0)[0], UINT64_MAX);
    cr_assert_eq(prof_thread_values(&p, s, 0)[1], 5);
    cr_assert_eq(prof_thread_values(&p, s, 1)[0], 0);
    cr_assert_eq(prof_thread_values(&p, s, 1)[1], (uint64_t)1 << 60);
    cr_assert_eq(s->threads[1].flags, PROF_THREAD_STACK_TRUNCATED);
    cr_assert_eq(profile_truncated_stacks(&p), 1);
    /* Without weights or values a sample costs nothing more. */
    cr_assert_null(prof_weights(&p.samples[1]));
    cr_assert_null(prof_all_thread_values(&p.samples[1]));
    cr_assert_eq(prof_weight(&p.samples[1], 0), 1);
    cr_assert_null(prof_weights(&p.samples[2]), "weights of 1 are not written");
    profile_free(&p);
    free(b);
}

/* What a reader of version 1.0 sees: the VALUE_TYPE records are of a type
 * it does not know and not critical (skipped), and a SAMPLE is the 1.0
 * record with the extension after its threads (ignored as fields of a
 * newer minor version): the 1.0 fields are where they always were. */
Test(native_values, a_1_0_reader_skips_what_1_1_adds)
{
    size_t len;
    unsigned char *b = valued_bytes(&len);
    struct layout l;
    walk(b, len, &l);
    cr_assert_eq(le16(b + 10), 1, "minor version 1");
    size_t value_types = 0, samples = 0;
    for (size_t i = 0; i < l.n; i++) {
        const unsigned char *r = b + l.offset[i];
        if (l.type[i] == 14) {
            value_types++;
            cr_assert_eq(le16(r + 2) & 1, 0, "VALUE_TYPE is not critical");
        }
        if (l.type[i] != 12)
            continue;
        uint32_t nthreads = le32(r + 8 + 8 + 4);
        size_t base = 8 + 4 + 4 + (size_t)nthreads * 36;
        uint32_t payload = le32(r + 4);
        if (samples == 0) {
            cr_assert_eq(nthreads, 2);
            cr_assert_eq(le64(r + 8 + 16 + 8), 0x401234, "the first thread's pc");
            /* u32 2, two weights, u32 2, four values */
            cr_assert_eq(payload, base + 4 + 16 + 4 + 32);
            cr_assert_eq(le32(r + 8 + base), 2);
            cr_assert_eq(le64(r + 8 + base + 4), 3);
        } else {
            cr_assert_eq(payload, base, "a plain sample is the 1.0 record");
        }
        samples++;
    }
    cr_assert_eq(value_types, 2);
    cr_assert_eq(samples, 3);
    free(b);
}

Test(native_values, damage_in_weights_and_values_truncates)
{
    struct bb base = {0};
    bb_file_header(&base, 1);
    bb_process(&base, 7);
    bb_begin(&base, 14, 0);
    bb_u32(&base, 0);
    bb_u32(&base, 9); /* an unknown aggregation reads as a sum */
    bb_str(&base, "v");
    bb_str(&base, "count");
    bb_end(&base);
    size_t good = base.len;

    /* Each case: the bytes after one thread's 1.0 fields. */
    enum { W0, WCOUNT, VCOUNT, SHORT, GOOD, NCASES };
    for (int c = 0; c < NCASES; c++) {
        struct bb b = {0};
        bb_put(&b, base.d, good);
        size_t at = bb_begin(&b, 12, 0);
        bb_u64(&b, 5000);
        bb_u32(&b, 0);
        bb_u32(&b, 1);
        bb_u32(&b, 7);
        bb_u32(&b, 7);
        bb_u64(&b, 0x401000);
        bb_u64(&b, 123);
        bb_u32(&b, 0);
        bb_u32(&b, (uint32_t)-1);
        bb_u32(&b, 0);
        bb_u32(&b, c == WCOUNT ? 2 : 1);
        bb_u64(&b, c == W0 ? 0 : 4);
        if (c == WCOUNT)
            bb_u64(&b, 4);
        bb_u32(&b, c == VCOUNT ? 2 : 1);
        bb_u64(&b, 77);
        if (c == VCOUNT)
            bb_u64(&b, 78);
        if (c == SHORT)
            b.len -= 3;
        bb_end(&b);
        struct profile p;
        char *msg;
        cr_assert_eq(load_quiet(b.d, b.len, &p, &msg), 0, "case %d: %s", c, msg);
        cr_assert_eq(p.nvalue_types, 1);
        cr_assert_eq(p.value_types[0].agg, PROF_VALUE_SUM);
        if (c == GOOD) {
            cr_assert_not(p.truncated, "%s", msg);
            cr_assert_eq(p.nsamples, 1);
            cr_assert_eq(prof_weight(&p.samples[0], 0), 4);
            cr_assert_eq(prof_thread_values(&p, &p.samples[0], 0)[0], 77);
        } else {
            cr_assert(p.truncated, "case %d reads as whole", c);
            cr_assert_eq(p.truncated_at, at, "case %d", c);
            cr_assert_eq(p.nsamples, 0);
        }
        profile_free(&p);
        free(msg);
        free(b.d);
    }

    /* A value type after the first sample, one out of order, one unnamed. */
    for (int c = 0; c < 3; c++) {
        struct bb b = {0};
        bb_put(&b, base.d, good);
        if (c == 0)
            bb_sample(&b, 0);
        size_t at = bb_begin(&b, 14, 0);
        bb_u32(&b, c == 1 ? 5 : 1);
        bb_u32(&b, 0);
        bb_str(&b, c == 2 ? "" : "w");
        bb_str(&b, "");
        bb_end(&b);
        struct profile p;
        cr_assert_eq(load_quiet(b.d, b.len, &p, NULL), 0);
        cr_assert(p.truncated, "case %d", c);
        cr_assert_eq(p.truncated_at, at, "case %d", c);
        cr_assert_eq(p.nvalue_types, 1);
        profile_free(&p);
        free(b.d);
    }
    free(base.d);
}

Test(native_values, dump_shows_value_types_weights_and_values)
{
    size_t len;
    unsigned char *b = valued_bytes(&len);
    int rc;
    char *text = dump_to_string(b, len, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_not_null(
        strstr(text, " VALUE_TYPE id=0 aggregation=0 (sum) name=\"alloc_space\" unit=\"bytes\"\n"),
        "%s", text);
    cr_assert_not_null(
        strstr(text, " VALUE_TYPE id=1 aggregation=1 (counter) name=\"instructions\""));
    cr_assert_not_null(strstr(text, "flags=0x0 weight=3 values=[18446744073709551615,5]\n"), "%s",
                       text);
    cr_assert_not_null(
        strstr(text, "flags=0x4 weight=1099511627776 values=[0,1152921504606846976]\n"));
    free(text);
    free(b);
}

/* Memory and time follow the file, not its weights: thread samples
 * standing for 2^50 samples each are read as they are, with exact totals. */
Test(native_values, huge_weights_cost_nothing_and_add_up_exactly)
{
    test_limit_address_space();
    char *dir = test_mkdtemp();
    char *path = test_path(dir, "weights.prof");
    struct native_writer *w = native_writer_open(path);
    cr_assert_not_null(w);
    int rc = native_write_process(w, 7, 0, T0);
    struct prof_thread_sample t = {7, 7, 0x401000, 0, 0, -1, 0};
    const uint64_t big = (uint64_t)1 << 50;
    for (uint64_t i = 0; i < 100; i++) {
        const uint64_t weight = big + i;
        t.cpu_ns = (i + 1) * 1000000;
        rc |= native_write_sample_values(w, T0 + (i + 1) * 1000000, NULL, 0, &t, 1, &weight, NULL);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(native_writer_finish(w, NULL), 0);
    size_t len;
    unsigned char *b = read_file(path, &len);
    size_t before = test_heap_in_use();
    struct profile p;
    char *msg;
    cr_assert_eq(load_quiet(b, len, &p, &msg), 0, "%s", msg);
    cr_expect_lt(test_heap_in_use() - before, 1u << 20, "a %zu-byte file kept %zu bytes", len,
                 test_heap_in_use() - before);
    uint64_t sum = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        sum += prof_weight(&p.samples[i], 0);
    cr_expect_eq(sum, 100 * big + 4950);
    profile_free(&p);
    free(msg);
    free(b);
    test_rmtree(dir);
    free(path);
    free(dir);
}
