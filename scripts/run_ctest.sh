#!/bin/sh
# SPDX-License-Identifier: MIT
# `sh scripts/run_ctest.sh BUILD_DIR [CTEST ARGS...]`: ctest --output-on-failure in BUILD_DIR
# (make test, test-asan, fuzz-check), then the reason of every skipped test: ctest's summary
# names them ("***Skipped") but not why, which each test prints (SKIP: ...) before its exit 77;
# it is taken from the test's output in Testing/Temporary/LastTest.log. Exits with ctest's
# status.
set -u
dir="$1"; shift
cd "$dir" || exit 1
out=$(mktemp "${TMPDIR:-/tmp}/ecosched-ctest.XXXXXX")
trap 'rm -f "$out" "$out.rc"' EXIT
{ ctest --output-on-failure "$@"; echo $? >"$out.rc"; } | tee "$out"
rc=$(cat "$out.rc" 2>/dev/null || echo 1)
# "The following tests did not run:" then lines "  12 - NAME (Skipped)"
skipped=$(sed -n '/^The following tests did not run:/,/^$/s/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$out")
[ -n "$skipped" ] || exit "$rc"
log=Testing/Temporary/LastTest.log
echo
echo "Skipped tests ($(echo "$skipped" | wc -l)) and why:"
for t in $skipped; do
    # the test's output block: from its "Test: NAME" line to "<end of output>"; the reason is
    # its line that says SKIP (else its last line)
    why=$(awk -v t="$t" '
        $0 ~ "^[0-9]+/[0-9]+ Test: " && $3 == t { on = 1; next }
        on && /^<end of output>$/ { exit }
        on && /^Output:$/ { body = 1; next }
        on && body && !/^-+$/ { last = $0; if (!skip && $0 ~ /SKIP|[Ss]kipp/) skip = $0 }
        END { print skip != "" ? skip : last }' "$log" 2>/dev/null)
    echo "  $t: ${why:-(no output; run ctest -R '^$t\$' -V)}"
done
exit "$rc"
