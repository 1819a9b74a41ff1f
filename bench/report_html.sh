#!/usr/bin/env bash
# bench/report_html.sh - ptprof report --html on the two million-sample
# profiles of bench/ (docs/report.md, "The HTML page"): the native .pbin of
# bench/timeline_gen.c (1,000,000 thread samples, 8 threads, a power
# channel) and the gperftools profile that bench/gperftools_gen.c grows from
# a libprofiler profile of the callers workload (1,000,000 samples).
# Usage: bench/report_html.sh [BUILD_DIR]   (default build)
#
# The page needs the flat report, the flame graph and the timeline of each
# file: ptprof feeds all three from one walk.  The reference rows are
# `ptprof report FILE` (one walk, no figures) and, when REPORT_HTML_BEFORE
# names another ptprof binary (one that walked each file three times), the
# same page made by it.  BENCH_REPS runs (3) per row, medians.  Prints a
# Markdown section on stdout and progress on stderr; never fails on a
# missing piece (n/a); exit 1 only when it cannot build its generators.
# Environment: BENCH_REPS, REPORT_HTML_BEFORE, LIBPROFILER.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

REPS=${BENCH_REPS:-3}
SAMPLES=1000000
PTPROF=$BUILD/ptprof
BEFORE=${REPORT_HTML_BEFORE:-}
LIBPROFILER=${LIBPROFILER:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
WORKLOAD=$BUILD/workloads/callers

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-html-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## One walk for the HTML report: ptprof report --html\n\n'
}

not_available() {
    section
    printf 'n/a: %s\n\n' "$1"
    say "bench: report --html: n/a: $1"
    exit 0
}

[ -x "$PTPROF" ] || not_available "$PTPROF is not built"
[ -e "$BUILD/libptprof.a" ] || not_available "$BUILD/libptprof.a is not built (make)"

mkdir -p "$BUILD/bench"
# shellcheck disable=SC2046 # pkg-config's flags are words
if ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -o "$BUILD/bench/timeline_gen" \
    bench/timeline_gen.c "$BUILD/libptprof.a" $(pkg-config --libs libdw libelf zlib libzstd) \
    -lbz2 -lstdc++ -lpthread -lm ||
    ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$BUILD/bench/gperftools_gen" \
        bench/gperftools_gen.c -lm; then
    say "bench: cannot build bench/timeline_gen.c or bench/gperftools_gen.c"
    exit 1
fi

# --- the profiles --------------------------------------------------------------

say "bench: report --html: writing a native profile of $SAMPLES thread samples"
NATIVE=$TMP/big.pbin
"$BUILD/bench/timeline_gen" "$NATIVE" "$SAMPLES" 8 || not_available "timeline_gen failed"
GPERF=
if [ -x "$WORKLOAD" ] && [ -e "$LIBPROFILER" ]; then
    say "bench: report --html: recording the gperftools seed (callers, 2 s, 1000 Hz)"
    if LD_PRELOAD=$LIBPROFILER CPUPROFILE=$TMP/seed.prof CPUPROFILE_FREQUENCY=1000 \
        "$WORKLOAD" 2 >/dev/null 2>"$TMP/seed.err" && [ -s "$TMP/seed.prof" ] &&
        "$BUILD/bench/gperftools_gen" "$TMP/seed.prof" 0 "$SAMPLES" >"$TMP/big.prof"; then
        GPERF=$TMP/big.prof
    fi
fi

# --- timing ----------------------------------------------------------------------

# run_timed OUT ERR CMD...: "wall cpu rss_mb"; empty when CMD fails.
run_timed() {
    local out=$1 err=$2
    shift 2
    /usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$@" >"$out" 2>"$err" || return 1
    awk '{ printf "%.3f %.3f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$TMP/time"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: BENCH_REPS runs; "wall cpu rss" medians into $TMP/NAME.result.
measure() {
    local name=$1 i
    shift
    : >"$TMP/$name.times"
    for ((i = 1; i <= REPS; i++)); do
        say "bench: report --html: $name, run $i of $REPS"
        if ! run_timed "$TMP/$name.out" "$TMP/$name.err" "$@" >>"$TMP/$name.times"; then
            say "bench: report --html: $name failed: $(head -3 "$TMP/$name.err")"
            return 1
        fi
    done
    printf '%s %s %s\n' "$(cut -d' ' -f1 "$TMP/$name.times" | median)" \
        "$(cut -d' ' -f2 "$TMP/$name.times" | median)" \
        "$(cut -d' ' -f3 "$TMP/$name.times" | median)" >"$TMP/$name.result"
}

command -v /usr/bin/time >/dev/null || not_available "no /usr/bin/time (apt-get install time)"

row() {
    local label=$1 name=$2
    if [ -s "$TMP/$name.result" ]; then
        read -r wall cpu rss <"$TMP/$name.result"
        printf '| %s | %s | %s | %s |\n' "$label" "$wall" "$cpu" "$rss"
    else
        printf '| %s | n/a | n/a | n/a |\n' "$label"
    fi
}

section
printf 'Profiles: %s thread samples each. Native: `bench/timeline_gen.c` (8 threads, 300\n' "$SAMPLES"
printf 'functions, 2000 stacks, one power channel, symbol tables inside), %s bytes.\n' \
    "$(stat -c %s "$NATIVE")"
if [ -n "$GPERF" ]; then
    printf 'gperftools: grown from a libprofiler profile of `callers` by `bench/gperftools_gen.c`,\n'
    printf '%s bytes.\n' "$(stat -c %s "$GPERF")"
fi
printf 'Medians of %s runs; `--no-cache` so every run reads the symbols itself.\n\n' "$REPS"

for kind in native gperftools; do
    file=$NATIVE
    [ "$kind" = gperftools ] && file=$GPERF
    [ -n "$file" ] || continue
    measure "$kind-report" "$PTPROF" report "$file" --no-cache
    measure "$kind-html" "$PTPROF" report "$file" --no-cache --html "$TMP/$kind.html"
    [ -n "$BEFORE" ] && measure "$kind-before" "$BEFORE" report "$file" --no-cache --html \
        "$TMP/$kind-before.html"
    printf '### %s\n\n| command | wall s | CPU s | peak RSS MB |\n|---|---:|---:|---:|\n' "$kind"
    row '`ptprof report FILE` (one walk, no figures)' "$kind-report"
    row '`ptprof report --html OUT FILE` (one walk feeds table, flame graph, timeline)' "$kind-html"
    [ -n "$BEFORE" ] && row '`report --html` before (a walk each: table, flame graph, timeline)' \
        "$kind-before"
    printf '\n'
done
printf 'Load average at the end: %s.\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
