#!/bin/sh
# SPDX-License-Identifier: MIT
# One error style: nowhere in src/ (or the tests) does code call the old eco_error_set (message
# only, always -EINVAL; deleted), and no eco_errorf call is followed by a `return -E...` that
# replaces the code it just set: message and code are set in one call.
set -u
SRC="$2"
fail=0
cd "$SRC" || { echo "FAIL: cannot enter $SRC"; exit 1; }
DIRS="src include tests"
old=$(grep -rn --include='*.c' --include='*.h' 'eco_error_set *(' $DIRS)
if [ -n "$old" ]; then
    echo "FAIL: eco_error_set still called (use eco_errorf(err, CODE, fmt, ...)):"
    printf '%s\n' "$old"
    fail=$((fail + 1))
fi
# A statement that only sets the message, then a return of another code on the next line.
patched=$(for f in $(grep -rl --include='*.c' 'eco_errorf' $DIRS); do
    awk -v f="$f" '
        prev && /^[ \t]*return -E[A-Z]+;/ { print f ":" FNR ": " $0 }
        { prev = ($0 ~ /^[ \t]*eco_errorf\(/ || (cont && $0 ~ /\);[ \t]*$/)) && $0 ~ /\);[ \t]*$/
          cont = ($0 ~ /^[ \t]*eco_errorf\(/ && $0 !~ /\);[ \t]*$/) || (cont && $0 !~ /\);[ \t]*$/) }
    ' "$f"
done)
if [ -n "$patched" ]; then
    echo "FAIL: eco_errorf followed by a return of another code (give that code to eco_errorf):"
    printf '%s\n' "$patched"
    fail=$((fail + 1))
fi
echo "errors_style: $((2 - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
