#!/bin/sh
# SPDX-License-Identifier: MIT
# Caps on a shared GPU: the fake GPU's limit is the lowest cap of the --share jobs on it (not the
# last starter's; an uncapped job does not raise it), it becomes the lowest cap of the jobs
# left when one ends, the default once none is capped, and a restarted daemon that adopts the
# jobs computes the same. With power_knob = clock, the same for the locked SM clock.
. "$(dirname "$0")/common.shlib"
export ECOSCHED_FAKE_NVML_GPUS=1
start_daemon

limit_of() { awk '$1 == "gpu" && $2 == 0 { print $4 / 1000 }' "$ECOSCHED_FAKE_NVML_STATE"; }
clock_of() { awk '$1 == "gpu" && $2 == 0 { print $9 }' "$ECOSCHED_FAKE_NVML_STATE"; }
# until_limit W: waits (at most 5 s) until GPU 0's limit is W watts.
until_limit() {
    i=0
    while [ $i -lt 50 ]; do
        [ "$(limit_of)" = "$1" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# pair CAP1 CAP2 TAG: two --share jobs (caps CAP1 then CAP2, "none": uncapped) queued behind a
# job that holds the GPU, so that they start in one pass, in that order; prints their ids.
pair() {
    h=$("$ECO" submit -- sh -c "while [ ! -e $T/go-h$3 ]; do sleep 0.1; done")
    until_state "$h" running || echo "FAIL: holder $h did not run" >&2
    c1=""; [ "$1" = none ] || c1="--power-cap $1"
    c2=""; [ "$2" = none ] || c2="--power-cap $2"
    p=$("$ECO" submit --share --gpu-mem 4 $c1 -- sh -c "while [ ! -e $T/go-p$3 ]; do sleep 0.1; done")
    q=$("$ECO" submit --share --gpu-mem 4 $c2 -- sh -c "while [ ! -e $T/go-q$3 ]; do sleep 0.1; done")
    touch "$T/go-h$3"
    "$ECO" wait "$h" >/dev/null
    until_state "$p" running 200 && until_state "$q" running 50 ||
        echo "FAIL: sharing jobs $p $q did not both run" >&2
    echo "$p $q"
}
check "GPU 0 starts at its default 250 W ($(limit_of))" [ "$(limit_of)" = 250 ]

# 150 W then 200 W: the second starter must not raise the limit; the daemon restarts between
set -- $(pair 150 200 1); a=$1; b=$2
check "150 W job then 200 W job: GPU 0 at 150 W ($(limit_of))" [ "$(limit_of)" = 150 ]
stop_daemon
start_daemon
check "restarted daemon adopted both ($(field "$a" state)/$(field "$b" state))" \
    [ "$(field "$a" state)/$(field "$b" state)" = running/running ]
check "after the restart GPU 0 still at the lowest cap, 150 W ($(limit_of))" [ "$(limit_of)" = 150 ]
touch "$T/go-p1"; "$ECO" wait "$a" >/dev/null
check "the 150 W job ended: GPU 0 at the 200 W of the job left ($(limit_of))" until_limit 200
touch "$T/go-q1"; "$ECO" wait "$b" >/dev/null
check "both ended: GPU 0 back at its default 250 W ($(limit_of))" until_limit 250

# 200 W then 150 W: the lower cap wins; when it ends the 200 W job's cap is restored
set -- $(pair 200 150 2); c=$1; e=$2
check "200 W job then 150 W job: GPU 0 at 150 W ($(limit_of))" [ "$(limit_of)" = 150 ]
touch "$T/go-q2"; "$ECO" wait "$e" >/dev/null
check "the 150 W job ended: GPU 0 back at the 200 W job's cap ($(limit_of))" until_limit 200
touch "$T/go-p2"; "$ECO" wait "$c" >/dev/null
check "both ended: default 250 W ($(limit_of))" until_limit 250

# a capped and an uncapped job: the uncapped one does not raise the limit, and once the capped
# one ends the GPU is back at its default under the uncapped one
set -- $(pair 150 none 3); f=$1; u=$2
check "150 W job and an uncapped job: GPU 0 at 150 W ($(limit_of))" [ "$(limit_of)" = 150 ]
touch "$T/go-p3"; "$ECO" wait "$f" >/dev/null
check "the capped job ended: default 250 W under the uncapped job ($(limit_of))" until_limit 250
touch "$T/go-q3"; "$ECO" wait "$u" >/dev/null
stop_daemon

# power_knob = clock: the lock is the one of the lowest cap, and follows the jobs left
echo "power_knob = clock" >"$T/clock.conf"
start_daemon --config "$T/clock.conf"
set -- $(pair 100 none 4); x=$1; y=$2
touch "$T/go-p4"; "$ECO" wait "$x" >/dev/null; touch "$T/go-q4"; "$ECO" wait "$y" >/dev/null
set -- $(pair 200 none 5); x=$1; y=$2
touch "$T/go-p5"; "$ECO" wait "$x" >/dev/null; touch "$T/go-q5"; "$ECO" wait "$y" >/dev/null
m100=$(sed -n 's/.*SM clock locked at \([0-9]*\) MHz (cap 100 W).*/\1/p' "$T/daemon.log" | tail -1)
m200=$(sed -n 's/.*SM clock locked at \([0-9]*\) MHz (cap 200 W).*/\1/p' "$T/daemon.log" | tail -1)
check "clock levels of 100 W and 200 W caps differ (${m100:-?} < ${m200:-?} MHz)" \
    [ "${m100:-0}" -gt 0 -a "${m100:-0}" -lt "${m200:-0}" ]
set -- $(pair 100 200 6); x=$1; y=$2
check "100 W then 200 W job: SM clock at the 100 W level ($(clock_of) MHz, want $m100)" \
    [ "$(clock_of)" = "$m100" ]
touch "$T/go-p6"; "$ECO" wait "$x" >/dev/null
sleep 0.3
check "the 100 W job ended: SM clock at the 200 W level ($(clock_of) MHz, want $m200)" \
    [ "$(clock_of)" = "$m200" ]
touch "$T/go-q6"; "$ECO" wait "$y" >/dev/null
sleep 0.3
check "both ended: SM clock unlocked ($(clock_of))" [ "$(clock_of)" = 0 ]
stop_daemon
finish
