#!/usr/bin/env bash
# bench/edges.sh - what profiles make of the edges of a program's life and
# of its waits, against the program's own clocks: short-lived processes and
# threads (CPU shares), and short waits (wall shares).
# Usage: bench/edges.sh [BUILD_DIR]
#
# brief (tests/workloads/brief.c: four functions of 40/30/20/10% of each
# process's or thread's CPU time, measured with its thread CPU clock), 100
# processes of 20 ms and 200 threads of 10 ms, at 1 kHz: ptprof record
# --engine perf (also at -f 4000), --engine ptrace, and perf record -F 1000
# -e cpu-clock.  waits (tests/workloads/waits.c: per round a sleep, a read()
# on a pipe fed every millisecond, a computation, each timed with
# CLOCK_MONOTONIC) for 2 s with 3/2/5, 1/1/5 and 20/20/10 ms rounds and with
# four threads of 3/2/5, at 1 kHz, under both engines: perf record samples
# CPU time only, it has no wall-clock view of waits without tracepoints or
# BPF.  Each case BENCH_REPS_EDGES (3) times, interleaved; a cell is the
# median share, with the largest error of the runs.  Prints a Markdown
# section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" edges
PERF=${PERF:-perf}
REPS=${BENCH_REPS_EDGES:-3}
BRIEF=$BUILD/workloads/brief
WAITS=$BUILD/workloads/waits

echo "## Short lives and short waits against the program's own clocks"
echo
if [ ! -x "$PTPROF" ] || [ ! -x "$BRIEF" ] || [ ! -x "$WAITS" ]; then
    echo "n/a: needs $PTPROF and the workloads brief and waits (make workloads)"
    exit 0
fi
HAVE_PERF=1
if ! command -v "$PERF" >/dev/null ||
    ! "$PERF" record -e cpu-clock -F 100 -o "$TMP/probe.data" -- true >/dev/null 2>&1; then
    HAVE_PERF=0
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
RAW=$TMP/raw # case tool rep name share truth
: >"$RAW"

# The shares of NAMES in a "name value" file, normalised over them.
shares() { # FILE NAMES...
    local file=$1
    shift
    awk -v names="$*" 'BEGIN { n = split(names, want, " ") }
        { v[$1] = $2 }
        END { for (i = 1; i <= n; i++) s += v[want[i]]
              for (i = 1; i <= n; i++) printf "%s %.6f\n", want[i], (s > 0 ? 100 * v[want[i]] / s : 0) }' "$file"
}

# A ptprof report column per function, as "name value" lines.
report_column() { # PROFILE COLUMN OPTIONS...
    local profile=$1 column=$2
    shift 2
    "$PTPROF" report "$profile" -k procedure --format csv "$@" 2>/dev/null |
        awk -F, -v col="$column" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
            c { name = $1; sub(/^.*:/, "", name); print name, $c }'
}

# brief: CASE ARGS -> rows for every tool of one repetition.
brief_rep() { # REP CASE ARGS...
    local rep=$1 case=$2 tool
    shift 2
    local names="brief_first brief_second brief_third brief_last"
    for tool in perf perf4000 ptrace perfrecord; do
        local out=$TMP/brief.out data=$TMP/brief.data
        case $tool in
        perf) "$PTPROF" record --engine perf -f 1000 -o "$data" -- "$BRIEF" "$@" >"$out" 2>/dev/null ;;
        perf4000) "$PTPROF" record --engine perf -f 4000 -o "$data" -- "$BRIEF" "$@" >"$out" 2>/dev/null ;;
        ptrace) "$PTPROF" record --engine ptrace -f 1000 -o "$data" -- "$BRIEF" "$@" >"$out" 2>/dev/null ;;
        perfrecord)
            [ "$HAVE_PERF" = 1 ] || continue
            "$PERF" record -q -e cpu-clock -F 1000 -o "$data" -- "$BRIEF" "$@" >"$out" 2>/dev/null
            ;;
        esac
        sed -n 's/^brief: first \([0-9]*\) second \([0-9]*\) third \([0-9]*\) last \([0-9]*\).*/brief_first \1\nbrief_second \2\nbrief_third \3\nbrief_last \4/p' \
            "$out" >"$TMP/truth"
        [ -s "$TMP/truth" ] || continue
        if [ "$tool" = perfrecord ]; then
            "$PERF" report -i "$data" --no-children --sort sym --stdio -q 2>/dev/null |
                awk '{ gsub(/%/, "", $1); print $NF, $1 }' >"$TMP/got"
        else
            report_column "$data" total_cpu_time >"$TMP/got"
        fi
        # shellcheck disable=SC2086 # names is a list
        join <(shares "$TMP/got" $names | sort) <(shares "$TMP/truth" $names | sort) |
            awk -v c="$case" -v t="$tool" -v r="$rep" -v OFS='\t' '{ print c, t, r, $1, $2, $3 }' >>"$RAW"
    done
}

