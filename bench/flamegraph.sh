#!/usr/bin/env bash
# bench/flamegraph.sh - ptprof flamegraph on a profile of 1M thread samples:
# time to render and size, next to what the classic flamegraph.pl would
# write for the same stacks (docs/flamegraph.md, "Size").
# Usage: bench/flamegraph.sh [BUILD_DIR]   (default build)
#
# The profile: a real libprofiler profile of the callers workload grown to
# exactly FG_BENCH_TICKS (1,000,000) samples by bench/gperftools_gen.c (its
# call chains recombined: every PC is one the program ran, so symbolization
# is real, and the stacks are as varied as in a long run of a large
# program).  Times `ptprof flamegraph FILE -o OUT.svg` (BENCH_REPS runs,
# median), checks the SVG with xmllint, and compares the size of
# `-k procedure --metric samples` (frames named and sized exactly as
# flamegraph.pl names and sizes folded stacks of sample counts) with the
# size flamegraph.pl would give, computed by bench/flamegraph_classic.c from
# the same merged stacks (`ptprof report --tree --format csv`): flamegraph.pl
# is not packaged in Debian, so it is not run.  Prints a Markdown section on
# stdout, progress on stderr; never fails on a missed target (MISS) or a
# missing tool (n/a); exit 1 only when it cannot build its helpers.
# Environment: FG_BENCH_TICKS, BENCH_REPS, LIBPROFILER.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

TICKS=${FG_BENCH_TICKS:-1000000}
REPS=${BENCH_REPS:-3}
TARGET_S=2
LIBPROFILER=${LIBPROFILER:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
PTPROF=$BUILD/ptprof
WORKLOAD=$BUILD/workloads/callers

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-fg-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## Flame graph of %s thread samples: ptprof flamegraph vs flamegraph.pl\n\n' "$TICKS"
}

not_available() {
    section
    printf 'n/a: %s\n\n' "$1"
    say "bench: flamegraph: n/a: $1"
    exit 0
}

mkdir -p "$BUILD/bench"
for helper in gperftools_gen flamegraph_classic; do
    if ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$BUILD/bench/$helper" \
        "bench/$helper.c" -lm; then
        say "bench: cannot build bench/$helper.c"
        exit 1
    fi
done

[ -x "$PTPROF" ] || not_available "$PTPROF is not built"
[ -x "$WORKLOAD" ] || not_available "$WORKLOAD is not built (make workloads)"
[ -e "$LIBPROFILER" ] || not_available "no libprofiler at $LIBPROFILER (set LIBPROFILER)"

# --- the profile ---------------------------------------------------------------

say "bench: flamegraph: recording the seed profile (callers, 2 s, 1000 Hz)"
if ! LD_PRELOAD=$LIBPROFILER CPUPROFILE=$TMP/seed.prof CPUPROFILE_FREQUENCY=1000 \
    "$WORKLOAD" 2 >/dev/null 2>"$TMP/seed.err" || [ ! -s "$TMP/seed.prof" ]; then
    not_available "libprofiler wrote no profile ($(tail -1 "$TMP/seed.err"))"
fi
say "bench: flamegraph: growing it to $TICKS samples"
BIG=$TMP/big.prof
"$BUILD/bench/gperftools_gen" "$TMP/seed.prof" 0 "$TICKS" >"$BIG" ||
    not_available "gperftools_gen failed"
SAMPLES=$("$PTPROF" report "$BIG" 2>/dev/null | grep -o -m1 'thread samples [0-9]*' | grep -o '[0-9]*')

# --- timing ----------------------------------------------------------------------

