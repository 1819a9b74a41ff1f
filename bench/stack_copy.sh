#!/usr/bin/env bash
# bench/stack_copy.sh - what copying stacks costs, and what copying too
# little loses.  Usage: bench/stack_copy.sh [BUILD_DIR]   (default build)
#
# `ptprof record --engine ptrace -d -f 1000` (DWARF stacks) on two programs: callers (a
# shallow stack) and the sqlite3 shell running SQL deep in its virtual
# machine (skipped when sqlite3 is not installed), with
#   - the default: 8 KiB, the whole stack when its top is within 4 copies,
#     a thread's copy doubled (up to 128 KiB) after a cut stack;
#   - the same 8 KiB copy, fixed (PTPROF_STACK_GROW=0: what ptprof did
#     before), and a fixed 64 KiB copy.
# Per run: the time copying takes inside the stop window per sample, the
# unwinding per sample after it, the mean latency per sample, and the share
# of samples whose stack was cut at the end of its copy (`-d`).  Medians of
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

echo "## Stack copies: cost and cut stacks (ptprof record --engine ptrace -d, DWARF, 1000 Hz)"
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

echo "| program | copy | copying µs/sample | unwind µs/sample | latency µs/sample |" \
    "cut stacks |"
echo "|---|---|---:|---:|---:|---:|"
for program in callers sqlite3; do
    case $program in
    callers) cmd=("$BUILD/workloads/callers" 2) ;;
    sqlite3)
        if ! command -v sqlite3 >/dev/null; then
            echo "| sqlite3 | – | n/a | n/a | n/a | n/a |"
            continue
        fi
        cmd=(sqlite3 :memory: -cmd ".read $TMP/q.sql")
        ;;
    esac
    for setting in "8 KiB, near top, grows|8192|1" "8 KiB fixed|8192|0" "64 KiB fixed|65536|0"; do
        IFS='|' read -r name size grow <<<"$setting"
        : >"$TMP/copy" && : >"$TMP/unwind" && : >"$TMP/lat" && : >"$TMP/cut"
        for ((rep = 1; rep <= REPS; rep++)); do
            if ! PTPROF_STACK_GROW=$grow timeout 120 "$PTPROF" record --engine ptrace -d -f 1000 \
                --stack-size "$size" -o "$TMP/p.data" -- "${cmd[@]}" \
                </dev/null >/dev/null 2>"$TMP/err"; then
                continue
            fi
            field "$TMP/err" 's/^\[debug\] window:.*(copying \([0-9.]*\) us).*/\1/p' >>"$TMP/copy"
            field "$TMP/err" 's/^\[debug\] outside:.*unwind \([0-9.]*\) us.*/\1/p' >>"$TMP/unwind"
            field "$TMP/err" 's/^\[debug\] latency:.*, \([0-9.]*\) us per sample/\1/p' \
                >>"$TMP/lat"
            # "[debug] stacks: N cut ..." against "[debug] samples: I ideal, A actual"
            # (one thread: one stack per sample).
            awk '$1 == "[debug]" && $2 == "samples:" { a = $5 }
                 $1 == "[debug]" && $2 == "stacks:" { c = $3 }
                 END { if (a > 0) printf "%.2f\n", 100 * c / a }' "$TMP/err" >>"$TMP/cut"
        done
        printf '| %s | %s | %s | %s | %s | %s%% |\n' "$program" "$name" \
            "$(median <"$TMP/copy")" "$(median <"$TMP/unwind")" "$(median <"$TMP/lat")" \
            "$(median <"$TMP/cut")"
    done
done
echo
exit 0
