/*
 * test_maps_vdso.c - end-to-end tests of the memory maps in a profile: a
 * library loaded mid-run is known from its first samples on
 * (tests/workloads/dlopener.c), the [vdso] image is captured and
 * symbolizes time in clock_gettime (tests/workloads/clockloop.c), and the
 * build-ids recorded for executable mappings are those of the files.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_query.h"
#include "engines.h"
#include "record_native.h"

#define MAP_PERM_X 4

static char *canonical(const char *path)
{
    char *real = realpath(path, NULL);
    cr_assert(real, "realpath(%s) failed", path);
    return real;
}

static void hex(const uint8_t *bytes, size_t n, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used + 3 <= size; i++)
        used += (size_t)snprintf(out + used, size - used, "%02x", bytes[i]);
}

/* The build-id readelf finds in PATH's notes, as lowercase hex ("" if none). */
static void readelf_build_id(const char *path, char *out, size_t size)
{
    const char *candidates[] = {"/usr/bin/readelf", "/bin/readelf", "/usr/local/bin/readelf"};
    const char *readelf = NULL;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !readelf; i++) {
        if (access(candidates[i], X_OK) == 0)
            readelf = candidates[i];
    }
    cr_assert(readelf, "readelf (binutils) is needed by this test and was not found");
    const char *argv[] = {readelf, "-n", path, NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 20};
    struct spawn_result res;
    spawn_run(&opts, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "readelf -n %s:\n" REC_FMT, path, REC_ARGS(&res));
    out[0] = '\0';
    const char *at = strstr(res.out, "Build ID:");
    if (at) {
        at += strlen("Build ID:");
        while (*at == ' ')
            at++;
        size_t n = 0;
        while (isxdigit((unsigned char)at[n]) && n + 1 < size) {
            out[n] = (char)tolower((unsigned char)at[n]);
            n++;
        }
        out[n] = '\0';
    }
    spawn_result_free(&res);
}

static const struct prof_map *exec_map_of(const struct profile *p, uint32_t pid, const char *path)
{
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && (m->perms & MAP_PERM_X) && m->path && strcmp(m->path, path) == 0)
            return m;
    }
    return NULL;
}

/* The program dlopen()s libplugin.so after 0.6 s and then spends its time
 * in plugin_hot(): the library's map, with its build-id, must be in the
 * profile before the samples that run in it. */
ENGINE_TEST(maps, dlopened_library_is_known_from_its_first_samples, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *dlopener = build_workload("dlopener"), *plugin = build_workload("libplugin.so");
    const char *args[] = {"-f", "1000", "--", dlopener, plugin, "0.6", "1.2", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;
    uint32_t pid = pq_first_pid(p);
    uint64_t loaded_ns = (uint64_t)parse_after(r.run.out, "dlopener: loaded at ");

    char *lib = canonical(plugin);
    const struct prof_map *m = exec_map_of(p, pid, lib);
    cr_assert(m, "no executable map of %s in the profile\n" REC_FMT, lib, REC_ARGS(&r.run));
    cr_assert_geq(m->time_ns, loaded_ns, "the plugin's map is dated before the dlopen call");
    char want[160], got[160];
    readelf_build_id(lib, want, sizeof(want));
    hex(m->build_id, m->build_id_len, got, sizeof(got));
    cr_assert_neq(want[0], '\0', "readelf finds no build-id in %s", lib);
    cr_assert_str_eq(got, want, "build-id of %s", lib);

    struct profile_query q;
    pq_init(&q, p);
    int after = 0, in_plugin = 0, resolved = 0;
    char bad[3][200] = {"", "", ""};
    int nbad = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        if (s->time_ns < loaded_ns)
            continue;
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            if (ts->pid != pid)
                continue;
            after++;
            if (ts->pc < m->start || ts->pc >= m->end)
                continue;
            in_plugin++;
            /* Resolved with the maps known at the sample's time only. */
            const char *fn = pq_function(&q, pid, ts->pc, s->time_ns);
            if (fn && strcmp(fn, "plugin_hot") == 0) {
                resolved++;
            } else if (nbad < 3) {
                const struct prof_map *at = pq_map_at(p, pid, ts->pc, s->time_ns);
                snprintf(bad[nbad++], sizeof(bad[0]),
                         "pc %#" PRIx64 " at %" PRIu64 ": %s (map %s, mapped at %" PRIu64 ")",
                         ts->pc, s->time_ns, fn ? fn : "?", at ? at->path : "none known yet",
                         m->time_ns);
            }
        }
    }
    pq_free(&q);
    cr_log_info("after the dlopen: %d samples, %d in the plugin, %d resolved to plugin_hot", after,
                in_plugin, resolved);
    cr_assert_geq(in_plugin * 100, after * 50,
                  "%d of %d samples after the dlopen are in the plugin's code", in_plugin, after);
    cr_assert_geq(in_plugin, 100, "%d samples in the plugin's code", in_plugin);
    cr_assert_geq(resolved * 100, in_plugin * 90,
                  "%d of %d samples in the plugin's code resolve to plugin_hot with the maps known "
                  "at their time, e.g.\n  %s\n  %s\n  %s",
                  resolved, in_plugin, bad[0], bad[1], bad[2]);

    free(lib);
    free(dlopener);
    free(plugin);
    recording_free(&r);
}

