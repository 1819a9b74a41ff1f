#!/usr/bin/env bash
# bench/gperftools_report.sh - ptprof report against google-pprof --text on a
# large gperftools CPU profile (docs/formats/gperftools.md, "Benchmark").
# Usage: bench/gperftools_report.sh [BUILD_DIR]   (default build)
#
# Grows a profile of GPERF_BENCH_MB (100) megabytes from a real libprofiler
# profile of the callers workload (bench/gperftools_gen.c), then times
# `ptprof report FILE` (BENCH_REPS runs, 3 by default, median) and
# `google-pprof --text PROGRAM FILE` (once: it takes about a minute) with
# both outputs going to files, and checks that both count the same samples.
# Prints a Markdown section on stdout and progress on stderr.  Never fails
# on a missed target (MISS) or a missing tool (n/a); exit 1 only when it
# cannot build its generator.
# Environment: GPERF_BENCH_MB, BENCH_REPS, LIBPROFILER, GOOGLE_PPROF.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

MB=${GPERF_BENCH_MB:-100}
REPS=${BENCH_REPS:-3}
TARGET=20
LIBPROFILER=${LIBPROFILER:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
PPROF=${GOOGLE_PPROF:-$(command -v google-pprof || command -v pprof || true)}
PTPROF=$BUILD/ptprof
WORKLOAD=$BUILD/workloads/callers

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-gperf-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## gperftools CPU profile: ptprof report vs google-pprof --text\n\n'
}

not_available() {
    section
    printf 'n/a: %s\n\n' "$1"
    say "bench: gperftools report: n/a: $1"
    exit 0
}

mkdir -p "$BUILD/bench"
GEN=$BUILD/bench/gperftools_gen
if ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$GEN" bench/gperftools_gen.c; then
    say "bench: cannot build bench/gperftools_gen.c"
    exit 1
fi

[ -x "$PTPROF" ] || not_available "$PTPROF is not built"
[ -x "$WORKLOAD" ] || not_available "$WORKLOAD is not built (make workloads)"
[ -e "$LIBPROFILER" ] || not_available "no libprofiler at $LIBPROFILER (set LIBPROFILER)"
[ -n "$PPROF" ] || not_available "google-pprof is not installed"

# --- the profile ---------------------------------------------------------------

say "bench: gperftools: recording the seed profile (callers, 2 s, 1000 Hz)"
if ! LD_PRELOAD=$LIBPROFILER CPUPROFILE=$TMP/seed.prof CPUPROFILE_FREQUENCY=1000 \
    "$WORKLOAD" 2 >/dev/null 2>"$TMP/seed.err" || [ ! -s "$TMP/seed.prof" ]; then
    not_available "libprofiler wrote no profile ($(tail -1 "$TMP/seed.err"))"
fi
say "bench: gperftools: growing it to $MB MB"
BIG=$TMP/big.prof
"$GEN" "$TMP/seed.prof" "$MB" >"$BIG" || not_available "gperftools_gen failed"
BYTES=$(stat -c %s "$BIG")

# --- timing ----------------------------------------------------------------------

# run_timed OUT ERR CMD...: "wall cpu" in seconds (cpu = user + system,
# children included); empty when CMD fails.
run_timed() {
    local out=$1 err=$2 t
    shift 2
    t=$({ TIMEFORMAT='%R %U %S'; time "$@" >"$out" 2>"$err"; } 2>&1) || return 1
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$TMP/ptprof.times"
for ((i = 1; i <= REPS; i++)); do
    say "bench: gperftools: ptprof report, run $i of $REPS"
    if ! run_timed "$TMP/ptprof.out" "$TMP/ptprof.err" "$PTPROF" report "$BIG" >>"$TMP/ptprof.times"; then
        not_available "ptprof report failed: $(head -3 "$TMP/ptprof.err")"
    fi
done
say "bench: gperftools: google-pprof --text (about a minute)"
if ! PPROF_T=$(run_timed "$TMP/pprof.out" "$TMP/pprof.err" "$PPROF" --text "$WORKLOAD" "$BIG"); then
    not_available "google-pprof failed: $(tail -3 "$TMP/pprof.err")"
fi

P_WALL=$(cut -d' ' -f1 "$TMP/ptprof.times" | median)
P_CPU=$(cut -d' ' -f2 "$TMP/ptprof.times" | median)
G_WALL=${PPROF_T% *}
G_CPU=${PPROF_T#* }

# Both must have read the whole profile: the same number of samples.
G_SAMPLES=$(grep -o -m1 'Total: [0-9]* samples' "$TMP/pprof.out" | head -1 | grep -o '[0-9]*')
P_SAMPLES=$(grep -o -m1 'samples [0-9]*' "$TMP/ptprof.out" | head -1 | grep -o '[0-9]*')
if [ -n "$G_SAMPLES" ] && [ "$G_SAMPLES" = "$P_SAMPLES" ]; then
    AGREE="both count $G_SAMPLES samples"
else
    AGREE="**sample counts differ**: ptprof ${P_SAMPLES:-?}, google-pprof ${G_SAMPLES:-?}"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }
SPEEDUP=$(ratio "$G_WALL" "$P_WALL")
CPU_SPEEDUP=$(ratio "$G_CPU" "$P_CPU")
VERDICT=$(awk -v s="$SPEEDUP" -v t="$TARGET" 'BEGIN { print (s >= t) ? "OK" : "MISS" }')

section
printf 'Profile: %s bytes grown from a libprofiler profile of `callers` by\n' "$BYTES"
printf '`bench/gperftools_gen.c`; %s. Load average at the end: %s.\n\n' "$AGREE" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| command | wall s | CPU s |\n|---|---:|---:|\n'
printf '| `ptprof report` (median of %s) | %s | %s |\n' "$REPS" "$P_WALL" "$P_CPU"
printf '| `google-pprof --text` (1 run) | %s | %s |\n\n' "$G_WALL" "$G_CPU"
printf 'Speed-up: %sx wall, %sx CPU; target at least %sx (wall): %s\n\n' "$SPEEDUP" \
    "$CPU_SPEEDUP" "$TARGET" "$VERDICT"
