/* test_pmu.c - the PMU sources of src/pmu/pmu.h against a simulated sysfs. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu/pmu.h"
#include "util/timeutil.h"

#include "../lib/fake_powercap.h"

/* Big enough that nothing wraps unless a test means it to. */
#define BIG_RANGE 262143328850ULL

static struct fake_powercap *fp;

/* Two packages, a subdomain of the first, and a second control type. */
static void setup_tree(void)
{
    fp = fake_powercap_create();
    cr_assert_not_null(fp);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:0", "package-0", 1000, BIG_RANGE), 0);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:0:0", "core", 500, BIG_RANGE), 0);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:1", "package-1", 7000, BIG_RANGE), 0);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl-mmio:0", "package-0", 0, BIG_RANGE), 0);
    cr_assert_eq(fake_powercap_setenv(fp), 0);
}

static void setup_empty(void)
{
    fp = fake_powercap_create();
    cr_assert_not_null(fp);
    cr_assert_eq(fake_powercap_setenv(fp), 0);
}

static void teardown(void)
{
    fake_powercap_destroy(fp);
    fp = NULL;
}

/* Collects what the code under test prints on stderr. */
struct capture {
    int saved;
    int fd;
};

static void capture_begin(struct capture *c)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/stderr-XXXXXX", fake_powercap_root(fp));
    fflush(stderr);
    c->fd = mkstemp(path);
    cr_assert(c->fd >= 0);
    unlink(path);
    c->saved = dup(STDERR_FILENO);
    dup2(c->fd, STDERR_FILENO);
}

static char *capture_end(struct capture *c)
{
    static char text[8192];
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    ssize_t n = pread(c->fd, text, sizeof(text) - 1, 0);
    close(c->fd);
    text[n > 0 ? n : 0] = '\0';
    return text;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A file under the fake root holding TEXT; returns its path (static buffer). */
static const char *write_text(const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof(path), "%s/%s", fake_powercap_root(fp), name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/*
 * The source measures between two instants it picks itself; all we know is
 * that its interval contains [inner_start, inner_end] and lies within
 * [outer_start, outer_end].  So the power lies between the two quotients.
 */
static void assert_power(double watts, double energy_uj, uint64_t outer_start, uint64_t inner_start,
                         uint64_t inner_end, uint64_t outer_end)
{
    double lo = energy_uj * 1e3 / (double)(outer_end - outer_start);
    double hi = energy_uj * 1e3 / (double)(inner_end - inner_start);
    cr_assert(watts >= lo * (1 - 1e-9) && watts <= hi * (1 + 1e-9),
              "power %.6f W outside [%.6f, %.6f] for %.0f uJ", watts, lo, hi, energy_uj);
}

TestSuite(pmu_rapl, .init = setup_tree, .fini = teardown);

Test(pmu_rapl, default_selects_every_package_in_order)
{
    struct pmu_source *src = pmu_open("rapl");
    cr_assert_not_null(src);
    cr_assert_eq(src->nchannels, 2, "subdomains and other control types are not defaults");
    cr_assert_not_null(strstr(src->channels[0].name, "package-0"));
    cr_assert_not_null(strstr(src->channels[0].name, "intel-rapl:0"));
    cr_assert_not_null(strstr(src->channels[1].name, "package-1"));
    cr_assert_not_null(strstr(src->channels[1].name, "intel-rapl:1"));
    for (unsigned i = 0; i < 2; i++) {
        cr_assert_str_eq(src->channels[i].unit, "W");
        cr_assert_eq(src->channels[i].kind, PMU_KIND_POWER);
    }
    cr_assert_eq(pmu_pperf_magic(src), 3);
    pmu_close(src);
}

Test(pmu_rapl, packages_sort_by_number_not_text)
{
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:10", "package-10", 0, BIG_RANGE), 0);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:2", "package-2", 0, BIG_RANGE), 0);
    struct pmu_source *src = pmu_open("rapl");
    cr_assert_not_null(src);
    cr_assert_eq(src->nchannels, 4);
    cr_assert_not_null(strstr(src->channels[2].name, "intel-rapl:2"));
    cr_assert_not_null(strstr(src->channels[3].name, "intel-rapl:10"));
    pmu_close(src);
}