/* clock_gettime runs in the vDSO, which has no file: the profile carries
 * its image, a whole ELF object whose symbols name the samples in it. */
ENGINE_TEST(maps, vdso_image_symbolizes_clock_gettime, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *clockloop = build_workload("clockloop");
    const char *args[] = {"-f", "1000", "--", clockloop, "1.5", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;
    uint32_t pid = pq_first_pid(p);

    const struct prof_map *vdso = NULL;
    for (size_t i = 0; i < p->nmaps && !vdso; i++) {
        if (p->maps[i].pid == pid && p->maps[i].path && strcmp(p->maps[i].path, "[vdso]") == 0)
            vdso = &p->maps[i];
    }
    cr_assert(vdso, "no [vdso] map\n" REC_FMT, REC_ARGS(&r.run));
    const struct prof_image *im = pq_image(p, pid, "[vdso]");
    cr_assert(im, "no [vdso] IMAGE for pid %u", pid);
    cr_assert_eq(im->start, vdso->start, "the image's start %#" PRIx64 ", the map's %#" PRIx64,
                 im->start, vdso->start);
    cr_assert_geq(im->size, 64, "a %zu-byte [vdso] image", im->size);
    cr_assert_leq(im->size, vdso->end - vdso->start, "image larger than its map");
    cr_assert(memcmp(im->data,
                     "\x7f"
                     "ELF",
                     4) == 0,
              "the [vdso] image is not an ELF object");

    struct profile_query q;
    pq_init(&q, p);
    int in_vdso = 0, named = 0, helped = 0;
    char example[160] = "";
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            if (ts->pid != pid || ts->pc < vdso->start || ts->pc >= vdso->end)
                continue;
            in_vdso++;
            const char *fn = pq_function_in(&q, vdso, ts->pc);
            if (fn && strstr(fn, "clock_gettime")) {
                named++;
                continue;
            }
            /* Code that no exported symbol covers, a helper kept out of
             * line (6.18's vread_pvclock for kvm-clock): the stack says
             * clock_gettime called it. */
            struct pq_frame frames[4];
            size_t n = fn ? 0 : pq_frames(&q, s, ts, frames, 4);
            if (n >= 2 && frames[1].name && strstr(frames[1].name, "clock_gettime"))
                helped++;
            else if (!example[0])
                snprintf(example, sizeof(example), "pc %#" PRIx64 " (offset %#" PRIx64 "): %s",
                         ts->pc, ts->pc - vdso->start, fn ? fn : "no symbol");
        }
    }
    pq_free(&q);
    cr_log_info("%d samples in the [vdso], %d resolved to clock_gettime, %d to a helper it called",
                in_vdso, named, helped);
    cr_assert_geq(in_vdso, 20, "only %d samples in the [vdso]", in_vdso);
    cr_assert_geq((named + helped) * 100, in_vdso * 80,
                  "%d and %d of %d samples in the [vdso] resolve to clock_gettime or a helper it "
                  "called; e.g. %s",
                  named, helped, in_vdso, example);
    free(clockloop);
    recording_free(&r);
}

/* Every executable file mapping (the program, libc, the dynamic loader)
 * carries the build-id that the file's own note holds. */
ENGINE_TEST(maps, executable_mappings_carry_the_files_build_ids, .timeout = 60)
{
    const char *engine = engine_p->name;
    char *callers = build_workload("callers");
    const char *args[] = {"-f", "200", "--", callers, "0.3", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 40);
    const struct profile *p = &r.prof;

    char *exe = canonical(callers);
    bool saw_exe = false, saw_libc = false;
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (!(m->perms & MAP_PERM_X) || !m->path || m->path[0] != '/')
            continue;
        char want[160], got[160];
        readelf_build_id(m->path, want, sizeof(want));
        hex(m->build_id, m->build_id_len, got, sizeof(got));
        cr_assert_neq(want[0], '\0', "readelf finds no build-id in %s", m->path);
        cr_assert_str_eq(got, want, "build-id of %s mapped at %#" PRIx64, m->path, m->start);
        saw_exe |= strcmp(m->path, exe) == 0;
        saw_libc |= strncmp(pq_basename(m->path), "libc.so", 7) == 0;
    }
    cr_assert(saw_exe, "no executable mapping of %s", exe);
    cr_assert(saw_libc, "no executable mapping of libc");
    free(exe);
    free(callers);
    recording_free(&r);
}