waits_rep() { # REP CASE ARGS...
    local rep=$1 case=$2 engine
    shift 2
    local names="wait_sleep wait_read wait_compute"
    for engine in perf ptrace; do
        local out=$TMP/waits.out data=$TMP/waits.data
        "$PTPROF" record --engine "$engine" -f 1000 -o "$data" -- "$WAITS" 2 "$@" >"$out" 2>/dev/null
        sed -n 's/^waits: sleep \([0-9]*\) read \([0-9]*\) compute \([0-9]*\).*/wait_sleep \1\nwait_read \2\nwait_compute \3/p' \
            "$out" >"$TMP/truth"
        [ -s "$TMP/truth" ] || continue
        report_column "$data" total_wall_time --wall >"$TMP/got"
        # shellcheck disable=SC2086 # names is a list
        join <(shares "$TMP/got" $names | sort) <(shares "$TMP/truth" $names | sort) |
            awk -v c="$case" -v t="$engine" -v r="$rep" -v OFS='\t' '{ print c, t, r, $1, $2, $3 }' >>"$RAW"
    done
}

for rep in $(seq 1 "$REPS"); do
    say "edges: repetition $rep of $REPS"
    brief_rep "$rep" "100 processes of 20 ms" processes 100 20
    brief_rep "$rep" "200 threads of 10 ms" threads 200 10
    waits_rep "$rep" "3/2/5 ms, 1 thread" 3 2 5 1
    waits_rep "$rep" "1/1/5 ms, 1 thread" 1 1 5 1
    waits_rep "$rep" "20/20/10 ms, 1 thread" 20 20 10 1
    waits_rep "$rep" "3/2/5 ms, 4 threads" 3 2 5 4
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# A cell: the median share of NAME by TOOL in CASE, the median of the
# program's own shares in the same runs, and the largest distance of a
# run's share from the program's own in that run.
cell() { # CASE TOOL NAME
    local m t
    m=$(raw_median "$RAW" "$1" "$2" "$3")
    [ -n "$m" ] || {
        printf 'n/a'
        return
    }
    awk -F'\t' -v OFS='\t' '{ print $1, $2, $3, $4, $6 }' "$RAW" >"$TMP/truth.raw"
    t=$(raw_median "$TMP/truth.raw" "$1" "$2" "$3")
    awk -F'\t' -v c="$1" -v t="$2" -v n="$3" -v m="$m" -v own="$t" '$1 == c && $2 == t && $4 == n {
            err = $5 - $6; if (err < 0) err = -err; if (err > max) max = err }
        END { printf "%.1f / %.1f (±%.1f)", m, own, max }' "$RAW"
}

echo "Load average (1, 5, 15 min) before: $LOAD_BEFORE; after: $LOAD_AFTER (2 CPUs; other jobs ran)."
bench_machine
echo "Each cell: the median share in the profiles over $REPS runs / the median of the program's own"
echo "shares in the same runs (its own clocks), and in parentheses the largest distance of a run's"
echo "share from the program's own in that run (percentage points)."
echo
echo "### Short-lived processes and threads: CPU shares of four functions (1 kHz)"
echo
for case in "100 processes of 20 ms" "200 threads of 10 ms"; do
    echo "$case:"
    echo
    echo "| | first (40%) | second (30%) | third (20%) | last (10%) |"
    echo "|---|---:|---:|---:|---:|"
    for tool in "perf:ptprof --engine perf" "perf4000:ptprof --engine perf -f 4000" \
        "ptrace:ptprof --engine ptrace" "perfrecord:perf record -F 1000"; do
        # shellcheck disable=SC2016 # backquotes for Markdown
        printf '| `%s` |' "${tool#*:}"
        for n in brief_first brief_second brief_third brief_last; do
            printf ' %s |' "$(cell "$case" "${tool%%:*}" $n)"
        done
        echo
    done
    echo
done
echo "### Short waits: shares of a thread's wall time (1 kHz)"
echo
echo "perf record: n/a (it samples CPU time; a wall-clock view of waits needs tracepoints or BPF)."
echo
echo "| round | | sleep | read | compute |"
echo "|---|---|---:|---:|---:|"
for case in "3/2/5 ms, 1 thread" "1/1/5 ms, 1 thread" "20/20/10 ms, 1 thread" "3/2/5 ms, 4 threads"; do
    for tool in perf ptrace; do
        # shellcheck disable=SC2016 # backquotes for Markdown
        printf '| %s | `ptprof --engine %s` |' "$case" "$tool"
        for n in wait_sleep wait_read wait_compute; do printf ' %s |' "$(cell "$case" $tool $n)"; done
        echo
    done
done
