/*
 * flamegraph_svg.h - a call tree as one self-contained, interactive SVG
 * flame graph (docs/flamegraph.md).
 *
 * Contract: flamegraph_svg() lays out T (analyze/flame.h) by O->metric and
 * writes one SVG document to OUT: inline CSS and one inline script (our
 * constant code, render/svg.h), no external resource.
 *  - Every frame is a <g> holding a <title> (tooltip: the frame's name, the
 *    other key components, samples, the metric's value and its share of
 *    the total; with a baseline, the baseline's share and the change), a
 *    <rect> whose width is proportional to the frame's total, and a <text>
 *    label when at least three characters fit.  Frames are in depth-first
 *    order inside <g id="f">; the first is the root ("all").  Inlined
 *    frames have class "i" (drawn with a dashed outline, italic label) and
 *    "(inlined)" in their tooltip.
 *  - Frames narrower than O->min_px pixels are left out with what is
 *    above them (flame.h: their value stays inside their parent).
 *  - Colours: a warm hue per name (a hash: stable across runs and files),
 *    or with O->colour_by_binary a hue per binary (the key's binary
 *    component; names without one keep the warm hue), greys for bracketed
 *    pseudo-frames ("[unknown]", "[syscall read]"); with
 *    BASELINE, white to red for frames whose share of the whole grew, white
 *    to blue for those that shrank, the strongest change at full colour.
 *  - With BASELINE, the paths only the baseline has are drawn as removed
 *    time (flame.h): frames of class "rm" (dotted, translucent), blue as a
 *    share shrunk to nothing, their tooltip the baseline's figures.  Every
 *    frame then carries data-v, its own value in pixels (its width holds
 *    removed time too), and the search's "Matched" counts those values:
 *    the new profile's time only.
 *  - O->icicle draws the root at the top, callees below.
 *  - The script: click a frame to zoom (it spans the width, its callers
 *    dimmed above, everything else hidden), "Reset Zoom" or Escape to go
 *    back; "Search" or Ctrl-F asks for a regular expression (a plain
 *    substring when it does not compile), highlights the frames whose name
 *    matches and shows "Matched: P%", their share of the total counting
 *    nested matches once.  The URL query drives it too: ?s=REGEX searches
 *    and ?z=N zooms to frame N (depth-first index) on load.  Hovering shows
 *    the tooltip's text on the details line.  Names reach the script only
 *    through the DOM's text (never inside script source), so no name can
 *    run code.
 *  - Every string from the profile, and TITLE/SUBTITLE, is escaped with
 *    svg_text(): the document is well-formed whatever the names hold.
 * Returns 0, or -1 when T has nothing to draw (no positive total of the
 * metric: a message says so) or writing failed (ferror(OUT)).
 */
#ifndef PTPROF_RENDER_FLAMEGRAPH_SVG_H
#define PTPROF_RENDER_FLAMEGRAPH_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/calltree.h"

struct flamegraph_options {
    struct metric metric; /* additive: flame_metric_ok() */
    bool icicle;
    bool colour_by_binary;
    const char *title;    /* NULL: "Flame Graph", "Icicle Graph" or "Differential ..." */
    const char *subtitle; /* NULL: none */
    double width;         /* pixels; 0: 1200 */
    double min_px;        /* 0: 0.1 */
};

/* The narrowest share of the whole a frame may have and be drawn by O:
 * its min_px of the width the root spans. */
double flamegraph_min_fraction(const struct flamegraph_options *o);
int flamegraph_svg(FILE *out, const struct calltree *t, const struct calltree *baseline,
                   const struct flamegraph_options *o);

#endif
