#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/README.md "advise": the wall time of `ecosched advise` (docs/advise.md: 12 tuning runs,
# up to 5 held-out runs; 14 and more with a carbon signal) on ITP cluster02 (5,778 jobs,
# --cluster auto), without and with a carbon signal, and on 100,000 ITP jobs: the ten clusters'
# jobs merged in submit order, copies 4 days apart until 100,000 (as the sim benchmark replays
# them), on --cluster auto. Whole process, trace loading included; one run each.
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
C=data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
wall() { # seconds of one advise run with the given options, its table to $TMP/last
    t0=$(date +%s.%N)
    "$ECO" advise -q "$@" > "$TMP/last"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}
# 100,000 jobs from the ten ITP clusters
echo "job_id,submission_time,duration,num_gpu" > "$TMP/itp100k.csv"
for copy in 0 1; do
    for k in 01 02 03 04 05 06 07 08 09 10; do
        zcat "data/itp/cluster$k.csv.gz" | tail -n +2 |
            awk -F, -v c="$copy" -v k="$k" 'BEGIN { OFS = "," }
                { $1 = c "-" k "-" $1; $2 = $2 + c * 4 * 86400; print }'
    done
done | sort -t, -k2,2n | head -n 100000 >> "$TMP/itp100k.csv"
echo "| trace | jobs | signal | advise wall s |"
echo "|---|---:|---|---:|"
T="--trace data/itp/cluster02.csv.gz --cluster auto"
# shellcheck disable=SC2086
echo "| ITP cluster02 | 5778 | none | $(wall $T) |"
# shellcheck disable=SC2086
echo "| ITP cluster02 | 5778 | CISO 2022 carbon | $(wall $T --carbon "$C" --trace-start 2022-06-01T00:00:00Z) |"
echo "| 100,000 ITP jobs | 100000 | none | $(wall --trace "$TMP/itp100k.csv" --cluster auto) |"
echo
echo "The 100,000-job table:"
echo
echo '```'
sed -n '1,/^$/p;/^lever/,/^$/p' "$TMP/last"
echo '```'
