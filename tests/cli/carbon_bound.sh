#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --carbon-bound`: bad values and a missing carbon signal named; on a small trace
# with a day's signal the bound is at most the jobs' own carbon of every carbon policy, and the
# table line and the JSON agree.
set -u
ECO="$1"
T=$(mktemp -d /tmp/ecosched-carbonbound.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
# ten jobs over four hours on 1x8, and two days of a signal with a clean afternoon
{
    echo "job_id,submit_s,duration_s,gpus"
    for i in 0 1 2 3 4 5 6 7 8 9; do
        echo "j$i,$((i * 1500)),$((1800 + i * 600)),$((1 + i % 4))"
    done
} > "$T/trace.csv"
{
    echo "time_utc,carbon_gco2eq_per_kwh"
    for d in 01 02; do
        for h in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
            case $h in 12|13|14|15) v=80 ;; *) v=$((300 + ${h#0} * 5)) ;; esac
            echo "2022-01-${d}T$h:00:00Z,$v"
        done
    done
} > "$T/ci.csv"
opts="--trace $T/trace.csv --cluster 1x8:V100 --policy easy --trace-start 2022-01-01T00:00:00Z --max-delay 12h --quiet"
# shellcheck disable=SC2086
expect 2 "--carbon-bound: 'x' is not" -- sim $opts --carbon "$T/ci.csv" --carbon-bound x
# shellcheck disable=SC2086
expect 2 "--carbon-bound needs a carbon signal" -- sim $opts --carbon-bound 3600
# shellcheck disable=SC2086
expect 2 "--carbon-bound: the slot must be at least 1 s" -- sim $opts --carbon "$T/ci.csv" --carbon-bound 0.5
# shellcheck disable=SC2086
expect 0 "no schedule within the windows and GPUs emits less than" -- sim $opts --carbon "$T/ci.csv" --carbon-bound 3600
for cp in none lwa lwa:3 threshold:30 shift shift:rel=0.01 shift:own=0.05 lwa-int; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$ECO" sim $opts --carbon "$T/ci.csv" --carbon-bound 3600 --carbon-policy "$cp" --forecast oracle --json > "$T/s.json" 2>&1
    jobs=$(sed -n 's/.*"jobs_carbon_kg": \([-0-9.e+]*\).*/\1/p' "$T/s.json")
    bound=$(sed -n 's/.*"carbon_bound_kg": \([-0-9.e+]*\).*/\1/p' "$T/s.json")
    if [ -z "$jobs" ] || [ -z "$bound" ] || ! awk -v j="$jobs" -v b="$bound" 'BEGIN { exit !(b > 0 && b <= j * (1 + 1e-9)) }'; then
        echo "FAIL: $cp: jobs' carbon '$jobs' kg, bound '$bound' kg"; fail=$((fail + 1))
    fi
done
echo "carbon_bound: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
