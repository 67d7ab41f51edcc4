#!/bin/sh
# SPDX-License-Identifier: MIT
# The loopback TCP listener: bearer token required (401 without or with a wrong one), TCP
# clients act as the token file's owner, the CLI reaches it with --url and --token-file, and
# a readable token file or a non-loopback address is refused at start.
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
"$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" --platform none \
    --tcp-listen "0.0.0.0:$PORT" --tcp-token-file "$TOK" 2>"$T/err"; rc=$?
check "a non-loopback address is refused (exit $rc)" [ "$rc" -eq 2 ]
check "... naming loopback" grep -q "loopback" "$T/err"
"$ECOD" --foreground --socket "$T/d2.sock" --state-dir "$T/state2" --platform none \
    --tcp-listen "127.0.0.1:$PORT" 2>"$T/err"; rc=$?
check "a listener without a token file is refused (exit $rc)" [ "$rc" -eq 2 ]
finish
