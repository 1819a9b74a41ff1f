/*
 * test_csv_timeline.c - the device CSV reader (interop/csv_timeline.h) and
 * its join to a profile (analyze/csv_join.h): headers and units, separators
 * and quoting, exact times, the errors a hostile file gets (file and line
 * named), sample values under both interpolations, NaN outside the CSV,
 * derived power, offsets, and the energy analyze/metrics.h then measures;
 * plus the replay of the kept fuzz corpus.
 */
#include "analyze/metrics.h"
#include "analyze/csv_join.h"
#include "interop/csv_timeline.h"
#include "util/xalloc.h"
#include "../lib/corpus.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- helpers ---------------------------------------------------------------- */

static int saved_fd = -1;
static FILE *capture;

static void capture_start(void)
{
    fflush(stderr);
    capture = tmpfile();
    cr_assert_not_null(capture);
    saved_fd = dup(2);
    dup2(fileno(capture), 2);
}

/* What was printed on stderr since capture_start(), allocated. */
static char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    long n = ftell(capture);
    char *s = xcalloc((size_t)(n > 0 ? n : 0) + 1, 1);
    rewind(capture);
    if (n > 0)
        cr_assert_eq(fread(s, 1, (size_t)n, capture), (size_t)n);
    fclose(capture);
    return s;
}

static int parse(const char *text, const struct csv_timeline_options *o, struct csv_timeline *t)
{
    return csv_timeline_parse("dev.csv", text, strlen(text), o, t);
}

/* Parse TEXT expecting failure; the message, allocated. */
static char *parse_error(const char *text, size_t len, const struct csv_timeline_options *o)
{
    struct csv_timeline t;
    capture_start();
    int rc = csv_timeline_parse("dev.csv", text, len, o, &t);
    char *msg = capture_end();
    cr_assert_eq(rc, -1, "accepted: %.200s", text);
    cr_assert_eq(t.nrows, 0);
    cr_assert_null(t.series);
    cr_assert_eq(strchr(msg, '\n'), msg + strlen(msg) - 1, "not one line: %s", msg);
    return msg;
}

static void expect_error(const char *text, const char *where, const char *what)
{
    char *msg = parse_error(text, strlen(text), NULL);
    cr_expect(strstr(msg, where), "expected '%s' in: %s", where, msg);
    cr_expect(strstr(msg, what), "expected '%s' in: %s", what, msg);
    free(msg);
}

/* --- headers and units ------------------------------------------------------ */

static void split(const char *h, const char *name, const char *unit)
{
    char n[64], u[64];
    csv_split_header(h, n, sizeof(n), u, sizeof(u));
    cr_expect_str_eq(n, name, "name of '%s'", h);
    cr_expect_str_eq(u, unit, "unit of '%s'", h);
}

Test(csv_timeline, header_units)
{
    split("Power (W)", "Power", "W");
    split("Current [mA]", "Current", "mA");
    split("Voltage/V", "Voltage", "V");
    split("P[mW]", "P", "mW");
    split("  power_mW ", "power", "mW");
    split("Time {ms}", "Time", "ms");
    split("time_s", "time", "s");
    split("Current mA", "Current", "mA");
    split("Channel A", "Channel A", ""); /* a channel letter, not amperes */
    split("I_1", "I_1", "");
    split("Temp (\u00b0C)", "Temp", "\u00b0C");
    split("timestamp", "timestamp", "");
}

Test(csv_timeline, unit_table)
{
    const struct csv_unit *u = csv_parse_unit("mW");
    cr_assert_not_null(u);
    cr_expect_eq(u->kind, PMU_KIND_POWER);
    cr_expect_float_eq(u->scale, 1e-3, 1e-18);
    const struct csv_unit *a = csv_parse_unit("\u00b5A"), *b = csv_parse_unit("\u03bcA"),
                          *c = csv_parse_unit("uA");
    cr_assert(a && b && c);
    cr_expect(a == c && b == c, "all three micro signs are micro");
    cr_expect_float_eq(c->scale, 1e-6, 1e-20);
    cr_expect_eq(csv_parse_unit("kWh")->kind, PMU_KIND_ENERGY);
    cr_expect_float_eq(csv_parse_unit("kWh")->scale, 3.6e6, 1e-6);
    cr_expect_float_eq(csv_parse_unit("kW")->scale, 1e3, 1e-9);
    cr_expect_eq(csv_parse_unit("MA"), csv_parse_unit("mA"), "one-case headers");
    cr_expect_null(csv_parse_unit("furlong"));
    cr_expect_eq(csv_time_unit_ns("ms"), 1000000);
    cr_expect_eq(csv_time_unit_ns("\u00b5s"), 1000);
    cr_expect_eq(csv_time_unit_ns("W"), 0);
}

