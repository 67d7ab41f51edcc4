#!/bin/sh
# SPDX-License-Identifier: MIT
# Per-job energy on a shared fake GPU (docs/models/energy.md, "Per-job energy on a shared
# GPU"): two --share jobs at 70 % and 30 % SM utilisation get 70 % and 30 % of the GPU's
# energy, basis "utilization"; on a GPU without per-process utilisation they split by memory
# (6 GB / 2 GB: 75 % / 25 %), and without memory readings either, equally.
. "$(dirname "$0")/common.shlib"
export ECOSCHED_FAKE_NVML_GPUS=1
RUN_S=4 # both jobs run together this long: the start and end skew (0.1 s polls) stays < 4 %

# pair SM_A MEM_A SM_B MEM_B: runs two sharing jobs together (queued behind a holder, so they
# start in the same pass; ended by one file, so they end within a poll of each other) and sets
# A, B, EA, EB (their energy) and SA (A's fraction of EA + EB).
pair() {
    rm -f "$T/go-hold" "$T/go-ab"
    hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.05; done")
    until_state "$hold" running || echo "FAIL: holder did not start"
    A=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=$1 ECOSCHED_FAKE_NVML_PROC_MEM_MB=$2 "$ECO" submit --share \
        -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.05; done")
    B=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=$3 ECOSCHED_FAKE_NVML_PROC_MEM_MB=$4 "$ECO" submit --share \
        -- sh -c "while [ ! -e $T/go-ab ]; do sleep 0.05; done")
    touch "$T/go-hold"
    "$ECO" wait "$hold"
    until_state "$A" running 100 && until_state "$B" running 50 || echo "FAIL: pair did not start"
    sleep "$RUN_S"
    touch "$T/go-ab"
    "$ECO" wait "$A"; "$ECO" wait "$B"
    EA=$(field "$A" energy_j); EB=$(field "$B" energy_j)
    SA=$(awk "BEGIN { print $EA / ($EA + $EB) }")
    echo "SM $1/$3 %, memory $2/$4 MB: A $EA J, B $EB J, A's share $SA"
}

# near X WANT: |X - WANT| <= 0.04 (the skew above, over a RUN_S run)
near() { awk "BEGIN { d = $1 - $2; if (d < 0) d = -d; exit !(d <= 0.04) }"; }

start_daemon
pair 70 2048 30 2048
check "70/30 SM: A gets 70 % ($EA J, $EB J: $SA)" near "$SA" 0.70
check "energy measured (A + B > 400 J: $EA + $EB)" awk "BEGIN { exit !($EA + $EB > 400) }"
check "A's basis is utilization ($(field "$A" energy_basis))" [ "$(field "$A" energy_basis)" = utilization ]
check "B's basis is utilization" [ "$(field "$B" energy_basis)" = utilization ]
check "the API says so" sh -c "'$ECO' show --json $A | grep -q '\"energy_basis\": \"utilization\"'"
check "the listing too" sh -c "'$ECO' ls --json | tr -d ' \n' | grep -q '\"energy_basis\":\"utilization\"'"
stop_daemon

export ECOSCHED_FAKE_NVML_NO_PROC_UTIL=1 # the daemon's fake GPU reports no per-process samples
start_daemon
pair 70 6144 30 2048
check "no per-process utilisation: by memory 6/2 GB, A gets 75 % ($EA J, $EB J: $SA)" near "$SA" 0.75
check "basis memory ($(field "$A" energy_basis))" [ "$(field "$A" energy_basis)" = memory ]
pair 70 0 30 0
check "no memory readings either: equal ($EA J, $EB J: $SA)" near "$SA" 0.50
check "basis equal ($(field "$B" energy_basis))" [ "$(field "$B" energy_basis)" = equal ]
h=$("$ECO" submit -- true)
"$ECO" wait "$h"
check "a job alone on its GPU: exclusive ($(field "$h" energy_basis))" \
    [ "$(field "$h" energy_basis)" = exclusive ]
stop_daemon
unset ECOSCHED_FAKE_NVML_NO_PROC_UTIL
finish
