/* table.c - see table.h */
#include "render/table.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int row_cmp(const void *pa, const void *pb)
{
    const struct flat_row *a = *(const struct flat_row *const *)pa;
    const struct flat_row *b = *(const struct flat_row *const *)pb;
    if (a->cpu_ns != b->cpu_ns)
        return a->cpu_ns > b->cpu_ns ? -1 : 1;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    int c = strcmp(a->binary, b->binary);
    return c ? c : strcmp(a->function, b->function);
}

static double seconds(uint64_t ns)
{
    return (double)ns / 1e9;
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int digits(uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static void print_totals(FILE *out, const struct flat_profile *fp)
{
    fprintf(out, "samples: %llu (%llu thread samples)", (unsigned long long)fp->samples,
            (unsigned long long)fp->thread_samples);
    if (fp->wall_ns) {
        double wall = seconds(fp->wall_ns);
        fprintf(out, ", wall time: %.3f s, frequency: %.1f Hz", wall,
                (double)fp->recorded_samples / wall);
        if (fp->frequency > 0)
            fprintf(out, " (%g requested)", fp->frequency);
    } else {
        fprintf(out, ", wall time: unknown");
        if (fp->frequency > 0)
            fprintf(out, ", frequency: %g Hz requested", fp->frequency);
    }
    if (fp->has_totals && fp->recorded_samples)
        fprintf(out, ", latency: %.1f us/sample",
                (double)fp->latency_ns / 1e3 / (double)fp->recorded_samples);
    fprintf(out, ", cpu time: %.3f s\n", seconds(fp->cpu_ns));
    if (!fp->has_totals)
        fprintf(out, "note: the recorder did not finish (the profile is cut short); wall time "
                     "and frequency are estimated from its samples\n");
    else if (fp->truncated)
        fprintf(out, "note: the profile is damaged; the samples after the damage are missing\n");
}

static void print_text(FILE *out, const struct flat_profile *fp, struct flat_row **rows,
                       size_t shown)
{
    /* Column widths from the widest value shown, never narrower than the
     * column's title. */
    int w_cpu = (int)strlen("cpu time s"), w_samples = (int)strlen("samples");
    int w_binary = (int)strlen("binary");
    for (size_t i = 0; i < shown; i++) {
        int w = digits(rows[i]->cpu_ns / 1000000000u) + 4;
        if (w > w_cpu)
            w_cpu = w;
        if (digits(rows[i]->samples) > w_samples)
            w_samples = digits(rows[i]->samples);
        if ((int)strlen(rows[i]->binary) > w_binary)
            w_binary = (int)strlen(rows[i]->binary);
    }
    print_totals(out, fp);
    fprintf(out, "\n%*s  %7s  %*s  %-*s  %s\n", w_cpu, "cpu time s", "cpu %", w_samples, "samples",
            w_binary, "binary", "function");
    for (size_t i = 0; i < shown; i++) {
        const struct flat_row *r = rows[i];
        fprintf(out, "%*.3f  %6.2f%%  %*llu  %-*s  %s\n", w_cpu, seconds(r->cpu_ns),
                percent(r->cpu_ns, fp->cpu_ns), w_samples, (unsigned long long)r->samples, w_binary,
                r->binary, r->function);
    }
    if (shown < fp->count) {
        uint64_t rest = 0;
        for (size_t i = shown; i < fp->count; i++)
            rest += rows[i]->cpu_ns;
        size_t more = fp->count - shown;
        fprintf(out, "(%zu more row%s with %.3f s of cpu time not shown)\n", more,
                more == 1 ? "" : "s", seconds(rest));
    }
}

/* RFC 4180: quote a field holding a comma, quote or line break. */
static void csv_field(FILE *out, const char *a, const char *sep, const char *b)
{
    char *s = xasprintf("%s%s%s", a, sep, b);
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', out);
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    free(s);
}

static void print_csv(FILE *out, const struct flat_profile *fp, struct flat_row **rows,
                      size_t shown)
{
    fprintf(out, "binary:procedure,samples,cpu_time,cpu_time_pct\n");
    for (size_t i = 0; i < shown; i++) {
        const struct flat_row *r = rows[i];
        csv_field(out, r->binary, ":", r->function);
        fprintf(out, ",%llu,%.9f,%.6f\n", (unsigned long long)r->samples, seconds(r->cpu_ns),
                percent(r->cpu_ns, fp->cpu_ns));
    }
}

int render_flat_profile(FILE *out, const struct flat_profile *fp, enum table_format format,
                        size_t limit)
{
    struct flat_row **rows = xcalloc(fp->count, sizeof(*rows));
    for (size_t i = 0; i < fp->count; i++)
        rows[i] = &fp->rows[i];
    qsort(rows, fp->count, sizeof(*rows), row_cmp);
    size_t shown = limit > 0 && limit < fp->count ? limit : fp->count;

    if (format == TABLE_CSV)
        print_csv(out, fp, rows, shown);
    else
        print_text(out, fp, rows, shown);
    free(rows);
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
