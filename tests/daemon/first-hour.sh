#!/bin/sh
# SPDX-License-Identifier: MIT
# What a new user's first hour with ecoschedd met (issue 30): the pid file that stops this
# daemon and no other; `gpus` whose state agrees with its jobs column (not the selector's
# averaged load, which lags); a failed job's `logs` with the tail of its stderr; `show` with
# sensible precision and the owner's name; `ls` that prints only the error when the daemon
# is not there; ECOSCHED_FAKE_NVML_GPUS ignored for an existing fake state file, said in the log.
. "$(dirname "$0")/common.shlib"

# ls with no daemon: the error alone, no table header
out=$(ECOSCHED_SOCKET="$T/none.sock" "$ECO" ls 2>"$T/ls.err"); rc=$?
check "ls without a daemon fails (rc $rc)" [ "$rc" -ne 0 ]
check "ls without a daemon prints no header ('$out')" [ -z "$out" ]
check "ls without a daemon says why" grep -q "cannot reach ecoschedd" "$T/ls.err"

# a long utilisation window: the averaged load lags the jobs by tens of seconds
start_daemon --util-window 30
pf="$T/state/ecoschedd.pid"
check "the pid file names the daemon ($(cat "$pf" 2>/dev/null) = $DPID)" \
    [ "$(cat "$pf" 2>/dev/null)" = "$DPID" ]

# the STATE and JOBS columns of GPU $1 (the name has spaces: the state is the first field
# after it that is a state)
gcol() {
    "$ECO" gpus | awk -v g="$1" -v c="$2" '$1 == g {
        for (i = 2; i <= NF; i++) if ($i ~ /^(busy|free|unsampled)$/) break
        if (c == "state") print $i; else { s = ""; for (k = i + 1; k <= NF; k++) s = s $k; print s }
    }'
}
gstate() { gcol "$1" state; }
gjobs() { gcol "$1" jobs; }
a=$("$ECO" submit --gpu-mem 0.1 -- sh -c "while [ ! -e $T/go-a ]; do sleep 0.1; done")
check "job a runs" until_state "$a" running
g=$(field "$a" assigned_gpus | tr -d '[]')
sleep 1 # samples of its load
check "gpus: GPU $g runs job $a ('$(gjobs "$g")')" [ "$(gjobs "$g")" = "$a" ]
check "gpus: GPU $g is busy while job $a runs on it ('$(gstate "$g")')" \
    [ "$(gstate "$g")" = busy ]
touch "$T/go-a"
"$ECO" wait "$a"

# show: numbers without binary noise, the owner's name
check "show prints gpu_mem_gb 0.1 ('$(field "$a" gpu_mem_gb)')" [ "$(field "$a" gpu_mem_gb)" = 0.1 ]
e=$(field "$a" energy_j)
check "show prints energy_j with at most 10 significant digits ('$e')" \
    sh -c "echo '$e' | tr -d '.-' | sed 's/^0*//' | grep -qE '^[0-9]{0,10}$'"
me=$(id -un)
check "show names the owner ('$(field "$a" user)' = $me)" [ "$(field "$a" user)" = "$me" ]
check "ls names the owner" sh -c "'$ECO' ls | awk '\$1 == $a { print \$3 }' | grep -qx '$me'"
check "the API gives the owner's name" sh -c "'$ECO' show --json $a | grep -q '\"user\": \"$me\"'"

# logs of a failed job: its stdout, then the tail of its stderr
f=$("$ECO" submit --gpus 0 -- sh -c \
    'echo starting; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "err $i" >&2; done; exit 3')
"$ECO" wait "$f" 2>/dev/null
"$ECO" logs "$f" >"$T/f.out" 2>"$T/f.err"
check "logs prints the failed job's stdout" [ "$(cat "$T/f.out")" = starting ]
check "logs says it failed with 3" grep -q "job $f failed: exit status 3" "$T/f.err"
check "logs points at logs --stderr" grep -q "ecosched logs --stderr $f" "$T/f.err"
check "logs shows the last stderr line" grep -qx "err 12" "$T/f.err"
check "logs shows the last 10 stderr lines only" sh -c "! grep -qx 'err 2' '$T/f.err'"
check "logs --stderr prints no tail of itself" \
    sh -c "[ \$('$ECO' logs --stderr $f 2>/dev/null | wc -l) -eq 12 ]"

stop_daemon
check "the pid file goes with the daemon" [ ! -e "$pf" ]

# ECOSCHED_FAKE_NVML_GPUS=3 while the state file (2 GPUs) exists: kept, and said
ECOSCHED_FAKE_NVML_GPUS=3 start_daemon --pid-file "$T/d.pid" --util-window 2
check "--pid-file names the daemon" [ "$(cat "$T/d.pid" 2>/dev/null)" = "$DPID" ]
check "the daemon says ECOSCHED_FAKE_NVML_GPUS=3 is ignored" grep -q \
    "ECOSCHED_FAKE_NVML_GPUS=3 ignored: the fake NVML state file $T/fake.state exists and keeps its 2 GPUs" \
    "$T/daemon.log"

# 3 s of load in a 2 s window: the averaged load says busy for a second or two after the job
b=$("$ECO" submit -- sh -c "while [ ! -e $T/go-b ]; do sleep 0.1; done")
check "job b runs" until_state "$b" running
g=$(field "$b" assigned_gpus | tr -d '[]')
sleep 3
touch "$T/go-b"
"$ECO" wait "$b"
"$ECO" gpus --json >"$T/gpus.json"
check "gpus: GPU $g lists no job once b ended ('$(gjobs "$g")')" [ "$(gjobs "$g")" = - ]
check "gpus: GPU $g is free once job $b ended ('$(gstate "$g")')" [ "$(gstate "$g")" = free ]
check "gpus --json keeps the selector's lagging view as sensed" \
    grep -q '"sensed": "busy"' "$T/gpus.json"
stop_daemon
finish
