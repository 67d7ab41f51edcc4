#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd on a full file system (a small tmpfs as its state dir, filled up): a job that ends
# while its end cannot be stored is kept and recorded once space returns (`ecosched wait`
# returns its exit status), a queued job whose start cannot be stored never runs early and
# keeps its place, and all of it without a restart. Needs root (mount); else skipped (77).
. "$(dirname "$0")/common.shlib"
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to mount a tmpfs"; exit 77; fi
mkdir -p "$T/state"
# 4 MiB: the store, logs and run files of a few jobs, and quick to fill
if ! mount -t tmpfs -o size=4m,mode=0755 ecosched-test "$T/state" 2>"$T/mount.err"; then
    echo "SKIP: cannot mount a tmpfs: $(cat "$T/mount.err")"; exit 77
fi
fd_cleanup() {
    [ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
    [ -n "${WPID:-}" ] && kill "$WPID" 2>/dev/null
    umount -l "$T/state" 2>/dev/null
    cleanup
}
trap fd_cleanup EXIT
export ECOSCHED_FAKE_NVML_GPUS=1 # one GPU: b and c wait for a, then c for b
start_daemon
ORDER="$T/order"; : > "$ORDER"; chmod 666 "$ORDER"
a=$("$ECO" submit --gpus 1 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
check "a runs" until_state "$a" running
b=$("$ECO" submit --gpus 1 -- sh -c "echo b >> $ORDER")
c=$("$ECO" submit --gpus 1 -- sh -c "echo c >> $ORDER")
check "b and c queued" [ "$(field "$b" state) $(field "$c" state)" = "queued queued" ]

# fill the file system: the store's next write fails with SQLITE_FULL
dd if=/dev/zero of="$T/state/fill" bs=64k 2>/dev/null
check "the state dir is full" sh -c "! dd if=/dev/zero of='$T/state/fill2' bs=4k count=1 2>/dev/null"
rm -f "$T/state/fill2"
x=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "{\"argv\":[\"true\"],\"cwd\":\"/\",\"gpus\":0}" http://localhost/v1/jobs)
check "a submit on the full disk answers 500 (got $x)" [ "$x" = 500 ]

"$ECO" wait "$a" > "$T/wait.out" 2>&1 &
WPID=$!
touch "$T/go" # a exits 0 now; its end cannot be stored
sleep 3       # a few ticks of retries
check "daemon still up" kill -0 "$DPID"
check "wait has not returned yet" kill -0 "$WPID"
check "b did not run while its start could not be stored" [ ! -s "$ORDER" ]
check "b still queued" [ "$(field "$b" state)" = queued ]
check "the end failure logged once" [ "$(grep -c "job $a: end not recorded" "$T/daemon.log")" -eq 1 ]
check "the start failure logged once" [ "$(grep -c 'start not recorded' "$T/daemon.log")" -eq 1 ]

rm -f "$T/state/fill" # space returns
i=0
while kill -0 "$WPID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$WPID" 2>/dev/null; then kill "$WPID"; fi # still waiting after 10 s: a failure
wait "$WPID"; rc=$?; WPID=""
check "wait on a returns 0 once space returns (got $rc)" [ "$rc" -eq 0 ]
check "a done, exit 0" [ "$(field "$a" state) $(field "$a" exit_status)" = "done 0" ]
check "b done" timeout 20 "$ECO" wait "$b"
check "c done" timeout 20 "$ECO" wait "$c"
check "b ran before c, each once" [ "$(cat "$ORDER" | tr '\n' ' ')" = "b c " ]
check "a's end recorded in the log" grep -q "job $a: end recorded" "$T/daemon.log"
check "no restart: the first daemon still runs" kill -0 "$DPID"
check "no job left running" sh -c "! '$ECO' ls | grep -q -e ' queued ' -e ' running '"
stop_daemon
finish
