#!/bin/sh
# SPDX-License-Identifier: MIT
# GPU-server daemon benchmarks, called by bench/run.sh: submissions per second
# through the unix socket, a scheduling pass with 10,000 queued jobs on 8 GPUs, idle CPU with
# 1 s telemetry. Prints a Markdown table of figures and targets; never fails on a figure.
# Runs ecoschedd on the fake NVML platform in a temporary directory. Usage: bench_daemon.sh BUILD
set -u
B=$(cd "${1:-build}" && pwd)
NAME=bench_daemon
. "$(dirname "$0")/daemon.shlib"
# cpu_ticks PID: utime + stime of PID in clock ticks (fields 14 and 15 of /proc/PID/stat)
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
HZ=$(getconf CLK_TCK)

# (a) A job holding all 8 GPUs runs, so every benchmark job (gpus 1) stays queued: the figure
# is the API and the store (each submit also triggers a pass, which stops at the queue head).
start "$T/state" info
hold_gpus
r1=$("$B/eco_bench_submit" "$SOCK" 5000 1 "$T") || r1="error"
r2=$("$B/eco_bench_submit" "$SOCK" 5000 1 "$T") || r2="error"
queued=$("$ECO" ls --all queued | awk 'NR > 1' | wc -l)

# (b) Pass time with the 10,000 queued jobs, per queue policy: the daemon times every pass
# (reaping, the queue policy's decisions; the GPUs are read by the sampling tick just before,
# timed on its own) and GET /v1/status reports the count and mean of both; the mean over 20 s
# of passes with the full queue is the figure. The daemon's own CPU over 20 s bounds pass and
# sampling together (one of each per second plus the HTTP polling of this script).
status_obj() { curl -s --unix-socket "$SOCK" http://localhost/v1/status |
    sed "s/.*\"$1\":{//; s/}.*//" | tr ',' '\n' | awk -F: '{ gsub(/[" }]/, ""); v[$1] = $2 }
    END { printf "%s %s %s %s\n", v["count"], v["mean_ms"], v["last_queued"], v["queue_mean_ms"] }'; }
pass_stats() { status_obj pass; }
passrows=""
for pol in fifo greedy edf; do
    stop
    start "$T/state" info --queue-policy "$pol"
    sleep 2
    set -- $(status_obj sample); s0=$1; sm0=$2
    set -- $(pass_stats); n0=$1; m0=$2; q0=$4
    c0=$(cpu_ticks "$DPID"); sleep 20; c1=$(cpu_ticks "$DPID")
    set -- $(pass_stats); n1=$1; m1=$2; ql=$3; q1=$4
    set -- $(status_obj sample); s1=$1; sm1=$2
    samp=$(awk -v n0="$s0" -v m0="$sm0" -v n1="$s1" -v m1="$sm1" 'BEGIN {
        if (n1 > n0) printf "; sampling tick before it %.3f ms (mean of %d)",
            (n1 * m1 - n0 * m0) / (n1 - n0), n1 - n0 }')
    mean=$(awk -v n0="$n0" -v m0="$m0" -v n1="$n1" -v m1="$m1" -v q0="$q0" -v q1="$q1" 'BEGIN {
        if (n1 > n0) printf "%.3f ms, of which queue policy %.3f ms (mean of %d passes)",
            (n1 * m1 - n0 * m0) / (n1 - n0), (n1 * q1 - n0 * q0) / (n1 - n0), n1 - n0;
        else printf "no pass" }')
    bound=$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v n=$((n1 - n0)) 'BEGIN { if (n < 1) n = 1;
        printf "<= %.2f ms", (d + 1) * 1000 / hz / n }')
    passrows="$passrows| scheduling pass, $pol | $ql queued jobs, 8 GPUs all held | $mean$samp; CPU bound of both $bound | <= 1 ms |
"
done
stop
kill -KILL "-$HOLD" 2>/dev/null; HOLD=""

# (c) Idle: a fresh daemon, no jobs, 8 GPUs sampled every second, 30 s.
start "$T/idle" info
sleep 2
c0=$(cpu_ticks "$DPID"); sleep 30; c1=$(cpu_ticks "$DPID")
idle=$(awk -v d=$((c1 - c0)) -v hz="$HZ" 'BEGIN { printf "%.2f%% (%d ticks of 1/%d s in 30 s)", d / hz / 30 * 100, d, hz }')
stop

echo "| measure | setup | figure | target |"
echo "|---|---|---:|---|"
echo "| submissions per second, unix socket | 5,000 POST /v1/jobs on one kept-alive connection, one at a time; store empty | $(rate "$r1") | >= 5,000/s |"
echo "| submissions per second, unix socket | the same, 5,000 more (5,000 already queued) | $(rate "$r2") | >= 5,000/s |"
printf "%s" "$passrows"
echo "| idle daemon CPU | no jobs, 8 fake GPUs sampled every 1 s, 30 s | $idle | < 1% of one core |"
