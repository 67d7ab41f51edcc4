#!/bin/sh
# SPDX-License-Identifier: MIT
# power_knob = clock on the fake V100s: a capped job runs with its GPU's SM clock locked (power
# limit left at its default, the GPU drawing less), the lock is undone when the job ends; at a
# restart the clocks are reconciled with the store (an adopted capped job keeps its lock, a GPU
# whose capped job ended while the daemon was down is reset); a bad power_knob is refused.
. "$(dirname "$0")/common.shlib"

C="$T/clock.conf"
echo "power_knob = clock" >"$C"
start_daemon --config "$C"

# clocks_of GPU: "MIN MAX" locked clocks of one fake GPU ("0 0": not locked), from its state.
clocks_of() { awk -v g="$1" '$1 == "gpu" && $2 == g { print $8, $9 }' "$ECOSCHED_FAKE_NVML_STATE"; }
limit_of() { awk -v g="$1" '$1 == "gpu" && $2 == g { print $4 / 1000 }' "$ECOSCHED_FAKE_NVML_STATE"; }
power_of() {
    "$ECO" gpus --json | awk -v g="$1" '
        /"index":/ { gsub(/[^0-9]/, "", $2); idx = $2 }
        /"power_w":/ { gsub(/[^0-9.]/, "", $2); if (idx == g) { print $2 + 0; exit } }'
}

a=$("$ECO" submit --power-cap 150 -- sh -c "while [ ! -e $T/go-a ]; do sleep 0.1; done")
check "capped job runs" until_state "$a" running
g=$(field "$a" assigned_gpus | tr -d "[]")
set -- $(clocks_of "$g")
lo=${1:-0}; hi=${2:-0}
check "GPU $g clock locked to one level below the top ($lo..$hi MHz)" \
    awk "BEGIN { exit !($lo == $hi && $hi >= 135 && $hi < 1380) }"
check "the lock is logged with its cap" \
    grep -q "job $a: GPU $g: SM clock locked at $hi MHz (cap 150 W)" "$T/daemon.log"
check "GPU $g keeps its default 250 W limit ($(limit_of "$g"))" [ "$(limit_of "$g")" = 250 ]
sleep 0.3
p=$(power_of "$g")
check "GPU $g draws less than an unlocked busy V100 (200 W): $p W" awk "BEGIN { exit !($p < 200) }"
touch "$T/go-a"
"$ECO" wait "$a"
sleep 0.2
check "GPU $g unlocked after the job ($(clocks_of "$g"))" [ "$(clocks_of "$g")" = "0 0" ]

# an uncapped job leaves the clocks alone
b=$("$ECO" submit -- true)
"$ECO" wait "$b"
check "no lock for an uncapped job" [ "$(clocks_of 0) $(clocks_of 1)" = "0 0 0 0" ]

# restart: p (150 W) ends while the daemon is down, q (200 W) survives it
p=$("$ECO" submit --power-cap 150 -- sh -c "while [ ! -e $T/go-p ]; do sleep 0.1; done")
q=$("$ECO" submit --power-cap 200 -- sh -c "while [ ! -e $T/go-q ]; do sleep 0.1; done")
check "p runs" until_state "$p" running
check "q runs" until_state "$q" running
gp=$(field "$p" assigned_gpus | tr -d "[]"); gq=$(field "$q" assigned_gpus | tr -d "[]")
cq=$(clocks_of "$gq")
check "q's GPU locked higher than p's ($cq vs $(clocks_of "$gp"))" \
    awk "BEGIN { split(\"$cq\", a, \" \"); split(\"$(clocks_of "$gp")\", b, \" \"); exit !(a[2] > b[2] && b[2] > 0) }"
stop_daemon
touch "$T/go-p"
sleep 0.5
start_daemon --config "$C"
check "q adopted and running" [ "$(field "$q" state)" = running ]
check "p's GPU $gp reset after the restart ($(clocks_of "$gp"))" [ "$(clocks_of "$gp")" = "0 0" ]
check "q's GPU $gq keeps its lock $cq ($(clocks_of "$gq"))" [ "$(clocks_of "$gq")" = "$cq" ]
touch "$T/go-q"
check "q ends" until_state "$q" done
sleep 0.2
check "q's GPU unlocked after q" [ "$(clocks_of "$gq")" = "0 0" ]
stop_daemon

# a bad knob is refused before anything starts
printf 'power_knob = freq\n' >"$T/bad.conf"
"$ECOD" --config "$T/bad.conf" --foreground --state-dir "$T/bad-state" --socket "$T/bad.sock" \
    >"$T/bad.out" 2>&1
rc=$?
check "power_knob = freq refused with exit 2 ($rc)" [ "$rc" -eq 2 ]
check "the message names file, line and key" grep -q "bad.conf:1: .*power_knob.*must be limit or clock" "$T/bad.out"
finish
