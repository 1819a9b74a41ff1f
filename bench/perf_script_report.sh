#!/usr/bin/env bash
# bench/perf_script_report.sh - ptprof report on a large `perf script` text
# against perf report on the perf.data it came from
# (docs/formats/perf-script.md, "Benchmark").
# Usage: bench/perf_script_report.sh [BUILD_DIR]   (default build)
#
# Records the callers workload with `perf record -e cpu-clock -F HZ -g`
# (PERF_BENCH_HZ, 20000) long enough that `perf script` prints about PERF_BENCH_MB (100) megabytes
# (a 2 s probe sizes the real run, at most 120 s), then times
# `ptprof report TEXT` (BENCH_REPS runs, 3 by default, median),
# `perf report --stdio` on the perf.data (its default view, and the flat
# one: --no-children -g none --sort sym) and, for scale, `perf script`
# itself; checks that ptprof and perf count the same samples.  Prints a
# Markdown section on stdout and progress on stderr.  Never fails on a
# missing tool (n/a).
# Environment: PERF_BENCH_MB, PERF_BENCH_HZ, BENCH_REPS, PERF.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

MB=${PERF_BENCH_MB:-100}
HZ=${PERF_BENCH_HZ:-20000}
REPS=${BENCH_REPS:-3}
PERF=${PERF:-$(command -v perf || true)}
PTPROF=$BUILD/ptprof
WORKLOAD=$BUILD/workloads/callers
MAX_SECONDS=120

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-perf-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## perf script text: ptprof report vs perf report\n\n'
}

not_available() {
    section
    printf 'n/a: %s\n\n' "$1"
    say "bench: perf script report: n/a: $1"
    exit 0
}

[ -x "$PTPROF" ] || not_available "$PTPROF is not built"
[ -x "$WORKLOAD" ] || not_available "$WORKLOAD is not built (make workloads)"
[ -n "$PERF" ] || not_available "perf is not installed (linux-perf)"

# record SECONDS: perf.data of callers, with kernel samples when allowed.
EVENT=
record() {
    local ev
    for ev in ${EVENT:-cpu-clock cpu-clock:u}; do
        if "$PERF" record -q -e "$ev" -F "$HZ" -g -o "$TMP/perf.data" -- "$WORKLOAD" "$1" \
            >/dev/null 2>"$TMP/record.err"; then
            EVENT=$ev
            return 0
        fi
    done
    return 1
}

say "bench: perf script: a 2 s probe"
record 2 || not_available "perf record fails: $(tail -1 "$TMP/record.err")"
"$PERF" script -i "$TMP/perf.data" 2>/dev/null | wc -c >"$TMP/probe.size"
PROBE=$(cat "$TMP/probe.size")
[ "$PROBE" -gt 0 ] || not_available "perf script printed nothing"
SECS=$(awk -v p="$PROBE" -v mb="$MB" -v max="$MAX_SECONDS" \
    'BEGIN { s = int(2 * mb * 1048576 / p + 1); print (s > max) ? max : s }')
say "bench: perf script: recording callers for $SECS s ($EVENT)"
record "$SECS" || not_available "perf record fails: $(tail -1 "$TMP/record.err")"

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

TEXT=$TMP/callers.perf.txt
say "bench: perf script: perf script"
S_T=$(run_timed "$TEXT" "$TMP/script.err" "$PERF" script -i "$TMP/perf.data") ||
    not_available "perf script failed: $(tail -1 "$TMP/script.err")"
BYTES=$(stat -c %s "$TEXT")

# time_runs NAME CMD...: REPS timed runs into $TMP/NAME.times, output in
# NAME.out.
time_runs() {
    local name=$1 i
    shift
    : >"$TMP/$name.times"
    for ((i = 1; i <= REPS; i++)); do
        say "bench: perf script: $name, run $i of $REPS"
        run_timed "$TMP/$name.out" "$TMP/$name.err" "$@" >>"$TMP/$name.times" || return 1
    done
}
time_runs ptprof "$PTPROF" report --no-cache "$TEXT" ||
    not_available "ptprof report failed: $(head -3 "$TMP/ptprof.err")"
time_runs perf_default "$PERF" report -i "$TMP/perf.data" --stdio ||
    not_available "perf report failed: $(tail -1 "$TMP/perf_default.err")"
time_runs perf_flat "$PERF" report -i "$TMP/perf.data" --stdio --no-children -g none --sort sym \
    -F overhead,sample,sym ||
    not_available "perf report failed: $(tail -1 "$TMP/perf_flat.err")"

wall() { cut -d' ' -f1 "$TMP/$1.times" | median; }
cpu() { cut -d' ' -f2 "$TMP/$1.times" | median; }

# Both must have read every sample: perf's flat view lists them all.
F_SAMPLES=$(awk '!/^#/ && NF >= 2 { n += $2 } END { print n + 0 }' "$TMP/perf_flat.out")
P_SAMPLES=$(grep -o -m1 'samples [0-9]*' "$TMP/ptprof.out" | head -1 | grep -o '[0-9]*')
if [ -n "$P_SAMPLES" ] && [ "$F_SAMPLES" = "$P_SAMPLES" ]; then
    AGREE="both count $P_SAMPLES samples"
else
    AGREE="**sample counts differ**: ptprof ${P_SAMPLES:-?}, perf report ${F_SAMPLES:-?}"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }

section
printf 'Text: %s bytes of `perf script` from `perf record -e %s -F %s -g` of\n' \
    "$BYTES" "$EVENT" "$HZ"
printf '`callers` (%s s); %s. Load average at the end: %s.\n\n' "$SECS" "$AGREE" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| command | wall s | CPU s |\n|---|---:|---:|\n'
printf '| `ptprof report TEXT` (median of %s) | %s | %s |\n' "$REPS" "$(wall ptprof)" "$(cpu ptprof)"
printf '| `perf report --stdio` on perf.data (median of %s) | %s | %s |\n' "$REPS" \
    "$(wall perf_default)" "$(cpu perf_default)"
printf '| `perf report --stdio --no-children -g none --sort sym` (median of %s) | %s | %s |\n' \
    "$REPS" "$(wall perf_flat)" "$(cpu perf_flat)"
printf '| `perf script` (making the text, 1 run) | %s | %s |\n\n' "${S_T% *}" "${S_T#* }"
printf 'Speed-up of ptprof on the text over perf report on its own binary file: %sx\n' \
    "$(ratio "$(wall perf_default)" "$(wall ptprof)")"
printf '(default view), %sx (flat view), wall time.\n\n' "$(ratio "$(wall perf_flat)" "$(wall ptprof)")"
