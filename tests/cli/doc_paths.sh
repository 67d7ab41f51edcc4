#!/bin/sh
# SPDX-License-Identifier: MIT
# The documentation cites files of the checkout (data/..., tests/...) by paths relative to it,
# never an absolute path of one machine's file system that a reader's checkout lacks
# (/work/..., /scratch/...; a user's directory in an example, /home/ana or /root/x, is not a
# file of ecosched to open). Lists each offending line.
set -u
SRC="$2"
cd "$SRC" || { echo "FAIL: cannot enter $SRC"; exit 1; }
bad=$(find README.md CONTRIBUTING.md docs bench fuzz data -name '*.md' 2>/dev/null | sort |
    xargs grep -nE '(^|[^A-Za-z0-9_.~-])/(work|scratch)/[A-Za-z0-9_.-]+' 2>/dev/null)
if [ -n "$bad" ]; then
    echo "FAIL: absolute paths outside the checkout (cite the file relative to the repository):"
    echo "$bad"
    exit 1
fi
echo "doc_paths: no absolute path outside the checkout"
