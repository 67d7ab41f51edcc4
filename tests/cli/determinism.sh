#!/bin/sh
# SPDX-License-Identifier: MIT
# Identical input and seed give byte-identical output files, for every policy and placement.
set -u
ECO="$1"; SRC="$2"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
TRACE="$SRC/data/itp/cluster05.csv.gz"
fail=0; n=0
for placement in pack pool spread first-fit; do
    for run in a b; do
        "$ECO" sim --trace "$TRACE" --cluster 4x8 --compare fifo,greedy,easy,sjf,las \
            --placement "$placement" --seed 7 --out "$TMP/$run-$placement" --quiet >/dev/null || {
            echo "FAIL: sim exited $? ($placement)"; exit 1; }
    done
    for pol in fifo greedy easy sjf las; do
        for f in jobs.csv summary.json rejected.csv nodes.csv timeline.csv; do
            n=$((n + 1))
            if ! cmp -s "$TMP/a-$placement/$pol/$f" "$TMP/b-$placement/$pol/$f"; then
                echo "FAIL: $placement/$pol/$f differs between two identical runs"; fail=$((fail + 1))
            fi
        done
    done
done
# A batch placement (pso: the queue of each pass placed by seeded PSO), one policy.
for run in a b; do
    "$ECO" sim --trace "$TRACE" --cluster 4x8 --policy easy --placement pso --seed 7 \
        --out "$TMP/$run-pso" --quiet >/dev/null || { echo "FAIL: sim exited $? (pso)"; exit 1; }
done
for f in jobs.csv summary.json rejected.csv nodes.csv timeline.csv; do
    n=$((n + 1))
    if ! cmp -s "$TMP/a-pso/$f" "$TMP/b-pso/$f"; then
        echo "FAIL: pso/$f differs between two identical runs"; fail=$((fail + 1))
    fi
done
n=$((n + 1))
if cmp -s "$TMP/a-pso/jobs.csv" "$TMP/a-pack/easy/jobs.csv"; then
    echo "FAIL: pso and pack gave the same schedule"; fail=$((fail + 1))
fi
# The output really depends on the policy (a broken run writing nothing would pass above).
n=$((n + 1))
if cmp -s "$TMP/a-pack/fifo/jobs.csv" "$TMP/a-pack/sjf/jobs.csv"; then
    echo "FAIL: fifo and sjf gave the same schedule"; fail=$((fail + 1))
fi
n=$((n + 1))
lines=$(wc -l < "$TMP/a-pack/fifo/jobs.csv")
[ "$lines" -eq 3630 ] || { echo "FAIL: jobs.csv has $lines lines, want 3630"; fail=$((fail + 1)); }
n=$((n + 1))
head -1 "$TMP/a-pack/fifo/jobs.csv" | grep -qx "job_id,submit_s,start_s,end_s,gpus,nodes,wait_s,jct_s,preemptions,energy_j,workload" ||
    { echo "FAIL: jobs.csv header"; fail=$((fail + 1)); }
n=$((n + 1))
for key in '"jobs": 3629' '"completed": 3629' '"avg_jct_s"' '"p99_jct_s"' '"makespan_s"' '"gpu_util"' '"events"'; do
    grep -q "$key" "$TMP/a-pack/fifo/summary.json" || { echo "FAIL: summary.json lacks $key"; fail=$((fail + 1)); }
done
# --json with --compare prints one array; its objects carry sim_wall_s.
n=$((n + 1))
out=$("$ECO" sim --trace "$TRACE" --cluster 4x8 --compare fifo,easy --json --quiet)
first=$(printf '%s\n' "$out" | head -1); last=$(printf '%s\n' "$out" | tail -1)
count=$(printf '%s\n' "$out" | grep -c '"sim_wall_s"')
if [ "$first" != "[" ] || [ "$last" != "]" ] || [ "$count" -ne 2 ]; then
    echo "FAIL: --compare --json is not an array of 2 summaries"; fail=$((fail + 1))
fi
# Power capping on the clock knob: identical runs, and the knob changes the outcome (a budget
# that binds: at 3000 W it bound in no period, and since new jobs take their early samples at
# once both knobs ran every job at its top).
for run in a b; do
    "$ECO" sim --trace "$TRACE" --cluster 2x8:V100 --max-jobs 12 --control-period 30 --power-policy mpc \
        --power-budget 2000 --power-knob clock --seed 3 --out "$TMP/clock-$run" --quiet >/dev/null ||
        { echo "FAIL: clock-knob sim exited $?"; fail=$((fail + 1)); }
done
"$ECO" sim --trace "$TRACE" --cluster 2x8:V100 --max-jobs 12 --control-period 30 --power-policy mpc \
    --power-budget 2000 --seed 3 --out "$TMP/limit" --quiet >/dev/null
for f in jobs.csv summary.json timeline.csv; do
    n=$((n + 1))
    cmp -s "$TMP/clock-a/$f" "$TMP/clock-b/$f" || { echo "FAIL: clock knob: $f differs"; fail=$((fail + 1)); }
done
n=$((n + 1))
if cmp -s "$TMP/clock-a/jobs.csv" "$TMP/limit/jobs.csv"; then
    echo "FAIL: --power-knob clock gave the same schedule as limit"; fail=$((fail + 1))
fi
echo "determinism: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
