#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: replays a real Microsoft ITP trace (cluster02: 5,778 jobs over 60 days) on a
# 128-GPU V100 cluster under every queue policy, and writes the per-job results to out/demo/.
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
    --power-down none --quiet
"$BUILD/ecosched" sim --trace "$TRACE" --cluster peak --policy easy --placement energy \
    --power-down forecast --quiet | tail -1
