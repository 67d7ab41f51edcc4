#!/bin/sh
# SPDX-License-Identifier: MIT
# Every C source and header follows .clang-format (`make format` rewrites them; Debian 12's
# clang-format 14, a test package of scripts/setup.sh). Lists each file that differs and the
# first lines of its diff.
set -u
SRC="$2"
command -v clang-format >/dev/null 2>&1 ||
    { echo "SKIP: clang-format not found (apt-get install clang-format)"; exit 77; }
cd "$SRC" || { echo "FAIL: cannot enter $SRC"; exit 1; }
files=$(find src include tests bench contrib fuzz -name '*.c' -o -name '*.h' 2>/dev/null | sort)
bad=0
n=0
for f in $files; do
    n=$((n + 1))
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        bad=$((bad + 1))
        echo "FAIL: $f differs from .clang-format (make format fixes it):"
        clang-format "$f" | diff "$f" - | head -8
    fi
done
echo "format: $n files, $bad differ"
[ "$bad" -eq 0 ]
