#!/bin/sh
# SPDX-License-Identifier: MIT
# One fake GPU: two --share jobs run on it together and split its energy (no double count);
# a job that does not share waits; the queue policy decides what passes it: fifo (a GPU-less
# job waits behind it), greedy (it starts), edf (earliest deadline first); --share-max-jobs 2
# keeps a third sharing job off the GPU.
. "$(dirname "$0")/common.shlib"
export ECOSCHED_FAKE_NVML_GPUS=1
start_daemon

gpu_energy() { "$ECO" gpus --json | awk -F'"energy_j": ' 'NF > 1 { split($2, v, /[,}]/); print v[1]; exit }'; }
# two sharing jobs with declared memory start together on GPU 0: queued behind a job that
# holds the GPU, they start in the same pass once it ends (a busy GPU takes no sharing job)
hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.1; done")
check "holder runs" until_state "$hold" running
a=$("$ECO" submit --share --gpu-mem 4 -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.1; done")
b=$("$ECO" submit --share --gpu-mem 4 -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.1; done")
c=$("$ECO" submit -- true)
z=$("$ECO" submit --gpus 0 -- true)
check "sharing jobs wait behind the holder" [ "$(field "$a" state)/$(field "$b" state)" = queued/queued ]
e0=$(gpu_energy)
touch "$T/go-hold"
"$ECO" wait "$hold"
check "sharing job a runs" until_state "$a" running 200
check "sharing job b runs" until_state "$b" running 50
check "both on GPU 0 ($(field "$a" assigned_gpus)/$(field "$b" assigned_gpus))" \
    [ "$(field "$a" assigned_gpus)/$(field "$b" assigned_gpus)" = "[0]/[0]" ]
check "gpus lists two jobs on GPU 0" sh -c "'$ECO' gpus --json | tr -d ' \n' | grep -q '\"jobs\":\[$a,$b\]'"
sleep 1.5
check "an exclusive job waits while the GPU is shared" [ "$(field "$c" state)" = queued ]
check "fifo: the GPU-less job waits behind it" [ "$(field "$z" state)" = queued ]
sleep 1
touch "$T/go-ab"
"$ECO" wait "$a"; "$ECO" wait "$b"
e1=$(gpu_energy)
"$ECO" wait "$c"; "$ECO" wait "$z"
ea=$(field "$a" energy_j); eb=$(field "$b" energy_j)
check "a and b used energy ($ea J, $eb J)" awk "BEGIN { exit !($ea > 50 && $eb > 50) }"
check "a and b split it evenly ($ea J, $eb J)" \
    awk "BEGIN { d = $ea - $eb; if (d < 0) d = -d; exit !(d <= 0.25 * ($ea + $eb)) }"
check "no double count: a + b ($ea + $eb J) within the GPU's counter over the run ($e0 -> $e1 J)" \
    awk "BEGIN { g = $e1 - $e0; exit !($ea + $eb <= 1.02 * g + 1 && $ea + $eb >= 0.5 * g) }"

# greedy: the GPU-less job passes a waiting GPU job
stop_daemon
start_daemon --queue-policy greedy
check "status says greedy" sh -c "'$ECO' gpus >/dev/null && curl -s --unix-socket '$SOCK' http://x/v1/status | grep -q '\"queue_policy\":\"greedy\"'"
x=$("$ECO" submit -- sh -c "while [ ! -e $T/go-x ]; do sleep 0.1; done")
check "blocker runs" until_state "$x" running
c2=$("$ECO" submit -- true)
z2=$("$ECO" submit --gpus 0 -- true)
"$ECO" wait "$z2"; rc=$?
check "greedy: the GPU-less job ran while the GPU job waits (exit $rc)" \
    [ "$rc" -eq 0 -a "$(field "$c2" state)" = queued ]
touch "$T/go-x"
"$ECO" wait "$c2"

# edf: earliest deadline first, jobs without one last
stop_daemon
start_daemon --queue-policy edf
y=$("$ECO" submit -- sh -c "while [ ! -e $T/go-y ]; do sleep 0.1; done")
check "blocker runs" until_state "$y" running
late=$("$ECO" submit --deadline +2h -- true)
none=$("$ECO" submit -- true)
soon=$("$ECO" submit --deadline 1h -- true)
check "show prints the deadline" sh -c "'$ECO' show $soon | grep -q '^deadline  *20[0-9-]*T'"
touch "$T/go-y"
"$ECO" wait "$none"
s1=$(jfield "$soon" start_s); s2=$(jfield "$late" start_s); s3=$(jfield "$none" start_s)
check "edf order: soon ($s1) <= late ($s2) <= none ($s3)" \
    awk "BEGIN { exit !($s1 <= $s2 && $s2 <= $s3) }"
check "deadline met is reported" [ "$(field "$soon" deadline_missed)" = false ]
check "a bad --deadline is refused" sh -c "! '$ECO' submit --deadline yesterday -- true 2>/dev/null"
check "a past deadline is refused" sh -c "'$ECO' submit --deadline @1000 -- true 2>&1 | grep -q 'not a future time'"
check "the API refuses a duration as a deadline" sh -c "curl -s --unix-socket '$SOCK' -d '{\"argv\":[\"true\"],\"cwd\":\"/\",\"deadline\":3600}' http://x/v1/jobs | grep -q '\"field\":\"deadline\"'"
stop_daemon

# --share-max-jobs 2: three sharing jobs queued behind a holder; two start together on GPU 0
# once it ends, the third waits (without the cap it joins them in the same pass)
start_daemon --share-max-jobs 2
h=$("$ECO" submit -- sh -c "while [ ! -e $T/go-h2 ]; do sleep 0.1; done")
check "holder runs" until_state "$h" running
s1=$("$ECO" submit --share --gpu-mem 4 -- sh -c "while [ ! -e $T/go-s1 ]; do sleep 0.1; done")
s2=$("$ECO" submit --share --gpu-mem 4 -- sh -c "while [ ! -e $T/go-s2 ]; do sleep 0.1; done")
s3=$("$ECO" submit --share --gpu-mem 4 -- true)
touch "$T/go-h2"
"$ECO" wait "$h"
check "cap 2: sharing job 1 runs" until_state "$s1" running 200
check "cap 2: sharing job 2 runs" until_state "$s2" running 50
sleep 1.5
check "cap 2: the third waits" [ "$(field "$s3" state)" = queued ]
touch "$T/go-s1" "$T/go-s2"
"$ECO" wait "$s1"; "$ECO" wait "$s2"
"$ECO" wait "$s3"; rc=$?
check "cap 2: the third ran once they ended (exit $rc)" [ "$rc" -eq 0 ]
stop_daemon
finish