/* --- reading ---------------------------------------------------------------- */

Test(csv_timeline, basic_and_scaling)
{
    struct csv_timeline t;
    cr_assert_eq(parse("Time (s),Power (mW),Current [uA],Voltage/V,Note\n"
                       "0,1500,250,5.0,start\n"
                       "0.5,2500,,5.1,\n"
                       "1.0,-3,1e3,4.9,x\n",
                       NULL, &t),
                 0);
    cr_assert_eq(t.nrows, 3);
    cr_expect_not(t.absolute);
    cr_expect_str_eq(t.time_label, "Time (s)");
    cr_expect_eq(t.time_ns[1], 500000000);
    cr_assert_eq(t.nseries, 3, "Note says nothing it measures");
    cr_expect_str_eq(t.series[0].name, "Power");
    cr_expect_str_eq(t.series[0].unit, "W");
    cr_expect_eq(t.series[0].kind, PMU_KIND_POWER);
    cr_expect_float_eq(t.series[0].values[0], 1.5, 1e-12);
    cr_expect_float_eq(t.series[0].values[2], -0.003, 1e-15);
    cr_expect_eq(t.series[1].kind, PMU_KIND_CURRENT);
    cr_expect_str_eq(t.series[1].unit, "A");
    cr_expect_float_eq(t.series[1].values[0], 250e-6, 1e-15);
    cr_expect(isnan(t.series[1].values[1]), "an empty field is a missing reading");
    cr_expect_float_eq(t.series[1].values[2], 1e-3, 1e-15);
    cr_expect_eq(t.series[2].kind, PMU_KIND_VOLTAGE);
    cr_expect_float_eq(t.series[2].values[1], 5.1, 1e-12);
    csv_timeline_free(&t);
}

Test(csv_timeline, kinds_by_name_without_units)
{
    struct csv_timeline t;
    cr_assert_eq(parse("t,P,I1,U_2,Energy,temperature\n1,2,3,4,5,6\n", NULL, &t), 0);
    cr_assert_eq(t.nseries, 4);
    cr_expect_eq(t.series[0].kind, PMU_KIND_POWER);
    cr_expect_eq(t.series[1].kind, PMU_KIND_CURRENT);
    cr_expect_eq(t.series[2].kind, PMU_KIND_VOLTAGE);
    cr_expect_eq(t.series[3].kind, PMU_KIND_ENERGY);
    cr_expect_str_eq(t.series[3].unit, "J");
    csv_timeline_free(&t);
}

Test(csv_timeline, semicolons_decimal_commas_bom_crlf_comments)
{
    struct csv_timeline t;
    const char *text = "\xef\xbb\xbf# exported by a meter\r\n"
                       "\r\n"
                       "Zeit [ms];Leistung (W)\r\n"
                       "# a comment between rows\r\n"
                       "0,5;1,25\r\n"
                       "1000;2,5\r\n";
    cr_assert_eq(parse(text, NULL, &t), 0);
    cr_assert_eq(t.nrows, 2);
    cr_expect_eq(t.time_ns[0], 500000);
    cr_expect_eq(t.time_ns[1], 1000000000);
    cr_assert_eq(t.nseries, 0 + 1, "Leistung has a unit: W");
    cr_expect_float_eq(t.series[0].values[0], 1.25, 1e-12);
    csv_timeline_free(&t);
}

