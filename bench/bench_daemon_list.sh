#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd's submit rate while eight clients list jobs in a loop, over a store of 50,000
# jobs (bench/README.md, "GPU-server daemon"): GET /v1/jobs answers one page (100 jobs), built
# by the daemon's listing worker thread beside the event loop. Unix socket only; bounded (60,000
# submissions, listers stop with the run). Prints Markdown table rows; never fails on a
# figure. Usage: bench_daemon_list.sh BUILD
set -u
B=$(cd "${1:-build}" && pwd)
NAME=bench_daemon_list
. "$(dirname "$0")/daemon.shlib"
start "$T/state" info
hold_gpus
fill=$("$B/eco_bench_submit" "$SOCK" 49999 1 "$T") || fill="error"
rss0=$(awk '/VmRSS/ { print $2 }' "/proc/$DPID/status")
r0=$("$B/eco_bench_submit" "$SOCK" 5000 1 "$T") || r0="error"
r8=$("$B/eco_bench_submit" "$SOCK" 5000 1 "$T" 8) || r8="error"
rss1=$(awk '/VmRSS/ { print $2 }' "/proc/$DPID/status")
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$DPID/status")
t0=$(date +%s.%N)
curl -s --unix-socket "$SOCK" -o "$T/page.json" http://localhost/v1/jobs
t1=$(date +%s.%N)
page=$(awk -v a="$t0" -v b="$t1" -v s="$(wc -c < "$T/page.json")" 'BEGIN { printf "%.1f ms, %d bytes", (b - a) * 1000, s }')
lists=$(echo "$r8" | awk '{ printf "%d listings of 100 jobs meanwhile (%.0f/s)", $4, $4 / $2 }')
echo "| submissions per second, unix socket | 5,000 more on 50,000 stored jobs (filled at $(rate "$fill")), no listing | $(rate "$r0") | >= 5,000/s |"
echo "| submissions per second while 8 clients list | the same, 8 clients GET /v1/jobs (default page) in a loop | $(rate "$r8"); $lists | >= 5,000/s |"
echo "| one GET /v1/jobs (default page) | 60,000 stored jobs, curl on the unix socket | $page | one page, not 22 MB |"
echo "| daemon memory | RSS before / after the listing run; peak | $((rss0 / 1024)) / $((rss1 / 1024)) MB; peak $((hwm / 1024)) MB | not 587 MB |"
