#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --node-power` and the cluster file's power fields: bad keys and values exit 2
# naming the key (file, node group and field for a file), and the figures reach the run and
# summary.json (power_cycles, cycle_cost_kwh).
set -u
ECO="$1"
SRC="$2"
T=$(mktemp -d /tmp/ecosched-node-power.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
TR="$SRC/data/itp/cluster02.csv.gz"
[ -r "$TR" ] || { echo "SKIP: $TR not found (the bundled traces are needed)"; exit 77; }
expect 2 "--node-power: bogus: unknown key (known: base_w" -- sim --trace "$TR" --max-jobs 100 --cluster 2x8 --node-power bogus=1
expect 2 "--node-power: cycle_j: cost of a power cycle must be a number >= 0 J, got -1" -- sim --trace "$TR" --max-jobs 100 --cluster 2x8 --node-power cycle_j=-1
expect 2 "--node-power: base_w: 'abc' is not a number" -- sim --trace "$TR" --max-jobs 100 --cluster 2x8 --node-power base_w=abc
expect 2 "--node-power: 'base_w': expected KEY=VALUE" -- sim --trace "$TR" --max-jobs 100 --cluster 2x8 --node-power base_w
cat >"$T/bad.json" <<'J'
{"nodes": [{"count": 2, "gpus": 8, "gpu_type": "V100", "gpu_idle_ctx_w": -4}]}
J
expect 2 "bad.json: nodes[0].gpu_idle_ctx_w: idle GPU power with a context must be 0..250 W" -- sim --trace "$TR" --max-jobs 100 --cluster "$T/bad.json"
cat >"$T/typo.json" <<'J'
{"nodes": [{"count": 2, "gpus": 8, "cycle_kj": 4}]}
J
expect 2 "typo.json: nodes[0]: unknown field 'cycle_kj' (known: count, gpus, gpu_type, base_w" -- sim --trace "$TR" --max-jobs 100 --cluster "$T/typo.json"
# The same figures from the command line and from a file give the same run.
cat >"$T/c.json" <<'J'
{"nodes": [{"count": 2, "gpus": 8, "gpu_type": "V100", "base_w": 450, "cycle_j": 3600000, "trans_w": 900}]}
J
n=$((n + 1))
"$ECO" sim --trace "$TR" --max-jobs 100 --cluster 2x8:V100 --power-down idle:0 --node-power base_w=450,cycle_j=3.6e6,trans_w=900 --out "$T/a" >/dev/null 2>&1 &&
    "$ECO" sim --trace "$TR" --max-jobs 100 --cluster "$T/c.json" --power-down idle:0 --out "$T/b" >/dev/null 2>&1 ||
    { echo "FAIL: sim with --node-power or a cluster file failed"; fail=$((fail + 1)); }
for f in a b; do
    s=$(cat "$T/$f"/summary.json 2>/dev/null)
    cyc=$(printf '%s' "$s" | sed -n 's/.*"power_cycles": *\([0-9]*\).*/\1/p' | head -1)
    kwh=$(printf '%s' "$s" | sed -n 's/.*"cycle_cost_kwh": *\([0-9.e+-]*\).*/\1/p' | head -1)
    n=$((n + 1))
    # 3.6 MJ a cycle is 1 kWh: the cost in kWh equals the cycle count.
    if [ -z "$cyc" ] || [ -z "$kwh" ] || [ "$(printf '%.6f' "$kwh")" != "$(printf '%.6f' "$cyc")" ]; then
        echo "FAIL: $f: power_cycles '$cyc' and cycle_cost_kwh '$kwh' (want equal)"
        fail=$((fail + 1))
    fi
done
n=$((n + 1))
grep -v sim_wall "$T/a/summary.json" >"$T/a.json"
grep -v sim_wall "$T/b/summary.json" >"$T/b.json"
cmp -s "$T/a.json" "$T/b.json" ||
    { echo "FAIL: --node-power and the same cluster file differ:"; diff "$T/a.json" "$T/b.json" | head -5; fail=$((fail + 1)); }
echo "node_power: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