Test(csv_timeline, tabs_and_quotes)
{
    struct csv_timeline t;
    const char *text = "\"Power, total (W)\"\t\"time\"\t\"say \"\"hi\"\"\"\n"
                       "\"3\"\t 1 \t\"two\nlines\"\n"
                       "4\t2\tx\n";
    cr_assert_eq(parse(text, NULL, &t), 0);
    cr_expect_str_eq(t.time_label, "time", "the column whose name says time");
    cr_assert_eq(t.nrows, 2);
    cr_expect_eq(t.time_ns[1], 2000000000);
    cr_assert_eq(t.nseries, 1);
    cr_expect_str_eq(t.series[0].name, "Power, total");
    cr_expect_float_eq(t.series[0].values[1], 4, 1e-12);
    csv_timeline_free(&t);
}

Test(csv_timeline, chosen_columns_kinds_and_units)
{
    struct csv_column_spec cols[] = {
        {.column = "3"},                                                  /* by number */
        {.column = "ch a", .kind = PMU_KIND_CURRENT, .kind_given = true}, /* ignoring case */
        {.column = "raw", .unit = "mW"},
        {.column = "Temp", .kind = PMU_KIND_CUSTOM, .kind_given = true},
    };
    struct csv_timeline_options o = {
        .time_column = "stamp", .time_unit = "us", .columns = cols, .ncolumns = 4};
    struct csv_timeline t;
    cr_assert_eq(parse("x,stamp,P [W],Ch A,raw,Temp (\u00b0C)\n"
                       "a,10,1,2,3000,21.5\n",
                       &o, &t),
                 0);
    cr_expect_eq(t.time_ns[0], 10000);
    cr_assert_eq(t.nseries, 4);
    cr_expect_str_eq(t.series[0].name, "P");
    cr_expect_eq(t.series[1].kind, PMU_KIND_CURRENT);
    cr_expect_str_eq(t.series[1].unit, "A");
    cr_expect_eq(t.series[2].kind, PMU_KIND_POWER);
    cr_expect_float_eq(t.series[2].values[0], 3, 1e-12);
    cr_expect_eq(t.series[3].kind, PMU_KIND_CUSTOM);
    cr_expect_str_eq(t.series[3].unit, "\u00b0C");
    cr_expect_float_eq(t.series[3].values[0], 21.5, 1e-12);
    csv_timeline_free(&t);

    struct csv_column_spec bad = {.column = "P", .kind = PMU_KIND_VOLTAGE, .kind_given = true};
    o = (struct csv_timeline_options){.columns = &bad, .ncolumns = 1};
    const char *text = "t,P (mW)\n1,2\n";
    char *msg = parse_error(text, strlen(text), &o);
    cr_expect(strstr(msg, "dev.csv:1: column 'P (mW)': unit 'mW' does not measure voltage"), "%s",
              msg);
    free(msg);
    struct csv_column_spec missing = {.column = "Q"};
    o = (struct csv_timeline_options){.columns = &missing, .ncolumns = 1};
    msg = parse_error(text, strlen(text), &o);
    cr_expect(strstr(msg, "dev.csv:1: no column 'Q' in the header (t, P (mW))"), "%s", msg);
    free(msg);
}

Test(csv_timeline, exact_epoch_times)
{
    struct csv_timeline t;
    cr_assert_eq(parse("time,W\n1700000000.123456789,1\n1700000000.9999999996,1\n"
                       "1.7000000011e9,1\n",
                       NULL, &t),
                 0);
    cr_expect(t.absolute);
    cr_expect_eq(t.time_ns[0], INT64_C(1700000000123456789));
    cr_expect_eq(t.time_ns[1], INT64_C(1700000001000000000), "rounded to the nanosecond");
    cr_expect_eq(t.time_ns[2], INT64_C(1700000001100000000));
    csv_timeline_free(&t);
    cr_assert_eq(parse("timestamp_ns,P\n1700000000123456789,1\n", NULL, &t), 0);
    cr_expect_eq(t.time_ns[0], INT64_C(1700000000123456789));
    cr_expect(t.absolute);
    csv_timeline_free(&t);
}

