#!/usr/bin/env bash
# bench/knobs.sh - the recorder's choices measured against their
# alternatives, on cpuburn.  Usage: bench/knobs.sh [BUILD_DIR]
#
# Each row runs `ptprof record --engine ptrace -g none -d` (the sampling mechanism alone)
# with one knob changed (src/record/ptrace/ptrace_engine.c, read_benchmark_knobs()):
#   default           as ptprof ships
#   PTPROF_SPIN_NS    poll N ns for the stops before sleeping, whatever the
#                     load (0: never; the default polls 50 us while a CPU is free)
#   PTPROF_CPU        keep the tracer on the last CPU
#   PTPROF_MIN_GAP_PCT=0 / 50
#                     the least time left to the program between a sample
#                     and the next, in percent of the period (default 25)
# for 1 thread at 1000 and 10000 Hz and 4 threads at 1000 Hz.  Work time
# against the bare run (slowdown), achieved frequency, latency per sample
# and deadlines dropped; medians of BENCH_REPS (3) runs, the runs of one
# repetition interleaved.  Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" knobs
REPS=${BENCH_REPS:-3}

echo "## Recorder knobs (ptprof record --engine ptrace -g none, cpuburn)"
echo
if [ ! -x "$PTPROF" ]; then
    echo "n/a: $PTPROF missing"
    exit 0
fi
bench_cpuburn || exit 0
NPROC=$(nproc)
UNITS=$("$CPUBURN" --calibrate 0.3) || exit 0
UNITS=$((UNITS * 5)) # about 1.5 s of one CPU

KNOBS=("default|" "never poll|PTPROF_SPIN_NS=0" "always poll 50 us|PTPROF_SPIN_NS=50000" "tracer on CPU $((NPROC - 1))|PTPROF_CPU=$((NPROC - 1))"
    "gap 0%|PTPROF_MIN_GAP_PCT=0" "gap 50%|PTPROF_MIN_GAP_PCT=50")
CASES=("1 1000" "1 10000" "4 1000")
RAW=$TMP/raw # case knob rep key value
: >"$RAW"
dbg() { sed -n "$2" "$1"; }

for ((rep = 1; rep <= REPS; rep++)); do
    for c in "${CASES[@]}"; do
        read -r t hz <<<"$c"
        units=$((UNITS * (t < NPROC ? t : NPROC)))
        if "$CPUBURN" "$t" "$units" >"$TMP/out" 2>/dev/null; then
            printf '%s\tbare\t%s\twall\t%s\n' "$c" "$rep" "$(burn_field "$TMP/out" wall)" >>"$RAW"
        fi
        for k in "${KNOBS[@]}"; do
            IFS='|' read -r name env <<<"$k"
            say "knobs: rep $rep, $t thread(s) at $hz Hz: $name"
            # shellcheck disable=SC2086
            if ! env $env timeout 120 "$PTPROF" record --engine ptrace -g none -d -f "$hz" \
                -o "$TMP/p.data" -- \
                "$CPUBURN" "$t" "$units" >"$TMP/out" 2>"$TMP/err"; then
                continue
            fi
            {
                printf '%s\t%s\t%s\twall\t%s\n' "$c" "$name" "$rep" "$(burn_field "$TMP/out" wall)"
                printf '%s\t%s\t%s\thz\t%s\n' "$c" "$name" "$rep" \
                    "$(dbg "$TMP/err" 's/^\[debug\] frequency:.*, \([0-9.]*\) Hz achieved/\1/p')"
                printf '%s\t%s\t%s\tlat\t%s\n' "$c" "$name" "$rep" \
                    "$(dbg "$TMP/err" 's/^\[debug\] latency:.*, \([0-9.]*\) us per sample/\1/p')"
                printf '%s\t%s\t%s\tdropped\t%s\n' "$c" "$name" "$rep" \
                    "$(dbg "$TMP/err" 's/^\[debug\] deadlines: *\([0-9]*\) dropped.*/\1/p')"
            } >>"$RAW"
        done
    done
done

median() { raw_median "$RAW" "$@"; } # CASE KNOB KEY
echo "| threads | Hz | knob | slowdown | achieved Hz | latency µs/sample | deadlines dropped |"
echo "|---:|---:|---|---:|---:|---:|---:|"
for c in "${CASES[@]}"; do
    read -r t hz <<<"$c"
    bare=$(median "$c" bare wall)
    for k in "${KNOBS[@]}"; do
        IFS='|' read -r name _ <<<"$k"
        wall=$(median "$c" "$name" wall)
        slow=n/a
        [ -n "$wall" ] && [ -n "$bare" ] &&
            slow=$(awk -v w="$wall" -v b="$bare" 'BEGIN { printf "%+.1f%%", 100 * (w / b - 1) }')
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$hz" "$name" "$slow" \
            "$(median "$c" "$name" hz)" "$(median "$c" "$name" lat)" \
            "$(median "$c" "$name" dropped)"
    done
done
echo
bench_machine
exit 0
