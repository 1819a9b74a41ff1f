/*
 * pprof_wire.h - the protobuf wire layer of a pprof profile.proto, checked
 * byte by byte before anything is decoded (interop/pprof.proto gives the
 * messages).
 *
 * Why a checker of our own next to protobuf-c: protobuf-c says only "it
 * failed", while our errors name the offset where a file goes wrong, and
 * detection by content must tell a profile.proto from every other file
 * without decoding (allocating) anything.
 *
 * Contract: pprof_wire_check() walks DATA as a Profile message and, inside
 * it, every field the schema declares as a message (sample types,
 * samples and their labels, mappings, locations and their lines,
 * functions, the period type).  It accepts only well-formed protobuf:
 * field numbers from 1, wire types 0, 1, 2 and 5 (no groups), varints of
 * at most 10 bytes, lengths inside their enclosing message, and for a
 * field the schema knows, the wire type the schema gives it (a repeated
 * number also packed, wire type 2, made of whole varints).  Unknown fields
 * are skipped, as protobuf readers do.  It also asks what every pprof
 * writer does: the string table is present and its first entry is "".
 * On success it returns 0 and, when OFFSETS is not NULL, fills it with the
 * byte offset of every sample type, sample, mapping, location and function
 * in file order (so later errors can name where an element is; read them
 * with pprof_offset()); the arrays are bounded by the input (an element
 * takes 2 bytes at least) and sized exactly, 4 bytes an offset when the
 * input is under 4 GiB (a file of tiny samples has one every 15 bytes).
 * On failure it returns -1 after "NAME: offset N: what is wrong" through
 * pt_err(), or silently when NAME is NULL (detection).
 *
 * pprof_wire_starts_like() is true when DATA begins with what every pprof
 * writer puts first, a complete sample type (field 1: a ValueType made of
 * its two numbers only), or its type and unit followed by something else
 * (its length is damaged): a file cut short or damaged further on is still
 * told apart as pprof, so its error can say where it breaks.  No text and
 * none of the other formats ptprof reads begin that way (a 0x0a byte, a
 * length, then 0x08 or 0x10 tags).
 */
#ifndef PTPROF_INTEROP_PPROF_WIRE_H
#define PTPROF_INTEROP_PPROF_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Top-level repeated fields whose elements' offsets are kept. */
enum pprof_element {
    PPROF_EL_SAMPLE_TYPE,
    PPROF_EL_SAMPLE,
    PPROF_EL_MAPPING,
    PPROF_EL_LOCATION,
    PPROF_EL_FUNCTION,
    PPROF_EL_COUNT,
};

/* Arrays of file offsets, 4 bytes an offset in a file under 4 GiB
 * (NARROW), else a size_t: a large file of many tiny samples keeps one
 * per sample (issue 19). */
static inline size_t pprof_offset_width(bool narrow)
{
    return narrow ? sizeof(uint32_t) : sizeof(size_t);
}

static inline size_t pprof_offset_get(const void *at, bool narrow, size_t i)
{
    return narrow ? ((const uint32_t *)at)[i] : ((const size_t *)at)[i];
}

static inline void pprof_offset_put(void *at, bool narrow, size_t i, size_t off)
{
    if (narrow)
        ((uint32_t *)at)[i] = (uint32_t)off;
    else
        ((size_t *)at)[i] = off;
}

struct pprof_offsets {
    void *at[PPROF_EL_COUNT]; /* offsets of the field tags, file order: */
    bool narrow;              /* uint32_t when true, else size_t */
    size_t n[PPROF_EL_COUNT];
    size_t cap[PPROF_EL_COUNT];
};

int pprof_wire_check(const char *name, const void *data, size_t len, struct pprof_offsets *offsets);
bool pprof_wire_starts_like(const void *data, size_t len);
void pprof_offsets_free(struct pprof_offsets *o);
/* Frees the offsets of kind K alone: pprof_offset() answers 0 for it then. */
void pprof_offsets_drop(struct pprof_offsets *o, enum pprof_element k);
/* The offset of element I of kind K, or 0 when there is none. */
size_t pprof_offset(const struct pprof_offsets *o, enum pprof_element k, size_t i);

#endif