Test(csv_timeline, iso_8601)
{
    setenv("TZ", "UTC", 1);
    tzset();
    struct csv_timeline t;
    cr_assert_eq(parse("Date,Power\n"
                       "2024-03-05T14:22:01.5Z,1\n"
                       "2024-03-05 15:22:01.75+01:00,1\n"
                       "2024-03-05T09:22:02-0500,1\n"
                       "2024-03-05T14:22:03,1\n",
                       NULL, &t),
                 0);
    cr_expect(t.absolute);
    int64_t base = INT64_C(1709648521) * 1000000000;
    cr_expect_eq(t.time_ns[0], base + 500000000);
    cr_expect_eq(t.time_ns[1], base + 750000000);
    cr_expect_eq(t.time_ns[2], base + 1000000000);
    cr_expect_eq(t.time_ns[3], base + 2000000000, "no zone: local time (TZ=UTC here)");
    csv_timeline_free(&t);
    setenv("TZ", "Europe/Berlin", 1);
    tzset();
    cr_assert_eq(parse("Date,Power\n2024-03-05T15:22:01,1\n", NULL, &t), 0);
    cr_expect_eq(t.time_ns[0], base, "local time of TZ");
    csv_timeline_free(&t);
    expect_error("Date,Power\n2024-02-30T00:00:00Z,1\n", "dev.csv:2:", "out of range");
    expect_error("Date,Power\n2023-02-29T00:00:00Z,1\n", "dev.csv:2:", "leap year");
    expect_error("Date,Power\n2024-03-05T14:22Q,1\n", "dev.csv:2:", "ISO 8601");
}

/* --- hostile input ---------------------------------------------------------- */

Test(csv_timeline, errors_name_file_and_line)
{
    expect_error("", "dev.csv:1:", "empty");
    expect_error("# only a comment\n", "dev.csv:2:", "empty");
    expect_error("time,P\n", "dev.csv:2:", "no readings");
    expect_error("time,P\n0,1\n1,1e308\n", "dev.csv:3:", "out of range");
    expect_error("time,P\n0,nan\n", "dev.csv:2:", "'nan' is not a decimal number");
    expect_error("time,P\n0,inf\n", "dev.csv:2:", "not a decimal number");
    expect_error("time,P\n0,0x10\n", "dev.csv:2:", "not a decimal number");
    expect_error("time,P\nNaN,1\n", "dev.csv:2:", "time 'NaN'");
    expect_error("time,P\n1e308,1\n", "dev.csv:2:", "out of range");
    expect_error("time,P\n0,1\n2,1\n1,1\n", "dev.csv:4:", "goes back");
    expect_error("time,P\n0,1\n1\n", "dev.csv:3:", "1 field, the header has 2");
    expect_error("time,P\n0,1,2\n", "dev.csv:2:", "3 fields");
    expect_error("time,P\n0,\"1\n", "dev.csv:2:", "never closed");
    expect_error("time,P\n0,\"1\"x\n", "dev.csv:2:", "after a closing quote");
    expect_error("time,P\n,1\n", "dev.csv:2:", "no time");
    expect_error("time,P\n2024-01-01T00:00:00Z,1\n5,1\n", "dev.csv:3:", "date-time");
    expect_error("a,b\n1,2\n", "dev.csv:1:", "no column says");
    expect_error("\xff\xfet\0,\0P\0", "dev.csv:1:", "UTF-16");
    expect_error("time,P\n\n\n0,1\n1,\"a\"\"\n", "dev.csv:5:", "never closed");

    char *msg = parse_error("time,P\n0,\0\n", 11, NULL);
    cr_expect(strstr(msg, "dev.csv:2: a NUL byte"), "%s", msg);
    free(msg);

    /* A huge line: refused at the limit, not read into memory. */
    size_t n = 3 * CSV_TIMELINE_MAX_RECORD;
    char *big = xmalloc(n + 1);
    memcpy(big, "time,P\n0,", 9);
    memset(big + 9, '1', n - 9);
    big[n] = '\0';
    msg = parse_error(big, n, NULL);
    cr_expect(strstr(msg, "dev.csv:2: a record longer than"), "%s", msg);
    free(msg);
    /* Too many fields. */
    for (size_t i = 7; i < n; i++)
        big[i] = i % 2 ? ',' : '1';
    msg = parse_error(big, n, NULL);
    cr_expect(strstr(msg, "dev.csv:2: more than"), "%s", msg);
    free(msg);
    free(big);
}

