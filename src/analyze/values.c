/* values.c - see values.h */
#include "analyze/values.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int value_columns_find(const struct value_columns *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->types[i].name, name) == 0)
            return (int)i;
    return -1;
}

int value_columns_add(struct value_columns *c, const struct prof_value_type *type, char **error)
{
    int k = value_columns_find(c, type->name);
    if (k >= 0) {
        const struct prof_value_type *had = &c->types[k];
        if (strcmp(had->unit, type->unit) == 0 && had->agg == type->agg)
            return k;
        *error = xasprintf(
            "the value '%s' is %s (%s) here but %s (%s) in an earlier profile", type->name,
            *type->unit ? type->unit : "without a unit", profile_value_agg_name(type->agg),
            *had->unit ? had->unit : "without a unit", profile_value_agg_name(had->agg));
        return -1;
    }
    c->types = xrealloc(c->types, (c->n + 1) * sizeof(*c->types));
    c->types[c->n] = (struct prof_value_type){xstrdup(type->name),
                                              xstrdup(type->unit ? type->unit : ""), type->agg};
    return (int)c->n++;
}

void value_columns_copy(struct value_columns *dst, const struct value_columns *src)
{
    dst->n = 0;
    dst->types = NULL;
    char *error = NULL;
    for (size_t i = 0; i < src->n; i++)
        value_columns_add(dst, &src->types[i], &error); /* distinct names: cannot fail */
    free(error);
}

void value_columns_free(struct value_columns *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->types[i].name);
        free(c->types[i].unit);
    }
    free(c->types);
    c->types = NULL;
    c->n = 0;
}
