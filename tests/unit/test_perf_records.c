/*
 * test_perf_records.c - the perf engine's parts that need no kernel: the
 * record parser shared with the perf.data reader (interop/perf_records.h)
 * on records laid out as the kernel writes them, and on damaged ones; the
 * /proc/PID/task/TID/syscall parser of the off-CPU look
 * (record/offcpu.h); -e parsing (record/perf_counters.h); a new
 * mapping replacing what it overlaps (record/maps.h).
 */
#include "model/perf_records.h"
#include "model/maps.h"
#include "record/perf/perf_counters.h"
#include "record/offcpu.h"

#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

/* A record under construction. */
struct rec {
    uint8_t b[4096];
    size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static void put64(struct rec *r, uint64_t v)
{
    put(r, &v, 8);
}

static void put32(struct rec *r, uint32_t v)
{
    put(r, &v, 4);
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
    r->n = 0;
    put32(r, type);
    uint16_t m = misc, size = 0;
    put(r, &m, 2);
    put(r, &size, 2);
}

static void end(struct rec *r)
{
    while (r->n % 8)
        r->b[r->n++] = 0;
    uint16_t size = (uint16_t)r->n;
    memcpy(r->b + 6, &size, 2);
}

static struct perf_layout engine_layout(uint64_t extra)
{
    return (struct perf_layout){
        .sample_type =
            PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | extra,
        .read_format = PERF_FORMAT_GROUP,
        .regs_user_mask = 0x7, /* three registers */
        .sample_id_all = true,
    };
}

Test(perf_records, a_sample_with_every_part_the_engine_asks_for)
{
    struct perf_layout l = engine_layout(PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
                                         PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
    struct rec r;
    begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    put64(&r, 0x401000);          /* ip */
    put32(&r, 42);                /* pid */
    put32(&r, 43);                /* tid */
    put64(&r, 123456789);         /* time */
    put64(&r, 1000000);           /* period */
    put64(&r, 2);                 /* read: nr */
    put64(&r, 5000000);           /* the leader */
    put64(&r, 17);                /* page-faults */
    put64(&r, 3);                 /* callchain: nr */
    put64(&r, PERF_CONTEXT_USER); /* a marker */
    put64(&r, 0x401000);          /* the ip */
    put64(&r, 0x402000);          /* a return address */
    put64(&r, PERF_SAMPLE_REGS_ABI_64);
    put64(&r, 1);
    put64(&r, 2);
    put64(&r, 3);
    put64(&r, 16); /* stack: size */
    put64(&r, 0xaaaa);
    put64(&r, 0xbbbb);
    put64(&r, 8); /* dyn_size: only half of it is stack */
    end(&r);

    struct perf_record out;
    const char *why = NULL;
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    const struct perf_sample *s = &out.u.sample;
    cr_expect_eq(out.type, PERF_REC_SAMPLE);
    cr_expect_eq(s->ip, 0x401000);
    cr_expect(out.has_tid && out.pid == 42 && out.tid == 43);
    cr_expect(out.has_time && out.time == 123456789);
    cr_expect_eq(s->period, 1000000);
    cr_expect_eq(s->read.nr, 2);
    cr_expect_eq(perf_read_value(&s->read, 1, NULL), 17);
    cr_expect_eq(s->callchain_nr, 3);
    cr_expect_eq(perf_u64(s->callchain, 2), 0x402000);
    cr_expect_eq(s->nregs, 3);
    cr_expect_eq(perf_u64(s->regs, 2), 3);
    cr_expect_eq(s->stack_size, 8, "dyn_size bounds the stack");
    cr_expect_eq(perf_u64(s->stack, 0), 0xaaaa);
}

Test(perf_records, side_band_records_and_their_sample_id_trailer)
{
    struct perf_layout l = engine_layout(0);
    struct rec r;
    struct perf_record out;
    const char *why = NULL;

    begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
    put32(&r, 42);
    put32(&r, 42);
    put64(&r, 0x400000); /* addr */
    put64(&r, 0x3000);   /* len */
    put64(&r, 0x1000);   /* pgoff */
    put32(&r, 8);        /* maj */
    put32(&r, 1);        /* min */
    put64(&r, 777);      /* ino */
    put64(&r, 0);
    put32(&r, 5); /* PROT_READ | PROT_EXEC */
    put32(&r, 2); /* MAP_PRIVATE */
    put(&r, "/usr/bin/prog\0\0\0", 16);
    put32(&r, 42); /* trailer: pid, tid, time */
    put32(&r, 42);
    put64(&r, 99);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect_str_eq(out.u.mmap.filename, "/usr/bin/prog");
    cr_expect(out.u.mmap.mmap2 && out.u.mmap.addr == 0x400000 && out.u.mmap.len == 0x3000);
    cr_expect(out.u.mmap.pgoff == 0x1000 && out.u.mmap.ino == 777 && out.u.mmap.prot == 5);
    cr_expect(out.has_time && out.time == 99, "the trailer's time");

    begin(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
    put32(&r, 42);
    put32(&r, 42);
    put(&r, "prog\0\0\0\0", 8);
    put32(&r, 42);
    put32(&r, 42);
    put64(&r, 100);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect(out.u.comm.exec);
    cr_expect_str_eq(out.u.comm.comm, "prog");

    begin(&r, PERF_RECORD_FORK, 0);
    put32(&r, 42);
    put32(&r, 42);
    put32(&r, 44);
    put32(&r, 43);
    put64(&r, 101);
    put32(&r, 42);
    put32(&r, 43);
    put64(&r, 101);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect(out.u.task.pid == 42 && out.u.task.tid == 44 && out.u.task.ptid == 43);
    cr_expect(out.time == 101);

    begin(&r, PERF_RECORD_LOST, 0);
    put64(&r, 7);
    put64(&r, 12);
    put32(&r, 0);
    put32(&r, 0);
    put64(&r, 102);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect_eq(out.u.lost.lost, 12);
}

/* A thread's context switches: nothing but the header's misc bits (out or
 * in, preempted or not) and the sample_id trailer, whose tid and time say
 * whose and when; the visitor hands them to its context_switch member. */
static int switches_seen;
static uint16_t switch_misc;

static void count_switch(void *ctx, const struct perf_record *r)
{
    (void)ctx;
    switches_seen++;
    switch_misc = r->misc;
}

Test(perf_records, context_switch_records)
{
    struct perf_layout l = engine_layout(0);
    struct rec r;
    struct perf_record out;
    const char *why = NULL;
    struct perf_record_visitor v = {.context_switch = count_switch};

    begin(&r, PERF_RECORD_SWITCH,
          PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
    put32(&r, 42); /* trailer: pid, tid, time */
    put32(&r, 43);
    put64(&r, 1234);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect_eq(out.type, PERF_REC_SWITCH);
    cr_expect(out.has_tid && out.pid == 42 && out.tid == 43, "the trailer's ids");
    cr_expect(out.has_time && out.time == 1234, "the trailer's time");
    perf_record_visit(&out, &v, NULL);
    cr_expect_eq(switches_seen, 1);
    cr_expect(switch_misc & PERF_REC_MISC_SWITCH_OUT);
    cr_expect(switch_misc & PERF_REC_MISC_SWITCH_OUT_PREEMPT);

    begin(&r, PERF_RECORD_SWITCH, 0); /* coming back on a CPU */
    put32(&r, 42);
    put32(&r, 43);
    put64(&r, 1300);
    end(&r);
    cr_assert_eq(perf_record_parse(&l, r.b, r.n, &out, &why), r.n, "%s", why ? why : "");
    cr_expect(out.time == 1300 && !(out.misc & PERF_REC_MISC_SWITCH_OUT));
}

/* Nothing beyond a record's own size is read, and no count is believed
 * that the record cannot hold. */
Test(perf_records, damaged_records_are_refused)
{
    struct perf_layout l = engine_layout(PERF_SAMPLE_CALLCHAIN);
    struct rec r;
    struct perf_record out;
    const char *why = NULL;

    begin(&r, PERF_RECORD_SAMPLE, 0);
    put64(&r, 1);
    put32(&r, 1);
    put32(&r, 1);
    put64(&r, 1);
    put64(&r, 1);
    put64(&r, UINT64_MAX / 4); /* a call chain longer than anything */
    end(&r);
    cr_expect_eq(perf_record_parse(&l, r.b, r.n, &out, &why), 0);
    cr_expect_not_null(why);

    cr_expect_eq(perf_record_parse(&l, r.b, r.n - 8, &out, &why), 0, "cut short");
    cr_expect_eq(perf_record_parse(&l, r.b, 4, &out, &why), 0, "no header");

    begin(&r, PERF_RECORD_COMM, 0);
    put32(&r, 1);
    put32(&r, 1);
    put(&r, "abcdefgh", 8); /* no NUL before the trailer */
    put32(&r, 1);
    put32(&r, 1);
    put64(&r, 5);
    end(&r);
    cr_expect_eq(perf_record_parse(&l, r.b, r.n, &out, &why), 0, "a name without its NUL");

    uint8_t tiny[8] = {9, 0, 0, 0, 0, 0, 4, 0}; /* size 4 < header */
    cr_expect_eq(perf_record_parse(&l, tiny, sizeof(tiny), &out, &why), 0);
}

Test(perf_records, attributes_say_what_their_records_hold)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER;
    a.sample_regs_user = 0xff;
    a.sample_id_all = 1;
    a.use_clockid = 1;
    a.clockid = 1;
    struct perf_layout l;
    const char *why = NULL;
    cr_assert_eq(perf_layout_from_attr((const uint8_t *)&a, sizeof(a), &l, &why), 0);
    cr_expect(l.sample_id_all && l.use_clockid && l.clockid == 1 && l.regs_user_mask == 0xff);
    cr_expect(l.type == PERF_TYPE_SOFTWARE && l.config == PERF_COUNT_SW_TASK_CLOCK);
    /* An attr from before sample_regs_user cannot describe REGS_USER. */
    cr_expect_eq(perf_layout_from_attr((const uint8_t *)&a, 64, &l, &why), -1);
    cr_expect_eq(perf_layout_from_attr((const uint8_t *)&a, 32, &l, &why), -1);
}

Test(offcpu, the_kernels_syscall_file)
{
    const char *blocked = "7 0x7ffd1 0x1 0x3e8 0x0 0x0 0x0 0x7ffc9a8e3d40 0x7f5e4b6f2d7f\n";
    struct offcpu_look l = offcpu_parse(blocked, strlen(blocked));
    cr_expect_eq(l.state, OFFCPU_IN_SYSCALL);
    cr_expect_eq(l.syscall, 7);
    cr_expect_eq(l.sp, 0x7ffc9a8e3d40);
    cr_expect_eq(l.pc, 0x7f5e4b6f2d7f);

    const char *stopped = "-1 0x7ffc9a8e3d40 0x401000\n";
    l = offcpu_parse(stopped, strlen(stopped));
    cr_expect_eq(l.state, OFFCPU_BLOCKED);
    cr_expect_eq(l.syscall, -1);
    cr_expect_eq(l.pc, 0x401000);

    l = offcpu_parse("running\n", 8);
    cr_expect_eq(l.state, OFFCPU_RUNNING);
    l = offcpu_parse("7 0x1 0x2\n", 10);
    cr_expect_eq(l.state, OFFCPU_RUNNING, "too few fields: nothing known");
    l = offcpu_parse("99999 0 0 0 0 0 0 0x1 0x2\n", 26);
    cr_expect_eq(l.state, OFFCPU_RUNNING, "not a system call number");
}

Test(perf_counters, names_aliases_and_limits)
{
    struct perf_counter_list list;
    cr_assert_eq(perf_counters_parse("page-faults,cs,cycles", &list), 0);
    cr_expect_eq(list.n, 3);
    cr_expect_str_eq(list.c[1]->name, "context-switches");
    cr_expect(perf_counter_is_hardware(list.c[2]));
    cr_expect(!perf_counter_is_hardware(list.c[0]));
    cr_expect_eq(perf_counters_parse("page-faults,,cs", &list), -1, "an empty name");
    cr_expect_eq(perf_counters_parse("faults,page-faults", &list), -1, "the same event twice");
    cr_expect_eq(perf_counters_parse("cycles:u", &list), -1, "modifiers are not perf's here");
    cr_expect_eq(perf_counters_parse("page-faults,minor-faults,major-faults,cs,migrations,"
                                     "task-clock,cpu-clock,alignment-faults,emulation-faults",
                                     &list),
                 -1, "more than PERF_COUNTERS_MAX");
}

Test(maps, a_new_mapping_replaces_what_it_overlaps)
{
    struct map_list m = {0};
    struct map_entry a = {.start = 0x1000, .end = 0x3000, .path = "a"};
    struct map_entry b = {.start = 0x5000, .end = 0x6000, .path = "b"};
    struct map_entry c = {.start = 0x2000, .end = 0x4000, .path = "c"};
    maps_replace(&m, &b);
    maps_replace(&m, &a);
    cr_assert_eq(m.count, 2);
    cr_expect_str_eq(m.entries[0].path, "a", "kept in order of start");
    maps_replace(&m, &c);
    cr_assert_eq(m.count, 2, "c ends a (overlapping) and keeps b");
    cr_expect_str_eq(m.entries[0].path, "c");
    cr_expect_str_eq(m.entries[1].path, "b");
    maps_clear(&m);
}
