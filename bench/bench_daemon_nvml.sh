#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd pass time on a real GPU (nvml platform): one job holds GPU 0, 10,000 more are
# queued; per queue policy the daemon's debug log gives every pass's duration. Read-only: no
# power caps. Usage: bench_daemon_nvml.sh BINDIR OUTDIR (BINDIR: ecoschedd, ecosched,
# eco_bench_submit, and lib/ with their libraries when run on another machine).
B=$(cd "$1" && pwd); O="$2"
export LD_LIBRARY_PATH="$B/lib"
for pol in fifo greedy; do
T=$(mktemp -d /tmp/pb.XXXXXX); export ECOSCHED_SOCKET="$T/d.sock"
"$B/ecoschedd" --foreground --platform nvml --socket "$T/d.sock" --state-dir "$T/s" \
    --log-level debug --queue-policy $pol 2> "$O/pass-$pol.log" &
D=$!
i=0; while [ $i -lt 100 ] && ! "$B/ecosched" gpus >/dev/null 2>&1; do sleep 0.1; i=$((i+1)); done
"$B/ecosched" submit -- sleep 40 > /dev/null
sleep 1
"$B/eco_bench_submit" "$T/d.sock" 10000 1 "$T" | tee "$O/submit-$pol.txt"
sleep 12
kill -TERM $D; wait $D
pkill -f "sleep 40" 2>/dev/null
grep "pass: 100[0-9][0-9] queued" "$O/pass-$pol.log" | tail -12 > "$O/pass-$pol-10k.txt"
echo "== $pol"; cat "$O/pass-$pol-10k.txt"
rm -f "$O/pass-$pol.log"
rm -rf "$T"
done
