/* stack_snapshot.c - see stack.h: the snapshot's buffer and the names of
 * the stack modes. */
#include "unwind/stack.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {
    [STACK_NONE] = "none",
    [STACK_FP] = "fp",
    [STACK_DWARF] = "dwarf",
};

int stack_mode_parse(const char *name, enum stack_mode *mode)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *mode = (enum stack_mode)i;
            return 0;
        }
    }
    return -1;
}

const char *stack_mode_name(enum stack_mode mode)
{
    if ((size_t)mode < sizeof(mode_names) / sizeof(mode_names[0]))
        return mode_names[mode];
    return "?";
}

void stack_snapshot_init(struct stack_snapshot *s, size_t copy_size)
{
    memset(s, 0, sizeof(*s));
    if (copy_size == 0 || copy_size > STACK_COPY_MAX)
        copy_size = copy_size == 0 ? STACK_COPY_DEFAULT : STACK_COPY_MAX;
    s->data = xmalloc(copy_size);
    s->capacity = copy_size;
}

void stack_snapshot_free(struct stack_snapshot *s)
{
    free(s->data);
    memset(s, 0, sizeof(*s));
}

void stack_snapshot_reserve(struct stack_snapshot *s, size_t size)
{
    if (size > STACK_COPY_MAX)
        size = STACK_COPY_MAX;
    if (size <= s->capacity)
        return;
    free(s->data);
    s->data = xmalloc(size);
    s->capacity = size;
    s->size = 0;
}
