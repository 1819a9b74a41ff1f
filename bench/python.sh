#!/usr/bin/env bash
# bench/python.sh - what Python frames cost (docs/python.md): a pure-Python
# loop (bench/pyloop.py, a fixed amount of work) at 1 kHz with 1 and 4
# threads, bare, under `ptprof record` with its Python frames (the ptrace
# engine, as --engine auto takes it for a Python program), the same
# without them (PTPROF_INTERP=0), and `perf record -g` of `python3.12 -X
# perf` (perf's own Python names, through the interpreter's perf map), the
# runs of one repetition interleaved, BENCH_REPS_PY (3) repetitions.
# Usage: bench/python.sh [BUILD_DIR]
# Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" python
PERF=${PERF:-perf}
REPS=${BENCH_REPS_PY:-3}
HZ=1000

echo "## Python frames: a pure-Python loop at 1 kHz"
echo
PY=${BENCH_PYTHON:-}
for c in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/bin/python3; do
    [ -z "$PY" ] && [ -x "$c" ] && PY=$c
done
if [ ! -x "$PTPROF" ] || [ -z "$PY" ]; then
    echo "n/a: needs $PTPROF and a CPython 3.11 or later"
    exit 0
fi
WORK=$ROOT/bench/pyloop.py
UNITS=$("$PY" "$WORK" --calibrate 2.5) || exit 0
RAW=$TMP/raw # threads tool rep key value
: >"$RAW"
field() { sed -n "s/^pyloop: .* $2=\([^ ]*\).*/\1/p" "$1" | tail -n 1; }
# dbg FILE PATTERN: the number after PATTERN in ptprof's -d summary.
dbg() { sed -n "s/.*$2 *\([0-9.]*\).*/\1/p" "$1" | head -n 1; }

# run THREADS TOOL REP COMMAND...: the work time, and what the tool says.
run() {
    local t=$1 tool=$2 rep=$3
    shift 3
    say "python: rep $rep, $t thread(s): $tool"
    if ! timeout 120 "$@" >"$TMP/out" 2>"$TMP/err"; then
        return
    fi
    printf '%s\t%s\t%s\twall\t%s\n' "$t" "$tool" "$rep" "$(field "$TMP/out" wall)" >>"$RAW"
    printf '%s\t%s\t%s\tcpu\t%s\n' "$t" "$tool" "$rep" "$(field "$TMP/out" cpu)" >>"$RAW"
    case $tool in
    ptprof*)
        printf '%s\t%s\t%s\trate\t%s\n' "$t" "$tool" "$rep" \
            "$(dbg "$TMP/err" 'Hz requested,')" >>"$RAW"
        printf '%s\t%s\t%s\tread_us\t%s\n' "$t" "$tool" "$rep" \
            "$(sed -n 's/.* names; \([0-9.]*\) us per read.*/\1/p' "$TMP/err")" >>"$RAW"
        printf '%s\t%s\t%s\tlatency_us\t%s\n' "$t" "$tool" "$rep" \
            "$(sed -n 's/.*latency: .* total, \([0-9.]*\) us per sample.*/\1/p' "$TMP/err")" >>"$RAW"
        ;;
    perf)
        local n cpu
        n=$("$PERF" report -i "$TMP/perf.data" --stats 2>/dev/null |
            awk '/SAMPLE events:/ { print $3; exit }')
        cpu=$(field "$TMP/out" cpu)
        [ -n "$n" ] && [ -n "$cpu" ] &&
            printf '%s\t%s\t%s\trate\t%s\n' "$t" "$tool" "$rep" \
                "$(awk -v n="$n" -v c="$cpu" 'BEGIN { printf "%.1f", n / c }')" >>"$RAW"
        ;;
    esac
}