Test(csv_timeline, load_names_missing_file)
{
    struct csv_timeline t;
    capture_start();
    int rc = csv_timeline_load("/nonexistent/dev.csv", NULL, &t);
    char *msg = capture_end();
    cr_expect_eq(rc, -1);
    cr_expect(strstr(msg, "/nonexistent/dev.csv"), "%s", msg);
    free(msg);
}

/* --- joining ---------------------------------------------------------------- */

#define T0 INT64_C(1700000000000000000)

/* A one-thread profile with samples at T0 + TIMES_MS[i] ms, using all of
 * its time on CPU. */
static void make_profile(struct profile *p, const double *times_ms, size_t n)
{
    profile_init(p);
    p->samples = xcalloc(n, sizeof(*p->samples));
    p->nsamples = n;
    for (size_t i = 0; i < n; i++) {
        struct prof_sample *s = &p->samples[i];
        s->time_ns = (uint64_t)(T0 + (int64_t)llround(times_ms[i] * 1e6));
        s->nthreads = 1;
        s->threads = xcalloc(1, sizeof(*s->threads));
        s->threads[0] = (struct prof_thread_sample){
            .pid = 7, .tid = 7, .cpu_ns = s->time_ns - (uint64_t)T0, .syscall = -1};
    }
}

static int join_text(struct profile *p, const char *text, const struct csv_join_options *o)
{
    struct csv_timeline t;
    cr_assert_eq(parse(text, NULL, &t), 0);
    int rc = csv_join("dev.csv", &t, o, p, NULL);
    csv_timeline_free(&t);
    return rc;
}

static double energy(const struct profile *p)
{
    char *err = NULL;
    struct metrics *m = metrics_new(p, NULL, &err);
    cr_assert_not_null(m, "%s", err);
    struct thread_metrics tm[4];
    double u, idle;
    for (size_t i = 0; i < p->nsamples; i++)
        metrics_sample(m, i, tm, &u, &idle);
    double e = metrics_totals(m)->energy_j;
    metrics_free(m);
    return e;
}

Test(csv_join, step_means_and_nan_outside)
{
    /* Readings (step): 1 W over (0, 10] ms, 3 W over (10, 30], 5 W over (30, 40]. */
    const char *csv = "time,P (W)\n"
                      "1700000000.000,0\n1700000000.010,1\n1700000000.030,3\n"
                      "1700000000.040,5\n";
    double times[] = {-5, 0, 5, 20, 40, 45};
    struct profile p;
    make_profile(&p, times, 6);
    capture_start();
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    char *msg = capture_end();
    cr_expect(strstr(msg, "dev.csv: the readings cover 80.0% of the profile's 0.050 s (from "
                          "+0.005 s to +0.045 s); 3 of its 6 samples have no value"),
              "%s", msg);
    free(msg);
    cr_assert_eq(p.nchannels, 1);
    cr_expect_str_eq(p.channels[0].name, "P");
    cr_expect_str_eq(p.channels[0].unit, "W");
    cr_expect_eq(p.channels[0].kind, PMU_KIND_POWER);
    cr_expect(isnan(p.samples[0].values[0]), "before the first reading");
    cr_expect(isnan(p.samples[1].values[0]), "its interval starts before the CSV");
    cr_expect_float_eq(p.samples[2].values[0], 1, 1e-9);
    cr_expect_float_eq(p.samples[3].values[0], (5 * 1 + 10 * 3) / 15.0, 1e-9);
    cr_expect_float_eq(p.samples[4].values[0], (10 * 3 + 10 * 5) / 20.0, 1e-9);
    cr_expect(isnan(p.samples[5].values[0]), "after the last reading");
    /* metrics.c counts NaN as nothing: the energy is what the CSV covers. */
    cr_expect_float_eq(energy(&p), 0.005 * 1 + 0.015 * (35 / 15.0) + 0.020 * 4, 1e-9);
    cr_expect_str_eq(profile_meta(&p, "csv_join"), "dev.csv offset 0.000000000 s");
    profile_free(&p);
}

