#!/bin/sh
# SPDX-License-Identifier: MIT
# The job start path and the daemon's private files, with ecoschedd run from a directory only
# root can enter (a clone in /root, mode 0700): another user's jobs still run (with and without
# the fake GPU wrapper), a missing command fails with a reason naming it, jobs inherit no
# descriptor of the daemon's parent, the store, state directory and output files are private,
# and a submit's cwd is checked as the submitting user (same answer for a path that exists
# and one that does not, under a directory the user cannot enter). Needs root and setpriv.
. "$(dirname "$0")/common.shlib"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! getent group 65534 >/dev/null ||
    ! command -v curl >/dev/null; then
    echo "SKIP: needs root, setpriv, curl and group 65534 (runs jobs as user 65534)"
    exit 77
fi
OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"

# the daemon and the fake GPU wrapper where only root reaches them; the CLI where all may
H="$T/home"; mkdir -m 700 "$H"; mkdir -m 755 "$T/pub"
cp "$ECOD" "$FAKE_RUN" "$H/" && cp "$ECO" "$T/pub/"
ECOD="$H/$(basename "$ECOD")"; ECO="$T/pub/$(basename "$ECO")"
export ECOSCHED_FAKE_GPU_RUN="$H/$(basename "$FAKE_RUN")"
check "nobody cannot reach the daemon's binary" sh -c "! $OTHER test -x '$ECOD'"
# the wrapper runs as the job's user: a library it loads from the build tree (its RPATH, under
# a 0700 home in a /root clone) would stop every GPU job of another user
check "the GPU wrapper needs no shared library of the build tree" \
    sh -c "! ldd '$ECOSCHED_FAKE_GPU_RUN' | grep -q libecosched"

# a descriptor the daemon's parent leaves open (fd 7, a root-only file)
echo "root-only secret" > "$T/secret"; chmod 600 "$T/secret"
exec 7<"$T/secret"
start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)"
exec 7<&-
chmod 666 "$ECOSCHED_FAKE_NVML_STATE" # the fake GPUs' state: nobody's jobs register on them

# another user's jobs run and exit 0: without GPUs, and wrapped in ecosched-fake-gpu-run
# (ls lists the shell's descriptors; no pipeline, whose pipe the shell would hold meanwhile)
a=$(cd "$T" && $OTHER "$ECO" submit --gpus 0 -- sh -c 'id -u; ls /proc/$$/fd')
b=$(cd "$T" && $OTHER "$ECO" submit --gpus 1 -- sh -c 'echo "gpu $CUDA_VISIBLE_DEVICES"')
$OTHER "$ECO" wait "$a" >/dev/null 2>&1; $OTHER "$ECO" wait "$b" >/dev/null 2>&1
check "nobody's job ran: done, exit 0 (got $(field "$a" state) $(field "$a" exit_status) \
$(field "$a" reason); $(cat "$(field "$a" stderr)" 2>/dev/null))" \
    sh -c "[ '$(field "$a" state)' = done ] && [ '$(field "$a" exit_status)' = 0 ]"
out=$($OTHER "$ECO" logs "$a")
check "it ran as uid 65534 ($out)" [ "$(echo "$out" | head -1)" = 65534 ]
fds=$(echo "$out" | tail -n +2 | tr '\n' ' ')
check "it had only fds 0 1 2 open (got '$fds')" [ "$fds" = "0 1 2 " ]
check "nobody's GPU job ran through the wrapper: done, exit 0 (got $(field "$b" state) \
$(field "$b" exit_status); $(cat "$(field "$b" stderr)" 2>/dev/null))" \
    sh -c "[ '$(field "$b" state)' = done ] && [ '$(field "$b" exit_status)' = 0 ]"
check "the GPU job saw its GPU ($($OTHER "$ECO" logs "$b"))" \
    sh -c "$OTHER '$ECO' logs $b | grep -qx 'gpu [01]'"

# a command that does not exist: failed, exit 127, the reason and the stderr file name it
c=$(cd "$T" && $OTHER "$ECO" submit --gpus 0 -- eco-no-such-command x)
$OTHER "$ECO" wait "$c" >/dev/null 2>&1
why=$(field "$c" reason)
check "missing command: failed 127 (got $(field "$c" state) $(field "$c" exit_status))" \
    sh -c "[ '$(field "$c" state)' = failed ] && [ '$(field "$c" exit_status)' = 127 ]"
