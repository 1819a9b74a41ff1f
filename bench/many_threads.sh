#!/usr/bin/env bash
# bench/many_threads.sh - the ptrace engine with many busy threads, next to
# the perf engine and perf record in the same run (issue 22).
# Usage: bench/many_threads.sh [BUILD_DIR]
#
# cpuburn with 1, 4, 16 and 64 threads on the machine's CPUs at 1 kHz
# (-g none), bare, under `ptprof record --engine ptrace` (also with
# PTPROF_OWN_SESSION=1: the recorder in a session of its own from the
# start, as before it waited for a crowd; PTPROF_ROUNDS=periods, and with PTPROF_QUIET=0: a crowded round reads
# every thread's schedstat, as before; docs/recording.md), `--engine perf`
# and `perf record -e cpu-clock`, the runs of one repetition interleaved,
# BENCH_REPS_THREADS (3) repetitions, medians.  For each: the slowdown of
# the work against the bare run; for ptprof the achieved rate (per wall
# second for ptrace, per CPU second for perf, as -d says) and, for ptrace,
# -d's round: threads stopped, reused, left out and deferred, the
# window, and the recorder's own CPU time.  Then 200 short threads (brief)
# with the recorder's three session choices and the perf engine: the rate
# and the first function's share.  Then tests/workloads/threadpool
# (500 threads at rest, 2 busy) with and without PTPROF_QUIET=0: the
# recorder's cost per round; and tests/workloads/clockwork with 64 busy
# threads under both engines: each function's share minus the truth the
# workload prints.
# Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" threads
PERF=${PERF:-perf}
REPS=${BENCH_REPS_THREADS:-3}

echo "## Many busy threads at 1 kHz: ptrace engine, perf engine, perf record (bench/many_threads.sh)"
echo
if [ ! -x "$PTPROF" ]; then
    echo "n/a: needs $PTPROF"
    exit 0
fi
bench_cpuburn || exit 0
NPROC=$(nproc)
UNITS=$("$CPUBURN" --calibrate 0.5) || exit 0
UNITS=$((UNITS * 4 * NPROC)) # about 2 s of every CPU
have_perf=0
"$PTPROF" record --engine perf -f 100 -o "$TMP/probe" -- true >/dev/null 2>&1 && have_perf=1
have_perf_record=0
command -v "$PERF" >/dev/null && "$PERF" record -q -o "$TMP/probe.data" -- true >/dev/null 2>&1 &&
    have_perf_record=1
RAW=$TMP/raw # threads tool rep key value
: >"$RAW"

keep() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }

for ((rep = 1; rep <= REPS; rep++)); do
    for t in 1 4 16 64; do
        say "many_threads: rep $rep, $t threads"
        "$CPUBURN" "$t" "$UNITS" >"$TMP/out" 2>/dev/null &&
            keep "$t" bare "$rep" wall "$(burn_field "$TMP/out" wall)"
        for engine in ptrace start readall periods perf; do
            [ "$engine" = perf ] && [ "$have_perf" = 0 ] && continue
            rounds= quiet= session=
            [ "$engine" = periods ] && rounds=periods
            [ "$engine" = readall ] && quiet=0
            [ "$engine" = start ] && session=1
            PTPROF_ROUNDS=$rounds PTPROF_QUIET=$quiet PTPROF_OWN_SESSION=$session "$PTPROF" record \
                --engine "$(echo "$engine" | sed 's/periods\|readall\|start/ptrace/')" -f 1000 \
                -g none -d -o "$TMP/p" -- "$CPUBURN" "$t" "$UNITS" >"$TMP/out" 2>"$TMP/err" ||
                continue
            keep "$t" "$engine" "$rep" wall "$(burn_field "$TMP/out" wall)"
            keep "$t" "$engine" "$rep" rate \
                "$(sed -n 's/.*requested, \([0-9.]*\) Hz achieved.*/\1/p' "$TMP/err")"
            if [ "$engine" != perf ]; then
                sed -n 's/^\[debug\] stops: *\([0-9.]*\) threads stopped, \([0-9.]*\) reused.*, \([0-9.]*\) left out.*, \([0-9.]*\) deferred.*/\1 \2 \3 \4/p' \
                    "$TMP/err" | {
                    read -r s u l d || exit 0
                    keep "$t" "$engine" "$rep" stopped "$s"
                    keep "$t" "$engine" "$rep" reused "$u"
                    keep "$t" "$engine" "$rep" leftout "$l"
                    keep "$t" "$engine" "$rep" deferred "$d"
                }
                keep "$t" "$engine" "$rep" window \
                    "$(sed -n 's/^\[debug\] window: *\([0-9.]*\) us.*/\1/p' "$TMP/err")"
                keep "$t" "$engine" "$rep" tracer \
                    "$(sed -n 's/^\[debug\] tracer: *\([0-9.]*\) s on a CPU.*/\1/p' "$TMP/err")"
            fi
        done
        if [ "$have_perf_record" = 1 ]; then
            "$PERF" record -q -e cpu-clock -F 1000 -o "$TMP/perf.data" -- "$CPUBURN" "$t" "$UNITS" \
                >"$TMP/out" 2>/dev/null && keep "$t" perf-record "$rep" wall "$(burn_field "$TMP/out" wall)"
        fi
    done
