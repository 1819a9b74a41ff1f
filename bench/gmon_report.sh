#!/usr/bin/env bash
# bench/gmon_report.sh - `ptprof report` against `gprof -b -p` on a large
# gmon.out.  Usage: bench/gmon_report.sh [BUILD_DIR]   (default build)
#
# The program: GMON_FUNCS (10000) generated functions, each calling two
# others (pseudo-randomly chosen), main() calling 64 of them 8 levels deep,
# built with gcc -pg -O0 and run for GMON_SECONDS (5) of CPU time, so its
# gmon.out holds a real histogram over a large text and an arc per call
# site that ran.  The file is then made large by repeating its records
# GMON_REPEAT (40) times: gprof adds repeated histograms of one range and
# repeated arcs, so this is the profile of a run GMON_REPEAT times as long.
# Both tools read the same file, the binary named a.out in a directory
# (gprof's default name, found by `ptprof report -s DIR`), each run
# BENCH_REPS (3) times; the medians are compared.  ptprof runs with
# --no-cache so every run reads the binary's symbols as gprof does.
#
# Prints a Markdown section on stdout (progress on stderr).  Never fails the
# caller: a missing tool or a failed run is reported as n/a, a missed target
# as MISS.  Target: ptprof no slower than gprof.
set -u -o pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 0
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PTPROF=$BUILD/ptprof
FUNCS=${GMON_FUNCS:-10000}
SECONDS_RUN=${GMON_SECONDS:-5}
REPEAT=${GMON_REPEAT:-40}
REPS=${BENCH_REPS:-3}

say() { printf '%s\n' "$*" >&2; }

section() {
    printf '## gmon.out: ptprof report vs gprof -b -p\n\n'
}

na() {
    section
    printf 'n/a: %s\n\n' "$*"
    exit 0
}

for tool in gcc gprof; do
    command -v "$tool" >/dev/null || na "$tool is not installed"
done
[ -x "$PTPROF" ] || na "$PTPROF is not built"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-gmon-bench.XXXXXX") || exit 0
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/bin"

# --- the program ------------------------------------------------------------

say "gmon bench: generating $FUNCS functions"
awk -v n="$FUNCS" -v roots=64 -v depth=8 'BEGIN {
    print "#include <stdlib.h>"
    print "#include <time.h>"
    print "#define K __attribute__((noinline, noclone))"
    for (i = 0; i < n; i++)
        printf "K unsigned long f%d(unsigned long x, int d);\n", i
    for (i = 0; i < n; i++) {
        printf "K unsigned long f%d(unsigned long x, int d)\n{\n", i
        printf "    for (int r = 0; r < %d; r++) {\n", 4 + i % 13
        printf "        x ^= x >> %d;\n        x *= %luUL;\n    }\n", 5 + i % 23, 2654435761 + 2 * i
        printf "    if (d > 0) {\n        x += f%d(x, d - 1);\n", (i * 7 + 1) % n
        printf "        x ^= f%d(x + %d, d - 1);\n    }\n    return x;\n}\n", (i * 13 + 5) % n, i
    }
    print "static unsigned long (*const table[])(unsigned long, int) = {"
    for (i = 0; i < n; i++)
        printf "    f%d,\n", i
    print "};"
    print "int main(int argc, char **argv)"
    print "{"
    print "    double secs = argc > 1 ? atof(argv[1]) : 5;"
    print "    unsigned long acc = 0;"
    print "    struct timespec t;"
    print "    do {"
    printf "        for (unsigned i = 0; i < %d; i++)\n", roots
    printf "            acc += table[i * %d](acc + i, %d);\n", n / roots, depth
    print "        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);"
    print "    } while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < secs);"
    print "    return acc == 1;"
    print "}"
}' >"$TMP/big.c"

say "gmon bench: building with gcc -pg"
if ! gcc -std=gnu11 -O0 -pg -o "$TMP/bin/a.out" "$TMP/big.c" 2>"$TMP/cc.err"; then
    na "cannot build the program: $(head -3 "$TMP/cc.err")"
fi
say "gmon bench: running it for $SECONDS_RUN s of CPU"
if ! (cd "$TMP" && env -u GMON_OUT_PREFIX ./bin/a.out "$SECONDS_RUN") || [ ! -s "$TMP/gmon.out" ]; then
    na "the -pg program wrote no gmon.out"
fi

