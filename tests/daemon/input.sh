#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd refuses bad requests with HTTP 400 naming the field (413 for a huge body), never
# harming stored jobs; the CLI exits non-zero with the daemon's message; another user's cancel
# is refused (403) while their own works and their jobs run as them.
. "$(dirname "$0")/common.shlib"
OTHER=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && getent group 65534 >/dev/null; then
    OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
    start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)"
else
    echo "note: another user's cancel not tested: needs root, setpriv and group 65534"
    start_daemon
fi
command -v curl >/dev/null || { echo "note: curl missing: raw API checks skipped"; }

good=$("$ECO" submit --gpus 0 -- true)
"$ECO" wait "$good"

# post BODY STATUS FIELD: POST /v1/jobs answers STATUS with "field":"FIELD".
post() {
    command -v curl >/dev/null || return 0
    ans=$(curl -s --unix-socket "$SOCK" -o - -w ' HTTP%{http_code}' -X POST \
        -H 'Content-Type: application/json' --data-binary "$1" http://localhost/v1/jobs)
    check "POST $1 -> $2 field $3 (got: $ans)" sh -c \
        "echo '$ans' | grep -q 'HTTP$2\$' && echo '$ans' | grep -q '\"field\":\"$3\"'"
}
post '{"cwd":"/tmp"}' 400 argv
post '{"argv":[],"cwd":"/tmp"}' 400 argv
post '{"argv":["a",1],"cwd":"/tmp"}' 400 argv
post '{"argv":[""],"cwd":"/tmp"}' 400 argv
post '{"argv":["true"]}' 400 cwd
post '{"argv":["true"],"cwd":"tmp"}' 400 cwd
post '{"argv":["true"],"cwd":"/no/such/dir"}' 400 cwd
post '{"argv":["true"],"cwd":"/tmp","gpus":"1"}' 400 gpus
post '{"argv":["true"],"cwd":"/tmp","gpus":1.5}' 400 gpus
post '{"argv":["true"],"cwd":"/tmp","gpus":-1}' 400 gpus
post '{"argv":["true"],"cwd":"/tmp","gpus":3}' 400 gpus
post '{"argv":["true"],"cwd":"/tmp","gpu_mem_gb":-2}' 400 gpu_mem_gb
post '{"argv":["true"],"cwd":"/tmp","gpu_mem_gb":40}' 400 gpu_mem_gb
post '{"argv":["true"],"cwd":"/tmp","share":"yes"}' 400 share
post '{"argv":["true"],"cwd":"/tmp","power_cap":1000}' 400 power_cap
post '{"argv":["true"],"cwd":"/tmp","power_cap":"max"}' 400 power_cap
post '{"argv":["true"],"cwd":"/tmp","gpus":0,"power_cap":150}' 400 power_cap
post '{"argv":["true"],"cwd":"/tmp","env":{"A":1}}' 400 env
post '{"argv":["true"],"cwd":"/tmp","env":{"A=B":"x"}}' 400 env
post '{"argv":["true"],"cwd":"/tmp","env":[]}' 400 env
post '{"argv":["true"],"cwd":"/tmp","name":""}' 400 name
post '{"argv":["true"],"cwd":"/tmp","uid":0}' 400 uid
post '{"argv":["a\u0000b"],"cwd":"/tmp"}' 400 argv
post '{"argv":["true"],"cwd":"/tmp","env":{"A\u0000B":"x"}}' 400 body
post '{"argv":["true"],"cwd":"/tmp","argv":["x"]}' 400 body
post '[1,2]' 400 body
post '{"argv":' 400 body
post '' 400 body
if command -v curl >/dev/null; then
    head -c 70000 /dev/zero | tr '\0' a > "$T/big"
    st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -X POST \
        --data-binary @"$T/big" http://localhost/v1/jobs)
    check "70 KB body -> 413 (got $st)" [ "$st" = 413 ]
    st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' http://localhost/v1/nope)
    check "unknown path -> 404 (got $st)" [ "$st" = 404 ]
    st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -X DELETE \
        http://localhost/v1/jobs)
    check "DELETE /v1/jobs -> 405 (got $st)" [ "$st" = 405 ]
    st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' "http://localhost/v1/jobs?state=odd")
    check "bad state filter -> 400 (got $st)" [ "$st" = 400 ]
fi

# the CLI: non-zero with the daemon's message
expect() { # STATUS NEEDLE ARGS...
    want="$1"; needle="$2"; shift 2
    out=$("$ECO" "$@" 2>&1); rc=$?
    check "ecosched $* -> $want '$needle' (got $rc: $out)" sh -c \
        '[ "$1" -eq "$2" ] && printf "%s" "$3" | grep -qF -- "$4"' _ "$rc" "$want" "$out" "$needle"
}
expect 2 "field 'gpus'" submit --gpus 3 -- true
expect 2 "field 'power_cap'" submit --power-cap 999 -- true
expect 2 "field 'gpu_mem_gb'" submit --gpu-mem 64 -- true
expect 2 "is not an integer" submit --gpus x -- true
expect 2 "no command to run" submit --gpus 1
expect 2 "unknown option '--bogus'" submit --bogus -- true
expect 1 "no job 999" show 999
expect 1 "no job 999" cancel 999
expect 2 "'abc' is not a job id" wait abc
expect 1 "cannot reach ecoschedd" ls --socket "$T/none.sock"
expect 1 "has already ended" cancel "$good"

# bad requests harmed nothing: exactly the one good job is stored
njobs=$("$ECO" ls --json | grep -c '"id":')
check "one stored job after the bad requests (got $njobs)" [ "$njobs" -eq 1 ]

# another user
if [ -n "$OTHER" ]; then
    mine=$("$ECO" submit -- sleep 20)
    out=$($OTHER "$ECO" cancel "$mine" 2>&1); rc=$?
    check "nobody may not cancel root's job (rc $rc: $out)" sh -c \
        "[ $rc -eq 1 ] && printf '%s' \"\$1\" | grep -q 'may not cancel'" _ "$out"
    check "root's job still there" [ "$(field "$mine" state)" != cancelled ]
    theirs=$(cd "$T" && $OTHER "$ECO" submit --gpus 0 -- sh -c 'id -u; sleep 20')
    check "nobody's job runs" until_state "$theirs" running
    check "nobody's job runs as uid 65534" [ "$(field "$theirs" uid)" = 65534 ]
    i=0; while [ ! -s "$(field "$theirs" stdout)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
    check "the job's process is uid 65534" [ "$(cat "$(field "$theirs" stdout)")" = 65534 ]
    check "nobody cancels their own job" sh -c "$OTHER '$ECO' cancel $theirs >/dev/null"
    check "root cancels its job" sh -c "'$ECO' cancel $mine >/dev/null"
fi

stop_daemon
finish
