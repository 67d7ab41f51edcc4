#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd's GET /metrics passes `promtool check metrics` (Prometheus' own parser and linter)
# and says what the daemon knows: one sample per GPU for each GPU metric, job counts per state,
# the energy of a job that ran, the Content-Type of text format 0.0.4.
. "$(dirname "$0")/common.shlib"
# curl and promtool come with scripts/setup.sh check (promtool unpacked from the Debian package
# prometheus into .tools/bin, found there after PATH): missing, this test fails rather than
# passing without checking anything.
PATH="$PATH:$SRC/.tools/bin"
for tool in promtool curl; do
    command -v "$tool" >/dev/null || {
        echo "FAIL: $tool not found (sh scripts/setup.sh check installs it$([ $tool = promtool ] &&
            echo ' from the Debian package prometheus, into .tools/bin'))"
        exit 1
    }
done
start_daemon

j=$("$ECO" submit --name metered -- sh -c 'sleep 1.5')
"$ECO" wait "$j"
curl -s --unix-socket "$SOCK" -D "$T/headers" -o "$T/metrics" http://localhost/metrics
check "GET /metrics answers 200" grep -q '^HTTP/1.1 200' "$T/headers"
check "Content-Type is text format 0.0.4" \
    grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$T/headers"
promtool check metrics < "$T/metrics" > "$T/promtool.out" 2>&1; rc=$?
check "promtool check metrics exits 0 without lint problems (rc $rc: $(cat "$T/promtool.out"))" \
    sh -c "[ $rc -eq 0 ] && [ ! -s '$T/promtool.out' ]"

# count NAME: samples of metric NAME (lines starting with NAME{ or NAME space)
count() { grep -c -E "^$1(\\{| )" "$T/metrics"; }
for m in power_watts utilization_ratio memory_used_bytes memory_total_bytes power_limit_watts \
    energy_joules_total; do
    check "ecosched_gpu_$m: 2 GPUs (got $(count "ecosched_gpu_$m"))" \
        [ "$(count "ecosched_gpu_$m")" -eq 2 ]
    check "ecosched_gpu_$m has HELP and TYPE" sh -c \
        "grep -q '^# HELP ecosched_gpu_$m ' '$T/metrics' && grep -q '^# TYPE ecosched_gpu_$m ' '$T/metrics'"
done
check "GPU labels: gpu and model" \
    grep -q '^ecosched_gpu_power_watts{gpu="1",model="[^"]*"} ' "$T/metrics"
check "energy counters are counters" grep -q '^# TYPE ecosched_gpu_energy_joules_total counter' "$T/metrics"
check "memory total 32 GiB" \
    grep -q '^ecosched_gpu_memory_total_bytes{gpu="0",[^}]*} 34359738368$' "$T/metrics"
check "one job done" grep -qx 'ecosched_jobs{state="done"} 1' "$T/metrics"
check "no job queued" grep -qx 'ecosched_jobs{state="queued"} 0' "$T/metrics"
check "six job states" [ "$(count ecosched_jobs)" -eq 6 ]
e=$(awk -v k="ecosched_job_energy_joules_total{job=\"$j\"}" '$1 == k { print $2 }' "$T/metrics")
check "job $j energy counter > 0 ('$e')" awk "BEGIN { exit !(\"$e\" + 0 > 0) }"
ej=$(field "$j" energy_j)
check "it is the job's stored energy ($e vs $ej)" awk "BEGIN { d = $e - $ej; exit !(d < 0.01 && d > -0.01) }"
t=$(awk '$1 == "ecosched_jobs_energy_joules_total" { print $2 }' "$T/metrics")
check "all-jobs energy counter equals the one job's ($t)" awk "BEGIN { d = $t - $e; exit !(d < 0.01 && d > -0.01) }"

# bounded label cardinality: 105 jobs, only the newest 100 carry a job label
# (curl, not the CLI: 104 sanitizer-built CLI starts would take most of the test's time limit)
i=0; while [ $i -lt 104 ]; do
    curl -s --unix-socket "$SOCK" -o /dev/null -X POST -H 'Content-Type: application/json' \
        --data-binary '{"argv":["true"],"cwd":"/tmp","gpus":0}' http://localhost/v1/jobs
    i=$((i + 1))
done
curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics
check "100 job series out of 105 jobs (got $(count ecosched_job_energy_joules_total))" \
    [ "$(count ecosched_job_energy_joules_total)" -eq 100 ]
check "the oldest job's series is gone" sh -c "! grep -q 'job=\"$j\"' '$T/metrics'"
check "still passes promtool" sh -c "promtool check metrics < '$T/metrics' >/dev/null 2>&1"
st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -X POST http://localhost/metrics)
check "POST /metrics -> 405 (got $st)" [ "$st" = 405 ]

stop_daemon
finish
