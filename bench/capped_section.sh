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

# Every lever at scale (issue 29): all ten ITP clusters' 69,351 jobs and the first 30,649 of a
# second copy 60 days later (100,000 jobs over 120 days) on 300 x 8 V100, easy, forecast
# power-down and carbon shifting (EIA-930 CISO 2022, 24 h); the levers alone, then each capper
# under a budget at 70 % of that run's peak. The ratio is to the levers-alone run (target: at
# most 2x), the plain replay without levers beside it. Peak memory and user CPU from GNU time
# when present (user CPU is the figure that a busy machine does not inflate; the ratio uses it,
# else the wall time).
echo
echo "| case | power policy | events | sim wall s | user CPU s | x levers alone | avg JCT h | energy kWh | carbon kg | binding periods % | cap MAE % | max overshoot % | peak RSS MiB |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for k in 01 02 03 04 05 06 07 08 09 10; do
    gzip -dc "data/itp/cluster$k.csv.gz" | tail -n +2
    echo
done | grep -v '^$' >"$TMP/all.csv"
n=$(wc -l <"$TMP/all.csv")
{
    echo job_id,submission_time,duration,num_gpu
    cat "$TMP/all.csv"
    awk -F, -v OFS=, -v m=$((100000 - n)) 'NR <= m { $1 = $1 "-r1"; $2 += 5184000; print }' \
        "$TMP/all.csv"
} | gzip >"$TMP/itp100k.csv.gz"
C=data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz
L="--power-down forecast --carbon $C --trace-start 2022-01-01T00:00:00Z --carbon-policy shift --max-delay 24h"
big() { # $1: label, $2: policy label, then the extra options; prints a row, sets $cpu, $peak
    label=$1 pol=$2
    shift 2
    tm=""
    [ -x /usr/bin/time ] && tm="/usr/bin/time -f %M,%U -o $TMP/rss"
    # shellcheck disable=SC2086
    $tm "$BUILD/ecosched" sim --trace "$TMP/itp100k.csv.gz" --cluster 300x8:V100 --policy easy \
        "$@" --json 2>/dev/null >"$TMP/s.json"
    rss="n/a" cpu=$(jq -r .sim_wall_s "$TMP/s.json") ucpu="n/a"
    if [ -s "$TMP/rss" ]; then
        rss=$(awk -F, '{ printf "%.0f", $1 / 1024 }' "$TMP/rss")
        cpu=$(awk -F, '{ print $2 }' "$TMP/rss")
        ucpu=$cpu
    fi
    peak=$(jq -r .peak_power_w "$TMP/s.json")
    ratio=$([ -n "$base" ] && echo "$cpu $base" | awk '{ printf "%.1f", $1 / $2 }' || echo 1)
    jq -r --arg c "$label" --arg p "$pol" --arg x "$ratio" --arg m "$rss" --arg u "$ucpu" '
        def f(n): (. * pow(10; n) | round) / pow(10; n);
        "| \($c) | \($p) | \(.events) | \(.sim_wall_s | f(2)) | \($u) | \($x) | \(.avg_jct_s / 3600 | f(2)) | \(.energy_kwh | f(1)) | \(.carbon_kg // 0 | f(1)) | \(if .power_cap_periods > 0 then (100 * .capped_periods / .power_cap_periods | f(2)) else "" end) | \(if .capped_periods > 0 then (.power_cap_mae_pct | f(3)) else "" end) | \(if .capped_periods > 0 then (.power_cap_max_overshoot_pct | f(3)) else "" end) | \($m) |"' \
        "$TMP/s.json"
}
base=""
# shellcheck disable=SC2086
big "100,000 jobs, 2,400 GPUs, no levers" none --carbon "$C" --trace-start 2022-01-01T00:00:00Z
# shellcheck disable=SC2086
big "100,000 jobs, 2,400 GPUs, levers" none $L
base=$cpu
budget=$(echo "$peak" | awk '{ printf "%.0f", 0.7 * $1 }')
for pol in mpc uniform proportional threshold oracle; do
    # shellcheck disable=SC2086
    big "100,000 jobs, 2,400 GPUs, levers, budget $budget W" "$pol" $L --power-policy "$pol" \
        --power-budget "$budget"
done
# the same budget on the clock knob (locked SM clocks, docs/models/clock.md)
# shellcheck disable=SC2086
big "100,000 jobs, 2,400 GPUs, levers, budget $budget W, clock knob" mpc $L --power-policy mpc \
    --power-budget "$budget" --power-knob clock