Test(pmu_rapl, explicit_domains_in_given_order)
{
    struct pmu_source *src = pmu_open("rapl:intel-rapl:1,intel-rapl:0:0,intel-rapl-mmio:0");
    cr_assert_not_null(src);
    cr_assert_eq(src->nchannels, 3);
    cr_assert_not_null(strstr(src->channels[0].name, "package-1"));
    cr_assert_not_null(strstr(src->channels[1].name, "core"));
    cr_assert_not_null(strstr(src->channels[1].name, "intel-rapl:0:0"));
    /* Both "package-0"s of different control types stay distinguishable. */
    cr_assert_not_null(strstr(src->channels[2].name, "intel-rapl-mmio:0"));
    cr_assert_eq(pmu_pperf_magic(src), 3);
    pmu_close(src);
}

Test(pmu_rapl, domain_given_as_absolute_directory)
{
    char arg[4096];
    snprintf(arg, sizeof(arg), "rapl:%s", fake_powercap_dir(fp, "intel-rapl:0:0"));
    struct pmu_source *src = pmu_open(arg);
    cr_assert_not_null(src);
    cr_assert_eq(src->nchannels, 1);
    cr_assert_not_null(strstr(src->channels[0].name, "core (intel-rapl:0:0)"));
    pmu_close(src);
}

Test(pmu_rapl, unknown_domain_is_an_error_naming_it_and_the_place)
{
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0,intel-rapl:7");
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "intel-rapl:7"), "message: %s", err);
    cr_assert_not_null(strstr(err, fake_powercap_root(fp)), "message: %s", err);
    cr_assert_eq(strchr(err, '\n'), strrchr(err, '\n'), "one line: %s", err);
}

Test(pmu_rapl, directory_without_energy_counter_is_an_error)
{
    struct capture c;
    capture_begin(&c);
    /* The control type directory has no energy_uj. */
    struct pmu_source *src = pmu_open("rapl:intel-rapl");
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "energy_uj"), "message: %s", err);
}

Test(pmu_rapl, empty_domain_in_list_is_an_error)
{
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0,");
    capture_end(&c);
    cr_assert_null(src);
}

Test(pmu_rapl, energy_delta_becomes_average_power)
{
    uint64_t t0 = monotonic_ns();
    struct pmu_source *src = pmu_open("rapl");
    uint64_t t1 = monotonic_ns();
    cr_assert_not_null(src);
    double v[2];

    sleep_ms(30);
    cr_assert_eq(fake_powercap_advance(fp, "intel-rapl:0", 2000000), 0);
    cr_assert_eq(fake_powercap_advance(fp, "intel-rapl:1", 500000), 0);
    uint64_t t2 = monotonic_ns();
    cr_assert_eq(pmu_read(src, v), 0);
    uint64_t t3 = monotonic_ns();
    /* The first read covers open -> read. */
    assert_power(v[0], 2000000, t0, t1, t2, t3);
    assert_power(v[1], 500000, t0, t1, t2, t3);

    /* Later reads cover only the time since the previous read. */
    sleep_ms(20);
    cr_assert_eq(fake_powercap_advance(fp, "intel-rapl:0", 300000), 0);
    uint64_t t4 = monotonic_ns();
    cr_assert_eq(pmu_read(src, v), 0);
    uint64_t t5 = monotonic_ns();
    assert_power(v[0], 300000, t2, t3, t4, t5);
    cr_assert_eq(v[1], 0.0, "an idle counter reads 0 W, got %f", v[1]);
    pmu_close(src);
}

Test(pmu_rapl, wrapped_counter_uses_max_energy_range)
{
    const uint64_t range = 1000000000ULL, start = range - 100000, step = 300000;
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:0:1", "dram", start, range), 0);
    uint64_t t0 = monotonic_ns();
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0:1");
    uint64_t t1 = monotonic_ns();
    cr_assert_not_null(src);

    sleep_ms(20);
    cr_assert_eq(fake_powercap_advance(fp, "intel-rapl:0:1", step), 0);
    cr_assert_lt(fake_powercap_energy(fp, "intel-rapl:0:1"), start, "the fixture must wrap");
    uint64_t t2 = monotonic_ns();
    double w;
    cr_assert_eq(pmu_read(src, &w), 0);
    uint64_t t3 = monotonic_ns();
    cr_assert_gt(w, 0.0);
    assert_power(w, (double)step, t0, t1, t2, t3);
    pmu_close(src);
}

