#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: replays a real Microsoft ITP trace (cluster02: 5,778 jobs over 60 days) on a
# 128-GPU V100 cluster under every queue policy, writes the per-job results to out/demo/, and
# ends with HTML reports of both comparisons (out/demo/report.html, out/demo/energy.html).
set -eu
BUILD="${1:-build}"
TRACE=data/itp/cluster02.csv.gz
CLUSTER=16x8:V100
echo "ecosched demo: $TRACE on $CLUSTER (16 nodes x 8 V100), placement pack"
echo
"$BUILD/ecosched" sim --trace "$TRACE" --cluster "$CLUSTER" --placement pack \
    --compare fifo,greedy,easy,sjf,las --out out/demo
echo
echo "JCT = job completion time (end - submit), in hours; makespan in days."
echo "Per-job schedules and summaries: out/demo/POLICY/jobs.csv and summary.json"

echo
echo "Energy: the same trace on a cluster sized for its peak demand (--cluster peak), EASY"
echo "backfilling, nodes always on (pack) versus ecosched's forecast power-down with energy-aware"
echo "placement:"
echo
"$BUILD/ecosched" sim --trace "$TRACE" --cluster peak --policy easy --placement pack \
    --power-down none --quiet --out out/demo-energy/pack-always-on
"$BUILD/ecosched" sim --trace "$TRACE" --cluster peak --policy easy --placement energy \
    --power-down forecast --quiet --out out/demo-energy/energy-forecast | tail -1

echo
"$BUILD/ecosched" report --title "ecosched demo: queue policies on Microsoft ITP cluster02, \
16 x 8 V100" -o out/demo/report.html out/demo >/dev/null
"$BUILD/ecosched" report --title "ecosched demo: nodes always on versus forecast power-down, \
ITP cluster02" -o out/demo/energy.html out/demo-energy/pack-always-on \
    out/demo-energy/energy-forecast >/dev/null
echo "HTML reports (open in a browser; no network needed):"
echo "  queue policies:  $(pwd)/out/demo/report.html"
echo "  energy:          $(pwd)/out/demo/energy.html"
