/*
 * browser.h - open a page (an SVG or HTML file we wrote) in headless
 * Chromium, as a person would in a browser, and look at what happened:
 * did it draw anything, did its scripts complain, what is the document
 * after its scripts ran.
 *
 * Contract:
 *  - browser_open() runs Chromium (PTPROF_CHROMIUM, else /usr/bin/chromium
 *    or /usr/bin/chromium-browser; Debian's "chromium" package) with
 *    --headless --no-sandbox --disable-gpu, a fresh --user-data-dir (and
 *    XDG cache/config directories) removed afterwards, on the file URL of
 *    O->path (made absolute; an "http://" URL as it is) followed by O->suffix ("?s=main", "#x",
 *    may be NULL), in an O->width x O->height window (default 1200 x 800).
 *    It takes a screenshot and dumps the DOM after the load event (and
 *    after O->virtual_time_ms of the page's timers when that is not 0).
 *    Every run has a timeout (O->timeout_s, default 90 s): a page that
 *    hangs fails the current Criterion test (spawn.h).
 *  - It returns true when Chromium ran and produced a screenshot that
 *    decodes; PAGE is filled either way (PAGE->why says what failed).
 *  - PAGE->console holds every console message of the page, one string
 *    each ("MESSAGE", source: URL (LINE)), uncaught exceptions included
 *    ("Uncaught ReferenceError: ..."), from Chromium's log on stderr.  The
 *    log does not tell console.log from console.error, so our pages log
 *    nothing: any message counts as a problem (browser_page_clean()).
 *  - PAGE->dom is the serialized document after the scripts ran;
 *    PAGE->parse_error is true when Chromium replaced or annotated the page
 *    with a <parsererror> (a document that is not well-formed XML).
 *  - PAGE->shot is the screenshot and PAGE->stats its colours (png.h);
 *    PAGE->blank is true when nothing was drawn: one colour, or fewer than
 *    0.2 % of the pixels differ from the background.
 *  - browser_page_clean() is ran && !blank && !parse_error && no console
 *    message; browser_page_describe() is a one-paragraph account for
 *    assertion messages (allocated).
 */
#ifndef PTPROF_TESTS_BROWSER_H
#define PTPROF_TESTS_BROWSER_H

#include <stdbool.h>
#include <stddef.h>

#include "png.h"

struct browser_opts {
    const char *path;   /* the file to open */
    const char *suffix; /* appended to the file URL: "?s=foo", "#frag"; may be NULL */
    int width, height;  /* 0: 1200 x 800 */
    int virtual_time_ms;
    double timeout_s;
    const char *screenshot; /* keep the PNG here too (NULL: a temporary, removed) */
};

struct browser_page {
    bool ran;
    char *why; /* when !ran */
    char **console;
    size_t nconsole;
    char *dom;
    bool parse_error;
    struct png_image shot;
    struct png_stats stats;
    bool blank;
    char *log; /* Chromium's whole stderr */
};

bool browser_available(void);
bool browser_open(const struct browser_opts *o, struct browser_page *page);
bool browser_page_clean(const struct browser_page *page);
char *browser_page_describe(const struct browser_page *page);
void browser_page_free(struct browser_page *page);

#endif
