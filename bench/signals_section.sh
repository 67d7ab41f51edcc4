#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/README.md "Grid signals": the simulator's time with carbon and price signals (and a
# carbon policy) against the same run without (target: at most 2x). sim_wall_s, median of 3.
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
C=data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz
P=data/grid_signals/aemo_nem_2020_2024/aemo_NSW1_2020_2024_hourly.csv.gz
wall() { # median sim_wall_s of 3 runs of the given options
    for i in 1 2 3; do
        "$ECO" sim -q --json "$@" | sed -n 's/^ *"sim_wall_s": \([-0-9.e+]*\).*/\1/p'
    done | sort -g | sed -n 2p | awk '{ printf "%.3f", $1 }'
}
echo "| trace | jobs | run | sim wall s | with signals / without | target |"
echo "|---|---:|---|---:|---:|---|"
for k in 04 08; do
    T="--trace data/itp/cluster$k.csv.gz --cluster auto --policy easy --power-down forecast"
    jobs=$(zcat "data/itp/cluster$k.csv.gz" | tail -n +2 | wc -l)
    base=$(wall $T)
    sig=$(wall $T --carbon "$C" --price "$P" --trace-start 2022-02-01)
    pol=$(wall $T --carbon "$C" --price "$P" --trace-start 2022-02-01 --carbon-policy shift \
        --max-delay 24h)
    echo "| ITP cluster$k | $jobs | no signal | $base | | |"
    awk -v b="$base" -v s="$sig" -v k="$k" -v j="$jobs" 'BEGIN { r = s / b;
        printf "| ITP cluster%s | %s | carbon + price | %s | %.2fx | %s |\n", k, j, s, r, r <= 2 ? "<= 2x: met" : "<= 2x: NOT met" }'
    awk -v b="$base" -v s="$pol" -v k="$k" -v j="$jobs" 'BEGIN { r = s / b;
        printf "| ITP cluster%s | %s | carbon + price, shift, 24 h slack | %s | %.2fx | %s |\n", k, j, s, r, r <= 2 ? "<= 2x: met" : "<= 2x: NOT met" }'
done
