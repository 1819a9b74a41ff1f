/*
 * native_records.h - the record layer of the native format, shared by its
 * reader and writer only (docs/format.md is the specification): record
 * type numbers and the sizes and limits both sides must agree on.
 */
#ifndef PTPROF_FORMAT_NATIVE_RECORDS_H
#define PTPROF_FORMAT_NATIVE_RECORDS_H

enum native_record_type {
    REC_META = 1,
    REC_CHANNEL = 2,
    REC_PROCESS = 3,
    REC_EXEC = 4,
    REC_EXIT = 5,
    REC_THREAD = 6,
    REC_THREAD_EXIT = 7,
    REC_MAP = 8,
    REC_UNMAP = 9,
    REC_IMAGE = 10,
    REC_STACK = 11,
    REC_SAMPLE = 12,
    REC_END = 13,
    REC_VALUE_TYPE = 14, /* since 1.1 */
    REC_LOCATION = 64,   /* .pbin symbol tables */
};

#define FILE_HEADER_SIZE 16u
#define REC_HEADER_SIZE 8u
#define REC_CRITICAL 1u /* flag: a reader that does not know the type must stop */
#define PAYLOAD_MAX (64u << 20)
#define STRING_MAX (1u << 20)
#define STACK_DEPTH_MAX 4096u
#define THREAD_SIZE 36u /* one thread of a SAMPLE */
/* A VALUE_TYPE's fixed fields (id, aggregation) before its two strings. */
#define VALUE_TYPE_FIXED 8u
/* A LOCATION's fixed fields (pid, pc, flags, offset, frame count), and per
 * frame its five string lengths, line and inlined byte. */
#define LOCATION_FIXED (4u + 8u + 1u + 8u + 4u)
#define FRAME_STRINGS 5u
#define FRAME_FIXED (FRAME_STRINGS * 4u + 4u + 1u)
#define LOCATION_RETURN_ADDRESS 1u

#endif
