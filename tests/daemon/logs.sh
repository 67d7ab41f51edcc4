#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched logs`: a job's stdout or stderr from the daemon, from an offset; -f follows a job
# that prints over about 2 s until it ends and its output is drained; another user is refused.
. "$(dirname "$0")/common.shlib"
OTHER=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && getent group 65534 >/dev/null; then
    OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
    start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)"
else
    echo "note: another user's logs not tested: needs root, setpriv and group 65534"
    start_daemon
fi

# follow: lines printed over ~2 s come out as they are written, all of them, then logs exits
j=$("$ECO" submit --gpus 0 -- sh -c \
    'for i in 1 2 3 4 5 6 7 8; do echo "line $i"; echo "err $i" >&2; sleep 0.25; done')
"$ECO" logs -f "$j" > "$T/follow" 2>"$T/follow.err" &
lp=$!
sleep 1
early=$(wc -l < "$T/follow")
check "-f prints lines while the job runs ($early lines after 1 s)" \
    sh -c "[ $early -ge 1 ] && [ $early -lt 8 ]"
i=0; while kill -0 $lp 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "-f exits once the job has ended" sh -c "! kill -0 $lp 2>/dev/null"
wait $lp; rc=$?
check "-f exits 0 (got $rc: $(cat "$T/follow.err"))" [ "$rc" -eq 0 ]
seq 1 8 | sed 's/^/line /' > "$T/want"
check "-f printed every line once, in order" cmp -s "$T/follow" "$T/want"
check "job ended done" [ "$(field "$j" state)" = done ]

# without -f: the whole output; --stderr; the same as the files
check "logs prints the stdout" sh -c "'$ECO' logs $j | cmp -s - '$T/want'"
check "logs --stderr prints the stderr" sh -c \
    "'$ECO' logs --stderr $j | cmp -s - '$(field "$j" stderr)'"
check "stderr has 8 lines" [ "$("$ECO" logs --stderr "$j" | wc -l)" -eq 8 ]

# the raw API: offset, bad parameters
if command -v curl >/dev/null; then
    out=$(curl -s --unix-socket "$SOCK" "http://localhost/v1/jobs/$j/logs?offset=7")
    check "offset 7 skips 'line 1\\n' ('$(printf %s "$out" | head -1)')" \
        [ "$(printf '%s\n' "$out" | head -1)" = "line 2" ]
    st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' \
        "http://localhost/v1/jobs/$j/logs?offset=99999")
    check "offset past the end -> 200, empty (got $st)" [ "$st" = 200 ]
    for q in "stream=both" "offset=-1" "offset=x" "offset="; do
        st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' \
            "http://localhost/v1/jobs/$j/logs?$q")
        check "logs?$q -> 400 (got $st)" [ "$st" = 400 ]
    done
fi
out=$("$ECO" logs 999 2>&1); rc=$?
check "logs of an unknown job: exit 1, 'no job 999' (got $rc: $out)" \
    sh -c "[ $rc -eq 1 ] && printf '%s' '$out' | grep -q 'no job 999'"
out=$("$ECO" logs 2>&1); rc=$?
check "logs without an id: usage error (got $rc)" [ "$rc" -eq 2 ]

# a job that has written nothing yet: empty output, exit 0
q=$("$ECO" submit --gpus 2 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done; echo late")
check "logs of a job without output yet is empty" [ -z "$("$ECO" logs "$q")" ]

# another user: refused (403), and may read their own job's logs
if [ -n "$OTHER" ]; then
    out=$($OTHER "$ECO" logs "$j" 2>&1); rc=$?
    check "nobody may not read root's logs (rc $rc: $out)" sh -c \
        "[ $rc -eq 1 ] && printf '%s' \"\$1\" | grep -q 'may not read its logs'" _ "$out"
    theirs=$(cd "$T" && $OTHER "$ECO" submit --gpus 0 -- sh -c 'echo mine')
    $OTHER "$ECO" wait "$theirs" >/dev/null 2>&1
    check "nobody reads their own job's logs" [ "$($OTHER "$ECO" logs "$theirs")" = mine ]
    check "root reads nobody's logs" [ "$("$ECO" logs "$theirs")" = mine ]
fi
touch "$T/go"
"$ECO" wait "$q"
check "the late job's output" [ "$("$ECO" logs "$q")" = late ]

stop_daemon
finish
