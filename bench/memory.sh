#!/usr/bin/env bash
# bench/memory.sh - peak memory (RSS) of ptprof's readers on large valid
# profiles of every format, next to the format's own tools on the same files
# (issue 19: memory must stay in proportion to the input).
# Usage: bench/memory.sh [BUILD_DIR]   (default build)
#
# For each format, a file of MEMORY_BENCH_MB (100) megabytes made by
# bench/memory_gen.c (folded stacks, a pprof of many tiny samples, a 64-bit
# gperftools profile, a gmon.out whose every bin was hit, the original
# sampler's raw format); a native profile converted from the folded one; and
# a perf.data of perf record -g on the callers workload with its perf script
# text.  Each command runs once under GNU time (%M: the peak RSS
# of the process), with a time limit of MEMORY_BENCH_TIMEOUT (600) seconds.
# The target is 4x the input, or 256 MB more than the profile's distinct
# content: the table gives the ratio to the input.  Peers: google-pprof
# --text (gperftools), go tool pprof -top (pprof), gprof -b (gmon), perf
# report --stdio (perf.data).  Prints a Markdown section on stdout and progress on stderr;
# never fails on a missing tool (n/a) or a command that fails (its status).
# Each command is held to MEMORY_BENCH_CAP_MB (4096) of address space, so a
# reader out of proportion ends "out of memory" (exit 70) rather than
# pushing a shared machine into swap.
# Environment: MEMORY_BENCH_MB, MEMORY_BENCH_TIMEOUT, MEMORY_BENCH_CAP_MB,
# PERF, GOOGLE_PPROF.
# The backquotes in the printf formats are Markdown, not expansions.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

MB=${MEMORY_BENCH_MB:-100}
LIMIT=${MEMORY_BENCH_TIMEOUT:-600}
CAP_MB=${MEMORY_BENCH_CAP_MB:-4096}
PTPROF=$BUILD/ptprof
PERF=${PERF:-$(command -v perf || true)}
PPROF=${GOOGLE_PPROF:-$(command -v google-pprof || command -v pprof || true)}
GPROF=$(command -v gprof || true)
GNU_TIME=$(command -v time || true)
[ -x /usr/bin/time ] && GNU_TIME=/usr/bin/time

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-memory-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

say() { printf '%s\n' "$*" >&2; }

printf '## Peak memory of the readers\n\nInputs of %s MB (MEMORY_BENCH_MB).\n\n' "$MB"
if [ ! -x "$PTPROF" ] || [ -z "$GNU_TIME" ] || ! "$GNU_TIME" -f %M true >/dev/null 2>&1; then
    printf 'n/a: needs %s and GNU time\n\n' "$PTPROF"
    exit 0
fi
mkdir -p "$BUILD/bench"
GEN=$BUILD/bench/memory_gen
if ! cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$GEN" bench/memory_gen.c; then
    say "bench: cannot build bench/memory_gen.c"
    exit 1
fi

# peak CMD...: "RSS_MB SECONDS STATUS" of CMD (output discarded).
peak() {
    local out
    out=$( (ulimit -v $((CAP_MB * 1024)) && exec timeout "$LIMIT" "$GNU_TIME" -f '%M %e %x' "$@") \
        2>&1 >/dev/null | tail -1)
    case $out in
    *[0-9]\ *[0-9]\ *[0-9]*) awk '{ printf "%.0f %.1f %s\n", $1 / 1024, $2, $3 }' <<<"$out" ;;
    *) echo "- - timeout" ;;
    esac
}

# row FORMAT FILE TOOL CMD...: one line of the table.
row() {
    local format=$1 file=$2 tool=$3 size rss secs status
    shift 3
    size=$(stat -c %s "$file")
    read -r rss secs status < <(peak "$@")
    say "bench: memory: $format: $tool: ${rss} MB, ${secs} s, status $status"
    local ratio=-
    [ "$rss" != - ] && ratio=$(awk -v r="$rss" -v s="$size" 'BEGIN { printf "%.1fx", r * 1048576 / s }')
    printf '| %s | %.0f MB | `%s` | %s MB | %s | %s s | %s |\n' "$format" "$((size / 1048576))" \
        "$tool" "$rss" "$ratio" "$secs" "$status"
}

