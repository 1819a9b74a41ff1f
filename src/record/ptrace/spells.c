/*
 * spells.c - cutting a thread's interval between entries where it went
 * from running to waiting or back (spells.h).
 */
#include "record/ptrace/spells.h"

bool spell_entry_blocked(const struct prof_thread_sample *entry)
{
    return (entry->flags & (PROF_THREAD_IN_SYSCALL | PROF_THREAD_STOPPED)) != 0;
}

static bool same_place(const struct prof_thread_sample *a, const struct prof_thread_sample *b)
{
    return a->pc == b->pc && a->stack == b->stack && a->syscall == b->syscall &&
           a->flags == b->flags;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

bool spell_cut(const struct spell_mark *prev, const struct spell_mark *now, uint64_t *at_ns,
               struct prof_thread_sample *first)
{
    if (!prev->valid || !now->valid || now->time_ns <= prev->time_ns + 1 ||
        now->seen_ns <= prev->from_ns)
        return false;
    bool was_blocked = spell_entry_blocked(&prev->entry);
    bool is_blocked = spell_entry_blocked(&now->entry);
    bool moved_on = !was_blocked && !is_blocked && prev->callers && now->callers &&
                    prev->callers != now->callers;
    if (was_blocked == is_blocked && !moved_on &&
        (!was_blocked || same_place(&prev->entry, &now->entry)))
        return false;
    uint64_t ran = minus(now->cpu_ns, prev->cpu_ns);
    uint64_t queued = minus(now->wait_ns, prev->wait_ns);
    uint64_t span = now->seen_ns - prev->from_ns;
    /* The schedstat counts from PREV's from_ns to NOW's seen_ns, so what it
     * says is placed from those instants, not from the rounds' ticks: a
     * copy comes after its round's tick by the interrupt's way to the
     * thread and the CPU it waited for, and measured from the tick every
     * run after a wait came out that much longer (1.5-2.5 points of a
     * 3/2/5 ms round at 1 kHz, docs/recording.md). */
    uint64_t at;
    *first = prev->entry;
    if (moved_on) {
        /* Ran on in another call: each place half of the run, the cut in
         * the middle of the interval. */
        if (ran < 2)
            return false;
        at = prev->time_ns + (now->time_ns - prev->time_ns) / 2;
        first->cpu_ns = prev->cpu_ns + ran / 2;
    } else if (was_blocked && is_blocked) {
        /* From one wait to another: where the first ended is not known,
         * its expected place is the middle of the time blocked; the run
         * between them is the second's, whose code made its call. */
        at = prev->from_ns + minus(span, ran + queued) / 2;
        first->cpu_ns = prev->cpu_ns;
    } else if (!was_blocked) {
        /* Ran, then blocked: the wait is what the run and the queue for a
         * CPU leave of the span, at its end. */
        if (ran == 0)
            return false;
        at = minus(now->seen_ns, minus(span, ran + queued));
        first->cpu_ns = now->cpu_ns;
    } else {
        /* Waited, then ran: the run is the span's end, with the time
         * it was queued while running; the queue once woken is the
         * wait's.  The kernel counts the times the thread was put on a
         * CPU, not how long each queue was: the wait takes its share. */
        uint64_t runs = minus(now->runs, prev->runs);
        uint64_t preempted = runs > 1 ? queued - queued / runs : 0;
        uint64_t run = ran + preempted;
        at = minus(now->seen_ns, run);
        first->cpu_ns = prev->cpu_ns;
    }
    if (at <= prev->time_ns)
        at = prev->time_ns + 1;
    if (at >= now->time_ns)
        at = now->time_ns - 1;
    *at_ns = at;
    return true;
}

uint64_t spell_callers(const uint64_t *pcs, int depth)
{
    if (depth < 2)
        return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the return addresses */
    for (int i = 1; i < depth; i++) {
        h ^= pcs[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}
