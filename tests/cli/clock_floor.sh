#!/bin/sh
# SPDX-License-Identifier: MIT
# The clock knob's floor (docs/models/clock.md, "Clock floor"): on a small A40 case with many
# `ncf` jobs at 60% of peak demand, mpc on the clock knob uses at most 1.25x the limit knob's
# energy. Without the floor it parked `ncf` at the 210 MHz level (idle power, speed 0.105) while
# the hosts stayed on, and used 2.1x.
set -u
ECO="$1"; SRC="$2"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
TRACE="$SRC/tests/data/trace/clock_floor.csv"
CLUSTER=4x8:A40
# Stated factor: after the floor the two knobs are within 1% here (a 60-job, 4-node run is
# noisy from one change to the next), before it 2.1x; 1.25 separates the two with margin.
FACTOR=1.25
field() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" "$2" | head -1; }
"$ECO" sim --trace "$TRACE" --cluster "$CLUSTER" --quiet --out "$TMP/u" >/dev/null ||
    { echo "FAIL: uncapped sim exited $?"; exit 1; }
budget=$(awk -v p="$(field peak_power_w "$TMP/u/summary.json")" 'BEGIN { printf "%.1f", 0.6 * p }')
for knob in limit clock; do
    "$ECO" sim --trace "$TRACE" --cluster "$CLUSTER" --control-period 30 --power-policy mpc \
        --power-budget "$budget" --power-knob "$knob" --seed 1 --quiet --out "$TMP/$knob" >/dev/null ||
        { echo "FAIL: $knob-knob sim exited $?"; exit 1; }
done
el=$(field energy_kwh "$TMP/limit/summary.json")
ec=$(field energy_kwh "$TMP/clock/summary.json")
for k in limit clock; do
    u=$(field unfinished "$TMP/$k/summary.json")
    [ "$u" = 0 ] || { echo "FAIL: $k knob left $u jobs unfinished"; exit 1; }
done
echo "energy at 60%: limit knob $el kWh, clock knob $ec kWh"
awk -v l="$el" -v c="$ec" -v f="$FACTOR" 'BEGIN { exit !(l > 0 && c <= f * l) }' ||
    { echo "FAIL: clock knob $ec kWh > $FACTOR x limit knob $el kWh"; exit 1; }
echo "clock_floor: 1 passed, 0 failed"