# All 69,351 ITP jobs, each cluster on its own cluster (--cluster auto, as the plain replay's
# "all 10 ITP clusters" row), easy, mpc under a budget at 70 % of that cluster's uncapped peak
# (target: at most 5 s in all); user CPU seconds. These clusters queue work for weeks: the budget binds most of
# the time.
echo
echo "| ITP cluster | jobs | GPUs | plain s | budget W | mpc s | events | binding periods % | cap MAE % |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
run_cpu() { # $1: output json, then sim's options; prints user CPU s (else the sim's wall s)
    out=$1
    shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %U -o "$TMP/u" "$BUILD/ecosched" sim "$@" --json 2>/dev/null >"$out"
        cat "$TMP/u"
    else
        "$BUILD/ecosched" sim "$@" --json 2>/dev/null >"$out"
        jq -r .sim_wall_s "$out"
    fi
}
for k in 01 02 03 04 05 06 07 08 09 10; do
    T=data/itp/cluster$k.csv.gz
    pc=$(run_cpu "$TMP/p.json" --trace "$T" --cluster auto --policy easy)
    budget=$(jq -r '.peak_power_w * 0.7 | round' "$TMP/p.json")
    cc=$(run_cpu "$TMP/c.json" --trace "$T" --cluster auto --policy easy --power-policy mpc \
        --power-budget "$budget")
    jq -r -n --arg k "$k" --arg b "$budget" --arg pc "$pc" --arg cc "$cc" \
        --slurpfile p "$TMP/p.json" --slurpfile c "$TMP/c.json" '
        def f(n): (. * pow(10; n) | round) / pow(10; n);
        $p[0] as $p | $c[0] as $c |
        "| \($k) | \($p.jobs) | \($p.cluster_gpus) | \($pc) | \($b) | \($cc) | \($c.events) | \(100 * $c.capped_periods / $c.power_cap_periods | f(1)) | \($c.power_cap_mae_pct | f(3)) |"'
done | tee "$TMP/each.md"
awk -F'|' '{ p += $5; c += $7 } END { printf "| all ten | | | %.3f | | %.2f | | | |\n", p, c }' "$TMP/each.md"

# Growth (issue 29): the first 1,000, 10,000 and 100,000 jobs by submit time of the 100,000 above
# on 300 x 8 V100 with the levers, every capper under the 70 % budget: total user CPU, and the
# cost of one control period, (capped CPU - levers-alone CPU) / (capped events - levers-alone
# events), against the mean number of running jobs (completed jobs x mean run time / span). Written to $SCALING_TSV too when set (bench/README.md's plot).
echo
echo "| jobs | power policy | events | user CPU s | x levers alone | control periods run | us per period | mean running jobs |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
{
    gzip -dc "$TMP/itp100k.csv.gz" | head -1
    gzip -dc "$TMP/itp100k.csv.gz" | tail -n +2 | sort -t, -k2,2n -k1,1
} | gzip >"$TMP/sorted.csv.gz"
cpu_of() { # options...; runs sim, leaves the summary in $TMP/g.json, prints user CPU s
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %U -o "$TMP/u" "$BUILD/ecosched" sim --trace "$TMP/sorted.csv.gz" \
            --cluster 300x8:V100 --policy easy "$@" --json 2>/dev/null >"$TMP/g.json"
        cat "$TMP/u"
    else
        "$BUILD/ecosched" sim --trace "$TMP/sorted.csv.gz" --cluster 300x8:V100 --policy easy \
            "$@" --json 2>/dev/null >"$TMP/g.json"
        jq -r .sim_wall_s "$TMP/g.json"
    fi
}
for n in 1000 10000 100000; do
    # shellcheck disable=SC2086
    c0=$(cpu_of --max-jobs "$n" $L)
    e0=$(jq -r .events "$TMP/g.json")
    for pol in mpc uniform proportional threshold oracle; do
        # shellcheck disable=SC2086
        c=$(cpu_of --max-jobs "$n" $L --power-policy "$pol" --power-budget "$budget")
        jq -r --arg n "$n" --arg p "$pol" --arg c "$c" --arg c0 "$c0" --arg e0 "$e0" '
            def f(k): (. * pow(10; k) | round) / pow(10; k);
            (.events - ($e0 | tonumber)) as $ticks |
            "| \($n) | \($p) | \(.events) | \($c) | \(($c | tonumber) / ([($c0 | tonumber), 0.01] | max) | f(1)) | \($ticks) | \(if $ticks > 0 then (1e6 * (($c | tonumber) - ($c0 | tonumber)) / $ticks | f(1)) else "" end) | \(.completed * (.avg_jct_s - .avg_wait_s) / .makespan_s | f(0)) |"' \
            "$TMP/g.json"
        [ -n "${SCALING_TSV:-}" ] && printf '%s\t%s\t%s\n' "$n" "$pol" "$c" >>"$SCALING_TSV"
    done
done
