#!/usr/bin/env bash
# bench/stack_copy.sh - what copying stacks costs, and what copying too
# little loses, with either engine.  Usage: bench/stack_copy.sh [BUILD_DIR]
# (default build)
#
# `ptprof record -d -f 1000` (DWARF stacks) on two programs: callers (a
# shallow stack) and the sqlite3 shell running SQL deep in its virtual
# machine (skipped when sqlite3 is not installed), with
#   - the ptrace engine's default: 8 KiB, the whole stack when its top is
#     within 4 copies, a thread's copy doubled (up to 128 KiB) after a cut
#     stack; the same 8 KiB copy, fixed (PTPROF_STACK_GROW=0: what ptprof
#     did before), and a fixed 64 KiB copy;
#   - the perf engine (where perf_event_open is permitted), whose copy the
#     kernel makes with each sample, one size for the recording: perf's
#     8 KiB, ptprof's default 32 KiB, and 64 KiB.
# Per run: the time copying takes inside the stop window per sample (ptrace;
# the perf engine stops nothing), the unwinding per sample, the mean
# latency per sample, the bytes of a sample record in the ring buffer
# (perf), the achieved share of the requested rate, and the share of
# samples whose stack was cut at the end of its copy (`-d`).  Medians of
# BENCH_REPS (3) runs.  Prints a Markdown section; never fails the caller.
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 0
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PTPROF=$BUILD/ptprof
REPS=${BENCH_REPS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-stacks.XXXXXX") || exit 0
trap 'rm -rf "$TMP"' EXIT

echo "## Stack copies: cost and cut stacks (ptprof record -d, DWARF, 1000 Hz)"
echo
if [ ! -x "$PTPROF" ] || [ ! -x "$BUILD/workloads/callers" ]; then
    echo "n/a: $PTPROF or $BUILD/workloads/callers missing (make workloads)"
    exit 0
fi

cat >"$TMP/q.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000)
  INSERT INTO t SELECT x, printf('row %d', x * 7919 % 5000), x * 0.5 FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(t1.b)), avg(t2.c) FROM t t1 JOIN t t2 ON t1.b = t2.b
  WHERE t1.a % 50 = 0;
WITH RECURSIVE f(n, v) AS (SELECT 0, 0 UNION ALL
  SELECT n + 1, (v * 31 + n) % 1000003 FROM f WHERE n < 1000000) SELECT max(v) FROM f;
EOF

median() { sort -g | awk '{ v[NR] = $1 } END {
    if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "$2" "$1"; }

echo "| program | engine | copy | copying µs/sample | unwind µs/sample | latency µs/sample |" \
    "bytes/record | achieved | cut stacks |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
perf_ok=1
timeout 20 "$PTPROF" record --engine perf -o /dev/null -- true >/dev/null 2>&1 || perf_ok=0
for program in callers sqlite3; do
    case $program in
    callers) cmd=("$BUILD/workloads/callers" 2) ;;
    sqlite3)
        if ! command -v sqlite3 >/dev/null; then
            echo "| sqlite3 | – | – | n/a | n/a | n/a | n/a | n/a | n/a |"
            continue
        fi
        cmd=(sqlite3 :memory: -cmd ".read $TMP/q.sql")
        ;;
    esac
    for setting in "ptrace|8 KiB, near top, grows|8192|1" "ptrace|8 KiB fixed|8192|0" \
        "ptrace|64 KiB fixed|65536|0" "perf|8 KiB (perf's)|8192|1" \
        "perf|32 KiB (default)|32768|1" "perf|64 KiB|65000|1"; do
        IFS='|' read -r engine name size grow <<<"$setting"
        if [ "$engine" = perf ] && [ "$perf_ok" = 0 ]; then
            echo "| $program | perf | $name | n/a | n/a | n/a | n/a | n/a | n/a |"
            continue
        fi
        : >"$TMP/copy" && : >"$TMP/unwind" && : >"$TMP/lat" && : >"$TMP/cut" && : >"$TMP/bytes"
        : >"$TMP/rate"
        for ((rep = 1; rep <= REPS; rep++)); do
            if ! PTPROF_STACK_GROW=$grow timeout 120 "$PTPROF" record --engine "$engine" -d \
                -f 1000 --stack-size "$size" -o "$TMP/p.data" -- "${cmd[@]}" \
                </dev/null >/dev/null 2>"$TMP/err"; then
                continue
            fi
            field "$TMP/err" 's/^\[debug\] window:.*(copying \([0-9.]*\) us).*/\1/p' >>"$TMP/copy"
            field "$TMP/err" 's/^\[debug\] outside:.*unwind \([0-9.]*\) us.*/\1/p' >>"$TMP/unwind"
            field "$TMP/err" 's/^\[debug\] latency:.*, \([0-9.]*\) us per sample.*/\1/p' \
                >>"$TMP/lat"
            field "$TMP/err" 's/^\[debug\] rings:.*, \([0-9.]*\) bytes per sample record/\1/p' \
                >>"$TMP/bytes"
            # "[debug] stacks: N cut ..." against "[debug] samples: I ideal, A actual"
            # (one thread: one stack per sample).
            awk '$1 == "[debug]" && $2 == "samples:" { i = $3; a = $5 }
                 $1 == "[debug]" && $2 == "stacks:" { c = $3 }
                 END { if (a > 0) printf "%.2f\n", 100 * c / a }' "$TMP/err" >>"$TMP/cut"
            awk '$1 == "[debug]" && $2 == "samples:" { if ($3 > 0) printf "%.1f\n", 100 * $5 / $3 }' \
                "$TMP/err" >>"$TMP/rate"
        done
        copy=$(median <"$TMP/copy") bytes=$(median <"$TMP/bytes")
        printf '| %s | %s | %s | %s | %s | %s | %s | %s%% | %s%% |\n' "$program" "$engine" \
            "$name" "${copy:-–}" "$(median <"$TMP/unwind")" "$(median <"$TMP/lat")" \
            "${bytes:-–}" "$(median <"$TMP/rate")" "$(median <"$TMP/cut")"
    done
done
echo
exit 0