Test(pmu_rapl, unreadable_counter_fails_the_read_then_recovers)
{
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0");
    cr_assert_not_null(src);
    double w;
    cr_assert_eq(fake_powercap_break(fp, "intel-rapl:0"), 0);
    cr_assert_eq(pmu_read(src, &w), -1);
    cr_assert_eq(fake_powercap_set(fp, "intel-rapl:0", 1000 + 5000), 0);
    cr_assert_eq(pmu_read(src, &w), 0);
    /* The energy of the failed interval is counted by the next good read. */
    cr_assert_gt(w, 0.0);
    pmu_close(src);
}

Test(pmu_rapl, counter_file_is_read_in_place_not_reopened)
{
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0");
    cr_assert_not_null(src);
    /* Once open, the name no longer matters: the source holds the file. */
    char path[4096], moved[4200];
    snprintf(path, sizeof(path), "%s/energy_uj", fake_powercap_dir(fp, "intel-rapl:0"));
    snprintf(moved, sizeof(moved), "%s.moved", path);
    cr_assert_eq(rename(path, moved), 0);
    double w;
    cr_assert_eq(pmu_read(src, &w), 0);
    cr_assert_eq(rename(moved, path), 0);
    pmu_close(src);
}

Test(pmu_rapl, path_fallback_selects_rapl_for_a_domain_directory)
{
    struct pmu_source *src = pmu_open(fake_powercap_dir(fp, "intel-rapl:1"));
    cr_assert_not_null(src);
    cr_assert_str_eq(src->ops->name, "rapl");
    cr_assert_eq(src->nchannels, 1);
    cr_assert_not_null(strstr(src->channels[0].name, "package-1"));
    cr_assert_eq(pmu_pperf_magic(src), 3);
    pmu_close(src);
}

Test(pmu_rapl_empty, no_domains_is_an_error, .init = setup_empty, .fini = teardown)
{
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open("rapl");
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "class/powercap"), "message: %s", err);
}

TestSuite(pmu_file, .init = setup_empty, .fini = teardown);

/* The file: source of NAME under the fake root, written with TEXT first,
 * in UNIT ("" for none); fails the test unless it opens. */
static struct pmu_source *open_file_source(const char *name, const char *text, const char *unit)
{
    const char *path = write_text(name, text);
    char spec[4200];
    snprintf(spec, sizeof(spec), *unit ? "file:%s,%s" : "file:%s", path, unit);
    struct pmu_source *src = pmu_open(spec);
    cr_assert_not_null(src, "%s", spec);
    return src;
}

Test(pmu_file, raw_value_without_unit)
{
    const char *path = write_text("sensor", "12345\n");
    char spec[4200];
    snprintf(spec, sizeof(spec), "file:%s", path);
    struct pmu_source *src = pmu_open(spec);
    cr_assert_not_null(src);
    cr_assert_eq(src->nchannels, 1);
    cr_assert_str_eq(src->channels[0].name, path);
    cr_assert_str_eq(src->channels[0].unit, "");
    cr_assert_eq(src->channels[0].kind, PMU_KIND_CUSTOM);
    cr_assert_eq(pmu_pperf_magic(src), 0);
    double v;
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, 12345.0, 1e-9);
    /* Every read sees the file as it is now. */
    write_text("sensor", "-3.25\n");
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, -3.25, 1e-12);
    write_text("sensor", "garbage\n");
    cr_assert_eq(pmu_read(src, &v), -1);
    pmu_close(src);
}

struct unit_case {
    const char *unit;
    const char *text;
    double value;
    const char *base;
    enum pmu_kind kind;
};

