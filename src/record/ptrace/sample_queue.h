/*
 * sample_queue.h - samples waiting for threads that stop late.
 *
 * A thread interrupted while it waits for a CPU stops only when it gets
 * one, which on a busy machine takes milliseconds; it runs none of its own
 * instructions meanwhile, so its copy, whenever it comes, is its state at
 * the sample.  Rather than keep the sampler waiting for it, a sample is
 * kept open with a placeholder for each such thread, later samples are
 * taken as usual (the thread is not interrupted again: the copy it owes
 * serves them too), and samples are written, in order, as soon as every
 * placeholder at the head of the queue is filled.
 *
 * Contract: sample_queue_open() starts a sample (time, a copy of the
 * channel values); sample_add() adds a finished thread sample to it,
 * sample_wait() a placeholder for TID.  sample_queue_fill() finishes every
 * placeholder of TID with TS; sample_queue_insert() puts a sample of one
 * thread in its place between queued ones; sample_queue_forget() drops them (the thread
 * is gone).  sample_queue_flush() writes the complete samples at the head
 * to the output, oldest first, and frees them.  Engine-neutral: no
 * ptrace here.
 */
#ifndef PTPROF_RECORD_PTRACE_SAMPLE_QUEUE_H
#define PTPROF_RECORD_PTRACE_SAMPLE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/profile.h"
#include "record/output.h"

/* At most this many samples wait at once; more means stops stopped coming. */
#define SAMPLE_QUEUE_MAX 64

struct open_sample {
    uint64_t time_ns;
    double *values;
    struct prof_thread_sample *threads;
    uint32_t nthreads, cap;
    uint32_t waiting; /* placeholders not filled yet */
};

struct sample_queue {
    struct open_sample samples[SAMPLE_QUEUE_MAX];
    size_t head, count;
    unsigned nchannels;
    uint64_t written_ns;    /* the last sample written (0: none yet)... */
    double *written_values; /* ...and its channel values */
    double *scratch;        /* nchannels, for sample_queue_insert() */
    bool *counter;          /* per channel: a running total */
};

/* COUNTER[c] (NULL: none) says channel C is a running total (energy in
 * J), whose reading between two samples is on the line between theirs;
 * another channel's reading (power, current) stands for the interval up
 * to it, so a sample inserted in an interval takes the next one's. */
void sample_queue_init(struct sample_queue *q, unsigned nchannels, const bool *counter);
void sample_queue_free(struct sample_queue *q);
bool sample_queue_full(const struct sample_queue *q);
/* The time of the newest sample queued, else of the last written (0: none);
 * sample_queue_insert() needs a queued sample after its time. */
uint64_t sample_queue_newest_ns(const struct sample_queue *q);
/* NULL when full. */
struct open_sample *sample_queue_open(struct sample_queue *q, uint64_t time_ns,
                                      const double *values);
void sample_add(struct open_sample *s, const struct prof_thread_sample *ts);
void sample_wait(struct open_sample *s, uint32_t pid, uint32_t tid);
/* Returns how many placeholders TS filled; *FIRST_NS and *LAST_NS (each
 * unless NULL) are then the times of the earliest and latest sample it
 * went into. */
size_t sample_queue_fill(struct sample_queue *q, const struct prof_thread_sample *ts,
                         uint64_t *first_ns, uint64_t *last_ns);
/* A sample of the one thread sample TS at TIME_NS, in its place among the
 * queued samples, its channel values those of the sample after it (of the
 * one before it when EARLIER: TS is the place that sample saw, and the
 * reading taken there is its), a counter's read off the line between the
 * samples before and after it (so an interval's energy divides between the
 * two by time).  False (nothing done) when the queue is full, when a
 * sample at or after TIME_NS was written already, or when no queued sample
 * comes after it. */
bool sample_queue_insert(struct sample_queue *q, uint64_t time_ns,
                         const struct prof_thread_sample *ts, bool earlier);
void sample_queue_forget(struct sample_queue *q, uint32_t tid);
/* Writes the complete samples at the head; returns how many, or -1 when
 * the output failed.  With FORCE, samples still waiting are written too,
 * without the threads they wait for. */
long sample_queue_flush(struct sample_queue *q, struct output *out, bool force);

#endif
