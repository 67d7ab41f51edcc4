#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd after SIGKILL and restart: every job found exactly once, the running job whose
# process survived adopted, the one whose process died marked lost, queued jobs run once;
# after SIGTERM running jobs keep running and are adopted by the next daemon.
. "$(dirname "$0")/common.shlib"
start_daemon
RAN="$T/ran"; : > "$RAN"; chmod 666 "$RAN"

# l1 and s run until the test creates their go file (no race with slow sanitizer builds)
l1=$("$ECO" submit -- sh -c "while [ ! -e $T/go1 ]; do sleep 0.1; done; echo mark-l1 >> $RAN")
l2=$("$ECO" submit -- sleep 30)
qs=""
for k in 1 2 3 4; do qs="$qs $("$ECO" submit -- sh -c "echo mark-q$k >> $RAN")"; done
check "l1 runs" until_state "$l1" running
check "l2 runs" until_state "$l2" running
pid2=$(field "$l2" pid)
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
kill -9 "-$pid2" # l2 dies while no daemon watches
sleep 0.2
start_daemon
check "l2 lost after the restart" [ "$(field "$l2" state)" = lost ]
check "l2's reason says its process is gone" sh -c "'$ECO' show $l2 | grep -q 'reason.*gone'"
check "l1 adopted, still running" [ "$(field "$l1" state)" = running ]
touch "$T/go1"
for q in $qs; do "$ECO" wait "$q" || check "queued job $q done" false; done
"$ECO" wait "$l1" 2>/dev/null; rc=$?
check "wait on the adopted l1 exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "l1 done, reason adopted" sh -c "'$ECO' show $l1 | grep -q 'adopted; exit status unknown'"
check "every mark once" [ "$(sort "$RAN" | uniq | wc -l)" -eq 5 -a "$(wc -l < "$RAN")" -eq 5 ]
ids=$("$ECO" ls | awk 'NR > 1 { print $1 }')
check "six jobs, each listed once" [ "$(echo "$ids" | sort -u | wc -l)" -eq 6 -a "$(echo "$ids" | wc -l)" -eq 6 ]

# SIGTERM leaves a running job running; the next daemon adopts it
s=$("$ECO" submit -- sh -c "while [ ! -e $T/go2 ]; do sleep 0.1; done")
check "s runs" until_state "$s" running
spid=$(field "$s" pid)
stop_daemon
check "s survives the daemon's SIGTERM" kill -0 "$spid"
start_daemon
check "s adopted" [ "$(field "$s" state)" = running ]
touch "$T/go2"
"$ECO" wait "$s" 2>/dev/null
check "s done" [ "$(field "$s" state)" = done ]

# kills at a few moments of a stream of short jobs: every job accounted for once
: > "$RAN"
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do "$ECO" submit --gpus $((k % 2)) -- sh -c "sleep 0.$k; echo mark-c$k >> $RAN" >/dev/null; done
for round in 1 2 3; do
    sleep 0.$((round * 3))
    kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
    start_daemon
done
i=0
while "$ECO" ls | grep -q -e ' queued ' -e ' running ' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "no job left queued or running" sh -c "! '$ECO' ls | grep -q -e ' queued ' -e ' running '"
check "no command ran twice" [ -z "$(sort "$RAN" | uniq -d)" ]
ndone=$("$ECO" ls | awk '$1 > 7 && $2 == "done"' | wc -l)
nmarks=$(grep -c mark-c "$RAN")
check "each done job ran ($ndone done, $nmarks marks)" [ "$nmarks" -ge "$((ndone - 1))" ]
ids=$("$ECO" ls | awk 'NR > 1 { print $1 }')
check "19 jobs, each listed once" [ "$(echo "$ids" | sort -u | wc -l)" -eq 19 -a "$(echo "$ids" | wc -l)" -eq 19 ]

stop_daemon
finish
