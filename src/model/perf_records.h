/*
 * perf_records.h - the records the kernel writes into perf_event ring
 * buffers, which are also the data section of a perf.data file.
 *
 * Contract: perf_layout_from_attr() takes the fields of a
 * perf_event_attr that decide what a record holds (given as raw bytes of
 * ATTR_SIZE, so an attr written by another kernel or perf version is read
 * without trusting its size); perf_record_parse() decodes one record of
 * that layout from untrusted bytes.  Nothing is allocated and nothing is
 * read beyond the record's own header.size: a field that does not fit, a
 * count larger than the record, a string without its NUL is refused with
 * a reason.  Variable parts (call chain, registers, stack, read values,
 * strings) point into the record's bytes, which may be unaligned: read
 * them with perf_u64() and friends.  Only little-endian data is handled.
 *
 * The sample layout, in the kernel's order (include/uapi/linux/
 * perf_event.h): IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
 * PERIOD, READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, STACK_USER,
 * WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR, PHYS_ADDR, CGROUP,
 * DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX.  Other records end with the
 * sample_id_all trailer (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER) when
 * the attr asks for it.
 */
#ifndef PTPROF_MODEL_PERF_RECORDS_H
#define PTPROF_MODEL_PERF_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Record types (PERF_RECORD_*) this parser decodes; others are skipped
 * by their size. */
enum perf_rec_type {
    PERF_REC_MMAP = 1,
    PERF_REC_LOST = 2,
    PERF_REC_COMM = 3,
    PERF_REC_EXIT = 4,
    PERF_REC_THROTTLE = 5,
    PERF_REC_UNTHROTTLE = 6,
    PERF_REC_FORK = 7,
    PERF_REC_SAMPLE = 9,
    PERF_REC_MMAP2 = 10,
    PERF_REC_LOST_SAMPLES = 13,
    PERF_REC_SWITCH = 14, /* the sampled thread's own context switches */
};

/* header.misc bits that matter here. */
#define PERF_REC_MISC_COMM_EXEC (1u << 13)
/* SWITCH: the thread leaves its CPU (else it comes on), and was preempted
 * (still runnable) rather than going to sleep. */
#define PERF_REC_MISC_SWITCH_OUT (1u << 13)
#define PERF_REC_MISC_SWITCH_OUT_PREEMPT (1u << 14)
#define PERF_REC_MISC_MMAP_BUILD_ID (1u << 14)

/* The size of the record header (type u32, misc u16, size u16). */
#define PERF_REC_HEADER_SIZE 8u

struct perf_layout {
    uint64_t sample_type;
    uint64_t read_format;
    uint64_t branch_sample_type;
    uint64_t regs_user_mask;
    uint64_t regs_intr_mask;
    bool sample_id_all;
    /* Not layout, but what the records mean. */
    uint32_t type;
    uint64_t config;
    uint64_t period; /* sample_period, or sample_freq with freq */
    bool freq;
    bool use_clockid;
    int32_t clockid;
    bool exclude_kernel;
};

/*
 * Fill *L from ATTR (ATTR_SIZE bytes of a struct perf_event_attr, as in
 * a perf.data file).  Returns 0, or -1 with *WHY set when the attr is too
 * short to say what its records hold.
 */
int perf_layout_from_attr(const uint8_t *attr, size_t attr_size, struct perf_layout *l,
                          const char **why);

/* Bytes of the sample_id_all trailer of a non-sample record. */
size_t perf_layout_id_trailer_size(const struct perf_layout *l);

static inline uint64_t perf_u64(const uint8_t *p, size_t index)
{
    uint64_t v;
    memcpy(&v, p + index * 8, 8);
    return v;
}

struct perf_read_values {
    uint64_t nr; /* values (one without PERF_FORMAT_GROUP) */
    uint64_t time_enabled, time_running;
    const uint8_t *entries; /* nr x stride bytes: value, [id], [lost] */
    unsigned stride;        /* in u64 words */
};

/* The I-th value of a read (and its id when the format has one). */
uint64_t perf_read_value(const struct perf_read_values *r, uint64_t i, uint64_t *id);

struct perf_sample {
    uint64_t identifier, ip, time, addr, id, stream_id, period;
    uint32_t pid, tid, cpu;
    struct perf_read_values read;
    uint64_t callchain_nr;
    const uint8_t *callchain; /* callchain_nr u64s, with PERF_CONTEXT_* markers */
    uint64_t regs_abi;        /* 0: no registers (a kernel thread) */
    unsigned nregs;           /* popcount of the user register mask */
    const uint8_t *regs;      /* nregs u64s, in mask bit order */
    uint64_t stack_size;      /* bytes of user stack */
    uint64_t stack_requested; /* bytes the sample had room for (its static size) */
    const uint8_t *stack;
};

struct perf_mmap {
    uint32_t pid, tid;
    uint64_t addr, len, pgoff;
    bool mmap2;
    bool has_build_id; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
    uint32_t maj, min;
    uint64_t ino, ino_generation;
    uint8_t build_id_size;
    const uint8_t *build_id;
    uint32_t prot, flags;
    const char *filename; /* NUL-terminated inside the record */
};

struct perf_comm {
    uint32_t pid, tid;
    bool exec;
    const char *comm; /* NUL-terminated inside the record */
};

struct perf_task { /* FORK and EXIT */
    uint32_t pid, ppid, tid, ptid;
    uint64_t time;
};

struct perf_record {
    uint32_t type;
    uint16_t misc, size;
    /* From the sample fields or the sample_id_all trailer, when present. */
    bool has_time, has_tid;
    uint64_t time;
    uint32_t pid, tid;
    union {
        struct perf_sample sample;
        struct perf_mmap mmap;
        struct perf_comm comm;
        struct perf_task task;
        struct {
            uint64_t id, lost;
        } lost;           /* LOST */
        uint64_t dropped; /* LOST_SAMPLES */
    } u;
};

/*
 * Decode the record at DATA (AVAIL bytes available).  Returns the
 * record's size (at least 8) with *OUT filled for the types above (other
 * types: only type, misc and size), or 0 with *WHY set when the bytes do
 * not hold a valid record of layout L.
 */
size_t perf_record_parse(const struct perf_layout *l, const uint8_t *data, size_t avail,
                         struct perf_record *out, const char **why);

/* What a reader does with each kind of record; NULL members skip it. */
struct perf_record_visitor {
    void (*sample)(void *ctx, const struct perf_record *r);
    void (*mmap)(void *ctx, const struct perf_record *r); /* MMAP and MMAP2 */
    void (*comm)(void *ctx, const struct perf_record *r);
    void (*fork)(void *ctx, const struct perf_record *r);
    void (*exit)(void *ctx, const struct perf_record *r);
    void (*lost)(void *ctx, uint64_t count); /* LOST and LOST_SAMPLES */
    void (*throttle)(void *ctx);
    void (*context_switch)(void *ctx, const struct perf_record *r); /* SWITCH: misc says which */
};

/* Hand R to the member of V its type calls for. */
void perf_record_visit(const struct perf_record *r, const struct perf_record_visitor *v, void *ctx);

/* Where the IDENTIFIER of a record sits (for choosing among layouts): the
 * first u64 of a sample, the last of any other record with a trailer. */
bool perf_record_identifier(const uint8_t *rec, size_t size, bool is_sample, uint64_t *id);

#endif
