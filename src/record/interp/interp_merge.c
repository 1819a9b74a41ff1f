/*
 * interp_merge.c - an interpreter's frames merged into the native stack
 * (interp.h): each eval-loop frame gives way to the frames that call of the
 * eval loop runs, innermost call first.
 */
#include "record/interp/interp.h"

#include <string.h>

/* Native frames looked at: more than any unwinder here gives. */
#define NATIVE_MAX 1024

int interp_merge_stack(interp_is_eval_fn is_eval, const void *rt, const struct interp_stack *st,
                       uint64_t *pcs, int depth, int max)
{
    if (!st || st->n == 0 || max <= 0 || depth < 0)
        return depth;
    uint64_t native[NATIVE_MAX];
    if (depth > NATIVE_MAX)
        depth = NATIVE_MAX;
    memcpy(native, pcs, (size_t)depth * sizeof(*native));
    int n = 0;
    uint32_t next = 0; /* the first interpreter frame not placed yet */
    for (int k = 0; k < depth && n < max; k++) {
        if (next < st->n && is_eval(rt, native[k], k > 0)) {
            /* This eval-loop call runs the frames up to the next entry. */
            while (next < st->n && n < max) {
                bool entry = st->frames[next].entry;
                pcs[n++] = st->frames[next++].pc;
                if (entry)
                    break;
            }
            continue;
        }
        pcs[n++] = native[k];
    }
    /* Frames whose eval-loop call the native stack does not reach: it was
     * cut short, or its unwinding failed. */
    while (next < st->n && n < max)
        pcs[n++] = st->frames[next++].pc;
    return n;
}