done

bench_machine
echo "cpuburn at 1 kHz, -g none, medians of $REPS interleaved runs."
echo
echo "| threads | profiler | slowdown | achieved rate | stopped / reused / left out / deferred per round | window per round | recorder CPU s |"
echo "|---:|---|---:|---:|---|---:|---:|"
for t in 1 4 16 64; do
    bare=$(raw_median "$RAW" "$t" bare wall)
    for tool in ptrace start readall periods perf perf-record; do
        w=$(raw_median "$RAW" "$t" "$tool" wall)
        if [ -z "$w" ] || [ -z "$bare" ]; then continue; fi
        slow=$(awk -v w="$w" -v b="$bare" 'BEGIN { printf "%+.1f%%", 100 * (w / b - 1) }')
        rate=$(raw_median "$RAW" "$t" "$tool" rate)
        [ -n "$rate" ] && rate=$(awk -v r="$rate" 'BEGIN { printf "%.1f%%", r / 10 }')
        round="" window="" tracer=""
        if [ "$tool" != perf ] && [ "$tool" != perf-record ]; then
            tracer=$(raw_median "$RAW" "$t" "$tool" tracer)
            round="$(raw_median "$RAW" "$t" "$tool" stopped) / $(raw_median "$RAW" "$t" "$tool" reused) / $(raw_median "$RAW" "$t" "$tool" leftout) / $(raw_median "$RAW" "$t" "$tool" deferred)"
            window="$(raw_median "$RAW" "$t" "$tool" window) us"
        fi
        name=$tool
        case $tool in
        ptrace | perf) name="ptprof record --engine $tool" ;;
        periods) name="PTPROF_ROUNDS=periods ptprof record --engine ptrace" ;;
        start) name="PTPROF_OWN_SESSION=1 ptprof record --engine ptrace" ;;
        readall) name="PTPROF_QUIET=0 ptprof record --engine ptrace" ;;
        perf-record) name="perf record -e cpu-clock" ;;
        esac
        echo "| $t | $name | $slow | ${rate:-–} | ${round:-–} | ${window:-–} | ${tracer:-–} |"
    done
done

# A thread pool at rest: 500 threads blocked on an empty queue, 2 busy.
# Every round is crowded; the quiet threads are known from the process's
# CPU clock, or (PTPROF_QUIET=0) each one's schedstat is read.
POOL=$BUILD/workloads/threadpool
if [ -x "$POOL" ]; then
    echo
    echo "threadpool 500 2 (500 threads blocked on an empty queue, 2 busy), 1 kHz, -g none,"
    echo "medians of $REPS interleaved runs: the recorder's own cost per round."
    echo
    echo "| profiler | achieved rate | reused unread per round | check per round | recorder CPU s |"
    echo "|---|---:|---:|---:|---:|"
    for ((rep = 1; rep <= REPS; rep++)); do
        for quiet in 1 0; do
            say "many_threads: threadpool, rep $rep, PTPROF_QUIET=$quiet"
            PTPROF_QUIET=$quiet "$PTPROF" record --engine ptrace -f 1000 -g none -d -o "$TMP/t" \
                -- "$POOL" 500 2 >/dev/null 2>"$TMP/err" || continue
            keep pool "q$quiet" "$rep" rate \
                "$(sed -n 's/.*requested, \([0-9.]*\) Hz achieved.*/\1/p' "$TMP/err")"
            keep pool "q$quiet" "$rep" unread \
                "$(sed -n 's/^\[debug\] quiet: *\([0-9.]*\) threads.*/\1/p' "$TMP/err")"
            keep pool "q$quiet" "$rep" check \
                "$(sed -n 's/^\[debug\] outside: *check \([0-9.]*\) us.*/\1/p' "$TMP/err")"
            keep pool "q$quiet" "$rep" tracer \
                "$(sed -n 's/^\[debug\] tracer: *\([0-9.]*\) s on a CPU.*/\1/p' "$TMP/err")"
        done
    done
    for quiet in 1 0; do
        name="ptprof record --engine ptrace"
        [ "$quiet" = 0 ] && name="PTPROF_QUIET=0 $name"
        rate=$(raw_median "$RAW" pool "q$quiet" rate)
        [ -n "$rate" ] && rate=$(awk -v r="$rate" 'BEGIN { printf "%.1f%%", r / 10 }')
        echo "| $name | ${rate:-–} | $(raw_median "$RAW" pool "q$quiet" unread) |" \
            "$(raw_median "$RAW" pool "q$quiet" check) us | $(raw_median "$RAW" pool "q$quiet" tracer) |"
    done
fi

