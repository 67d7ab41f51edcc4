#!/bin/sh
# SPDX-License-Identifier: MIT
# What the client prints: `ls` names its GPU column GPU_IDS (indices), `show` prints times as
# local ISO 8601 with the offset (raw seconds in --json), `logs` of a job that failed, was
# killed, cancelled or could not start says why on stderr, the output itself unchanged.
. "$(dirname "$0")/common.shlib"
start_daemon

# ls: the column holds the assigned GPU indices and is named for them
a=$("$ECO" submit --gpus 2 --name two -- sh -c 'echo hello; exit 7')
"$ECO" wait "$a" >/dev/null 2>&1
check "ls names the column GPU_IDS" sh -c "'$ECO' ls | head -1 | grep -q ' GPU_IDS '"
check "ls: no bare GPUS header" sh -c "! '$ECO' ls | head -1 | grep -qw GPUS"
row=$("$ECO" ls | awk -v id="$a" '$1 == id')
check "ls row lists GPU ids 0,1 ('$row')" sh -c "printf '%s' '$row' | grep -q ' 0,1 '"

# show: local ISO 8601 times under TZ, raw seconds in --json
sub=$(jfield "$a" submit_s)
check "show --json keeps submit_s as seconds ($sub)" sh -c "printf '%s' '$sub' | grep -Eq '^[0-9]+(\\.[0-9]+)?$'"
want=$(TZ=UTC date -d "@${sub%.*}" +%Y-%m-%dT%H:%M:%S%z)
got=$(TZ=UTC "$ECO" show "$a" | awk '$1 == "submitted" { print $2 }')
check "show, TZ=UTC: submitted $got = $want" [ "$got" = "$want" ]
want=$(TZ=IST-5:30 date -d "@${sub%.*}" +%Y-%m-%dT%H:%M:%S%z)
got=$(TZ=IST-5:30 "$ECO" show "$a" | awk '$1 == "submitted" { print $2 }')
check "show, TZ=IST-5:30: submitted $got = $want (+0530)" \
    sh -c "[ '$got' = '$want' ] && printf '%s' '$got' | grep -q '+0530$'"
for k in started ended; do
    v=$(TZ=UTC "$ECO" show "$a" | awk -v k=$k '$1 == k { print $2 }')
    check "show: $k is an ISO time ('$v')" \
        sh -c "printf '%s' '$v' | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\+0000$'"
done
check "show: no raw *_s time lines" sh -c "! '$ECO' show $a | grep -Eq '^(submit|start|end|deadline)_s '"

# logs: the output on stdout as before, why the job failed on stderr
"$ECO" logs "$a" > "$T/out" 2> "$T/err"; rc=$?
check "logs of a failed job exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "its stdout is the job's output only" [ "$(cat "$T/out")" = hello ]
check "stderr says it failed with exit status 7 ($(cat "$T/err"))" \
    grep -q "job $a failed: exit status 7$" "$T/err"

k=$("$ECO" submit --gpus 0 -- sh -c 'kill -KILL $$')
"$ECO" wait "$k" >/dev/null 2>&1
"$ECO" logs "$k" > /dev/null 2> "$T/err"
check "a killed job: signal 9 named ($(cat "$T/err"))" \
    grep -q "job $k failed: exit status 137 (128 + signal 9, Killed)" "$T/err"

x=$("$ECO" submit --gpus 0 -- no-such-command-ecosched)
"$ECO" wait "$x" >/dev/null 2>&1
"$ECO" logs "$x" > "$T/out" 2> "$T/err"
check "a job that could not start: the reason ($(cat "$T/err"))" \
    grep -q "job $x failed: exit status 127; exec 'no-such-command-ecosched': No such file" "$T/err"
check "... and nothing on stdout" [ ! -s "$T/out" ]

# a job whose directory is gone by the time it starts: the daemon's start failure, no pid
b=$("$ECO" submit --gpus 2 -- sh -c "while [ ! -e $T/go-b ]; do sleep 0.1; done")
check "blocker runs" until_state "$b" running
mkdir "$T/gone"
g=$(cd "$T/gone" && "$ECO" submit --gpus 1 -- true)
rmdir "$T/gone"
touch "$T/go-b"
"$ECO" wait "$g" >/dev/null 2>&1
"$ECO" logs "$g" > /dev/null 2> "$T/err"
check "a job that could not chdir: the daemon's message ($(cat "$T/err"))" \
    grep -q "job $g failed: exit status 127; chdir $T/gone: No such file" "$T/err"

c=$("$ECO" submit --gpus 0 -- sleep 30)
check "sleeper runs" until_state "$c" running
"$ECO" cancel "$c" >/dev/null
"$ECO" wait "$c" >/dev/null 2>&1
"$ECO" logs -f "$c" > /dev/null 2> "$T/err"
check "a cancelled job: the store's reason ($(cat "$T/err"))" \
    grep -q "job $c cancelled.*cancelled by uid $(id -u)" "$T/err"

d=$("$ECO" submit --gpus 0 -- true)
"$ECO" wait "$d"
"$ECO" logs "$d" > /dev/null 2> "$T/err"
check "a job that succeeded: nothing on stderr ($(cat "$T/err"))" [ ! -s "$T/err" ]

stop_daemon
finish