printf '| format | input | command | peak RSS | RSS / input | wall | exit |\n'
printf '|---|---:|---|---:|---:|---:|---:|\n'
for format in folded pprof gperftools gmon pperf; do
    file=$TMP/big.$format
    say "bench: memory: generating $MB MB of $format"
    "$GEN" "$format" "$MB" >"$file" || continue
    for cmd in info report flamegraph; do
        case $cmd in
        flamegraph) row "$format" "$file" "ptprof flamegraph" "$PTPROF" flamegraph -o "$TMP/f.svg" "$file" ;;
        *) row "$format" "$file" "ptprof $cmd" "$PTPROF" "$cmd" "$file" ;;
        esac
    done
    case $format in
    pprof)
        if command -v go >/dev/null; then
            row "$format" "$file" "go tool pprof -top" go tool pprof -top "$file"
        else
            printf '| %s | | `go tool pprof -top` | n/a | | | |\n' "$format"
        fi
        ;;
    gperftools)
        if [ -n "$PPROF" ]; then
            row "$format" "$file" "google-pprof --text" "$PPROF" --text /bin/true "$file"
        else
            printf '| %s | | `google-pprof --text` | n/a | | | |\n' "$format"
        fi
        ;;
    gmon)
        # gprof wants the program whose text the histogram covers: any ELF
        # file takes the place of it (every bin is [unknown] code to both).
        if [ -n "$GPROF" ]; then
            row "$format" "$file" "gprof -b" "$GPROF" -b "$PTPROF" "$file"
        else
            printf '| %s | | `gprof -b` | n/a | | | |\n' "$format"
        fi
        ;;
    folded)
        say "bench: memory: converting to native"
        if "$PTPROF" convert "$file" -o "$TMP/big.native" 2>/dev/null; then
            for cmd in info report; do
                row native "$TMP/big.native" "ptprof $cmd" "$PTPROF" "$cmd" "$TMP/big.native"
            done
        fi
        ;;
    esac
    rm -f "$file" "$TMP/big.native" "$TMP/f.svg"
done

# perf.data: as large as perf record -g makes it in a few seconds.
if [ -n "$PERF" ] && [ -x "$BUILD/workloads/callers" ] &&
    "$PERF" record -q -g -F 20000 -o "$TMP/perf.data" -- "$BUILD/workloads/callers" 5 \
        >/dev/null 2>&1; then
    for cmd in info report flamegraph; do
        case $cmd in
        flamegraph) row perf.data "$TMP/perf.data" "ptprof flamegraph" "$PTPROF" flamegraph -o "$TMP/f.svg" "$TMP/perf.data" ;;
        *) row perf.data "$TMP/perf.data" "ptprof $cmd" "$PTPROF" "$cmd" "$TMP/perf.data" ;;
        esac
    done
    row perf.data "$TMP/perf.data" "perf report --stdio" "$PERF" report --stdio -i "$TMP/perf.data"
    if "$PERF" script -i "$TMP/perf.data" >"$TMP/perf.script" 2>/dev/null; then
        for cmd in info report; do
            row perf-script "$TMP/perf.script" "ptprof $cmd" "$PTPROF" "$cmd" "$TMP/perf.script"
        done
    fi
    rm -f "$TMP/perf.script" "$TMP/f.svg"
else
    printf '| perf.data | | `perf report --stdio` | n/a | | | |\n'
fi
echo
printf 'One run each on a shared 2-CPU machine (other work running): the wall\n'
printf 'times are indications only; the RSS is what the run reached.\n'
