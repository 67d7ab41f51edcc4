#!/bin/sh
# SPDX-License-Identifier: MIT
# GET /v1/jobs in pages (default 100, at most 1000, cursor after=ID, "next"), `ecosched ls`
# showing one page, --limit and --all paging through, and pruning of finished jobs (and their
# logs) older than keep_finished_s, running and queued jobs kept, ids never reused.
. "$(dirname "$0")/common.shlib"
C="$T/d.conf"
echo "keep_finished_s = 0" > "$C" # never prune while the listing is checked
start_daemon --config "$C"
N=250
k=0
while [ $k -lt $N ]; do "$ECO" submit --gpus 0 -- true >/dev/null || break; k=$((k + 1)); done
check "$N jobs submitted" [ $k -eq $N ]
"$ECO" wait $N >/dev/null
get() { curl -s --unix-socket "$SOCK" "http://localhost/v1/jobs$1"; }
count() { grep -o '"state": *"[a-z]*"' | wc -l; }
check "default page: 100 jobs" [ "$(get "" | count)" -eq 100 ]
check "default page: next is 100" sh -c "curl -s --unix-socket '$SOCK' http://localhost/v1/jobs | grep -q '\"next\":100'"
check "after=100&limit=1000: the other 150" [ "$(get "?after=100&limit=1000" | count)" -eq 150 ]
check "the last page's next is null" sh -c "curl -s --unix-socket '$SOCK' 'http://localhost/v1/jobs?after=100&limit=1000' | grep -q '\"next\":null'"
check "after=240: ids 241..250" [ "$(get "?after=240" | grep -o '"id":[0-9]*' | head -1)" = '"id":241' ]
for bad in "limit=0" "limit=1001" "limit=x" "after=-1"; do
    st=$(curl -s --unix-socket "$SOCK" -o "$T/bad.json" -w '%{http_code}' "http://localhost/v1/jobs?$bad")
    check "$bad -> 400 naming the field (got $st)" sh -c "[ $st = 400 ] && grep -q '\"field\":\"${bad%%=*}\"' '$T/bad.json'"
done
check "ls: one page of 100" [ "$("$ECO" ls 2>/dev/null | awk 'NR > 1' | wc -l)" -eq 100 ]
check "ls says there are more" sh -c "'$ECO' ls 2>&1 >/dev/null | grep -q 'ls --all'"
check "ls --limit 7: 7 jobs" [ "$("$ECO" ls --limit 7 2>/dev/null | awk 'NR > 1' | wc -l)" -eq 7 ]
"$ECO" ls --all > "$T/all" 2>"$T/all.err"
check "ls --all: all $N jobs, each once, in order" sh -c "awk 'NR > 1 { print \$1 }' '$T/all' > '$T/ids'; [ \$(wc -l < '$T/ids') -eq $N ] && seq 1 $N | cmp -s - '$T/ids'"
check "ls --all: no 'more' hint" [ ! -s "$T/all.err" ]
check "ls --all done: $N" [ "$("$ECO" ls --all --limit 1000 done | awk 'NR > 1' | wc -l)" -eq $N ]
check "ls --all --json: $N in one array" [ "$("$ECO" ls --all --json | count)" -eq $N ]
check "logs of job 1 exist" [ -e "$T/state/logs/1.out" ]
stop_daemon

# a tiny age: the finished jobs and their logs go, the running and queued ones stay
echo "keep_finished_s = 1" > "$C"
start_daemon --config "$C"
run=$("$ECO" submit --gpus 2 -- sleep 30)
q=$("$ECO" submit --gpus 1 -- true)
check "a job runs, one waits" until_state "$run" running
i=0
while [ -e "$T/state/logs/$N.out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "finished jobs pruned" [ "$("$ECO" ls --all | awk 'NR > 1' | wc -l)" -eq 2 ]
check "their logs deleted" sh -c "! ls '$T/state/logs' | grep -q '^1\\.out'"
check "the running and the queued job kept" [ "$(field "$run" state) $(field "$q" state)" = "running queued" ]
check "pruned in batches (log)" grep -q "pruned 500 jobs\|pruned 250 jobs\|pruned [0-9]* jobs" "$T/daemon.log"
kill -KILL "-$(field "$run" pid)" 2>/dev/null
new=$("$ECO" submit --gpus 0 -- true)
check "a new id ($new) after the pruned ones" [ "$new" -gt $((N + 2)) ]
stop_daemon
finish
