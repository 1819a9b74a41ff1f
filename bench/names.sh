#!/usr/bin/env bash
# bench/names.sh - how much of real programs' CPU time ptprof cannot name,
# next to `perf report` on the same runs.  Usage: bench/names.sh [BUILD_DIR]
#
# Each program runs once under both profilers at the same time:
#   perf record -e cpu-clock -F HZ -g -- ptprof record -f HZ -- PROGRAM
# perf follows ptprof's children, so both sample the same execution (perf's
# samples of ptprof itself are left out).  The programs: a compressor (xz
# -9 on random base64 text), sqlite3 (a table built, indexed, searched and
# grouped in memory), python3 (string and dict work), node (--perf-basic-
# prof, a hot JavaScript loop) and a gcc compile (-O2 -g of ptprof's
# src/analyze/*.c: gcc, cc1 and as, each a process of its own).
#
# Unnamed: for ptprof (`report -k procedure --metric cpu`), rows named
# BINARY+0xOFFSET (no symbol: for code with .eh_frame one row per function,
# docs/symbols.md), [anon]+0x..., [unmapped] and [unknown]; for perf
# (`report --no-children --sort comm,sym`), symbols that are a bare address
# or [unknown].  Both as the share of the program's CPU samples, and the
# number of such rows (perf has one per address, ptprof one per function).
# No debuginfod server is asked (DEBUGINFOD_URLS is unset): what this
# machine has installed is what both name.
#
# Environment: NAMES_HZ (499), NAMES_SECONDS (about 4 s per program),
# PERF (perf).  Prints a Markdown section on stdout (progress on stderr);
# never fails the caller: a missing tool is n/a for its row.
# Backquotes in the printf texts are Markdown, not command substitution.
# shellcheck disable=SC2016
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 0
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PTPROF=$BUILD/ptprof
PERF=${PERF:-perf}
HZ=${NAMES_HZ:-499}
SECS=${NAMES_SECONDS:-4}
unset DEBUGINFOD_URLS

say() { printf '%s\n' "$*" >&2; }

printf '## Unnamed samples on real programs: ptprof vs perf report\n\n'
if [ ! -x "$PTPROF" ] || ! command -v "$PERF" >/dev/null; then
    printf 'n/a: needs %s and %s\n\n' "$PTPROF" "$PERF"
    exit 0
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-names.XXXXXX") || exit 0
trap 'rm -rf "$TMP"' EXIT

# --- the programs' inputs ----------------------------------------------------

head -c $((6 * 1024 * 1024)) /dev/urandom | base64 >"$TMP/input.txt"
cat >"$TMP/q.sql" <<EOF
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
  INSERT INTO t SELECT x, hex(randomblob(12)) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM t WHERE b LIKE '%A0B%';
SELECT a % 97, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 500000;
EOF
cat >"$TMP/work.py" <<EOF
import time
end = time.time() + $SECS
d, n = {}, 0
while time.time() < end:
    for i in range(20000):
        k = "key%d" % (i * 7919 % 10007)
        d[k] = d.get(k, 0) + len(k.upper())
        n += 1
print(n > 0)
EOF
cat >"$TMP/work.js" <<EOF
function mix(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + (i ^ (s >>> 3))) | 0; return s; }
function strings(n) { let a = []; for (let i = 0; i < n; i++) a.push(("x" + i).repeat(3)); return a.join(",").length; }
let t = 0; const end = Date.now() + $SECS * 1000;
while (Date.now() < end) { t += mix(2000000); t += strings(20000); }
console.log(t !== 0.5);
EOF

ls /tmp/perf-*.map >"$TMP/maps.before" 2>/dev/null

# name|command...  (run in $TMP)
PROGRAMS=(
    "xz -9|xz -9 -T1 -c input.txt"
    "sqlite3|sqlite3 :memory: <q.sql"
    "python3|/usr/bin/python3 work.py"
    "node|node --perf-basic-prof work.js"
    "gcc -O2 -g|gcc -O2 -g -c -D_GNU_SOURCE -I$ROOT/src $ROOT/src/analyze/*.c"
)