# The header once, then every record REPEAT times.
{
    head -c 20 "$TMP/gmon.out"
    for ((i = 0; i < REPEAT; i++)); do
        tail -c +21 "$TMP/gmon.out"
    done
} >"$TMP/big.gmon"
SIZE=$(stat -c %s "$TMP/big.gmon")
ONE=$(stat -c %s "$TMP/gmon.out")
TEXT=$(size -A "$TMP/bin/a.out" 2>/dev/null | awk '$1 == ".text" { print $2 }')

# --- the runs ---------------------------------------------------------------

now() { date +%s.%N; }

# run_one OUT CMD...: wall seconds of one run into $LAST (empty on failure),
# peak RSS (KB) into $LAST_RSS when /usr/bin/time is there.
run_one() {
    local out=$1
    shift
    local t0 t1
    LAST_RSS=
    t0=$(now)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M -o "$TMP/rss" "$@" >"$out" 2>"$TMP/err" || {
            LAST=
            return
        }
        LAST_RSS=$(tail -1 "$TMP/rss")
    else
        "$@" >"$out" 2>"$TMP/err" || {
            LAST=
            return
        }
    fi
    t1=$(now)
    LAST=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

: >"$TMP/gprof.times"
: >"$TMP/ptprof.times"
: >"$TMP/gprof.rss"
: >"$TMP/ptprof.rss"
for ((r = 0; r < REPS; r++)); do
    say "gmon bench: repetition $((r + 1)) of $REPS"
    # Alternate which goes first so drift of a shared machine hits both.
    for tool in gprof ptprof; do
        [ $((r % 2)) = 1 ] && tool=$([ "$tool" = gprof ] && echo ptprof || echo gprof)
        if [ "$tool" = gprof ]; then
            run_one "$TMP/gprof.out" gprof -b -p "$TMP/bin/a.out" "$TMP/big.gmon"
        else
            run_one "$TMP/ptprof.out" "$PTPROF" report --no-cache -s "$TMP/bin" "$TMP/big.gmon"
        fi
        if [ -n "$LAST" ]; then
            echo "$LAST" >>"$TMP/$tool.times"
            [ -n "$LAST_RSS" ] && echo "$LAST_RSS" >>"$TMP/$tool.rss"
        else
            say "gmon bench: $tool failed: $(head -3 "$TMP/err")"
        fi
    done
done

G=$(median <"$TMP/gprof.times")
P=$(median <"$TMP/ptprof.times")
GR=$(median <"$TMP/gprof.rss")
PR=$(median <"$TMP/ptprof.rss")
# Both must have read the same thing: the total self time.
TOTAL_G=$(awk 'NR > 5 && NF >= 4 { s += $3 } END { printf "%.2f", s }' "$TMP/gprof.out" 2>/dev/null)
TOTAL_P=$(awk '/ cpu [0-9.]+ s/ { for (i = 1; i < NF; i++) if ($i == "cpu") { print $(i + 1); exit } }' \
    "$TMP/ptprof.out" 2>/dev/null)

section
printf 'File: %s MB: the records of one %s s run of a gcc -pg program with %s\n' \
    "$(awk -v s="$SIZE" 'BEGIN { printf "%.1f", s / 1048576 }')" "$SECONDS_RUN" "$FUNCS"
printf 'functions (.text %s bytes; its gmon.out %s bytes) repeated %s times.\n' \
    "${TEXT:-?}" "$ONE" "$REPEAT"
printf 'Self time in all: gprof %s s, ptprof %s s. Medians of %s runs.\n\n' "${TOTAL_G:-?}" \
    "${TOTAL_P:-?}" "$REPS"
printf '| tool | wall s (median) | peak RSS MB |\n|------|----:|----:|\n'
mb() { [ -n "$1" ] && awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }' || echo n/a; }
printf '| %s | %s | %s |\n' "\`gprof -b -p\`" "${G:-n/a}" "$(mb "$GR")"
printf '| %s | %s | %s |\n\n' "\`ptprof report --no-cache\`" "${P:-n/a}" "$(mb "$PR")"
if [ -n "$G" ] && [ -n "$P" ]; then
    awk -v g="$G" -v p="$P" 'BEGIN {
        r = g > 0 ? p / g : 0
        printf "ptprof / gprof: %.2f (target <= 1.00): %s\n\n", r, r <= 1.0 ? "OK" : "MISS"
    }'
else
    printf 'ptprof / gprof: n/a\n\n'
fi
exit 0
