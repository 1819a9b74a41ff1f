/*
 * timeline_svg.h - a timeline (analyze/timeline.h) drawn as SVG: a title
 * line (program, duration, samples, achieved frequency, latency per
 * sample), one chart per channel (the min-max band and the mean line, a
 * value axis in the channel's unit), one lane per thread coloured by key,
 * time axes in seconds, and a legend of the keys with the most thread
 * time (the rest summed as "other").  Also as a self-contained HTML page
 * (no script, no network) holding that picture (docs/timeline.md).
 *
 * Contract: every string from the profile (program, channel names and
 * units, thread names, keys) goes through render/svg.h, so the output is
 * well-formed XML (and HTML) whatever it holds; long names are cut with
 * "..." and show whole in no more than one tooltip each.  A key's colour
 * depends only on its displayed name (svg_hash), so it is the same in every
 * picture.  The plot has one pixel per timeline column: build the timeline
 * with timeline_svg_columns(WIDTH) columns for a picture WIDTH pixels wide.
 *
 * timeline_svg_element() writes the <svg> element alone (namespaced, no XML
 * declaration), so pages can embed it; O->id (NULL: "ptprof-timeline")
 * is its id.  timeline_svg_width() and timeline_svg_height() are its size
 * in pixels.  timeline_svg_write() writes a standalone SVG document and
 * timeline_html_write() an XHTML page (well-formed XML that browsers read as
 * HTML); both return 0, or -1 when writing to OUT failed.
 */
#ifndef PTPROF_RENDER_TIMELINE_SVG_H
#define PTPROF_RENDER_TIMELINE_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "analyze/timeline.h"

#define TIMELINE_SVG_MIN_WIDTH 400
#define TIMELINE_SVG_MAX_WIDTH 20000

struct timeline_svg_options {
    size_t legend_keys; /* keys named in the legend (0: 20) */
    const char *id;
};

unsigned timeline_svg_columns(unsigned width);
unsigned timeline_svg_width(const struct timeline *t);
double timeline_svg_height(const struct timeline *t, const struct timeline_svg_options *o);
void timeline_svg_element(FILE *out, const struct timeline *t,
                          const struct timeline_svg_options *o);
int timeline_svg_write(FILE *out, const struct timeline *t, const struct timeline_svg_options *o);
int timeline_html_write(FILE *out, const struct timeline *t, const struct timeline_svg_options *o);

#endif
