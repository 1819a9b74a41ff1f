/* xalloc.c - see xalloc.h */
#include "util/xalloc.h"
#include "util/log.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *reading;

void xalloc_reading(const char *name)
{
    reading = name;
}

static void out_of_memory(size_t size)
{
    if (reading)
        pt_err("%s: out of memory allocating %zu bytes while reading it", reading, size);
    else
        pt_err("out of memory allocating %zu bytes", size);
    exit(70);
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *xgrow(void *ptr, size_t *capacity, size_t need, size_t size)
{
    if (need <= *capacity)
        return ptr;
    size_t cap = *capacity ? *capacity : 8;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            out_of_memory(SIZE_MAX);
        cap *= 2;
    }
    if (size && cap > SIZE_MAX / size)
        out_of_memory(SIZE_MAX);
    ptr = xrealloc(ptr, cap * size);
    *capacity = cap;
    return ptr;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory(strlen(fmt));
    return s;
}
