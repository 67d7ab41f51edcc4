#!/bin/sh
# SPDX-License-Identifier: MIT
# Read-only check of ecoschedd's NVML path on a machine with a real NVIDIA GPU: the daemon on
# the nvml platform lists the GPUs with their live readings, runs a job on a GPU it chooses
# (CUDA_VISIBLE_DEVICES set), records the job's energy from the NVML energy counter, serves
# /metrics, and stops cleanly. It changes no GPU setting: no job asks for a power cap, and the
# script refuses to start the daemon when a GPU's limit differs from its default (the daemon's
# start-up reconciliation would reset it).
# Usage: scripts/nvml-smoke.sh BINDIR [OUTDIR]; BINDIR holds ecoschedd and ecosched.
set -u
B=$(cd "${1:?usage: nvml-smoke.sh BINDIR [OUTDIR]}" && pwd)
O=${2:-.}
T=$(mktemp -d /tmp/ecosched-nvml.XXXXXX)
SOCK="$T/d.sock"
export ECOSCHED_SOCKET="$SOCK"
fail=0
say() { echo "$*" | tee -a "$O/nvml-smoke.txt"; }
check() { what="$1"; shift; if "$@"; then say "ok: $what"; else say "FAIL: $what"; fail=$((fail + 1)); fi; }
: > "$O/nvml-smoke.txt"
nvidia-smi --query-gpu=index,name,power.limit,power.default_limit,power.draw,memory.used,memory.total \
    --format=csv > "$O/nvidia-smi-before.csv" 2>&1
cat "$O/nvidia-smi-before.csv"
if awk -F', ' 'NR > 1 { gsub(/ W/, "", $3); gsub(/ W/, "", $4); if ($3 + 0 != $4 + 0) bad = 1 }
    END { exit !bad }' "$O/nvidia-smi-before.csv"; then
    say "SKIP: a GPU's power limit differs from its default; not starting the daemon"
    exit 0
fi
"$B/ecoschedd" --foreground --platform nvml --socket "$SOCK" --state-dir "$T/state" \
    --util-window 1 --log-level debug 2> "$O/daemon.log" &
DPID=$!
i=0
while [ $i -lt 100 ] && ! "$B/ecosched" gpus > /dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
"$B/ecosched" gpus | tee "$O/gpus.txt"
"$B/ecosched" gpus --json > "$O/gpus.json"
check "the daemon lists the GPUs from NVML" grep -q '"platform": "nvml"' "$O/gpus.json"
check "power readings in watts" grep -q '"power_w": [1-9]' "$O/gpus.json"
check "an energy counter" grep -q '"energy_j": [1-9]' "$O/gpus.json"
# a job that keeps the GPU's context busy is not available without CUDA tools; a job that
# reads its CUDA_VISIBLE_DEVICES and the GPU through nvidia-smi for 5 s is
j=$("$B/ecosched" submit --name smoke -- sh -c \
    'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; for k in 1 2 3 4 5; do nvidia-smi --query-gpu=power.draw --format=csv,noheader; sleep 1; done')
check "submit prints a job id ($j)" [ -n "$j" ]
"$B/ecosched" wait "$j"; rc=$?
check "the job exits 0 ($rc)" [ "$rc" -eq 0 ]
"$B/ecosched" show "$j" | tee "$O/job.txt"
check "the job saw its GPU" grep -q "CUDA_VISIBLE_DEVICES=[0-9]" "$(awk '$1 == "stdout" { print $2 }' "$O/job.txt")"
e=$(awk '$1 == "energy_j" { print $2 }' "$O/job.txt")
check "the job's energy from the NVML counter ($e J over ~5 s)" awk "BEGIN { exit !($e > 10) }"
curl -s --unix-socket "$SOCK" http://localhost/metrics > "$O/metrics.txt" 2>/dev/null ||
    say "note: curl not available, /metrics not fetched"
[ -s "$O/metrics.txt" ] && check "/metrics has the GPU power" grep -q '^ecosched_gpu_power_watts' "$O/metrics.txt"
curl -s --unix-socket "$SOCK" http://localhost/v1/status > "$O/status.json" 2>/dev/null
kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "the daemon exits 0 on SIGTERM ($rc)" [ "$rc" -eq 0 ]
nvidia-smi --query-gpu=index,name,power.limit,power.default_limit,power.draw,memory.used,memory.total \
    --format=csv > "$O/nvidia-smi-after.csv" 2>&1
check "no GPU limit changed" sh -c "cut -d, -f1-4 '$O/nvidia-smi-before.csv' > '$T/a'; cut -d, -f1-4 '$O/nvidia-smi-after.csv' > '$T/b'; cmp -s '$T/a' '$T/b'"
rm -rf "$T"
say "nvml-smoke: $fail failed"
[ "$fail" -eq 0 ]
