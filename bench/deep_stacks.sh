#!/usr/bin/env bash
# bench/deep_stacks.sh - a recursion 2,000 frames deep (about 450 KB of
# stack, tests/workloads/recurse.c): which recorders reach main(), and what
# keeping the whole stack costs.  Usage: bench/deep_stacks.sh [BUILD_DIR]
# (default build)
#
# `recurse 2000 3` recorded at 1000 Hz with DWARF stacks by
#   - ptprof's ptrace engine at its defaults (it copies the stopped thread's
#     whole stack once a cut stack has grown its copy, and keeps up to 4096
#     frames),
#   - ptprof's perf engine at its defaults (the kernel copies 32 KiB),
#   - perf record --call-graph dwarf (8 KiB) and perf record -g (frame
#     pointers; the kernel's chain stops at kernel.perf_event_max_stack),
# each read back by `ptprof report`: the share of thread samples whose
# stack reaches main(), the share flagged cut, the achieved rate (per CPU
# second), and for ptprof -d's unwinding and stop time per sample.  Medians
# of BENCH_REPS (3) runs.  Prints a Markdown section; never fails the caller.
set -u -o pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" deep
REPS=${BENCH_REPS:-3}
WL=$BUILD/workloads/recurse

echo "## Deep stacks: a recursion 2,000 frames deep (about 450 KB of stack), 1000 Hz, DWARF"
echo
if [ ! -x "$PTPROF" ] || [ ! -x "$WL" ]; then
    echo "n/a: $PTPROF or $WL missing (make workloads)"
    exit 0
fi

# main's share and the cut share of FILE's thread samples, "MAIN CUT".
shares() {
    local all main cut
    all=$("$PTPROF" report "$1" --no-cache 2>/dev/null | sed -n 's/.*thread samples \([0-9.]*\).*/\1/p' | head -n 1)
    main=$("$PTPROF" report "$1" -k procedure -m samples --format csv --no-cache 2>/dev/null |
        awk -F, '$1 == "main" { print $15 }')
    cut=$("$PTPROF" info "$1" 2>/dev/null | sed -n 's/.*; \([0-9]*\) thread samples cut short.*/\1/p')
    awk -v a="${all:-0}" -v m="${main:-0}" -v c="${cut:-0}" \
        'BEGIN { if (a > 0) printf "%.1f %.1f", 100 * m / a, 100 * c / a; else print "n/a n/a" }'
}

RAW=$TMP/raw
: >"$RAW"
perf_ok=1
timeout 20 "$PTPROF" record --engine perf -o /dev/null -- true >/dev/null 2>&1 || perf_ok=0
have_perf=1
command -v perf >/dev/null 2>&1 || have_perf=0
for rep in $(seq "$REPS"); do
    for engine in ptrace perf; do
        [ "$engine" = perf ] && [ "$perf_ok" = 0 ] && continue
        say "deep_stacks: ptprof $engine, run $rep"
        out=$TMP/$engine.data
        "$PTPROF" record --engine "$engine" -d -f 1000 -o "$out" -- "$WL" 2000 3 2>"$TMP/err" >/dev/null
        read -r main cut <<<"$(shares "$out")"
        hz=$(sed -n 's/.*frequency: *\([0-9.]*\) Hz requested, \([0-9.]*\) Hz.*/\2/p' "$TMP/err" | head -n 1)
        [ -n "$hz" ] || hz=$("$PTPROF" info "$out" | sed -n 's/.*requested, \([0-9.]*\) Hz.*/\1/p')
        unwind=$(sed -n 's/.*unwind \([0-9.]*\) us.*/\1/p' "$TMP/err" | head -n 1)
        lat=$("$PTPROF" info "$out" | sed -n 's/.*total, \([0-9.]*\) us per sample.*/\1/p')
        {
            printf 'ptprof\t%s\t%s\tmain\t%s\n' "$engine" "$rep" "$main"
            printf 'ptprof\t%s\t%s\tcut\t%s\n' "$engine" "$rep" "$cut"
            printf 'ptprof\t%s\t%s\thz\t%s\n' "$engine" "$rep" "$hz"
            printf 'ptprof\t%s\t%s\tunwind\t%s\n' "$engine" "$rep" "$unwind"
            printf 'ptprof\t%s\t%s\tlatency\t%s\n' "$engine" "$rep" "${lat:-0}"
        } >>"$RAW"
    done
    if [ "$have_perf" = 1 ]; then
        for mode in dwarf fp; do
            say "deep_stacks: perf record --call-graph $mode, run $rep"
            out=$TMP/perf-$mode.data
            perf record -q --call-graph "$mode" -e cpu-clock -F 1000 -o "$out" -- "$WL" 2000 3 \
                >/dev/null 2>&1 || continue
            read -r main cut <<<"$(shares "$out")"
            hz=$("$PTPROF" report "$out" --no-cache 2>/dev/null | sed -n 's/.*frequency \([0-9.]*\) Hz.*/\1/p')
            {
                printf 'perf\t%s\t%s\tmain\t%s\n' "$mode" "$rep" "$main"
                printf 'perf\t%s\t%s\tcut\t%s\n' "$mode" "$rep" "$cut"
                printf 'perf\t%s\t%s\thz\t%s\n' "$mode" "$rep" "$hz"
            } >>"$RAW"
        done
    fi
done

echo "| recorder | stacks reach main | flagged cut | achieved Hz (per CPU s for perf) |" \
    "unwind µs/sample | stop µs/sample |"
echo "|---|---:|---:|---:|---:|---:|"
for row in "ptprof ptrace" "ptprof perf" "perf dwarf" "perf fp"; do
    read -r tool how <<<"$row"
    set -- "$tool" "$how"
    m=$(raw_median "$RAW" "$1" "$2" main)
    [ -n "$m" ] || continue
    c=$(raw_median "$RAW" "$1" "$2" cut)
    h=$(raw_median "$RAW" "$1" "$2" hz)
    u=$(raw_median "$RAW" "$1" "$2" unwind)
    l=$(raw_median "$RAW" "$1" "$2" latency)
    name="ptprof --engine $2"
    [ "$1" = perf ] && name="perf record --call-graph $2"
    echo "| $name | $m % | $c % | $h | ${u:-–} | ${l:-–} |"
done
echo
echo "Medians of $REPS runs on this machine (shared, busy: read the shares, not the rates)."
bench_machine
