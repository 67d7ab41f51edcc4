#!/bin/sh
# SPDX-License-Identifier: MIT
# Crash test of ecoschedd: a 500-job workload of short jobs, submitted in bursts through the CLI
# by a background loop, while ecoschedd is killed with SIGKILL at 50+ random moments and
# restarted each time. Once everything has settled: every job the CLI got an id for is listed
# exactly once by `ecosched ls --all --json`, every listed job is in a final state, no command ran
# twice (each marker file holds one line), every `done` job ran, and every `lost` job had
# started before a kill. Each job writes its number to its own marker file first, then sleeps
# a few hundredths of a second.
#
# Outcomes that are correct and therefore accepted:
# - `lost`: a job running at a kill whose process ended while no daemon watched (short jobs
#   often do), or whose start gate saw the daemon die after `running` was committed (then it
#   never ran: marker absent). Its reason must say so, and its start must precede a kill.
# - a submit whose answer was cut by a kill: the CLI got no id, the job may or may not exist.
#   Such a job number is never submitted again (that would make a true double run invisible);
#   it may be listed at most once.
# Scale: 500 jobs and 55 kills (Release, about 30-45 s; ctest's limit is 60 s). Under the
# sanitizer build (the daemon's path contains build-asan, or ECO_CRASH_ASAN=1), fewer jobs and
# the same 50+ kills. ECO_CRASH_JOBS (even) and ECO_CRASH_KILLS override both.
. "$(dirname "$0")/common.shlib"

case "$ECOD" in *build-asan*) asan=1 ;; *) asan=${ECO_CRASH_ASAN:-0} ;; esac
if [ "$asan" = 1 ]; then JOBS=${ECO_CRASH_JOBS:-150}; KILLS=${ECO_CRASH_KILLS:-50}
else JOBS=${ECO_CRASH_JOBS:-500}; KILLS=${ECO_CRASH_KILLS:-55}; fi

M="$T/markers"; mkdir "$M"; chmod 777 "$M"
ACK="$T/acked"; NACK="$T/unacked"; KT="$T/kill_times"; : > "$ACK"; : > "$NACK"; : > "$KT"

# rnd N: a random integer 0..N-1 (POSIX sh has no $RANDOM)
rnd() { echo $(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % $1)); }
now() { date +%s.%N; }

start_daemon
t0=$(date +%s)

# Submitter: job numbers 1, 2, ... until JOBS of them got an id; bursts of 1..20, pauses up to 0.09 s.
# Every 50th job asks for one (fake) GPU, the others for none.
# Two such loops (odd and even numbers), JOBS/2 ids each.
submitter() (
    trap - EXIT INT TERM
    no=$1; acked=0
    while [ "$acked" -lt $((JOBS / 2)) ] && [ -d "$M" ] && kill -0 $$ 2>/dev/null; do
        b=$(($(rnd 20) + 1))
        while [ "$b" -gt 0 ] && [ "$acked" -lt $((JOBS / 2)) ]; do
            no=$((no + 2)); b=$((b - 1))
            g=0; [ $((no % 50)) -eq 0 ] && g=1
            id=$("$ECO" submit --gpus $g --name "j$no" -- \
                sh -c "echo $no >> $M/$no; sleep 0.0$((no % 10))" 2>/dev/null)
            if [ -n "$id" ]; then
                echo "$no $id" >> "$ACK"; acked=$((acked + 1))
            else
                echo "$no" >> "$NACK"; sleep 0.05 # the daemon is down: next number later
            fi
        done
        sleep 0.0$(rnd 10)
    done
)
submitter -1 & SUBPID=$!
submitter 0 & SUB2=$!
trap 'kill "$SUBPID" "$SUB2" 2>/dev/null; cleanup' EXIT

# Killer: KILLS SIGKILLs at random moments (0.005..0.4 s apart, after each restart), going on
# while the submitter runs (see below).
kills=0
# After KILLS kills and 20 s the submitter finishes undisturbed, so that a loaded machine
# (slow submits) cannot stretch the test past ctest's 60 s.
while [ "$kills" -lt "$KILLS" ] || { { kill -0 "$SUBPID" || kill -0 "$SUB2"; } 2>/dev/null && [ $(($(date +%s) - t0)) -lt 20 ]; }; do
    sleep 0.$(rnd 4)$(rnd 10)5
    now >> "$KT"
    kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
    kills=$((kills + 1))
    start_daemon
