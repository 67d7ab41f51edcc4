#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd refuses to start on a damaged job store rather than forget jobs: random bytes in
# the WAL's header or inside its frames, a damaged database page, a zero-length or missing
# jobs.db while logs of past jobs exist, an older backup of jobs.db alone (it lacks jobs that
# were acknowledged); the message says what is wrong and how to fix it. The intact files start
# again with every job; an older backup never makes ids reused.
. "$(dirname "$0")/common.shlib"
DB="$T/state/jobs.db"

# refuses WHAT: ecoschedd must exit non-zero (not hang, not serve) and say WHAT in its error
refuses() {
    timeout 20 "$ECOD" --foreground --socket "$SOCK" --state-dir "$T/state" --platform fake \
        2>"$T/refuse.log"
    rc=$?
    check "refuses to start: $1 (exit $rc)" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
    check "the message says $1 and the fix" sh -c "grep -q '$1' '$T/refuse.log' &&
        grep -q -e 'backup' '$T/refuse.log'"
    sed "s/^/    /" "$T/refuse.log"
}

start_daemon
for k in 1 2 3; do "$ECO" submit --gpus 0 -- true >/dev/null; done
long=$("$ECO" submit --gpus 0 -- sleep 30)
check "the long job runs" until_state "$long" running
for k in 1 2 3; do "$ECO" wait "$k" >/dev/null; done
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID="" # the WAL stays, with every job in it
check "a WAL is left after SIGKILL" [ -s "$DB-wal" ]
cp "$DB" "$T/db.good"; cp "$DB-wal" "$T/wal.good"

# random bytes over the WAL header: SQLite alone would ignore the log and start empty
head -c 32 /dev/urandom | dd of="$DB-wal" conv=notrunc 2>/dev/null
refuses "damaged write-ahead log"
cp "$T/wal.good" "$DB-wal"
# random bytes inside the first frame's page: SQLite alone would drop every later commit
head -c 256 /dev/urandom | dd of="$DB-wal" bs=1 seek=200 conv=notrunc 2>/dev/null
refuses "damaged write-ahead log"

# the intact files: every job is there, the running one adopted
cp "$T/db.good" "$DB"; cp "$T/wal.good" "$DB-wal"
start_daemon
check "all four jobs back" [ "$("$ECO" ls | awk 'NR > 1' | wc -l)" -eq 4 ]
check "the long job adopted" [ "$(field "$long" state)" = running ]
kill -KILL "-$(field "$long" pid)" 2>/dev/null
stop_daemon # checkpoints: jobs.db alone holds everything now
cp "$DB" "$T/backup.db" # a backup with jobs 1..4
start_daemon
for k in 1 2; do last=$("$ECO" submit --gpus 0 -- true); done
"$ECO" wait "$last" >/dev/null
stop_daemon

# a zero-length or missing jobs.db while logs/ holds jobs' files
mv "$DB" "$T/db.full"
: > "$DB"
refuses "empty (0 bytes)"
rm -f "$DB"
refuses "missing"
check "the refusals created no database" [ ! -e "$DB" ]

# a damaged page of the database (not the header page): quick_check finds it
cp "$T/db.full" "$DB"
size=$(wc -c < "$DB")
head -c 4096 /dev/urandom | dd of="$DB" bs=4096 seek=1 conv=notrunc 2>/dev/null
refuses "the database is damaged"

# restoring the older backup alone: it lacks jobs 5 and 6, which jobs.db.ids says were given,
# so the start is refused until the loss is accepted; then the backup's jobs are back, and new
# ids continue after every id given (the id file's and the logs')
cp "$T/backup.db" "$DB"
refuses "jobs 5\.\.6 are missing"
check "the message names --accept-lost-jobs" grep -q -e "--accept-lost-jobs" "$T/refuse.log"
start_daemon --accept-lost-jobs
check "the backup's four jobs" [ "$("$ECO" ls | awk 'NR > 1' | wc -l)" -eq 4 ]
new=$("$ECO" submit --gpus 0 -- true)
check "a new id ($new) above every id in logs/ ($last)" [ "$new" -gt "$last" ]
stop_daemon
finish
