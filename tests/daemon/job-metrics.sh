#!/bin/sh
# SPDX-License-Identifier: MIT
# The running jobs' series in GET /metrics (docs/http-api.md): energy (counter) and power
# (gauge) per running job with labels job_id, user and slurm_job_id, passing `promtool check
# metrics`; a job's power is its measured share of its GPU's (70 % / 30 % SM utilisation on a
# shared fake GPU); a finished job's series are gone, and with no job running there are none.
. "$(dirname "$0")/common.shlib"
PATH="$PATH:$SRC/.tools/bin"
for tool in promtool curl; do
    command -v "$tool" >/dev/null || {
        echo "FAIL: $tool not found (sh scripts/setup.sh check installs it)"
        exit 1
    }
done
export ECOSCHED_FAKE_NVML_GPUS=1
start_daemon
scrape() { curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics; }
# sample NAME JOB: the value of NAME's series for job JOB, empty when there is none
sample() { awk -v p="$1{job_id=\"$2\"," 'index($0, p) == 1 { print $2 }' "$T/metrics"; }
series() { grep -c "^ecosched_running_job_" "$T/metrics"; }

hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.05; done")
until_state "$hold" running
a=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=70 "$ECO" submit --share -- sh -c "while [ ! -e $T/go-a ]; do sleep 0.05; done")
b=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=30 "$ECO" submit --share -- sh -c "while [ ! -e $T/go-b ]; do sleep 0.05; done")
touch "$T/go-hold"
"$ECO" wait "$hold"
check "a runs" until_state "$a" running 100
check "b runs" until_state "$b" running 50
sleep 2.5 # two sampling ticks: shares measured
scrape
promtool check metrics < "$T/metrics" > "$T/promtool.out" 2>&1; rc=$?
check "promtool check metrics is clean (rc $rc: $(cat "$T/promtool.out"))" \
    sh -c "[ $rc -eq 0 ] && [ ! -s '$T/promtool.out' ]"
user=$(id -un)
check "energy series of a with job_id, user, empty slurm_job_id" \
    grep -q "^ecosched_running_job_energy_joules_total{job_id=\"$a\",user=\"$user\",slurm_job_id=\"\"} " "$T/metrics"
check "power series of b" grep -q "^ecosched_running_job_power_watts{job_id=\"$b\",user=\"$user\",slurm_job_id=\"\"} " "$T/metrics"
check "TYPE counter and gauge" sh -c "grep -q '^# TYPE ecosched_running_job_energy_joules_total counter' '$T/metrics' &&
    grep -q '^# TYPE ecosched_running_job_power_watts gauge' '$T/metrics'"
check "HELP lines" sh -c "grep -q '^# HELP ecosched_running_job_energy_joules_total ' '$T/metrics' &&
    grep -q '^# HELP ecosched_running_job_power_watts ' '$T/metrics'"
pa=$(sample ecosched_running_job_power_watts "$a"); pb=$(sample ecosched_running_job_power_watts "$b")
gp=$(awk '/^ecosched_gpu_power_watts\{gpu="0"/ { print $NF }' "$T/metrics")
check "a's power is 70 % of the GPU's ($pa W of $gp W), b's 30 % ($pb W)" awk "BEGIN {
    exit !($pa > 0.68 * $gp && $pa < 0.72 * $gp && $pb > 0.28 * $gp && $pb < 0.32 * $gp) }"
check "the holder, finished, has no series" [ -z "$(sample ecosched_running_job_energy_joules_total "$hold")" ]
ea=$(sample ecosched_running_job_energy_joules_total "$a")
check "a's energy so far > 0 ($ea J)" awk "BEGIN { exit !($ea > 0) }"

touch "$T/go-a"
"$ECO" wait "$a"
scrape
check "finished a: its energy series is gone" [ -z "$(sample ecosched_running_job_energy_joules_total "$a")" ]
check "finished a: its power series is gone" [ -z "$(sample ecosched_running_job_power_watts "$a")" ]
check "b's series remain" [ -n "$(sample ecosched_running_job_power_watts "$b")" ]
check "still passes promtool" sh -c "promtool check metrics < '$T/metrics' >/dev/null 2>&1"
touch "$T/go-b"
"$ECO" wait "$b"
scrape
check "no job running: no running-job series ($(series))" [ "$(series)" -eq 0 ]
check "the families stay declared" grep -q '^# TYPE ecosched_running_job_power_watts gauge' "$T/metrics"
check "no running job: still passes promtool" sh -c "promtool check metrics < '$T/metrics' >/dev/null 2>&1"
stop_daemon
finish