# run_timed OUT ERR CMD...: "wall cpu" in seconds (cpu = user + system);
# empty when CMD fails.
run_timed() {
    local out=$1 err=$2 t
    shift 2
    t=$({ TIMEFORMAT='%R %U %S'; time "$@" >"$out" 2>"$err"; } 2>&1) || return 1
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

SVG=$TMP/out.svg
: >"$TMP/times"
for ((i = 1; i <= REPS; i++)); do
    say "bench: flamegraph: ptprof flamegraph, run $i of $REPS"
    if ! run_timed /dev/null "$TMP/err" "$PTPROF" flamegraph "$BIG" -o "$SVG" >>"$TMP/times"; then
        not_available "ptprof flamegraph failed: $(head -3 "$TMP/err")"
    fi
done
WALL=$(cut -d' ' -f1 "$TMP/times" | median)
CPU=$(cut -d' ' -f2 "$TMP/times" | median)
SIZE=$(stat -c %s "$SVG")
FRAMES=$(grep -c '^<g' "$SVG")
FRAMES=$((FRAMES - 1)) # the <g id="f"> container
if command -v xmllint >/dev/null; then
    if xmllint --noout "$SVG" 2>"$TMP/xmllint.err"; then WELL="well-formed (xmllint)"; else
        WELL="**not well-formed**: $(head -2 "$TMP/xmllint.err")"
    fi
else
    WELL="not checked (no xmllint)"
fi

# --- size against flamegraph.pl ------------------------------------------------------

say "bench: flamegraph: the same stacks as flamegraph.pl would draw them"
"$PTPROF" flamegraph "$BIG" -k procedure --metric samples -o "$TMP/procs.svg" 2>"$TMP/err" ||
    not_available "ptprof flamegraph -k procedure failed: $(head -3 "$TMP/err")"
P_SIZE=$(stat -c %s "$TMP/procs.svg")
P_FRAMES=$(($(grep -c '^<g' "$TMP/procs.svg") - 1))
"$PTPROF" report "$BIG" --tree --format csv -k procedure --metric samples --threshold 0 \
    >"$TMP/tree.csv" 2>"$TMP/err" || not_available "ptprof report --tree failed"
CLASSIC=$("$BUILD/bench/flamegraph_classic" <"$TMP/tree.csv") ||
    not_available "flamegraph_classic failed"
C_SIZE=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$CLASSIC")
C_FRAMES=$(sed -n 's/.*frames=\([0-9]*\).*/\1/p' <<<"$CLASSIC")

verdict() { awk -v m="$1" -v t="$2" 'BEGIN { print (m <= t) ? "OK" : "MISS" }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.2f MB", b / 1048576 }'; }

section
printf 'Profile: %s thread samples (%s bytes, gperftools format) grown from a libprofiler\n' \
    "${SAMPLES:-?}" "$(stat -c %s "$BIG")"
printf 'profile of `callers` by `bench/gperftools_gen.c`. Load average at the end: %s.\n\n' \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| output | frames | size | render wall s | CPU s |\n|---|---:|---:|---:|---:|\n'
printf '| `ptprof flamegraph FILE` (median of %s) | %s | %s | %s | %s |\n' "$REPS" "$FRAMES" \
    "$(mb "$SIZE")" "$WALL" "$CPU"
printf '| `ptprof flamegraph FILE -k procedure --metric samples` | %s | %s | – | – |\n' \
    "$P_FRAMES" "$(mb "$P_SIZE")"
printf '| flamegraph.pl, same stacks (computed, see below) | %s | %s | – | – |\n\n' \
    "$C_FRAMES" "$(mb "$C_SIZE")"
printf 'The SVG is %s. Render time target under %s s (wall): %s. Size target: no larger than\n' \
    "$WELL" "$TARGET_S" "$(verdict "$WALL" "$TARGET_S")"
printf 'flamegraph.pl for the same stacks: %s (%s%% of it). flamegraph.pl is not packaged in\n' \
    "$(verdict "$P_SIZE" "$C_SIZE")" "$(awk -v a="$P_SIZE" -v b="$C_SIZE" 'BEGIN { printf "%.0f", 100 * a / b }')"
printf 'Debian, so its size is computed by `bench/flamegraph_classic.c` from its documented\n'
printf 'per-frame output (one `<g>`, `<title>`, `<rect>`, `<text>` per frame of at least 0.1 px,\n'
printf 'plus its fixed header and script as measured on a file it wrote) over the same merged\n'
printf 'stacks; both leave out frames under 0.1 px, so the frame counts should agree. The\n'
printf 'default output names frames by binary and function and sizes them by CPU time.\n\n'
