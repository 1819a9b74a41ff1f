/*
 * interp_merge.c - an interpreter's frames merged into the native stack
 * (interp.h): each eval-loop frame gives way to the frames that call of the
 * eval loop runs, innermost call first.
 */
#include "record/interp/interp.h"

int interp_merge_stack(interp_is_eval_fn is_eval, const void *rt, const struct interp_stack *st,
                       uint64_t *pcs, int depth, int max)
{
    if (!st || st->n == 0 || max <= 0)
        return depth;
    uint64_t out[INTERP_MAX_FRAMES + 512];
    int cap = max < (int)(sizeof(out) / sizeof(*out)) ? max : (int)(sizeof(out) / sizeof(*out));
    int n = 0;
    uint32_t next = 0; /* the first interpreter frame not placed yet */
    for (int k = 0; k < depth && n < cap; k++) {
        if (next < st->n && is_eval(rt, pcs[k], k > 0)) {
            /* This eval-loop call runs the frames up to the next entry. */
            while (next < st->n && n < cap) {
                bool entry = st->frames[next].entry;
                out[n++] = st->frames[next++].pc;
                if (entry)
                    break;
            }
            continue;
        }
        out[n++] = pcs[k];
    }
    /* Frames whose eval-loop call the native stack does not reach: it was
     * cut short, or its unwinding failed. */
    while (next < st->n && n < cap)
        out[n++] = st->frames[next++].pc;
    for (int k = 0; k < n; k++)
        pcs[k] = out[k];
    return n;
}
