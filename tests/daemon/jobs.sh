#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd runs jobs: exit status through `wait`, CUDA_VISIBLE_DEVICES, two exclusive jobs on
# different GPUs and a third that waits for one, cancel, power limit set and restored, energy.
. "$(dirname "$0")/common.shlib"
start_daemon

# exit status and CUDA_VISIBLE_DEVICES
j=$("$ECO" submit --name seven -- sh -c 'echo "gpu=$CUDA_VISIBLE_DEVICES"; exit 7')
check "submit prints a job id ('$j')" [ -n "$j" ]
"$ECO" wait "$j"; rc=$?
check "wait exits with the job's status 7 (got $rc)" [ "$rc" -eq 7 ]
out=$(cat "$(field "$j" stdout)")
check "job saw CUDA_VISIBLE_DEVICES=0 or 1 ('$out')" [ "$out" = "gpu=0" -o "$out" = "gpu=1" ]
check "job failed with 7" [ "$(field "$j" state)/$(field "$j" exit_status)" = "failed/7" ]
check "ls shows the job's name" sh -c "'$ECO' ls | grep -q ' seven$'"
check "job ran in the submitter's directory" [ "$(field "$j" cwd)" = "$(pwd)" ]

# two exclusive jobs get different GPUs; a third waits for one of them
# (a, b and p run until the test creates their go file: no race with slow sanitizer builds)
a=$("$ECO" submit -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.1; done")
b=$("$ECO" submit -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.1; done")
c=$("$ECO" submit -- sh -c 'echo $CUDA_VISIBLE_DEVICES')
check "job a runs" until_state "$a" running
check "job b runs" until_state "$b" running
check "job c waits while both GPUs are taken" [ "$(field "$c" state)" = queued ]
ga=$(field "$a" assigned_gpus); gb=$(field "$b" assigned_gpus)
check "a and b on different GPUs ($ga, $gb)" [ "$ga" != "$gb" ]
check "gpus lists both jobs" sh -c "'$ECO' gpus | grep -c 'busy\|free' | grep -qx 2"
sleep 1 # a second of GPU load to account
touch "$T/go-ab"
"$ECO" wait "$c"; rc=$?
check "c ends with 0 (got $rc)" [ "$rc" -eq 0 ]
ca=$(jfield "$a" end_s); cs=$(jfield "$c" start_s)
check "c started after a or b ended ($cs >= $ca)" awk "BEGIN { exit !($cs >= $ca - 0.5) }"
e=$(field "$a" energy_j)
check "energy recorded for a ($e J)" awk "BEGIN { exit !($e > 100) }"

# cancel: a running job is stopped, a queued one never starts
r=$("$ECO" submit -- sleep 30)
check "sleeper runs" until_state "$r" running
q=$("$ECO" submit --gpus 2 -- true)
check "two-GPU job waits" [ "$(field "$q" state)" = queued ]
pid=$(field "$r" pid)
check "cancel a queued job" sh -c "'$ECO' cancel $q | grep -q 'was queued'"
check "cancel a running job" sh -c "'$ECO' cancel $r | grep -q 'was running'"
"$ECO" wait "$r" 2>/dev/null; rc=$?
check "wait on a cancelled job exits 1 (got $rc)" [ "$rc" -eq 1 ]
i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
check "the cancelled job's process is gone" sh -c "! kill -0 $pid 2>/dev/null"
check "cancelling again is refused" sh -c "! '$ECO' cancel $r 2>&1 | grep -q cancelled"
check "the queued job never started" [ "$(field "$q" started)" = "-" ]

# a power limit on the job's GPU while it runs, restored after
p=$("$ECO" submit --power-cap 150 -- sh -c "while [ ! -e $T/go-p ]; do sleep 0.1; done")
check "capped job runs" until_state "$p" running
check "limit 150 W while it runs" sh -c "'$ECO' gpus --json | grep -q '\"power_limit_w\": 150'"
touch "$T/go-p"
"$ECO" wait "$p"
sleep 0.2
check "limit restored after it ended" sh -c "! '$ECO' gpus --json | grep -q '\"power_limit_w\": 150'"

# a job without GPUs sees none
z=$("$ECO" submit --gpus 0 -- sh -c 'echo "[$CUDA_VISIBLE_DEVICES]"')
"$ECO" wait "$z"
check "gpus 0: empty CUDA_VISIBLE_DEVICES" [ "$(cat "$(field "$z" stdout)")" = "[]" ]

# a command that does not exist fails with 127 and says why in its stderr file
x=$("$ECO" submit --gpus 0 -- no-such-command-ecosched)
"$ECO" wait "$x"; rc=$?
check "unknown command: exit 127 (got $rc)" [ "$rc" -eq 127 ]
check "its stderr names the command" grep -q no-such-command-ecosched "$(field "$x" stderr)"

stop_daemon
finish