done
wait "$SUBPID" "$SUB2"
t_sub=$(($(date +%s) - t0))

# Settle: until nothing is queued or running (at most 40 s; 120 s under the sanitizer).
lim=400; [ "$asan" = 1 ] && lim=1200
i=0
while "$ECO" ls queued | awk 'NR > 1' | grep -q . || "$ECO" ls running | awk 'NR > 1' | grep -q .; do
    [ $i -ge $lim ] && break
    sleep 0.1; i=$((i + 1))
done

# One line per listed job: ID STATE NAME START_S END_S REASON, from `ls --all --json` (indent 2).
"$ECO" ls --all --json > "$T/ls.json"
awk '
    /^      "id": / { id = $2; sub(/,$/, "", id); st = nm = s0 = s1 = "-"; rs = "-" }
    /^      "state": / { st = $2; gsub(/[",]/, "", st) }
    /^      "name": / { nm = $2; gsub(/[",]/, "", nm) }
    /^      "start_s": / { s0 = $2; sub(/,$/, "", s0) }
    /^      "end_s": / { s1 = $2; sub(/,$/, "", s1) }
    /^      "reason": / { rs = $0; sub(/^      "reason": /, "", rs); sub(/,$/, "", rs); gsub(/ /, "_", rs) }
    /^    }/ { print id, st, nm, s0, s1, rs }
' "$T/ls.json" > "$T/jobs"

total=$(wc -l < "$T/jobs")
nack=$(wc -l < "$ACK")
check "the CLI got $JOBS ids (got $nack)" [ "$nack" -eq "$JOBS" ]
check "every listed id once" [ -z "$(awk '{ print $1 }' "$T/jobs" | sort | uniq -d)" ]
check "every listed job number once" [ -z "$(awk '{ print $3 }' "$T/jobs" | sort | uniq -d)" ]
missing=$(awk 'NR == FNR { have[$1] = $3; next } have[$2] != "j" $1 { print $1 "/" $2 }' \
    "$T/jobs" "$ACK")
check "every acknowledged job listed with its id and number (missing: $(echo $missing | head -c 200))" \
    [ -z "$missing" ]
extra=$(awk 'NR == FNR { ack["j" $1] = 1; nack["j" $1] = 1; next }
             FILENAME == ARGV[2] { nack["j" $1] = 1; next }
             !($3 in nack) { print $1 }' "$ACK" "$NACK" "$T/jobs")
check "no listed job that was never submitted ($extra)" [ -z "$extra" ]
notfinal=$(awk '$2 != "done" && $2 != "failed" && $2 != "cancelled" && $2 != "lost"' "$T/jobs")
check "every job in a final state (not: $(echo $notfinal | head -c 200))" [ -z "$notfinal" ]
twice=$(for f in "$M"/*; do [ -e "$f" ] && [ "$(wc -l < "$f")" -ne 1 ] && basename "$f"; done)
check "no command ran twice (markers: $(echo $twice | head -c 200))" [ -z "$twice" ]
noran=$(awk '$2 == "done" { print substr($3, 2) }' "$T/jobs" | while read -r k; do
    [ -s "$M/$k" ] || echo "$k"; done)
check "every done job ran (not: $(echo $noran | head -c 200))" [ -z "$noran" ]
nfailed=$(awk '$2 == "failed"' "$T/jobs" | wc -l)
check "no job failed (commands exit 0; got $nfailed)" [ "$nfailed" -eq 0 ]
badlost=$(awk 'NR == FNR { k[++n] = $1; next }
    $2 == "lost" {
        ok = ($6 ~ /gone/ || $6 ~ /no_start_record/) && $4 != "null"
        if (ok) { ok = 0; for (i = 1; i <= n; i++) if (k[i] + 0 >= $4 - 0.01) ok = 1 }
        if (!ok) print $1
    }' "$KT" "$T/jobs")
check "every lost job started before a kill and says why (not: $(echo $badlost | head -c 200))" \
    [ -z "$badlost" ]
marked=$(find "$M" -type f | wc -l)

stop_daemon
summary=$(awk '{ c[$2]++ } END { printf "done %d, failed %d, cancelled %d, lost %d", c["done"], c["failed"], c["cancelled"], c["lost"] }' "$T/jobs")
echo "crash: $kills SIGKILLs, $JOBS acknowledged + $(wc -l < "$NACK") unacknowledged submits" \
    "in ${t_sub}s; $total jobs listed: $summary; $marked commands ran, none twice"
finish