Test(pmu_file, units_scale_and_set_kind)
{
    static const struct unit_case cases[] = {
        {"W", "2.5", 2.5, "W", PMU_KIND_POWER},        {"mW", "1500", 1.5, "W", PMU_KIND_POWER},
        {"uW", "4200000", 4.2, "W", PMU_KIND_POWER},   {"A", "0.75", 0.75, "A", PMU_KIND_CURRENT},
        {"mA", "250", 0.25, "A", PMU_KIND_CURRENT},    {"uA", "125", 125e-6, "A", PMU_KIND_CURRENT},
        {"V", "12", 12, "V", PMU_KIND_VOLTAGE},        {"mV", "1800", 1.8, "V", PMU_KIND_VOLTAGE},
        {"uV", "3300000", 3.3, "V", PMU_KIND_VOLTAGE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct unit_case *uc = &cases[i];
        const char *path = write_text("in_input", uc->text);
        char spec[4200];
        snprintf(spec, sizeof(spec), "file:%s,%s", path, uc->unit);
        struct pmu_source *src = pmu_open(spec);
        cr_assert_not_null(src, "%s", spec);
        cr_assert_str_eq(src->channels[0].unit, uc->base);
        cr_assert_eq(src->channels[0].kind, uc->kind);
        cr_assert_eq(pmu_pperf_magic(src), (uint32_t)uc->kind);
        double v;
        cr_assert_eq(pmu_read(src, &v), 0);
        cr_assert_float_eq(v, uc->value, 1e-9 * fabs(uc->value), "%s: got %g", spec, v);
        pmu_close(src);
    }
}

Test(pmu_file, bad_unit_is_an_error)
{
    const char *path = write_text("sensor", "1\n");
    char spec[4200];
    snprintf(spec, sizeof(spec), "file:%s,kW", path);
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open(spec);
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "kW"), "message: %s", err);
}

Test(pmu_file, unreadable_or_non_numeric_file_is_an_error)
{
    char spec[4200];
    snprintf(spec, sizeof(spec), "file:%s/missing", fake_powercap_root(fp));
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open(spec);
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, spec + 5), "message: %s", err);

    snprintf(spec, sizeof(spec), "file:%s", write_text("words", "hello\n"));
    capture_begin(&c);
    src = pmu_open(spec);
    err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "offset 0"), "message: %s", err);

    capture_begin(&c);
    src = pmu_open("file:");
    capture_end(&c);
    cr_assert_null(src);
}

Test(pmu_file, long_path_keeps_its_tail_in_the_name)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/a-rather-long-directory-name-for-a-sensor-device-0123456789",
             fake_powercap_root(fp));
    cr_assert_eq(mkdir(dir, 0755), 0);
    struct pmu_source *src = open_file_source(
        "a-rather-long-directory-name-for-a-sensor-device-0123456789/power1_input", "7\n", "uW");
    const char *name = src->channels[0].name;
    size_t len = strlen(name);
    cr_assert_lt(len, sizeof(src->channels[0].name));
    cr_assert_str_eq(name + len - strlen("/power1_input"), "/power1_input");
    pmu_close(src);
}

Test(pmu_file, path_fallback_selects_file_for_a_plain_file)
{
    const char *path = write_text("sensor", "42\n");
    struct pmu_source *src = pmu_open(path);
    cr_assert_not_null(src);
    cr_assert_str_eq(src->ops->name, "file");
    cr_assert_eq(src->channels[0].kind, PMU_KIND_CUSTOM);
    double v;
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, 42.0, 1e-12);
    pmu_close(src);
}

TestSuite(pmu_registry, .init = setup_empty, .fini = teardown);

Test(pmu_registry, none_has_no_channels)
{
    const char *specs[] = {NULL, "", "none"};
    for (size_t i = 0; i < 3; i++) {
        struct pmu_source *src = pmu_open(specs[i]);
        cr_assert_not_null(src);
        cr_assert_str_eq(src->ops->name, "none");
        cr_assert_eq(src->nchannels, 0);
        cr_assert_eq(pmu_pperf_magic(src), 0);
        cr_assert_eq(pmu_read(src, NULL), 0);
        pmu_close(src);
    }
}

Test(pmu_registry, unknown_source_is_an_error)
{
    const char *specs[] = {"bogus", "bogus:arg", "none:arg"};
    for (size_t i = 0; i < 3; i++) {
        struct capture c;
        capture_begin(&c);
        struct pmu_source *src = pmu_open(specs[i]);
        const char *err = capture_end(&c);
        cr_assert_null(src, "%s", specs[i]);
        cr_assert_neq(err[0], '\0', "%s: no message", specs[i]);
    }
}

Test(pmu_registry, unknown_source_message_names_it)
{
    struct capture c;
    capture_begin(&c);
    struct pmu_source *src = pmu_open("bogus:arg");
    const char *err = capture_end(&c);
    cr_assert_null(src);
    cr_assert_not_null(strstr(err, "bogus"), "message: %s", err);
}