# ptprof: CPU share and row count of unnamed procedures in report CSV.
ptprof_unnamed() {
    "$PTPROF" report -k procedure --metric cpu --format csv --threshold 0 --no-cache "$1" \
        2>/dev/null | awk '
        # The fields of one CSV line (RFC 4180 quotes) into f[1..n].
        function split_csv(line, f,    n, i, c, q, cur) {
            n = 0; cur = ""; q = 0
            for (i = 1; i <= length(line); i++) {
                c = substr(line, i, 1)
                if (q) {
                    if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
                    else if (c == "\"") q = 0
                    else cur = cur c
                } else if (c == "\"") q = 1
                else if (c == ",") { f[++n] = cur; cur = "" }
                else cur = cur c
            }
            f[++n] = cur
            return n
        }
        NR == 1 { n = split_csv($0, h); for (i = 1; i <= n; i++) if (h[i] == "cpu_time_pct") col = i; next }
        {
            split_csv($0, f)
            v = f[col] + 0
            all += v
            if (v > 0 && (f[1] ~ /\+0x[0-9a-f]+$/ || f[1] == "[unmapped]" || f[1] == "[unknown]")) {
                un += v; rows++
            }
        }
        END { printf "%.1f %d\n", (all > 0 ? 100 * un / all : 0), rows }'
}

# perf: the same over the symbols of every comm but ptprof's.
perf_unnamed() {
    "$PERF" report -i "$1" --stdio --no-children -g none --sort comm,sym -t '|' \
        --percent-limit 0 2>/dev/null | awk -F'|' '
        /^#/ || NF < 3 { next }
        {
            v = $1; sub(/%.*/, "", v); v += 0
            comm = $2; gsub(/^ +| +$/, "", comm)
            sym = $3; for (i = 4; i <= NF; i++) sym = sym "|" $i
            gsub(/^ +| +$/, "", sym)
            if (comm == "ptprof") next
            all += v
            if (sym ~ /^\[.\] 0x[0-9a-f]+$/ || sym ~ /\[unknown\]/) { un += v; rows++ }
        }
        END { printf "%.1f %d\n", (all > 0 ? 100 * un / all : 0), rows }'
}

printf 'Each program ran once under both: `%s record -e cpu-clock -F %s -g -- ptprof record -f %s -- PROGRAM`.\n' \
    "$PERF" "$HZ" "$HZ"
printf 'Unnamed: no symbol (ptprof: `BINARY+0xOFFSET`, one row per function where `.eh_frame` bounds it;\n'
printf 'perf: a bare address or `[unknown]`), as a share of the program'"'"'s CPU samples; rows: how many\n'
printf 'such rows each report lists. No debuginfod server; this machine'"'"'s debug packages only.\n\n'
printf '| program | ptprof unnamed | ptprof unnamed rows | perf unnamed | perf unnamed rows | samples (ptprof) |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for entry in "${PROGRAMS[@]}"; do
    name=${entry%%|*}
    cmd=${entry#*|}
    tool=${cmd%% *}
    if ! command -v "$tool" >/dev/null; then
        printf '| %s | n/a | | n/a | | (no %s) |\n' "$name" "$tool"
        continue
    fi
    say "bench: names: $name"
    slug=${name%% *}
    # shellcheck disable=SC2086
    (cd "$TMP" && eval "timeout 300 \"$PERF\" record -q -e cpu-clock -F $HZ -g -o $slug.perf -- \
        \"$PTPROF\" record -f $HZ -o $slug.data -- $cmd" >/dev/null 2>"$TMP/$slug.err")
    if [ ! -s "$TMP/$slug.data" ] || [ ! -s "$TMP/$slug.perf" ]; then
        printf '| %s | n/a | | n/a | | (the run failed: %s) |\n' "$name" \
            "$(tail -1 "$TMP/$slug.err" | tr '|' ' ')"
        continue
    fi
    read -r p_share p_rows < <(ptprof_unnamed "$TMP/$slug.data")
    read -r f_share f_rows < <(perf_unnamed "$TMP/$slug.perf")
    samples=$("$PTPROF" info "$TMP/$slug.data" 2>/dev/null | awk '$1 == "samples:" { print $2; exit }')
    printf '| %s | %s%% | %s | %s%% | %s | %s |\n' "$name" "$p_share" "$p_rows" "$f_share" \
        "$f_rows" "${samples:-?}"
    # A JIT's perf map was needed by perf report; the profile has a copy.
    for map in /tmp/perf-*.map; do
        [ -e "$map" ] && ! grep -qxF "$map" "$TMP/maps.before" && rm -f "$map"
    done
done
printf '\nptprof charges CPU time the kernel spent for a thread outside a system call (page\n'
printf 'faults, interrupts) to the user PC it was at, where perf names the kernel function; so\n'
printf 'where a program faults much, ptprof'"'"'s share of unnamed user code is a little higher.\n'
printf 'Load average at the end: %s.\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