check "missing command: the reason names it (got '$why')" \
    sh -c "printf '%s' '$why' | grep -q \"eco-no-such-command'*: No such file\""
check "missing command: its stderr says so" \
    sh -c "$OTHER '$ECO' logs --stderr $c | grep -q 'eco-no-such-command'"
check "ls shows the reason" sh -c "'$ECO' ls | grep '^ *$c ' | grep -q 'eco-no-such-command'"
g=$(cd "$T" && $OTHER "$ECO" submit --gpus 1 -- eco-no-such-command)
$OTHER "$ECO" wait "$g" >/dev/null 2>&1
check "missing command under the GPU wrapper: failed 127 naming it (got $(field "$g" state) \
$(field "$g" exit_status) '$(field "$g" reason)')" sh -c "[ '$(field "$g" exit_status)' = 127 ] \
&& printf '%s' '$(field "$g" reason)' | grep -q eco-no-such-command"

# private files: state dir 0700, the store 0600 (with its WAL and shared memory), outputs 0600
S="$T/state"
check "state dir is 0700 (got $(stat -c %a "$S"))" [ "$(stat -c %a "$S")" = 700 ]
for f in jobs.db jobs.db-wal jobs.db-shm; do
    [ -e "$S/$f" ] || continue
    check "$f is 0600 (got $(stat -c %a "$S/$f"))" [ "$(stat -c %a "$S/$f")" = 600 ]
done
check "jobs.db-wal exists (the store is in WAL mode)" [ -e "$S/jobs.db-wal" ]
for f in "$(field "$a" stdout)" "$(field "$a" stderr)" "$(field "$c" stderr)"; do
    check "$f is 0600 and nobody's (got $(stat -c '%a %u' "$f"))" \
        [ "$(stat -c '%a %u' "$f")" = "600 65534" ]
done
stop_daemon

# a looser state dir and store from before are tightened at start
chmod 755 "$S"; chmod 644 "$S/jobs.db"
start_daemon
check "a 0755 state dir is tightened to 0700 (got $(stat -c %a "$S"))" \
    [ "$(stat -c %a "$S")" = 700 ]
check "a 0644 jobs.db is tightened to 0600 (got $(stat -c %a "$S/jobs.db"))" \
    [ "$(stat -c %a "$S/jobs.db")" = 600 ]
check "the stored jobs are still there" [ "$(field "$a" state)" = done ]
stop_daemon

# cwd is checked as the submitting user: under a root-only directory, a path that exists and
# one that does not get the same answer (the one for a directory the user cannot enter)
mkdir -m 700 "$T/vault"; mkdir "$T/vault/exists"
start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)"
post_as_nobody() {
    $OTHER curl -s --unix-socket "$SOCK" -w ' HTTP%{http_code}' -X POST \
        -H 'Content-Type: application/json' \
        --data-binary "{\"argv\":[\"true\"],\"cwd\":\"$1\"}" http://localhost/v1/jobs
}
e=$(post_as_nobody "$T/vault/exists" | sed "s|$T/vault/exists|CWD|g")
m=$(post_as_nobody "$T/vault/missing" | sed "s|$T/vault/missing|CWD|g")
check "cwd under a root-only dir: 400 field cwd (got $e)" \
    sh -c "printf '%s' '$e' | grep -q 'HTTP400\$' && printf '%s' '$e' | grep -q '\"field\":\"cwd\"'"
check "the same answer whether it exists or not ('$e' vs '$m')" [ "$e" = "$m" ]
ok=$(post_as_nobody "$T")
check "a cwd nobody can enter is accepted (got $ok)" sh -c "printf '%s' '$ok' | grep -q HTTP201"
r=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' \
    --data-binary "{\"argv\":[\"true\"],\"cwd\":\"$T/vault/exists\"}" http://localhost/v1/jobs)
check "root may use it (got $r)" [ "$r" = 201 ]
stop_daemon
finish
