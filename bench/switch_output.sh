#!/usr/bin/env bash
# bench/switch_output.sh - what `record --switch-output` costs the program
# when each snapshot is converted (pprof) rather than kept native, next to
# perf record --switch-output.
# Usage: bench/switch_output.sh [BUILD_DIR]
#
# cpuburn with one thread per CPU (every CPU busy: a conversion's CPU can
# only come from the program), about 5 s of work, a new file every second:
# bare; ptprof record -o one native file; a native series (-o s.data); a
# pprof series (-o s.pb.gz: each file converted by a detached process at
# nice 10); perf record --switch-output=1s -g.  The runs of one repetition
# interleaved, BENCH_REPS_SWITCH (3) repetitions; medians.  For each: the
# work time against the bare run, the profiler process's own CPU (perf stat
# --no-inherit: the converters are not in it), ptprof's dropped deadlines
# (-d), and the files written.  Then what one conversion costs
# (`ptprof convert` of a one-second native snapshot): the time a recording
# that converted on its own thread would stand still at every switch.
# Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" switch
PERF=${PERF:-perf}
REPS=${BENCH_REPS_SWITCH:-3}

echo "## Snapshots in another format: --switch-output -o X.pb.gz"
echo
if [ ! -x "$PTPROF" ] || ! command -v "$PERF" >/dev/null ||
    ! "$PERF" stat --no-inherit -e task-clock -x, -o "$TMP/probe.stat" -- true >/dev/null 2>&1; then
    echo "n/a: needs $PTPROF and $PERF"
    exit 0
fi
bench_cpuburn || exit 0
NPROC=$(nproc)
UNITS=$("$CPUBURN" --calibrate 0.5) || exit 0
UNITS=$((UNITS * 10 * NPROC)) # about 5 s of every CPU

RAW=$TMP/raw # case tool rep key value
: >"$RAW"
C=burn

# run TOOL REP COMMAND...: one run under perf stat, its numbers kept.
run() {
    local tool=$1 rep=$2
    shift 2
    say "switch_output: rep $rep: $tool"
    rm -rf "$TMP/out.d" && mkdir "$TMP/out.d"
    if ! timeout 180 "$PERF" stat --no-inherit -e task-clock -x, -o "$TMP/stat" -- "$@" \
        >"$TMP/out" 2>"$TMP/err"; then
        return
    fi
    local own dropped
    own=$(awk -F, '$3 ~ /^task-clock/ { print $1; exit }' "$TMP/stat")
    dropped=$(sed -n 's/^\[debug\] deadlines: *\([0-9]*\) dropped.*/\1/p' "$TMP/err")
    {
        printf '%s\t%s\t%s\twall\t%s\n' "$C" "$tool" "$rep" "$(burn_field "$TMP/out" wall)"
        printf '%s\t%s\t%s\town\t%s\n' "$C" "$tool" "$rep" "$own"
        printf '%s\t%s\t%s\tdropped\t%s\n' "$C" "$tool" "$rep" "$dropped"
        printf '%s\t%s\t%s\tfiles\t%s\n' "$C" "$tool" "$rep" "$(find "$TMP/out.d" -type f | wc -l)"
    } >>"$RAW"
}

for ((rep = 1; rep <= REPS; rep++)); do
    if "$CPUBURN" "$NPROC" "$UNITS" >"$TMP/out" 2>/dev/null; then
        printf '%s\tbare\t%s\twall\t%s\n' "$C" "$rep" "$(burn_field "$TMP/out" wall)" >>"$RAW"
    fi
    run one "$rep" "$PTPROF" record -d -o "$TMP/out.d/one.data" -- "$CPUBURN" "$NPROC" "$UNITS"
    run native "$rep" "$PTPROF" record -d --switch-output=1s -o "$TMP/out.d/s.data" \
        -- "$CPUBURN" "$NPROC" "$UNITS"
    run pprof "$rep" "$PTPROF" record -d --switch-output=1s -o "$TMP/out.d/s.pb.gz" \
        -- "$CPUBURN" "$NPROC" "$UNITS"
    run perf "$rep" "$PERF" record -q -F 1000 -g --switch-output=1s -o "$TMP/out.d/perf.data" \
        -- "$CPUBURN" "$NPROC" "$UNITS"
done

# One conversion: a native snapshot of a second, converted to pprof.
"$PTPROF" record --switch-output=1s -o "$TMP/conv.data" -- "$CPUBURN" "$NPROC" "$UNITS" \
    >/dev/null 2>&1
SNAP=$(find "$TMP" -maxdepth 1 -name 'conv.data.*' | sort | sed -n 2p)
CONV=()
for ((rep = 1; rep <= REPS; rep++)); do
    [ -n "$SNAP" ] || break
    s=$(date +%s.%N)
    "$PTPROF" convert -o "$TMP/conv.pb.gz" "$SNAP" >/dev/null 2>&1 || break
    e=$(date +%s.%N)
    CONV+=("$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.0f", (e - s) * 1000 }')")
done

median() { raw_median "$RAW" "$C" "$@"; } # TOOL KEY
echo "cpuburn, $NPROC threads on $NPROC CPUs (all busy), about 5 s of work, a new file every"
echo "second; medians of $REPS runs each, interleaved. Own CPU: the profiler process alone"
echo "(perf stat --no-inherit; the detached converters are not in it). A busy machine (other"
echo "builds and tests ran beside it): compare within a run."
echo
echo "| profiler | slowdown | own CPU ms | deadlines dropped | files |"
echo "|---|---:|---:|---:|---:|"
bare=$(median bare wall)
for tool in one native pprof perf; do
    case $tool in
    one) name="ptprof record -o one.data" ;;
    native) name="ptprof record --switch-output=1s -o s.data" ;;
    pprof) name="ptprof record --switch-output=1s -o s.pb.gz" ;;
    perf) name="perf record -F 1000 -g --switch-output=1s" ;;
    esac
    wall=$(median "$tool" wall)
    slow=n/a
    [ -n "$wall" ] && [ -n "$bare" ] &&
        slow=$(awk -v w="$wall" -v b="$bare" 'BEGIN { printf "%+.1f%%", 100 * (w / b - 1) }')
    dropped=$(median "$tool" dropped)
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$slow" "$(median "$tool" own)" \
        "${dropped:-–}" "$(median "$tool" files)"
done
echo
if [ ${#CONV[@]} -gt 0 ]; then
    echo "One conversion (\`ptprof convert\` of a one-second snapshot to pprof, wall ms, $REPS runs):"
    echo "${CONV[*]}. A recording converting on its own thread would stand still that long at"
    echo "every switch; the detached converter costs it only the fork."
else
    echo "One conversion: n/a"
fi
echo
bench_machine
exit 0
