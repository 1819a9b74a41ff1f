#!/usr/bin/env bash
# bench/perf_engine_cost.sh - the perf engine against perf record where a
# program keeps every CPU busy, the one place their costs can differ: the
# profiler's own CPU time is then taken from the program.
# Usage: bench/perf_engine_cost.sh [BUILD_DIR]
#
# cpuburn with 4 threads on the machine's CPUs, at 1000 and 10000 Hz, with
# and without DWARF stacks: bare, `perf record -e cpu-clock [--call-graph
# dwarf]` and `ptprof record --engine perf -g dwarf|none` (with DWARF
# stacks also with perf's 8 KiB copy, --stack-size 8192, where the
# default copies 32 KiB), the runs of one repetition interleaved, BENCH_REPS (5) repetitions.  For each: the work
# time against the bare run (slowdown), the program's own CPU time, and the
# profiler's own (`perf stat --no-inherit -e task-clock` around it: the
# profiler process alone, its start and end included).  Prints a Markdown
# section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" cost
PERF=${PERF:-perf}
REPS=${BENCH_REPS_COST:-5}

echo "## The perf engine and perf record on busy CPUs: the profiler's own CPU"
echo
if [ ! -x "$PTPROF" ] || ! command -v "$PERF" >/dev/null ||
    ! "$PTPROF" record --engine perf -f 100 -o "$TMP/probe" -- true >/dev/null 2>&1 ||
    ! "$PERF" stat --no-inherit -e task-clock -x, -o "$TMP/probe.stat" -- true >/dev/null 2>&1; then
    echo "n/a: needs $PTPROF with the perf engine permitted, and $PERF"
    exit 0
fi
bench_cpuburn || exit 0
NPROC=$(nproc)
UNITS=$("$CPUBURN" --calibrate 0.5) || exit 0
UNITS=$((UNITS * 5 * NPROC)) # about 2.5 s of every CPU

CASES=("1000 none" "1000 dwarf" "10000 none" "10000 dwarf")
RAW=$TMP/raw # case tool rep key value
: >"$RAW"

# run CASE TOOL REP COMMAND...: one run under perf stat, its numbers kept.
run() {
    local c=$1 tool=$2 rep=$3
    shift 3
    say "perf_engine_cost: rep $rep, $c: $tool"
    if ! timeout 120 "$PERF" stat --no-inherit -e task-clock -x, -o "$TMP/stat" -- "$@" \
        >"$TMP/out" 2>/dev/null; then
        return
    fi
    local own
    own=$(awk -F, '$3 == "task-clock" || $3 ~ /^task-clock/ { print $1; exit }' "$TMP/stat")
    {
        printf '%s\t%s\t%s\twall\t%s\n' "$c" "$tool" "$rep" "$(burn_field "$TMP/out" wall)"
        printf '%s\t%s\t%s\tcpu\t%s\n' "$c" "$tool" "$rep" "$(burn_field "$TMP/out" cpu)"
        printf '%s\t%s\t%s\town\t%s\n' "$c" "$tool" "$rep" "$own"
    } >>"$RAW"
}

for ((rep = 1; rep <= REPS; rep++)); do
    for c in "${CASES[@]}"; do
        read -r hz stacks <<<"$c"
        callgraph=()
        [ "$stacks" = dwarf ] && callgraph=(--call-graph dwarf)
        if "$CPUBURN" 4 "$UNITS" >"$TMP/out" 2>/dev/null; then
            printf '%s\tbare\t%s\twall\t%s\n' "$c" "$rep" "$(burn_field "$TMP/out" wall)" >>"$RAW"
            printf '%s\tbare\t%s\tcpu\t%s\n' "$c" "$rep" "$(burn_field "$TMP/out" cpu)" >>"$RAW"
        fi
        run "$c" perf "$rep" "$PERF" record -q -e cpu-clock -F "$hz" "${callgraph[@]}" \
            -o "$TMP/perf.data" -- "$CPUBURN" 4 "$UNITS"
        run "$c" ptprof "$rep" "$PTPROF" record --engine perf -g "$stacks" -f "$hz" \
            -o "$TMP/ptprof.data" -- "$CPUBURN" 4 "$UNITS"
        [ "$stacks" = dwarf ] &&
            run "$c" ptprof8k "$rep" "$PTPROF" record --engine perf -g dwarf --stack-size 8192 \
                -f "$hz" -o "$TMP/ptprof.data" -- "$CPUBURN" 4 "$UNITS"
    done
done

median() { raw_median "$RAW" "$@"; } # CASE TOOL KEY
echo "cpuburn, 4 threads on $NPROC CPUs; medians of $REPS runs each, interleaved. Own CPU: the"
echo "profiler process alone (perf stat --no-inherit), its start and its end included."
echo
echo "| Hz | stacks | profiler | slowdown | program CPU s | profiler's own CPU ms |"
echo "|---:|---|---|---:|---:|---:|"
for c in "${CASES[@]}"; do
    read -r hz stacks <<<"$c"
    bare=$(median "$c" bare wall)
    printf '| %s | %s | bare | – | %s | – |\n' "$hz" "$stacks" "$(median "$c" bare cpu)"
    for tool in perf ptprof ptprof8k; do
        [ "$tool" = ptprof8k ] && [ "$stacks" != dwarf ] && continue
        name="perf record -e cpu-clock"
        [ "$stacks" = dwarf ] && name="$name --call-graph dwarf"
        [ "$tool" = ptprof ] && name="ptprof record --engine perf -g $stacks"
        [ "$tool" = ptprof8k ] && name="ptprof record --engine perf -g dwarf --stack-size 8192"
        wall=$(median "$c" "$tool" wall)
        slow=n/a
        [ -n "$wall" ] && [ -n "$bare" ] &&
            slow=$(awk -v w="$wall" -v b="$bare" 'BEGIN { printf "%+.1f%%", 100 * (w / b - 1) }')
        printf '| %s | %s | %s | %s | %s | %s |\n' "$hz" "$stacks" "$name" "$slow" \
            "$(median "$c" "$tool" cpu)" "$(median "$c" "$tool" own)"
    done
done
echo
bench_machine
exit 0