Test(csv_join, linear_between_sparse_readings)
{
    /* A ramp from 0 W to 100 W over 100 ms, read twice; samples every 10 ms. */
    const char *csv = "time,P (W)\n1700000000.0,0\n1700000000.1,100\n";
    double times[11];
    for (int i = 0; i <= 10; i++)
        times[i] = 10.0 * i;
    struct profile p;
    make_profile(&p, times, 11);
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){.interpolation = CSV_LINEAR}), 0);
    cr_expect_float_eq(p.samples[0].values[0], 0, 1e-9);
    for (int i = 1; i <= 10; i++)
        cr_expect_float_eq(p.samples[i].values[0], 10.0 * i - 5, 1e-9, "sample %d", i);
    cr_expect_float_eq(energy(&p), 0.1 * 50, 1e-9);
    profile_free(&p);

    /* The same readings as steps: the second reading holds over the whole span. */
    make_profile(&p, times, 11);
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    cr_expect_float_eq(p.samples[5].values[0], 100, 1e-9);
    cr_expect_float_eq(energy(&p), 0.1 * 100, 1e-9);
    profile_free(&p);
}

Test(csv_join, energy_counter_is_interpolated)
{
    const char *csv = "time,Energy (mJ)\n1700000000.0,1000\n1700000000.1,2000\n";
    double times[] = {0, 25, 50, 100};
    struct profile p;
    make_profile(&p, times, 4);
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    cr_expect_eq(p.channels[0].kind, PMU_KIND_ENERGY);
    cr_expect_float_eq(p.samples[1].values[0], 1.25, 1e-9);
    cr_expect_float_eq(p.samples[3].values[0], 2, 1e-9);
    cr_expect_float_eq(energy(&p), 1, 1e-9);
    profile_free(&p);
}

Test(csv_join, current_times_voltage)
{
    double times[] = {0, 50, 100};
    struct profile p;
    make_profile(&p, times, 3);
    const char *csv = "time,Current (mA)\n1700000000.0,100\n1700000000.1,100\n";
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){.voltage = 5}), 0);
    cr_assert_eq(p.nchannels, 2);
    cr_expect_eq(p.channels[0].kind, PMU_KIND_CURRENT);
    cr_expect_str_eq(p.channels[1].name, "Current x 5 V");
    cr_expect_eq(p.channels[1].kind, PMU_KIND_POWER);
    cr_expect_float_eq(p.samples[2].values[1], 0.5, 1e-12);
    cr_expect_float_eq(energy(&p), 0.05, 1e-12);
    profile_free(&p);

    /* A current and a voltage column: their product, reading by reading. */
    make_profile(&p, times, 3);
    csv = "time,I [A],U [V]\n1700000000.0,1,1\n1700000000.05,1,10\n1700000000.1,2,1\n";
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    cr_assert_eq(p.nchannels, 3);
    cr_expect_str_eq(p.channels[2].name, "I x U");
    cr_expect_float_eq(p.samples[1].values[2], 10, 1e-12);
    cr_expect_float_eq(p.samples[2].values[2], 2, 1e-12);
    cr_expect_float_eq(energy(&p), 0.05 * 10 + 0.05 * 2, 1e-12);
    profile_free(&p);

    make_profile(&p, times, 3);
    capture_start();
    int rc =
        join_text(&p, "time,P (W)\n1700000000.0,1\n", &(struct csv_join_options){.voltage = 5});
    char *msg = capture_end();
    cr_expect_eq(rc, -1);
    cr_expect(strstr(msg, "already measures power"), "%s", msg);
    cr_expect_eq(p.nchannels, 0, "the profile is unchanged");
    free(msg);
    profile_free(&p);
}

