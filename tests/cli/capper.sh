#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --power-policy FAMILY[:PARAMS]`: the capper family from the registry in --help,
# bad families, keys and values exit 2 naming them, explicit defaults give byte-identical
# runs, and a parameter that turns a part off changes the run (it reaches the decide).
set -u
ECO="$1"
SRC="$2"
T=$(mktemp -d /tmp/ecosched-capper.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
TRACE="$SRC/data/itp/cluster02.csv.gz"
RUN="sim --trace $TRACE --max-jobs 40 --cluster 2x8:V100,2x8:A40 --policy easy --deadlines factor:1.5-3 --seed 2 --control-period 10 --power-budget 5000 --quiet"
for c in mpc oracle uniform proportional threshold; do
    expect 0 "  $c " -- sim --help
done
expect 0 "admit=min|deadline" -- sim --help
expect 2 "unknown policy 'sleepy'" -- $RUN --power-policy sleepy
expect 2 "unknown parameter 'gian'" -- $RUN --power-policy mpc:gian=0.3
expect 2 "unknown parameter 'grid'" -- $RUN --power-policy uniform:grid=10
expect 2 "parameter gain: 'x' is not a number" -- $RUN --power-policy proportional:gain=x
expect 2 "parameter admit: 'maybe' is not min or deadline" -- $RUN --power-policy mpc:admit=maybe
expect 2 "proportional splits power limits" -- $RUN --power-policy proportional:gain=0 --power-knob clock
# Explicit defaults: the same run, byte for byte.
for p in mpc mpc:gain=0.3,dither=0.15,early=10,admit=min; do
    $ECO $RUN --power-policy "$p" --out "$T/$(echo "$p" | tr ':,=' '___')" >/dev/null 2>&1 ||
        { echo "FAIL: sim --power-policy $p exited $?"; fail=$((fail + 1)); }
done
n=$((n + 1))
cmp -s "$T/mpc/jobs.csv" "$T/mpc_gain_0.3_dither_0.15_early_10_admit_min/jobs.csv" ||
    { echo "FAIL: mpc and mpc with its defaults spelt out differ"; fail=$((fail + 1)); }
# Every capper gets the family's feedback: turning it off changes a baseline's power trace.
for p in proportional proportional:gain=0,dither=0; do
    $ECO $RUN --power-policy "$p" --out "$T/$(echo "$p" | tr ':,=' '___')" >/dev/null 2>&1 ||
        { echo "FAIL: sim --power-policy $p exited $?"; fail=$((fail + 1)); }
done
n=$((n + 1))
if cmp -s "$T/proportional/timeline.csv" "$T/proportional_gain_0_dither_0/timeline.csv"; then
    echo "FAIL: proportional with and without feedback ran the same"; fail=$((fail + 1))
fi
echo "capper: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
