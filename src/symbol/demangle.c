/* demangle.c - see demangle.h */
#include "symbol/demangle.h"

#include <stddef.h>
#include <string.h>

/* libstdc++'s demangler (<cxxabi.h> is C++ only); the program links
 * -lstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
    /* Only the C++ ABI's prefix: __cxa_demangle would also "demangle" a
     * plain C name that happens to spell a type ("i" -> "int"). */
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    int status = 0;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? out : NULL;
}
