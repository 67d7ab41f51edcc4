#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/power-capping.md: power capping policies under budgets of 60%, 75%
# and 90% of peak demand and one budget-step scenario, on the bundled ITP traces, with each
# policy on the power-limit knob and (where it has one) on the SM-clock knob.
# Usage: scripts/results_powercap.sh [BUILD_DIR] > docs/results/power-capping.md
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
JOBS=${JOBS:-150}
CLUSTERS=${CLUSTERS:-"02 04 07 08"}
POLICIES="mpc oracle uniform proportional threshold"
# The clock knob (--power-knob clock): proportional splits power limits and has no clock form.
CLOCK_POLICIES="mpc oracle uniform threshold"
KNOBS=${KNOBS:-"limit clock"} # a subset runs only those rows (the page wants both)
BUDGETS=${BUDGETS:-"60 75 90 step"}
CLOCK_POLICIES=${CLOCK_POLICIES_ONLY:-$CLOCK_POLICIES}
COMMON="--policy easy --placement pack --workload-mix default --deadlines factor:1.5-3 --seed 1 --quiet"
field() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" | head -1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat <<HEAD
# Power capping results on the bundled ITP traces

Produced by \`scripts/results_powercap.sh > docs/results/power-capping.md\`
(ecosched $("$ECO" --version | cut -d' ' -f2)). For each ITP cluster below, the first $JOBS jobs of its
trace run on a heterogeneous cluster, half 8-GPU V100 nodes and half 8-GPU A40 nodes, sized
for the peak demand of those jobs (the GPU count of \`--cluster peak\`). Jobs draw their
workload from \`--workload-mix default\` (the six measured workloads) and get deadlines
\`--deadlines factor:1.5-3\`; queue policy \`easy\`, placement \`pack\`, nodes always on,
control period 1 s, measurement noise 2% on power and 1% on progress, seed 1.

*Peak demand* is the peak cluster power of the same run without capping. Budgets are 60%,
75% and 90% of it; the step scenario starts at 90%, steps down to 70% at a third of the
uncapped makespan and back up to 90% at two thirds (70%: with nodes always on, their hosts alone draw much of the peak, so a deeper step cannot be met by GPU limits).

Knob: \`limit\` caps with GPU power limits (the default), \`clock\` with locked SM clocks
(\`--power-knob clock\`, discrete levels; docs/models/clock.md); \`proportional\` has no clock form.

Columns (docs/policies/powercap.md, "Metrics"; each control period's power is its mean over
the period): MAE = mean |power - budget| / budget over the control periods whose demand at full
power exceeds the budget (%); MAE all = the same over every period (%); max over = largest
excess over the budget after settling, leaving out the first period after a job start or a
budget step (%); raw over = the same including those periods (%); over s = time with the
instantaneous power above the budget; miss = deadline-miss ratio; JCT = average job completion time (h); energy
(kWh). "rejected" jobs need more power than the budget allows even alone at minimum limits.

HEAD
for k in $CLUSTERS; do
    trace=data/itp/cluster$k.csv.gz
    "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster peak $COMMON --out "$tmp/sz" >/dev/null
    gpus=$(field cluster_gpus < "$tmp/sz/summary.json")
    nodes=$(( (gpus + 7) / 8 ))
    half=$(( (nodes + 1) / 2 ))
    spec="${half}x8:V100,${half}x8:A40"
    "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster "$spec" $COMMON --out "$tmp/base" >/dev/null
    peak=$(field peak_power_w < "$tmp/base/summary.json")
    span=$(field makespan_s < "$tmp/base/summary.json")
    start=$(field window_start_s < "$tmp/base/summary.json")
    jct0=$(field avg_jct_s < "$tmp/base/summary.json")
    miss0=$(field deadline_miss_ratio < "$tmp/base/summary.json")
    e0=$(field energy_kwh < "$tmp/base/summary.json")
    echo "## ITP cluster $k ($spec)"
    echo
    awk -v p="$peak" -v j="$jct0" -v m="$miss0" -v e="$e0" 'BEGIN { printf "Uncapped: peak %.1f kW, deadline-miss ratio %.3f, average JCT %.2f h, energy %.1f kWh.\n\n", p/1000, m, j/3600, e }'
    echo "| budget | policy | knob | MAE % | MAE all % | max over % | raw over % | over s | miss | JCT h | energy kWh | rejected |"
    echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -v p="$peak" -v s="$span" -v t0="$start" 'BEGIN { printf "time_s,watts\n%.0f,%.3f\n%.0f,%.3f\n%.0f,%.3f\n", t0, 0.9*p, t0+s/3, 0.7*p, t0+2*s/3, 0.9*p }' > "$tmp/step.csv"
    for b in $BUDGETS; do
        if [ "$b" = step ]; then
            budget="--power-budget-file $tmp/step.csv"
        else
            budget="--power-budget $(awk -v p="$peak" -v b="$b" 'BEGIN { printf "%.3f", p*b/100 }')"
        fi
        for pk in $(for p in $POLICIES; do
                        case " $KNOBS " in *" limit "*) echo "$p/limit";; esac
                        case " $KNOBS : $CLOCK_POLICIES " in *" clock "*:*" $p "*) echo "$p/clock";; esac
                    done); do
            pol=${pk%/*}
            knob=${pk#*/}
            # shellcheck disable=SC2086
            "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster "$spec" $COMMON \
                --power-policy "$pol" --power-knob "$knob" $budget --out "$tmp/run" >/dev/null
            f="$tmp/run/summary.json"
            awk -v b="$b" -v pol="$pol" -v knob="$knob" -v mae="$(field power_cap_mae_pct < "$f")" \
                -v ma="$(field power_cap_mae_all_pct < "$f")" -v mr="$(field power_cap_raw_overshoot_pct < "$f")" \
                -v mo="$(field power_cap_max_overshoot_pct < "$f")" -v os="$(field overshoot_s < "$f")" \
                -v mi="$(field deadline_miss_ratio < "$f")" -v j="$(field avg_jct_s < "$f")" \
                -v e="$(field energy_kwh < "$f")" -v r="$(field rejected < "$f")" \
                'BEGIN { printf "| %s | %s | %s | %.3f | %.3f | %.2f | %.2f | %.0f | %.3f | %.2f | %.1f | %d |\n", (b == "step" ? "step 90-70-90%" : b "%"), pol, knob, mae, ma, mo, mr, os, mi, j/3600, e, r }'
            if [ "$b" = step ]; then
                # How long power stays more than 1% above the budget after the step down.
                awk -F, -v ts="$(awk -v s="$span" -v t0="$start" 'BEGIN { printf "%.0f", t0 + s/3 }')" '
                    NR > 1 && $1 >= ts && !done {
                        if ($2 > 1.01 * $3) { if (!over) { over = 1; from = $1 } }
                        else if (over) { dur = $1 - from; done = 1 }
                        else if ($1 > ts + 60) done = 1
                    }
                    END { printf "%s %.3f\n", pol, dur }' pol="$pol/$knob" "$tmp/run/timeline.csv" >> "$tmp/step_$k.txt"
            fi
        done
    done
    echo
    [ -f "$tmp/step_$k.txt" ] &&
        echo "After the step down, time with power more than 1% above the new budget (s): $(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' "$tmp/step_$k.txt")."
    echo
done
