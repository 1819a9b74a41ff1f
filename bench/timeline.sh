#!/usr/bin/env bash
# bench/timeline.sh - ptprof timeline on a profile of a million thread
# samples (docs/timeline.md, "Benchmark").
# Usage: bench/timeline.sh [BUILD_DIR]   (default build)
#
# Writes a self-contained profile of TIMELINE_BENCH_SAMPLES (1000000)
# thread samples, 8 threads at 1 kHz with a power channel, with ptprof's own
# native writer (bench/timeline_gen.c, linked with BUILD_DIR/libptprof.a),
# then times `ptprof timeline FILE -o OUT.svg` and `-o OUT.html` (BENCH_REPS
# runs, 3 by default, median) and gives the pictures' sizes.  No other tool
# draws this view, so the reference row is `ptprof report` on the same file:
# the load, symbolization and walk alone.  Targets: under 2 s, SVG under
# 10 MB.  Prints a Markdown section on stdout and progress on stderr.  Never
# fails on a missed target (MISS) or a missing piece (n/a); exit 1 only when
# it cannot build its generator.
# Environment: TIMELINE_BENCH_SAMPLES, BENCH_REPS.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

SAMPLES=${TIMELINE_BENCH_SAMPLES:-1000000}
REPS=${BENCH_REPS:-3}
TARGET_S=2
TARGET_MB=10
PTPROF=$BUILD/ptprof

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-timeline-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## Timeline of a million thread samples: ptprof timeline\n\n'
}

not_available() {
    section
    printf 'n/a: %s\n\n' "$1"
    say "bench: timeline: n/a: $1"
    exit 0
}

[ -x "$PTPROF" ] || not_available "$PTPROF is not built"
[ -e "$BUILD/libptprof.a" ] || not_available "$BUILD/libptprof.a is not built (make)"

mkdir -p "$BUILD/bench"
GEN=$BUILD/bench/timeline_gen
# shellcheck disable=SC2046 # pkg-config's flags are words
if ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -o "$GEN" bench/timeline_gen.c \
    "$BUILD/libptprof.a" $(pkg-config --libs libdw libelf zlib libzstd) -lbz2 -lstdc++ -lpthread -lm; then
    say "bench: cannot build bench/timeline_gen.c"
    exit 1
fi

say "bench: timeline: writing a profile of $SAMPLES thread samples"
PROFILE=$TMP/big.pbin
"$GEN" "$PROFILE" "$SAMPLES" 8 || not_available "timeline_gen failed"
BYTES=$(stat -c %s "$PROFILE")

# --- timing ----------------------------------------------------------------------

# run_timed OUT ERR CMD...: "wall cpu" in seconds (cpu = user + system); empty when CMD fails.
run_timed() {
    local out=$1 err=$2 t
    shift 2
    t=$({ TIMEFORMAT='%R %U %S'; time "$@" >"$out" 2>"$err"; } 2>&1) || return 1
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: BENCH_REPS runs; "wall cpu" medians into $TMP/NAME.result.
measure() {
    local name=$1 i
    shift
    : >"$TMP/$name.times"
    for ((i = 1; i <= REPS; i++)); do
        say "bench: timeline: $name, run $i of $REPS"
        if ! run_timed "$TMP/$name.out" "$TMP/$name.err" "$@" >>"$TMP/$name.times"; then
            say "bench: timeline: $name failed: $(head -3 "$TMP/$name.err")"
            return 1
        fi
    done
    printf '%s %s\n' "$(cut -d' ' -f1 "$TMP/$name.times" | median)" \
        "$(cut -d' ' -f2 "$TMP/$name.times" | median)" >"$TMP/$name.result"
}

measure svg "$PTPROF" timeline "$PROFILE" -o "$TMP/t.svg" --no-cache ||
    not_available "ptprof timeline failed"
measure html "$PTPROF" timeline "$PROFILE" -o "$TMP/t.html" --no-cache ||
    not_available "ptprof timeline (HTML) failed"
measure report "$PTPROF" report "$PROFILE" --no-cache || not_available "ptprof report failed"

SVG_BYTES=$(stat -c %s "$TMP/t.svg")
HTML_BYTES=$(stat -c %s "$TMP/t.html")
WELL_FORMED="not checked (no xmllint)"
if command -v xmllint >/dev/null; then
    if xmllint --noout --nonet "$TMP/t.svg" "$TMP/t.html" 2>/dev/null; then
        WELL_FORMED="both well-formed (xmllint)"
    else
        WELL_FORMED="**not well-formed** (xmllint)"
    fi
fi

read -r S_WALL S_CPU <"$TMP/svg.result"
read -r H_WALL H_CPU <"$TMP/html.result"
read -r R_WALL R_CPU <"$TMP/report.result"
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v < t) ? "OK" : "MISS" }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

section
printf 'Profile: %s thread samples (8 threads at 1 kHz, 300 functions, 2000 stacks, one power\n' \
    "$SAMPLES"
printf 'channel), %s bytes, written by `bench/timeline_gen.c`; pictures 1600 px wide, %s.\n' \
    "$BYTES" "$WELL_FORMED"
printf 'Load average at the end: %s.\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| command | wall s | CPU s | output MB |\n|---|---:|---:|---:|\n'
printf '| `ptprof timeline -o OUT.svg` (median of %s) | %s | %s | %s |\n' "$REPS" "$S_WALL" \
    "$S_CPU" "$(mb "$SVG_BYTES")"
printf '| `ptprof timeline -o OUT.html` (median of %s) | %s | %s | %s |\n' "$REPS" "$H_WALL" \
    "$H_CPU" "$(mb "$HTML_BYTES")"
printf '| `ptprof report` (the same walk, no picture) | %s | %s | – |\n\n' "$R_WALL" "$R_CPU"
printf 'Targets: under %s s: %s; SVG under %s MB: %s\n\n' "$TARGET_S" \
    "$(verdict "$S_WALL" "$TARGET_S")" "$TARGET_MB" \
    "$(verdict "$(mb "$SVG_BYTES")" "$TARGET_MB")"
