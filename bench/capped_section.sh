#!/bin/sh
# SPDX-License-Identifier: MIT
# Capped simulation runs for bench/README.md: the README's power-capping example on the full ITP
# cluster02 trace (1 s control period) with settled periods skipped (the default), and the
# skipping against the 1 s loop (--control-skip off) on its first 300 jobs; then a busier
# cluster at scale, every capper against the plain replay of the same trace.
set -eu
BUILD="${1:-build}"
T=data/itp/cluster02.csv.gz
row() { # $1: case label, $2: jobs (0: all), $3: policy, $4: on|off
    max=""
    [ "$2" -gt 0 ] && max="--max-jobs $2"
    # shellcheck disable=SC2086
    "$BUILD/ecosched" sim --trace "$T" --cluster 20x8:V100,20x8:A40 --policy easy $max \
        --power-policy "$3" --power-budget 60000 --deadlines factor:1.5-3 \
        --workload-mix default --control-skip "$4" |
        awk -v c="$1" -v p="$3" -v s="$4" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
            { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c, p, s, $k["events"],
              $k["wall_s"], $k["avg_jct_h"], $k["energy_kwh"], $k["dl_miss"], $k["cap_mae%"] }'
}
echo "| case | power policy | control skip | events | sim wall s | avg JCT h | energy kWh | deadline miss | cap MAE % |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for pol in mpc proportional oracle; do
    row "full cluster02 (5,778 jobs)" 0 "$pol" on
done
for pol in mpc proportional oracle; do
    row "first 300 jobs" 300 "$pol" off
    row "first 300 jobs" 300 "$pol" on
done

# Scale (issue 29): ITP cluster04's first 10,000 jobs on 30 x 8 V100, easy, the plain replay
# against every capper under a binding 50 kW budget; the ratio is to the plain replay's wall
# time in the same run (target: at most 2x).
echo
echo "| case | power policy | events | sim wall s | x plain | avg JCT h | energy kWh | cap MAE % |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
S="sim --trace data/itp/cluster04.csv.gz --max-jobs 10000 --cluster 30x8:V100 --policy easy"
plain=""
for pol in none mpc uniform proportional threshold oracle; do
    pp=""
    [ "$pol" != none ] && pp="--power-policy $pol --power-budget 50000"
    # shellcheck disable=SC2086
    line=$("$BUILD/ecosched" $S $pp |
        awk -v p="$pol" -v base="$plain" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
            { w = $k["wall_s"]; r = base != "" ? sprintf("%.0f", w / base) : "1";
              m = p == "none" ? "" : $k["cap_mae%"];
              printf "| 10,000 jobs, 240 GPUs | %s | %s | %s | %s | %s | %s | %s |\n", p,
                     $k["events"], w, r, $k["avg_jct_h"], $k["energy_kwh"], m }')
    echo "$line"
    if [ "$pol" = none ]; then
        plain=$(echo "$line" | awk -F'|' '{ gsub(/ /, "", $5); print $5 }')
    fi
done
