#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench`: runs the simulator and daemon benchmarks and writes their figures to bench/README.md.
# Figures, not pass/fail: timing belongs here, never in tests.
set -eu
BUILD="${1:-build}"
OUT=bench/README.md
tmp=$(mktemp)
{
    echo "# ecosched benchmarks"
    echo
    echo "Written by \`make bench\` (bench/run.sh, bench/bench_sim.c) on $(date -u +%Y-%m-%d);"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
    echo "$(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'). Release build, one core."
    echo "\"sim wall s\" is the simulation alone (policy passes and events), as reported in"
    echo "\`sim_wall_s\`; loading the trace is not included. Fixed inputs and seed 1."
    echo
    echo "## Speed"
    echo
    "$BUILD/eco_bench" small
    echo
    echo "## One million jobs"
    echo
    echo "All 69,351 ITP jobs replayed 15 times, copy k shifted by k x 4 days (first 1,000,000"
    echo "jobs kept), on 2,048 nodes of 8 V100 GPUs, fifo + pack. Peak memory is the whole"
    echo "process (getrusage ru_maxrss), trace loading included, in a fresh process."
    echo
    echo "| case | jobs | GPUs | policy | placement | sim wall s | peak memory | target |"
    echo "|---|---:|---|---|---|---:|---:|---|"
    "$BUILD/eco_bench" million
    echo
    echo "## Growth with the number of jobs"
    echo
    echo "125k, 250k, 500k and 1M jobs at a constant load: copies of all ITP jobs spread evenly"
    echo "over the traces' 60 days, on 256 to 2,048 nodes of 8 GPUs (scaled with the jobs), so that"
    echo "only the number of jobs doubles (target: doubling the jobs multiplies the time by at most"
    echo "2.3). Median of 5 runs each."
    echo
    "$BUILD/eco_bench" scaling
    echo
    echo "## Power-cap allocation"
    echo
    echo "One call of the power-capping allocator (price-based, docs/policies/powercap.md) for N"
    echo "one-GPU jobs of mixed GPU types and workloads with learned models, 20% with deadlines"
    echo "(bench/bench_powercap.c). Target: one allocation for 10,000 GPUs in at most 5 ms; with"
    echo "memos (docs/policies/powercap.md, \"Memos\"), when one job changes, at most 1 ms."
    echo
    "$BUILD/eco_bench_powercap"
    echo
    echo "## Capped simulation"
    echo
    echo "The README's power-capping example (ITP cluster02, 20x8 V100 + 20x8 A40, easy, 60 kW,"
    echo "1 s control period, deadlines factor:1.5-3) on the whole trace with settled control"
    echo "periods skipped (the default; target: at most 5 s on one core), and the skipping against"
    echo "the 1 s loop (--control-skip off) on the first 300 jobs (bench/capped_section.sh). The"
    echo "1 s loop on the whole trace took about 23 minutes before issue 16 and 222 s of CPU after"
    echo "the allocator's bit-exact shortcuts (2026-12-02; docs/policies/powercap.md, \"Complexity\")."
    echo "The second table: ITP cluster04's first 10,000 jobs on 30 x 8 V100 (easy), the plain replay"
    echo "and every capper under a binding 50 kW budget, skipping on, with per-job holding and memos"
    echo "(docs/policies/powercap.md); target: a capped run at most 2x the plain one (issue 29)."
    echo "The third: every lever at scale, 100,000 jobs (all ITP jobs and part of a second copy"
    echo "60 days later) on 300 x 8 V100, easy, forecast power-down and carbon shifting, then each"
    echo "capper under a budget at 70 % of that run's peak; target: at most 2x the levers alone,"
    echo "at most 256 MB."
    echo
    sh bench/capped_section.sh "$BUILD" | tee "$tmp.capped"
    python3 bench/capped_plot.py <"$tmp.capped" >bench/capped_scaling.svg
    rm -f "$tmp.capped"
    echo
    echo "![capped simulation: user CPU against jobs, and the cost of a control period against running jobs](capped_scaling.svg)"
    echo
    echo "## Grid signals"
    echo
    echo "The simulator with an hourly carbon signal (CISO 2022) and price signal (NSW1) against"
    echo "the same run without, and with the shift carbon policy and 24 h of slack"
    echo "(bench/signals_section.sh; target: at most 2x the time without signals). sim wall s,"
    echo "median of 3."
    echo
    sh bench/signals_section.sh "$BUILD"
    echo
    echo "## advise"
    echo
    echo "\`ecosched advise\` (docs/advise.md: 12 tuning runs and up to 4 held-out runs without a"
    echo "signal, 14 and up to 5 with one) on ITP cluster02 and on 100,000 ITP jobs, --cluster auto"
    echo "(bench/advise_section.sh): whole process, trace loading included, one run each."
    echo
    sh bench/advise_section.sh "$BUILD"
    echo
    echo "## GPU-server daemon"
    echo
    echo "ecoschedd (Release) on the fake NVML platform with 8 GPUs, in a temporary state directory"
    echo "(bench/bench_daemon.sh, client bench/bench_submit.c). Submissions: raw HTTP/1.1 on the"
    echo "unix socket, one kept-alive connection, each request waiting for its 201; a job holding"
    echo "all 8 GPUs keeps the submitted jobs (gpus 1) queued, so the figure is the API and the"
    echo "SQLite store (WAL). The pass bound is the daemon's own CPU (utime + stime from"
    echo "/proc/PID/stat) while idle with those 10,000 jobs queued, which also pays for sampling."
    echo
    sh bench/bench_daemon.sh "$BUILD"
    echo
    echo "Listing while submitting (bench/bench_daemon_list.sh): 50,000 stored jobs, then 5,000"
    echo "submissions alone and 5,000 while 8 clients GET /v1/jobs (default page) in a loop."
    echo
    echo "| measure | setup | figure | target |"
    echo "|---|---|---:|---|"
    sh bench/bench_daemon_list.sh "$BUILD"
    echo
    echo "## powerd over 1,000 nodes"
    echo
    echo "One control period's node work of \`ecosched powerd\` (bench/bench_powerd_nodes.c, run by"
    echo "bench/bench_powerd_nodes.sh): GET /v1/node of 1,000 node daemons, then a new limit for each of"
    echo "the 8 GPUs of every answering node (\"all\"; \"a tenth\": on a tenth of the nodes), one POST"
    echo "/v1/node/limits per node (\"lease\": with its lease renewal; \"MUNGE\": every request with a fresh"
    echo "credential from a private munged), all in flight at once (at most 256), each bounded by the"
    echo "default --node-timeout 0.5 s. The node daemons are simulated, 1,000 unix sockets served by one"
    echo "process (tests/fake_nodes.h, epoll); silent ones accept and never answer. Slurm's calls (sinfo,"
    echo "squeue) are not included. 10 periods."
    echo
    sh bench/bench_powerd_nodes.sh "$BUILD"
    echo
    sh bench/place_section.sh "$BUILD"
} > "$tmp"
mv "$tmp" "$OUT"
cat "$OUT"
