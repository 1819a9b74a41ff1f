/*
 * linereader.c - see linereader.h.  A line is looked for in what the
 * stream already decoded; only a line longer than that asks for more, in
 * doubling steps, and each byte is scanned for '\n' once.
 */
#include "util/linereader.h"
#include "util/log.h"

#include <string.h>

/* What is asked for first: more than most lines, less than a piece. */
#define FIRST_LOOK 4096

void line_reader_init(struct line_reader *r, struct instream *in)
{
    *r = (struct line_reader){.in = in};
}

int line_reader_next(struct line_reader *r, const char **line, size_t *len)
{
    instream_consume(r->in, r->pending);
    r->pending = 0;
    size_t want = FIRST_LOOK, scanned = 0;
    for (;;) {
        const unsigned char *d;
        size_t n = instream_peek(r->in, want, &d);
        const unsigned char *nl = memchr(d + scanned, '\n', n - scanned);
        if (nl) {
            r->lineno++;
            *line = (const char *)d;
            *len = (size_t)(nl - d);
            r->pending = *len + 1;
            return 1;
        }
        scanned = n;
        if (n < want) {
            /* The end of the data. */
            switch (instream_end(r->in)) {
            case INSTREAM_FAILED:
                pt_err("%s", instream_error(r->in));
                return -1;
            case INSTREAM_DAMAGED:
                return 0; /* a line cut by the damage is no line */
            default:
                if (n == 0)
                    return 0;
                r->lineno++;
                *line = (const char *)d;
                *len = n;
                r->pending = n;
                return 1;
            }
        }
        if (n > LINE_READER_MAX) {
            pt_err("%s:%llu: a line longer than %zu MiB, which no profile's text holds",
                   instream_name(r->in), (unsigned long long)r->lineno + 1, LINE_READER_MAX >> 20);
            return -1;
        }
        want = want < LINE_READER_MAX / 2 ? 2 * want : LINE_READER_MAX + 1;
    }
}