HAVE_PERF=0
"$PERF" record -q -e cpu-clock -o "$TMP/probe.data" -- true >/dev/null 2>&1 && HAVE_PERF=1
PERF_X=0
"$PY" -X perf -c pass >/dev/null 2>&1 && PERF_X=1
for ((rep = 1; rep <= REPS; rep++)); do
    for t in 1 4; do
        run "$t" bare "$rep" "$PY" "$WORK" "$t" "$UNITS"
        run "$t" ptprof "$rep" "$PTPROF" record -d -f "$HZ" -o "$TMP/p.data" -- \
            "$PY" "$WORK" "$t" "$UNITS"
        run "$t" ptprof-native "$rep" env PTPROF_INTERP=0 "$PTPROF" record --engine ptrace -d \
            -f "$HZ" -o "$TMP/n.data" -- "$PY" "$WORK" "$t" "$UNITS"
        [ "$HAVE_PERF" = 1 ] && [ "$PERF_X" = 1 ] &&
            run "$t" perf "$rep" "$PERF" record -q -e cpu-clock -F "$HZ" -g \
                -o "$TMP/perf.data" -- "$PY" -X perf "$WORK" "$t" "$UNITS"
    done
done

median() { raw_median "$RAW" "$@"; } # THREADS TOOL KEY
# calc EXPR NAME=VALUE...: EXPR with the names set, to one decimal.
calc() {
    local expr=$1 vars=()
    shift
    for a in "$@"; do vars+=(-v "$a"); done
    awk "${vars[@]}" "BEGIN { printf \"%.1f\", $expr }" 2>/dev/null
}
echo "$("$PY" --version 2>&1) ($PY), about 2.5 s of work; medians of $REPS runs each, interleaved."
echo "Rate: ptprof's samples per second of wall time (-d); perf's per second of the"
echo "program's CPU time. Slowdown: the work time against the bare run's."
echo
echo "| threads | tool | work s | CPU s | slowdown | achieved Hz | % of 1 kHz | read µs/stack | latency µs/sample |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for t in 1 4; do
    b=$(median "$t" bare wall)
    for tool in bare ptprof ptprof-native perf; do
        w=$(median "$t" "$tool" wall)
        [ -z "$w" ] && continue
        s=$([ -n "$b" ] && calc '100 * (w / b - 1)' w="$w" b="$b")
        r=$(median "$t" "$tool" rate)
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$tool" "$w" \
            "$(median "$t" "$tool" cpu)" "${s:+$s%}" "${r:--}" "$([ -n "$r" ] && calc '100 * r / 1000' r="$r")" \
            "$(median "$t" "$tool" read_us)" "$(median "$t" "$tool" latency_us)"
    done
done
echo
echo "ptprof: Python frames on (the ptrace engine, --engine auto's choice for a Python"
echo "program); ptprof-native: the same engine without them (PTPROF_INTERP=0). perf: perf"
echo "record -g on python -X perf (the interpreter writes a perf map of its trampolines)."
echo "Targets (issue 17): >= 99% of 1 kHz with one Python thread; slowdown with Python"
echo "frames no more than 1.5x the slowdown without them."
echo
# verdict THREADS: the targets against this run's medians.
verdict() {
    local t=$1 b w n r v
    b=$(median "$t" bare wall)
    w=$(median "$t" ptprof wall)
    n=$(median "$t" ptprof-native wall)
    r=$(median "$t" ptprof rate)
    [ -z "$b" ] || [ -z "$w" ] || [ -z "$n" ] && return
    v=$(awk -v b="$b" -v w="$w" -v n="$n" 'BEGIN {
        with = w / b - 1; without = n / b - 1
        if (without <= 0) print "not judged (no slowdown without frames here)"
        else print (with <= 1.5 * without ? "PASS" : "MISS") sprintf(" (%.2fx)", with / without) }')
    printf -- '- %s thread(s): slowdown %s%% with frames, %s%% without: %s' "$t" \
        "$(calc '100 * (w / b - 1)' w="$w" b="$b")" "$(calc '100 * (n / b - 1)' n="$n" b="$b")" "$v"
    if [ "$t" = 1 ] && [ -n "$r" ]; then
        printf '; rate %s%% of 1 kHz: %s' "$(calc '100 * r / 1000' r="$r")" \
            "$(awk -v r="$r" 'BEGIN { print (r >= 990 ? "PASS" : "MISS") }')"
    fi
    echo
}
verdict 1
verdict 4
bench_machine