# Short threads, one at a time (brief threads 200 10: 200 threads of 10 ms,
# 40/30/20/10% in four functions): where the recorder's session decides
# whether rounds come as often at a thread's start as later
# (docs/recording.md, "The recorder's own session").  The rate and the
# first function's share of the four against the workload's own measure.
BRIEF=$BUILD/workloads/brief
if [ -x "$BRIEF" ]; then
    echo
    echo "brief threads 200 10 (200 threads of 10 ms one after another, the first function 40%"
    echo "of each), 1 kHz, call stacks (the ptrace engine cuts an interval where the callers"
    echo "changed), medians of $REPS interleaved runs."
    echo
    echo "| profiler | achieved rate | first function's share, points off |"
    echo "|---|---:|---:|"
    for ((rep = 1; rep <= REPS; rep++)); do
        for session in default 1 0 perf; do
            [ "$session" = perf ] && [ "$have_perf" = 0 ] && continue
            say "many_threads: brief threads, rep $rep, $session"
            engine=ptrace own=
            [ "$session" = perf ] && engine=perf
            [ "$session" = 1 ] || [ "$session" = 0 ] && own=$session
            PTPROF_OWN_SESSION=$own "$PTPROF" record --engine "$engine" -f 1000 -d \
                -o "$TMP/b" -- "$BRIEF" threads 200 10 >"$TMP/truth" 2>"$TMP/err" || continue
            keep brief "$session" "$rep" rate \
                "$(sed -n 's/.*requested, \([0-9.]*\) Hz achieved.*/\1/p' "$TMP/err")"
            "$PTPROF" report "$TMP/b" -k procedure --format csv >"$TMP/csv" 2>/dev/null || continue
            keep brief "$session" "$rep" first "$(awk -F, '
                FNR == NR { if ($1 == "brief:") for (i = 2; i < 9; i += 2) t[i / 2] = $(i + 1); next }
                FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                $1 == "brief_first" { g[1] = $col["total_cpu_time"] }
                $1 == "brief_second" { g[2] = $col["total_cpu_time"] }
                $1 == "brief_third" { g[3] = $col["total_cpu_time"] }
                $1 == "brief_last" { g[4] = $col["total_cpu_time"] }
                END {
                    for (i = 1; i <= 4; i++) { ts += t[i]; gs += g[i] }
                    if (ts > 0 && gs > 0) printf "%+.2f", 100 * g[1] / gs - 100 * t[1] / ts }
                ' FS=' ' "$TMP/truth" FS=, "$TMP/csv")"
        done
    done
    for session in default 1 0 perf; do
        case $session in
        default) name="ptprof record --engine ptrace" ;;
        perf) name="ptprof record --engine perf" ;;
        *) name="PTPROF_OWN_SESSION=$session ptprof record --engine ptrace" ;;
        esac
        rate=$(raw_median "$RAW" brief "$session" rate)
        [ -n "$rate" ] || continue
        rate=$(awk -v r="$rate" 'BEGIN { printf "%.1f%%", r / 10 }')
        echo "| $name | $rate | $(raw_median "$RAW" brief "$session" first) |"
    done
fi

# Shares against the truth the workload prints: clockwork with 64 busy
# threads (its four functions, 40/30/20/10%), once per profiler.
CLOCKWORK=$BUILD/workloads/clockwork
[ -x "$CLOCKWORK" ] || exit 0
echo
echo "clockwork 64 150 together (64 busy threads reading their CPU clock every ~4 us), 1 kHz,"
echo "-g none: each function's share of the four minus the workload's own measure, in points."
echo
echo "| profiler | alpha | beta | gamma | delta | samples |"
echo "|---|---:|---:|---:|---:|---:|"
for engine in ptrace perf; do
    [ "$engine" = perf ] && [ "$have_perf" = 0 ] && continue
    say "many_threads: clockwork 64 threads, $engine"
    "$PTPROF" record --engine "$engine" -f 1000 -g none -o "$TMP/c" -- "$CLOCKWORK" 64 150 \
        together >"$TMP/truth" 2>/dev/null || continue
    "$PTPROF" report "$TMP/c" -k procedure --format csv >"$TMP/csv" 2>/dev/null || continue
    awk -F, -v name="ptprof record --engine $engine" '
        FNR == NR { if ($1 ~ /^work_/) t[$1] = $2; next }
        FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 ~ /^work_/ { g[$1] = $col["total_pct"]; n += $col["samples"] }
        END {
            split("work_alpha work_beta work_gamma work_delta", f, " ")
            for (i = 1; i <= 4; i++) { ts += t[f[i]]; gs += g[f[i]] }
            if (ts <= 0 || gs <= 0) exit
            printf "| %s |", name
            for (i = 1; i <= 4; i++) printf " %+.2f |", 100 * g[f[i]] / gs - 100 * t[f[i]] / ts
            printf " %d |\n", n }' FS=' ' "$TMP/truth" FS=, "$TMP/csv"
done
