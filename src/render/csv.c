/* csv.c - see csv.h */
#include "render/csv.h"

#include <math.h>
#include <string.h>

void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

void csv_number(FILE *out, double v)
{
    if (isnan(v))
        fputs("nan", out);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", out);
    else
        fprintf(out, "%.9g", v == 0 ? 0.0 : v); /* no "-0" */
}
