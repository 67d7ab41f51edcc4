#!/bin/sh
# SPDX-License-Identifier: MIT
# power_cap "auto" on the fake V100s: the job runs under a limit below 250 W (the least-energy
# limit within the slowdown bound), the chosen limit is recorded in the job, the default comes
# back after; at a restart the GPUs' limits are reconciled with the store (an adopted capped
# job keeps its limit, a GPU whose capped job ended while the daemon was down gets its default).
. "$(dirname "$0")/common.shlib"
start_daemon

# limit_of GPU: the power limit of one fake GPU, as `gpus --json` reports it.
limit_of() {
    "$ECO" gpus --json | awk -v g="$1" '
        /"index":/ { gsub(/[^0-9]/, "", $2); idx = $2 }
        /"power_limit_w":/ { gsub(/[^0-9.]/, "", $2); if (idx == g) { print $2 + 0; exit } }'
}

a=$("$ECO" submit --power-cap auto -- sh -c "while [ ! -e $T/go-a ]; do sleep 0.1; done")
check "auto job runs" until_state "$a" running
g=$(field "$a" assigned_gpus | tr -d "[]")
w=$(limit_of "$g")
check "auto limit on GPU $g is below 250 W and at least 100 W ($w)" \
    awk "BEGIN { exit !($w < 250 && $w >= 100) }"
cap=$(field "$a" power_cap)
check "the chosen limit is recorded in the job ($cap = $w)" awk "BEGIN { exit !($cap == $w) }"
check "the choice is logged" grep -q "job $a: power_cap auto: " "$T/daemon.log"
touch "$T/go-a"
"$ECO" wait "$a"
sleep 0.2
check "default 250 W restored after the auto job ($(limit_of "$g"))" [ "$(limit_of "$g")" = 250 ]

# restart: p (150 W) ends while the daemon is down, q (auto) survives it
p=$("$ECO" submit --power-cap 150 -- sh -c "while [ ! -e $T/go-p ]; do sleep 0.1; done")
q=$("$ECO" submit --power-cap auto -- sh -c "while [ ! -e $T/go-q ]; do sleep 0.1; done")
check "p runs" until_state "$p" running
check "q runs" until_state "$q" running
gp=$(field "$p" assigned_gpus | tr -d "[]"); gq=$(field "$q" assigned_gpus | tr -d "[]"); wq=$(limit_of "$gq")
check "p's GPU at 150 W" [ "$(limit_of "$gp")" = 150 ]
stop_daemon
touch "$T/go-p"
sleep 0.5
start_daemon
check "q adopted and running" [ "$(field "$q" state)" = running ]
check "p's GPU $gp back at its default after the restart ($(limit_of "$gp"))" \
    [ "$(limit_of "$gp")" = 250 ]
check "q's GPU $gq keeps its auto limit $wq ($(limit_of "$gq"))" [ "$(limit_of "$gq")" = "$wq" ]
check "the reconciliation is logged" grep -q "GPU $gp: limit 150 W -> default 250 W" "$T/daemon.log"
touch "$T/go-q"
check "q ends" until_state "$q" done
sleep 0.2
check "q's GPU back at 250 W" [ "$(limit_of "$gq")" = 250 ]

stop_daemon
finish
