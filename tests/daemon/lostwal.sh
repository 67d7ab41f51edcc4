#!/bin/sh
# SPDX-License-Identifier: MIT
# A job store that lost acknowledged jobs with its write-ahead log (the -wal file deleted after
# a SIGKILL, or its tail cut short): ecoschedd refuses to start, naming the lost ids and the way
# on; with --accept-lost-jobs it starts and gives no acknowledged id again. Queued jobs leave no
# files in logs/, so only the store's id file (jobs.db.ids, docs/daemon/store.md) knows them.
. "$(dirname "$0")/common.shlib"
DB="$T/state/jobs.db"
LATER=$(date -u -d '+2 days' +%Y-%m-%dT%H:%MZ) # queued jobs that wait: nothing else is written

# refuses: ecoschedd must exit non-zero (not hang, not serve), saying what was lost and the way on
refuses() {
    timeout 20 "$ECOD" --foreground --socket "$SOCK" --state-dir "$T/state" --platform fake \
        2>"$T/refuse.log"
    rc=$?
    check "refuses to start: $1 (exit $rc)" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
    check "the message names the lost jobs $2 and --accept-lost-jobs" sh -c \
        "grep -q 'jobs $2' '$T/refuse.log' && grep -q -e '--accept-lost-jobs' '$T/refuse.log'"
    sed "s/^/    /" "$T/refuse.log"
}

start_daemon
for k in 1 2 3; do "$ECO" submit --gpus 0 -- true >/dev/null; done
"$ECO" wait 3 >/dev/null
k=0
while [ $k -lt 20 ]; do
    hi=$("$ECO" submit --gpus 0 --not-before "$LATER" -- true) || break; k=$((k + 1))
done
check "23 jobs acknowledged (last id $hi)" [ "$hi" = 23 ]
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
check "a WAL is left after SIGKILL" [ -s "$DB-wal" ]
cp "$DB" "$T/db.kept"; cp "$DB-wal" "$T/wal.kept"; cp "$DB.ids" "$T/ids.kept" 2>/dev/null

# the WAL deleted: SQLite alone would open the database file's older state
rm -f "$DB-wal" "$DB-shm"
refuses "the -wal file deleted" "[0-9]*\\.\\.23"
start_daemon --accept-lost-jobs
check "the daemon warns of the accepted loss" grep -q "accepted the loss of jobs" "$T/daemon.log"
new=$("$ECO" submit --gpus 0 -- true)
check "a new id ($new) above every acknowledged one (23)" [ "$new" -gt 23 ]
stop_daemon
start_daemon # the loss is accepted once: the next start is a plain one
check "a plain restart after the accepted loss" kill -0 "$DPID"
new2=$("$ECO" submit --gpus 0 -- true)
check "ids keep growing ($new2 > $new)" [ "$new2" -gt "$new" ]
stop_daemon

# the WAL's tail cut short (as a power loss can leave it): the last submit is gone
rm -f "$DB-shm"
cp "$T/db.kept" "$DB"; cp "$T/wal.kept" "$DB-wal"; cp "$T/ids.kept" "$DB.ids" 2>/dev/null
size=$(wc -c <"$DB-wal")
truncate -s $((size - 100)) "$DB-wal"
refuses "a torn WAL tail" "23\\.\\.23"
start_daemon --accept-lost-jobs
check "the other 22 jobs are there" [ "$("$ECO" ls --all | awk 'NR > 1' | wc -l)" -eq 22 ]
new=$("$ECO" submit --gpus 0 -- true)
check "a new id ($new) above every acknowledged one (23)" [ "$new" -gt 23 ]
stop_daemon
finish