Test(csv_join, relative_times_need_an_offset)
{
    double times[] = {0, 100, 200};
    struct profile p;
    make_profile(&p, times, 3);
    const char *csv = "Time [ms],P\n0,1\n50,2\n100,3\n300,4\n";
    capture_start();
    int rc = join_text(&p, csv, &(struct csv_join_options){0});
    char *msg = capture_end();
    cr_expect_eq(rc, -1);
    cr_expect(strstr(msg, "dev.csv: times in column 'Time [ms]' are relative"), "%s", msg);
    free(msg);

    /* The device started 100 ms before the profile's first sample. */
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){.offset = "1699999999.9"}), 0);
    cr_expect_float_eq(p.samples[0].values[0], 3, 1e-9);
    cr_expect_float_eq(p.samples[1].values[0], 4, 1e-9);
    cr_expect_float_eq(p.samples[2].values[0], 4, 1e-9, "the last reading covers (100, 300] ms");
    profile_free(&p);

    make_profile(&p, times, 3);
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){.offset = "profile-0.1"}), 0);
    cr_expect_float_eq(p.samples[1].values[0], 4, 1e-9);
    profile_free(&p);

    make_profile(&p, times, 3);
    setenv("TZ", "UTC", 1);
    tzset();
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){.offset = "2023-11-14T22:13:19.9Z"}),
                 0);
    cr_expect_float_eq(p.samples[1].values[0], 4, 1e-9);
    profile_free(&p);
}

Test(csv_join, no_overlap_is_an_error_and_names_clash)
{
    double times[] = {0, 100};
    struct profile p;
    make_profile(&p, times, 2);
    capture_start();
    int rc = join_text(&p, "time,P\n1600000000,1\n1600000001,1\n", &(struct csv_join_options){0});
    char *msg = capture_end();
    cr_expect_eq(rc, -1);
    cr_expect(strstr(msg, "cover none of the profile's samples (2023-11-14T22:13:20.000Z"), "%s",
              msg);
    free(msg);
    cr_expect_eq(p.nchannels, 0);

    const char *csv = "time,P\n1699999999,1\n1700000001,2\n";
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    capture_start();
    cr_assert_eq(join_text(&p, csv, &(struct csv_join_options){0}), 0);
    msg = capture_end();
    cr_expect(strstr(msg, "already has power or energy channels (P)"), "%s", msg);
    free(msg);
    cr_assert_eq(p.nchannels, 2);
    cr_expect_str_eq(p.channels[1].name, "P (dev.csv)");
    cr_expect_float_eq(p.samples[1].values[0], p.samples[1].values[1], 1e-12);
    profile_free(&p);
}

Test(csv_join, offsets)
{
    int64_t ns;
    cr_expect_eq(csv_parse_offset("-1.5", 0, &ns), 0);
    cr_expect_eq(ns, -1500000000);
    cr_expect_eq(csv_parse_offset("profile+2", 1000, &ns), 0);
    cr_expect_eq(ns, 2000001000);
    cr_expect_eq(csv_parse_offset("profile", 1000, &ns), 0);
    cr_expect_eq(ns, 1000);
    cr_expect_eq(csv_parse_offset("profile*2", 0, &ns), -1);
    cr_expect_eq(csv_parse_offset("soon", 0, &ns), -1);
    cr_expect_eq(csv_parse_offset("1e400", 0, &ns), -1);
}

/* --- the kept fuzz corpus ---------------------------------------------------- */

static void replay_one(const struct corpus_file *f, void *ctx)
{
    (void)ctx;
    struct csv_timeline t;
    int rc = csv_timeline_parse(f->name, f->data, f->len, NULL, &t);
    if (f->must_load)
        cr_expect_eq(rc, 0, "%s does not load", f->path);
    if (rc != 0)
        return;
    cr_expect_gt(t.nrows, 0);
    for (size_t i = 1; i < t.nrows; i++)
        cr_expect_geq(t.time_ns[i], t.time_ns[i - 1], "%s: times go back", f->path);
    double times[] = {0, 1, 2};
    struct profile p;
    make_profile(&p, times, 3);
    int64_t first = t.time_ns[0], last = t.time_ns[t.nrows - 1];
    p.samples[0].time_ns = (uint64_t)first;
    p.samples[1].time_ns = (uint64_t)(first / 2 + last / 2);
    p.samples[2].time_ns = (uint64_t)last;
    csv_join(f->name, &t, &(struct csv_join_options){.offset = "0"}, &p, NULL);
    profile_free(&p);
    csv_timeline_free(&t);
}

Test(csv_timeline, fuzz_corpus)
{
    size_t n = corpus_replay("tests/fuzz/corpus/csv_timeline", replay_one, NULL);
    cr_expect_geq(n, 5);
}
