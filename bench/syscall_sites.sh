#!/usr/bin/env bash
# bench/syscall_sites.sh - where a ptrace stop lands in a program that calls
# the kernel every few microseconds, next to the perf engine and perf record
# (issue 26, docs/recording.md "Where an interrupt stops a thread").
# Usage: bench/syscall_sites.sh [BUILD_DIR]
#
# 1. bench/ptrace_stop_site: a child spinning with a system call every
#    ~3 us, ~30 us or never, interrupted 1000 times at 1 kHz, with a CPU
#    free for it (tracer and child pinned to CPUs 0 and 1) and with none
#    (a spinning process per CPU): the share of stops taken at a call's
#    exit against the child's kernel time, and how long it ran on after
#    the interrupt.
# 2. tests/workloads/clockwork (200 threads of 10 ms one after another, and
#    one thread of 3 s) at 1 kHz: the share of clock_gettime's system call
#    site (self; perf record: the vDSO function with the kernel under it)
#    and each function's inclusive share minus its truth, for the perf
#    engine, the ptrace engine as it was (PTPROF_CALL_EXITS=raw) and as it
#    is, and perf record -g; the program's own kernel share beside.
# Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" sites
PERF=${PERF:-perf}
CLOCKWORK=$BUILD/workloads/clockwork
SITE=$BUILD/bench/ptrace_stop_site

echo "## Where ptrace stops land around system calls (bench/syscall_sites.sh)"
echo
if ! mkdir -p "$BUILD/bench" || ! cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$SITE" \
    bench/ptrace_stop_site.c 2>/dev/null; then
    echo "n/a: cannot build bench/ptrace_stop_site.c (x86-64 only)"
    exit 0
fi
NPROC=$(nproc)
echo "Machine: $NPROC CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start" \
    "(other jobs share it)."
echo
echo "### A running thread, interrupted (bench/ptrace_stop_site, 1000 stops at 1 kHz)"
echo
echo "| calls | CPU free | stops at a call's exit | of them, the child was running | kernel share of its CPU | ran on after the interrupt (median / p90) |"
echo "|---|---|---:|---:|---:|---|"
for calls in "-c 300:every ~3 us" "-c 3000:every ~30 us" "-s:none"; do
    opt=${calls%%:*}
    for free in yes no; do
        if [ "$free" = yes ]; then
            # shellcheck disable=SC2086 # opt is one or two words
            out=$("$SITE" -n 1000 -t 0 -T $((NPROC > 1 ? 1 : 0)) $opt 2>&1)
        else
            # shellcheck disable=SC2086
            out=$("$SITE" -n 1000 -b "$NPROC" $opt 2>&1)
        fi
        at=$(sed -n 's/.*stops at a system call.s exit: \([0-9.]*\)%.*/\1/p' <<<"$out")
        running=$(sed -n 's/.*of the \([0-9]*\) stops of a running child: \([0-9.]*\)%.*/\2% of \1/p' <<<"$out")
        kernel=$(sed -n 's/.*kernel share of the child.s CPU time \([0-9.]*\)%.*/\1/p' <<<"$out")
        ranon=$(sed -n 's/.*it ran on for a median \([0-9.-]*\) us, p90 \([0-9.-]*\) us.*/\1 \/ \2 us/p' <<<"$out")
        echo "| ${calls#*:} | $free | ${at:-?}% | ${running:-?} | ${kernel:-?}% | ${ranon:-?} |"
    done
done
echo

if [ ! -x "$PTPROF" ] || [ ! -x "$CLOCKWORK" ]; then
    echo "n/a: needs $PTPROF and $CLOCKWORK (make tests)"
    exit 0
fi

# shares FILE: "site a b g d" from ptprof report CSV (site self, functions total %).
shares() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { self[$1] = $col["self_pct"]; total[$1] = $col["total_pct"] }
        END { printf "%s %s %s %s %s\n", self["__vdso_clock_gettime"] + self["clock_gettime"],
              total["work_alpha"], total["work_beta"], total["work_gamma"], total["work_delta"] }' "$1"
}

# perf_shares DATA: the same from perf report --children.
perf_shares() {
    "$PERF" report -i "$1" --stdio --children --sort sym 2>/dev/null | awk '
        $3 == "[.]" { v[$4] = $1 + 0; s[$4] = $2 + 0 }
        END { printf "%s %s %s %s %s\n", v["__vdso_clock_gettime"], v["work_alpha"],
              v["work_beta"], v["work_gamma"], v["work_delta"] }'
}

# row NAME TRUTH SHARES: a table row, errors against the truth in points.
row() {
    awk -v name="$1" -v t="$2" -v s="$3" 'BEGIN {
        split(t, T, " "); split(s, S, " ")
        ts = T[1] + T[2] + T[3] + T[4]; ss = S[2] + S[3] + S[4] + S[5]
        if (ss <= 0) { printf "| %s | n/a | | | | | %.1f%% |\n", name, T[5]; exit }
        printf "| %s | %.1f%% |", name, S[1]
        for (i = 1; i <= 4; i++) printf " %+.1f |", 100 * S[i + 1] / ss - 100 * T[i] / ts
        printf " %.1f%% |\n", T[5] }'
}

truth_of() {
    awk '/^work_/ { v[$1] = $2 } /^user_ns/ { u = $2 } /^sys_ns/ { k = $2 }
        END { printf "%s %s %s %s %.2f\n", v["work_alpha"], v["work_beta"], v["work_gamma"],
              v["work_delta"], (u + k > 0 ? 100 * k / (u + k) : 0) }' "$1"
}

echo "### clockwork at 1 kHz: the call's site (self) and each function's inclusive share minus its truth"
echo
echo "| run | call site | alpha | beta | gamma | delta | program's kernel share |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for shape in "200 10" "1 3000"; do
    # shellcheck disable=SC2086 # two words
    set -- $shape
    for tool in perf ptrace-raw ptrace perf-record; do
        say "syscall_sites: clockwork $shape, $tool"
        case $tool in
        perf | ptrace)
            "$PTPROF" record --engine "$tool" -f 1000 -o "$TMP/p" -- "$CLOCKWORK" "$@" \
                >"$TMP/truth" 2>/dev/null || continue
            "$PTPROF" report "$TMP/p" -k procedure --format csv >"$TMP/csv" 2>/dev/null
            got=$(shares "$TMP/csv")
            ;;
        ptrace-raw)
            PTPROF_CALL_EXITS=raw "$PTPROF" record --engine ptrace -f 1000 -o "$TMP/p" -- \
                "$CLOCKWORK" "$@" >"$TMP/truth" 2>/dev/null || continue
            "$PTPROF" report "$TMP/p" -k procedure --format csv >"$TMP/csv" 2>/dev/null
            got=$(shares "$TMP/csv")
            ;;
        perf-record)
            command -v "$PERF" >/dev/null || continue
            "$PERF" record -q -F 1000 -g -o "$TMP/perf.data" -- "$CLOCKWORK" "$@" \
                >"$TMP/truth" 2>/dev/null || continue
            got=$(perf_shares "$TMP/perf.data")
            ;;
        esac
        row "clockwork $shape, $tool" "$(truth_of "$TMP/truth")" "$got"
    done
done
echo
echo "ptrace-raw is the ptrace engine keeping every stop where it was taken (PTPROF_CALL_EXITS=raw);"
echo "perf record's call site is the vDSO function with the kernel's samples under it (--children)."
bench_machine
