#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI usage: help, bad flags and bad values exit 2 with a message that says what to fix.
set -u
ECO="$1"; SRC="$2"
TRACE="$SRC/data/itp/cluster10.csv.gz"
. "$(dirname "$0")/expect.shlib"
expect 0 "usage: ecosched COMMAND" -- --help
expect 0 "ecosched " -- --version
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "usage: ecosched COMMAND" --
expect 0 "--placement L" -- sim --help
expect 2 "--trace FILE is required" -- sim --cluster 2x8
expect 2 "--cluster SPEC is required" -- sim --trace "$TRACE"
expect 2 "unknown option '--bogus'" -- sim --trace "$TRACE" --cluster 2x8 --bogus
expect 2 "needs a value" -- sim --trace "$TRACE" --cluster
expect 2 "unknown policy 'rr'" -- sim --trace "$TRACE" --cluster 2x8 --policy rr
expect 2 "unknown policy 'nope'" -- sim --trace "$TRACE" --cluster 2x8 --compare fifo,nope
expect 2 "unknown placement 'best'" -- sim --trace "$TRACE" --cluster 2x8 --placement best
expect 2 "unknown format 'xml'" -- sim --trace "$TRACE" --cluster 2x8 --format xml
expect 2 "unknown GPU type 'K80'" -- sim --trace "$TRACE" --cluster 2x8:K80
expect 2 "node count" -- sim --trace "$TRACE" --cluster x8
expect 2 "--seed: 'abc'" -- sim --trace "$TRACE" --cluster 2x8 --seed abc
expect 2 "--max-jobs: '-1'" -- sim --trace "$TRACE" --cluster 2x8 --max-jobs -1
expect 2 "las thresholds" -- sim --trace "$TRACE" --cluster 2x8 --policy las --las-thresholds 5,1
expect 2 "no-such-file.csv" -- sim --trace "$SRC/no-such-file.csv" --cluster 2x8
expect 2 "unexpected argument 'extra'" -- sim --trace "$TRACE" --cluster 2x8 extra
expect 2 "--power-knob: unknown knob 'freq'" -- sim --trace "$TRACE" --cluster 2x8 --power-knob freq
expect 2 "with --power-knob clock use" -- sim --trace "$TRACE" --cluster 2x8 --max-jobs 5 \
    --power-policy proportional --power-budget 5000 --power-knob clock
expect 2 "nodes[1].gpu_type" -- sim --trace "$TRACE" --cluster "$SRC/tests/data/cluster/bad_type.json"
expect 0 "H100-NVL" -- catalog
expect 0 "source:" -- catalog --sources
expect 2 "unknown option '--x'" -- catalog --x
expect 0 "fifo" -- sim --trace "$TRACE" --cluster 2x8 --policy fifo
expect 0 "rejected" -- sim --trace "$TRACE" --cluster 1x8 --max-jobs 100
expect 0 "note: --cluster auto: 2 nodes x 8 GPUs (16 GPUs)" -- sim --trace "$TRACE" --cluster auto
expect 0 "4 nodes x 4 GPUs (16 GPUs)" -- sim --trace "$TRACE" --cluster autox4:A100-SXM
expect 2 "GPUs per node must be 1..64" -- sim --trace "$TRACE" --cluster autox0
expect 2 "unknown GPU type 'Z'" -- sim --trace "$TRACE" --cluster auto:Z
BAD="$SRC/tests/data/trace/cli_bad_row.csv"
expect 2 "cli_bad_row.csv:3: column 'gpus': '-2'" -- sim --trace "$BAD" --cluster 1x8
expect 0 '"skipped_rows": 1' -- sim --trace "$BAD" --cluster 1x8 --skip-bad-rows --json
expect 0 '"completed": 2' -- sim --trace "$BAD" --cluster 1x8 --skip-bad-rows --json
expect 2 "cli_bad_workload.csv:3: column 'workload': unknown workload 'resnet5O'" -- sim --trace "$SRC/tests/data/trace/cli_bad_workload.csv" --cluster 1x8
expect 2 "unknown policy 'sleep:5'" -- sim --trace "$TRACE" --cluster 2x8 --power-down sleep:5
expect 2 "expected idle:SECONDS" -- sim --trace "$TRACE" --cluster 2x8 --power-down idle:soon
expect 2 "forecast parameters are" -- sim --trace "$TRACE" --cluster 2x8 --power-down forecast:fast=1
expect 2 "unknown workload 'gpt'" -- sim --trace "$TRACE" --cluster 2x8 --workload-mix gpt:1
expect 2 "nodes[0].power_limit_w: 350 W is outside the A40 range 100..300 W" -- sim --trace "$TRACE" --cluster "$SRC/tests/data/cluster/bad_limit.json"
expect 2 "nodes[0].base_w" -- sim --trace "$TRACE" --cluster "$SRC/tests/data/cluster/bad_base.json"
expect 2 "--sample-s: '0'" -- sim --trace "$TRACE" --cluster 2x8 --sample-s 0
expect 0 '"energy_kwh"' -- sim --trace "$TRACE" --cluster peak --power-down forecast --placement energy --workload-mix default --json
expect 0 "note: --cluster peak: 7 nodes x 8 GPUs (56 GPUs)" -- sim --trace "$TRACE" --cluster peak
TMPO=$(mktemp -d)
expect 0 "forecast" -- sim --trace "$TRACE" --cluster peak --power-down forecast --out "$TMPO" --sample-s 3600
n=$((n + 1))
if [ "$(head -1 "$TMPO/timeline.csv")" != "time_s,power_w,budget_w,busy_gpus,nodes_on,queued" ] ||
   [ "$(head -1 "$TMPO/nodes.csv")" != "node,group,gpu_type,gpus,energy_j,boots" ] ||
   [ "$(wc -l < "$TMPO/nodes.csv")" -ne 8 ] || [ "$(wc -l < "$TMPO/timeline.csv")" -lt 100 ]; then
    echo "FAIL: timeline.csv / nodes.csv"; fail=$((fail + 1))
fi
rm -rf "$TMPO"
B="$SRC/tests/data/budget"
expect 2 "--power-budget: '0' is not a number > 0" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget 0
expect 2 "--power-budget: '-100' is not a number > 0" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget -100
expect 2 "--power-budget: '5kW' is not a number > 0" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget 5kW
expect 2 "unsorted.csv:4: column 'time_s': 3600 is not after the previous row's 7200" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/unsorted.csv"
expect 2 "bad_watts.csv:3: column 'watts': 'lots' is not a number > 0" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/bad_watts.csv"
expect 2 "negative.csv:2: column 'watts': '-5'" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/negative.csv"
expect 2 "bad_header.csv:1: expected the header 'time_s,watts'" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/bad_header.csv"
expect 2 "empty.csv: no budget rows" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/empty.csv"
expect 2 "no-such-budget.csv: cannot open" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc --power-budget-file "$B/no-such-budget.csv"
expect 2 "needs --power-budget" -- sim --trace "$TRACE" --cluster 2x8 --power-policy mpc
expect 2 "a power budget needs a power policy other than none" -- sim --trace "$TRACE" --cluster 2x8 --power-budget 5000 --power-policy none
expect 2 "unknown policy 'magic'" -- sim --trace "$TRACE" --cluster 2x8 --power-policy magic --power-budget 5000
expect 2 "--deadlines: expected factor:LO-HI" -- sim --trace "$TRACE" --cluster 2x8 --deadlines factor:3-1
expect 2 "--noise: expected P,S" -- sim --trace "$TRACE" --cluster 2x8 --noise 0.02
echo "usage: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
