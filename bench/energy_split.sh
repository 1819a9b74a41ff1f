#!/usr/bin/env bash
# bench/energy_split.sh - energy per function on both engines against a
# program that is its own power meter (tests/workloads/metered.c: 9 W, 3 W
# and 1 W functions in phases of 8 to 12 ms of CPU time, written into a file
# read with -p file:PATH,mW; docs/pmu.md, "The join").
# Usage: bench/energy_split.sh [BUILD_DIR]
#
# At 1000 Hz (3 s runs) and 100 Hz (6 s runs), BENCH_REPS_ENERGY (3) runs
# per engine, interleaved.  For each function: its share of the energy the
# program spent (each phase's power x its wall time, the program's own
# account: "truth") and the share each engine reports, then [unattributed];
# medians over the runs.  A second table compares the shares of the energy
# measured while the program ran with its power x CPU time per phase, next
# to the share of the run the program spent off a CPU (a busy machine).
# Prints a Markdown section; never fails.
set -u -o pipefail

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-build}" energy
REPS=${BENCH_REPS_ENERGY:-3}
METERED=$BUILD/bench/metered
FUNCS=(phase_9w phase_3w phase_1w)

echo "## Energy per function: a program that is its own power meter"
echo
mkdir -p "$BUILD/bench"
if [ ! -x "$PTPROF" ] || ! cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -o "$METERED" \
    "$ROOT/tests/workloads/metered.c" 2>/dev/null; then
    echo "n/a: needs $PTPROF and a C compiler"
    exit 0
fi
ENGINES=(ptrace)
if "$PTPROF" record --engine perf -f 100 -o "$TMP/probe" -- true >/dev/null 2>&1; then
    ENGINES+=(perf)
fi

RAW=$TMP/raw # hz engine rep key value
: >"$RAW"
for hz in 1000 100; do
    seconds=3
    [ "$hz" = 100 ] && seconds=6
    for rep in $(seq "$REPS"); do
        for engine in "${ENGINES[@]}"; do
            d=$TMP/$hz-$engine-$rep
            mkdir -p "$d"
            printf '  1000\n' >"$d/power"
            printf 'bench: energy %s Hz %s run %s\n' "$hz" "$engine" "$rep" >&2
            if ! "$PTPROF" record --engine "$engine" -f "$hz" -p "file:$d/power,mW" -o "$d/p.data" \
                -- "$METERED" "$d/power" "$seconds" "$d/truth" >/dev/null 2>"$d/err" ||
                ! "$PTPROF" report "$d/p.data" -k procedure --metric energy --format csv \
                    >"$d/report.csv" 2>>"$d/err"; then
                continue
            fi
            awk -v hz="$hz" -v engine="$engine" -v rep="$rep" '
                FNR == 1 { file++ }
                file == 1 && $1 ~ /^phase_/ { wall[$1] = $4; run[$1] = $2 * $5; tw += $4; tr += $2 * $5 }
                file == 1 && $1 == "cpu" { cpu = $2 }
                file == 1 && $1 == "wall" { span = $2 }
                file == 2 && FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                file == 2 { total += $col["energy"]; e[$1] = $col["total_energy"]
                            if ($1 == "[unattributed]") un = $col["energy"] }
                END {
                    for (f in wall) {
                        printf "%s\t%s\t%s\ttruth %s\t%.2f\n", hz, engine, rep, f, 100 * wall[f] / tw
                        printf "%s\t%s\t%s\tshare %s\t%.2f\n", hz, engine, rep, f, 100 * e[f] / total
                        printf "%s\t%s\t%s\trun %s\t%.2f\n", hz, engine, rep, f, 100 * run[f] / tr
                        printf "%s\t%s\t%s\tran %s\t%.2f\n", hz, engine, rep, f, 100 * e[f] / (total - un)
                    }
                    printf "%s\t%s\t%s\tunattributed\t%.2f\n", hz, engine, rep, 100 * un / total
                    printf "%s\t%s\t%s\toffcpu\t%.2f\n", hz, engine, rep, 100 * (1 - cpu / span)
                    printf "%s\t%s\t%s\tjoules\t%.3f\n", hz, engine, rep, total
                    printf "%s\t%s\t%s\ttruth_joules\t%.3f\n", hz, engine, rep, tw
                }' FS='[ ,]' "$d/truth" FS=, "$d/report.csv" >>"$RAW"
        done
    done
done

# The median of KEY's values at HZ for ENGINE ("" when none).
median() {
    awk -F'\t' -v hz="$1" -v engine="$2" -v key="$3" '
        $1 == hz && $2 == engine && $4 == key { v[n++] = $5 }
        END { if (!n) exit
              for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
              print (n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2) }' "$RAW"
}
cell() {
    local v
    v=$(median "$@")
    if [ -n "$v" ]; then printf '%.1f%%' "$v"; else printf 'n/a'; fi
}

echo "Shares of the energy, median of $REPS runs per engine (truth: the program's"
echo "own phase times x their power; the totals: what the readings add up to)."
echo
for hz in 1000 100; do
    echo "| $hz Hz | truth | \`--engine ptrace\` | \`--engine perf\` |"
    echo "|---|---:|---:|---:|"
    for f in "${FUNCS[@]}"; do
        printf '| %s | %s | %s | %s |\n' "${f#phase_} phase" "$(cell "$hz" ptrace "truth $f")" \
            "$(cell "$hz" ptrace "share $f")" "$(cell "$hz" perf "share $f")"
    done
    printf '| [unattributed] | 0 | %s | %s |\n' "$(cell "$hz" ptrace unattributed)" \
        "$(cell "$hz" perf unattributed)"
    printf '| total (J) | %s | %s | %s |\n' "$(median "$hz" ptrace truth_joules)" \
        "$(median "$hz" ptrace joules)" "$(median "$hz" perf joules)"
    echo
done
echo "Shares of the energy measured while the program ran, against each phase's"
echo "power x CPU time, and the share of the run the program was off a CPU:"
echo
echo "| Hz | function | power x CPU | ptrace | perf |"
echo "|---:|---|---:|---:|---:|"
for hz in 1000 100; do
    for f in "${FUNCS[@]}"; do
        printf '| %s | %s | %s | %s | %s |\n' "$hz" "${f#phase_}" "$(cell "$hz" ptrace "run $f")" \
            "$(cell "$hz" ptrace "ran $f")" "$(cell "$hz" perf "ran $f")"
    done
    printf '| %s | off a CPU | | %s | %s |\n' "$hz" "$(cell "$hz" ptrace offcpu)" \
        "$(cell "$hz" perf offcpu)"
done
echo
bench_machine