Test(pmu_registry, sources_are_listed)
{
    const char *want[] = {"none", "rapl", "file"};
    const struct pmu_ops *const *ops = pmu_sources();
    for (size_t i = 0; i < 3; i++) {
        int found = 0;
        for (const struct pmu_ops *const *o = ops; *o; o++) {
            if (strcmp((*o)->name, want[i]) == 0 && (*o)->about && (*o)->about[0])
                found = 1;
        }
        cr_assert(found, "source %s missing", want[i]);
    }
}

Test(pmu_registry, sysfs_root_follows_the_environment)
{
    cr_assert_str_eq(pmu_sysfs_root(), fake_powercap_root(fp));
    unsetenv("PTPROF_SYSFS_ROOT");
    cr_assert_str_eq(pmu_sysfs_root(), "/sys");
}

Test(pmu_registry, magic_is_the_shared_kind_or_custom)
{
    struct pmu_channel ch[2] = {{.kind = PMU_KIND_CURRENT}, {.kind = PMU_KIND_CURRENT}};
    struct pmu_source src = {.nchannels = 2, .channels = ch};
    cr_assert_eq(pmu_pperf_magic(&src), 1);
    ch[1].kind = PMU_KIND_VOLTAGE;
    cr_assert_eq(pmu_pperf_magic(&src), 0);
    ch[0].kind = ch[1].kind = PMU_KIND_ENERGY;
    cr_assert_eq(pmu_pperf_magic(&src), 0, "the original format has no energy magic");
}

/* A reading stands for the instant of its read (docs/pmu.md, "The join"). */
Test(pmu_file, a_reading_is_stamped_when_taken)
{
    struct pmu_source *src = open_file_source("stamped", "7\n", "W");
    cr_assert_eq(src->timing, PMU_AT_INSTANT);
    double v;
    uint64_t before = monotonic_ns();
    cr_assert_eq(pmu_read(src, &v), 0);
    uint64_t after = monotonic_ns();
    cr_assert(src->read_at >= before && src->read_at <= after, "stamped %llu, read in [%llu, %llu]",
              (unsigned long long)src->read_at, (unsigned long long)before,
              (unsigned long long)after);
    pmu_close(src);
}

/* `echo N > file` truncates, then writes: a read in between finds the file
 * empty.  That read fails, saying why, and the next one reads the number. */
Test(pmu_file, an_empty_read_fails_that_read_only)
{
    struct pmu_source *src = open_file_source("echoed", "5\n", "");
    double v;
    write_text("echoed", "");
    cr_assert_eq(pmu_read(src, &v), -1);
    cr_assert_not_null(strstr(src->why, "empty"), "why: %s", src->why);
    write_text("echoed", "6\n");
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, 6.0, 1e-12);
    pmu_close(src);
}

/* A file replaced by rename (a script's write-then-mv) is followed; while
 * the path names nothing, reads fail and say so, then recover. */
Test(pmu_file, a_replaced_file_is_followed)
{
    struct pmu_source *src = open_file_source("replaced", "1\n", "");
    char keep[4200], next[4200];
    snprintf(keep, sizeof(keep), "%s/replaced", fake_powercap_root(fp));
    snprintf(next, sizeof(next), "%s", write_text("replaced.tmp", "2\n"));
    cr_assert_eq(rename(next, keep), 0);
    double v;
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, 2.0, 1e-12, "the old file was read");
    cr_assert_eq(unlink(keep), 0);
    cr_assert_eq(pmu_read(src, &v), -1);
    cr_assert_not_null(strstr(src->why, "No such file"), "why: %s", src->why);
    write_text("replaced", "3\n");
    cr_assert_eq(pmu_read(src, &v), 0);
    cr_assert_float_eq(v, 3.0, 1e-12);
    pmu_close(src);
}

/* rapl's readings are averages over the time since the previous one. */
Test(pmu_rapl, a_reading_covers_the_interval_since_the_previous, .init = setup_tree,
     .fini = teardown)
{
    struct pmu_source *src = pmu_open("rapl:intel-rapl:0");
    cr_assert_not_null(src);
    cr_assert_eq(src->timing, PMU_OVER_INTERVAL);
    uint64_t first = src->read_at;
    double w;
    sleep_ms(2);
    cr_assert_eq(pmu_read(src, &w), 0);
    cr_assert_gt(src->read_at, first);
    pmu_close(src);
}
