# shellcheck shell=bash
# bench/common.sh - what the recorder bench scripts share; sourced by them,
# never run.
#
#   bench_init BUILD_DIR TAG
#                           BUILD (absolute), ROOT (the tree), PTPROF; the
#                           working directory is ROOT; TMP, a scratch
#                           directory named after TAG, removed on exit
#   say TEXT...             a progress line on stderr
#   bench_machine           a line for the results: the CPUs, the load
#                           average and the share of the CPU time the VM's
#                           host took (steal) since bench_init: timing
#                           figures carry it
#   bench_cpuburn           CPUBURN, built into BUILD/bench when missing;
#                           false, after an "n/a" line, when it cannot be
#   burn_field FILE KEY     KEY=VALUE of cpuburn's last "cpuburn: ..." line
#   raw_median RAW CASE NAME KEY
#                           the median of column 5 of RAW's tab-separated
#                           lines "CASE NAME REP KEY VALUE" (empty: none)

bench_init() {
    BUILD=${1:-build}
    ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    cd "$ROOT" || exit 0
    case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
    # shellcheck disable=SC2034 # for the script that sources this
    PTPROF=$BUILD/ptprof
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptprof-$2.XXXXXX") || exit 0
    trap 'rm -rf "$TMP"' EXIT
    STEAL_MARK=$(cpu_ticks)
}

# "STEAL ALL": the machine's steal and total ticks so far (/proc/stat).
cpu_ticks() {
    awk '$1 == "cpu" { all = 0; for (i = 2; i <= 9; i++) all += $i; print $9, all; exit }' /proc/stat
}

bench_machine() {
    local now steal
    now=$(cpu_ticks)
    # shellcheck disable=SC2086 # two numbers each
    steal=$(echo $STEAL_MARK $now | awk '{ d = $4 - $2; printf "%.1f", (d > 0 ? 100 * ($3 - $1) / d : 0) }')
    echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
        "the VM's host took $steal% of the CPU time (steal) while this script ran."
}

say() { printf '%s\n' "$*" >&2; }

bench_cpuburn() {
    CPUBURN=$BUILD/bench/cpuburn
    [ -x "$CPUBURN" ] && return 0
    mkdir -p "$BUILD/bench" && cc -std=gnu11 -O2 -pthread -o "$CPUBURN" "$ROOT/bench/cpuburn.c" &&
        return 0
    echo "n/a: cannot build cpuburn"
    return 1
}

burn_field() { sed -n "s/^cpuburn: .* $2=\([^ ]*\).*/\1/p" "$1" | tail -n 1; }

raw_median() {
    awk -F'\t' -v c="$2" -v k="$3" -v key="$4" '$1 == c && $2 == k && $4 == key && $5 != "" {
        print $5 }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR) printf "%.6g", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
