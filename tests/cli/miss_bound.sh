#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --miss-bound`: bad values and a missing budget exit 2 naming what to fix; on a
# small trace the table and the JSON give the same bound, and that bound is at most the misses
# of a capped run of the same jobs.
set -u
ECO="$1"
SRC="$2"
T=$(mktemp -d /tmp/ecosched-missbound.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
tr="$SRC/data/itp/cluster10.csv.gz"
opts="--trace $tr --cluster 1x8:V100,1x8:A40 --policy lsf --workload-mix default --deadlines factor:1.5-3 --quiet"
# shellcheck disable=SC2086
expect 2 "--miss-bound needs a power budget" -- sim $opts --miss-bound 3600
# shellcheck disable=SC2086
expect 2 "--miss-bound: 'x' is not" -- sim $opts --power-budget 4000 --miss-bound x
# shellcheck disable=SC2086
expect 2 "--miss-bound: the slot must be at least 1 s" -- sim $opts --power-budget 4000 --miss-bound 0.5
# shellcheck disable=SC2086
expect 0 "miss_ratio_bound" -- sim $opts --power-budget 4000 --miss-bound 3600
n=$((n + 1))
# shellcheck disable=SC2086
b=$("$ECO" sim $opts --power-budget 4000 --miss-bound 3600 | awk 'NR == 2 { print $2 }')
# shellcheck disable=SC2086
j=$("$ECO" sim $opts --power-budget 4000 --miss-bound 3600 --json | sed -n 's/.*"miss_bound": \([0-9]*\).*/\1/p')
# shellcheck disable=SC2086
m=$("$ECO" sim $opts --power-budget 4000 --power-policy oracle --json |
    awk -F'[:,]' '/"deadline_jobs"/ { d = $2 } /"deadline_miss_ratio"/ { r = $2 } END { printf "%.0f", d * r }')
if [ -z "$b" ] || [ "$b" != "$j" ] || [ "$b" -gt "$m" ]; then
    echo "FAIL: bound '$b' (JSON '$j') against the oracle's $m misses"; fail=$((fail + 1))
fi
echo "miss_bound: $((n - fail)) passed, $fail failed (bound $b, oracle $m misses)"
[ "$fail" -eq 0 ]
