#!/bin/sh
# SPDX-License-Identifier: MIT
# Ablation of the deadline-aware allocator's parts (docs/policies/powercap.md, "Ablation"):
# one row per variant: a capper with parameters (miss per-miss cost, weight, lost causes,
# plan over the horizon, admit) and a queue policy, against proportional and uniform.
# Usage: scripts/ablation_deadline.sh [BUILD_DIR]; CLUSTERS, JOBS, BUDGETS, SEEDS, PERIOD,
# VARIANTS ("name|power-policy|queue ...") set the grid.
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
JOBS=${JOBS:-300}
CLUSTERS=${CLUSTERS:-"04 02"}
BUDGETS=${BUDGETS:-"60 75"}
SEEDS=${SEEDS:-"1"}
PERIOD=${PERIOD:-10}
OLD="miss=0,lost=0,weight=one,plan=0"
VARIANTS=${VARIANTS:-"proportional|proportional|easy proportional+lsf|proportional|lsf uniform+lsf|uniform|lsf mpc-linear|mpc:$OLD|easy +m|mpc:miss=10,lost=0,weight=one,plan=0|easy +mw|mpc:miss=10,lost=0,weight=size,plan=0|easy +mwl|mpc:miss=10,lost=1,weight=size,plan=0|easy +mwl+lsf|mpc:miss=10,lost=1,weight=size,plan=0|lsf mpc|mpc|lsf mpc+plan|mpc:plan=1|lsf mpc+admit|mpc:admit=deadline|lsf"}
field() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" | head -1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| cluster | budget | seed | variant | misses | miss ratio | MAE % | JCT h |"
echo "|---|---|---|---|---:|---:|---:|---:|"
for k in $CLUSTERS; do
    trace=data/itp/cluster$k.csv.gz
    for seed in $SEEDS; do
        COMMON="--placement pack --workload-mix default --deadlines factor:1.5-3 --seed $seed --quiet --control-period $PERIOD"
        # shellcheck disable=SC2086
        "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster peak --policy easy $COMMON --out "$tmp/sz" >/dev/null
        gpus=$(field cluster_gpus < "$tmp/sz/summary.json")
        half=$(( ( (gpus + 7) / 8 + 1) / 2 ))
        spec="${half}x8:V100,${half}x8:A40"
        # shellcheck disable=SC2086
        "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster "$spec" --policy easy $COMMON --out "$tmp/base" >/dev/null
        peak=$(field peak_power_w < "$tmp/base/summary.json")
        for b in $BUDGETS; do
            budget=$(awk -v p="$peak" -v b="$b" 'BEGIN { printf "%.3f", p*b/100 }')
            for v in $VARIANTS; do
                name=${v%%|*}
                rest=${v#*|}
                pol=${rest%%|*}
                queue=${rest#*|}
                # shellcheck disable=SC2086
                "$ECO" sim --trace "$trace" --max-jobs "$JOBS" --cluster "$spec" \
                    --policy "$queue" $COMMON --power-policy "$pol" --power-budget "$budget" \
                    --out "$tmp/run" >/dev/null
                s="$tmp/run/summary.json"
                miss=$(field deadline_miss_ratio < "$s")
                n=$(field deadline_jobs < "$s")
                mae=$(field power_cap_mae_pct < "$s")
                jct=$(field avg_jct_s < "$s")
                awk -v k="$k" -v b="$b" -v sd="$seed" -v v="$name" -v m="$miss" -v n="$n" -v a="$mae" -v j="$jct" \
                    'BEGIN { printf "| %s | %s%% | %s | %s | %.0f | %.3f | %.2f | %.2f |\n", k, b, sd, v, m*n, m, a, j/3600 }'
            done
        done
    done
done
