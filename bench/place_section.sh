#!/bin/sh
# SPDX-License-Identifier: MIT
# The placement optimisers' section of bench/README.md (bench/bench_place.c): gap to the
# exact optimum on 50 random instances and openb against fgd within 10 s. About 12 minutes.
set -eu
BUILD="${1:-build}"
echo "## Placement optimisers"
echo
echo "\`ecosched place\` algorithms (docs/policies/pso.md, fgd.md, ilp.md), bench/bench_place.c."
echo "Targets: pso within 1 % of the ilp optimum in active hosts (mean over 50 seeded random"
echo "instances of at most 60 items); on openb pso places at least as many GPU requests as fgd"
echo "before the first failure, within 10 s; pso beats pso-basic on every instance family."
echo "Load average at the start: $(cut -d' ' -f1 /proc/loadavg) (shared machine; times are wall-clock)."
echo
echo "### Random instances (ilp limit 10 s, pso 200 iterations x 20 particles)"
echo
"$BUILD/eco_bench_place" random 50 10 | grep -v '^<!--'
echo
echo "### openb, 120 % of the GPUs requested, 9 s limit for pso and pso-basic"
echo
"$BUILD/eco_bench_place" openb data/alibaba_gpu_v2023_openb 9 120
