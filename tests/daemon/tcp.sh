#!/bin/sh
# SPDX-License-Identifier: MIT
# The loopback TCP listener: bearer token required (401 without or with a wrong one), TCP
# clients act as the token file's owner, the CLI reaches it with --url and --token-file, and
# a readable token file or a non-loopback address is refused at start, a FIFO as token file
# makes the daemon exit at once (it does not wait for a writer), tokens of 16..255 characters
# are accepted (256 refused) and a root-owned token file is warned about.
. "$(dirname "$0")/common.shlib"
PORT=$((20000 + $$ % 20000))
TOK="$T/token"
head -c 24 /dev/urandom | base64 > "$TOK"
chmod 600 "$TOK"
start_daemon --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$TOK"
URL="http://127.0.0.1:$PORT"

code=$(curl -s -o "$T/r" -w '%{http_code}' "$URL/v1/status")
check "no token: 401 (got $code)" [ "$code" = 401 ]
check "401 says how to authenticate" grep -q "bearer token" "$T/r"
check "401 carries WWW-Authenticate" sh -c "curl -s -D - -o /dev/null '$URL/v1/jobs' | grep -qi '^WWW-Authenticate: Bearer'"
code=$(curl -s -o "$T/page" -w '%{http_code}' "$URL/")
check "the live page loads over TCP without the token (got $code)" [ "$code" = 200 ]
check "... and holds no job data, only the page" grep -qi "<html" "$T/page"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")
check "/metrics over TCP needs the token (got $code)" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong-token-0123456789" "$URL/v1/status")
check "wrong token: 401 (got $code)" [ "$code" = 401 ]
code=$(curl -s -o "$T/r" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" "$URL/v1/status")
check "right token: 200 (got $code)" [ "$code" = 200 ]
check "TCP clients act as the token file's owner (uid $(id -u))" grep -q "\"peer_uid\":$(id -u)" "$T/r"
if [ "$(id -u)" -eq 0 ]; then
    check "a root-owned token file is warned about at start-up" \
        grep -q "warning: main: tcp_token_file $TOK is owned by root: TCP clients act as root" "$T/daemon.log"
else
    check "no root warning for a token file of uid $(id -u)" \
        sh -c "! grep -q 'is owned by root' '$T/daemon.log'"
fi

j=$(env -u ECOSCHED_SOCKET "$ECO" submit --url "$URL" --token-file "$TOK" --gpus 0 -- sh -c 'echo over-tcp')
check "submit over TCP prints an id ('$j')" [ -n "$j" ]
ECOSCHED_URL="$URL" ECOSCHED_TOKEN_FILE="$TOK" "$ECO" wait "$j"; rc=$?
check "wait over TCP (env) exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "logs over TCP" sh -c "'$ECO' logs --url '$URL' --token-file '$TOK' $j | grep -qx over-tcp"
check "the CLI without a token says what is missing" \
    sh -c "'$ECO' ls --url '$URL' 2>&1 | grep -q 'token-file'"
check "the CLI with a wrong token fails" \
    sh -c "echo not-the-token-0123456789 > '$T/bad'; ! '$ECO' ls --url '$URL' --token-file '$T/bad' >/dev/null 2>&1"
stop_daemon

# refused configurations
chmod 644 "$TOK"
"$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" --platform none \
    --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$TOK" 2>"$T/err"; rc=$?
check "a token file others can read is refused (exit $rc)" [ "$rc" -ne 0 ]
check "... and the message says chmod 600" grep -q "chmod 600" "$T/err"
chmod 600 "$TOK"
# a FIFO: opening it must not wait for a writer (the daemon would hang before its loop)
mkfifo "$T/fifo" && chmod 600 "$T/fifo"
timeout -s KILL 10 "$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" \
    --platform none --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$T/fifo" 2>"$T/err"; rc=$?
check "a FIFO as token file: the daemon exits non-zero at once (exit $rc; 137: hung)" \
    [ "$rc" -ne 0 -a "$rc" -ne 137 ]
check "... naming the file and saying it is not a regular file ($(tail -1 "$T/err"))" \
    grep -q "tcp_token_file $T/fifo: not a regular file (a FIFO)" "$T/err"
# the documented bound: 255 characters accepted (with its newline), 256 refused
tok_of() { head -c "$1" /dev/zero | tr '\0' 'k'; }
tok_of 255 >"$T/tok255"; echo >>"$T/tok255"; chmod 600 "$T/tok255"
tok_of 256 >"$T/tok256"; echo >>"$T/tok256"; chmod 600 "$T/tok256"
"$ECOD" --foreground --socket "$T/d3.sock" --state-dir "$T/state3" --platform none \
    --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$T/tok255" 2>"$T/err255" &
P255=$!
ok255() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(tok_of 255)" \
    "http://127.0.0.1:$PORT/v1/status" | grep -qx 200; }
i=0; while [ $i -lt 100 ] && kill -0 "$P255" 2>/dev/null && ! ok255; do sleep 0.1; i=$((i + 1)); done
check "a 255-character token is accepted and authenticates ($(tail -1 "$T/err255"))" ok255
check "... the CLI sends it whole" \
    sh -c "env -u ECOSCHED_SOCKET '$ECO' ls --url 'http://127.0.0.1:$PORT' --token-file '$T/tok255' >/dev/null"
kill -TERM "$P255" 2>/dev/null; wait "$P255"
"$ECOD" --foreground --socket "$T/d3.sock" --state-dir "$T/state3" --platform none \
    --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$T/tok256" 2>"$T/err"; rc=$?
check "a 256-character token is refused (exit $rc)" [ "$rc" -ne 0 ]
check "... saying the longest allowed ($(tail -1 "$T/err"))" \
    grep -q "tcp_token_file $T/tok256: token longer than 255 characters" "$T/err"
"$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" --platform none \
    --tcp-listen "0.0.0.0:$PORT" --tcp-token-file "$TOK" 2>"$T/err"; rc=$?
check "a non-loopback address is refused (exit $rc)" [ "$rc" -eq 2 ]
check "... naming loopback" grep -q "loopback" "$T/err"
"$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" --platform none \
    --tcp-listen "127.0.0.1:$PORT" 2>"$T/err"; rc=$?
check "a listener without a token file is refused (exit $rc)" [ "$rc" -eq 2 ]
finish
