#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd --gpu-strategy: memory-threshold stacks two small jobs on GPU 0 (task-spooler's
# 90%-free rule) once its --memthr-wait has passed, exclusive and live give them separate GPUs;
# ecosched-fake-train jobs sharing a fake GPU slow down as measured; bad values are refused.
. "$(dirname "$0")/common.shlib"
TRAIN="$(dirname "$ECO")/ecosched-fake-train"
export ECOSCHED_FAKE_TRAIN_DIR="$T/train"
mkdir -p "$ECOSCHED_FAKE_TRAIN_DIR"

# two_jobs: submits two 2 GB jobs that wait for $T/go, prints their GPUs once both run.
two_jobs() {
    rm -f "$T/go"
    a=$("$ECO" submit --gpu-mem 2 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
    sleep 0.6
    b=$("$ECO" submit --gpu-mem 2 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
    until_state "$a" running && until_state "$b" running
    echo "$(field "$a" assigned_gpus) $(field "$b" assigned_gpus)"
    touch "$T/go"; "$ECO" wait "$a"; "$ECO" wait "$b"
}

# memory-threshold: 2 GB of a 32 GB fake V100 leaves more than 90% free
start_daemon --gpu-strategy memory-threshold --memthr-wait 0.5
got=$(two_jobs)
check "memory-threshold stacks both jobs on GPU 0 ($got)" [ "$got" = "[0] [0]" ]
stop_daemon

for s in exclusive live; do
    start_daemon --gpu-strategy "$s"
    got=$(two_jobs)
    check "$s gives separate GPUs ($got)" [ "$got" = "[0] [1]" ]
    stop_daemon
done

# two fake-train ResNet18 jobs of 2 s of work stacked on one GPU: each takes 2 / 0.9605 s
# (Lucid's measured pair) or more; alone, 2 s.
start_daemon --gpu-strategy memory-threshold --memthr-wait 0
W="ResNet18 CIFAR-10 bs32"
a=$("$ECO" submit --gpu-mem 2 -- "$TRAIN" "$W" 2)
b=$("$ECO" submit --gpu-mem 2 -- "$TRAIN" "$W" 2)
"$ECO" wait "$a"; ra=$?; "$ECO" wait "$b"; rb=$?
check "fake-train jobs end with 0 ($ra, $rb)" [ "$ra" -eq 0 -a "$rb" -eq 0 ]
check "both ran on GPU 0" [ "$(field "$a" assigned_gpus)/$(field "$b" assigned_gpus)" = "[0]/[0]" ]
out=$(cat "$(field "$b" stdout)")
wall=$(printf '%s' "$out" | sed -n 's/.* in \([0-9.]*\) s .*/\1/p')
check "shared job slowed: $wall s >= 2.05 s ($out)" awk "BEGIN { exit !($wall >= 2.05) }"
stop_daemon

# bad values
"$ECOD" --foreground --gpu-strategy fastest --socket "$T/x.sock" --state-dir "$T/x" 2>"$T/bad.out"
rc=$?
check "unknown strategy refused with exit 2 ($rc)" [ "$rc" -eq 2 ]
check "message names the option" grep -q "gpu-strategy: unknown 'fastest'" "$T/bad.out"
"$ECOD" --foreground --memthr-wait -1 --socket "$T/x.sock" --state-dir "$T/x" 2>"$T/bad.out"
check "negative --memthr-wait refused" grep -q "memthr-wait" "$T/bad.out"
"$TRAIN" "No such net" 1 2>"$T/bad.out"; rc=$?
check "fake-train refuses an unknown workload ($rc)" [ "$rc" -eq 2 ]
finish
