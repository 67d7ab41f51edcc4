#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's two commands: `sh scripts/bootstrap.sh demo` and `sh scripts/bootstrap.sh check`.
# Needs only sh and apt-get (root, or sudo): installs what the target needs, make included
# (scripts/setup.sh), then runs `make demo` or `make check`.
set -eu
what="${1:-}"
case "$what" in
demo | check) ;;
*) echo "usage: sh scripts/bootstrap.sh demo|check" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
command -v apt-get >/dev/null || {
    echo "bootstrap: apt-get not found: this script installs Debian packages; on another" \
        "system install the packages of scripts/setup.sh and run make $what" >&2
    exit 1
}
sh scripts/setup.sh "$what"
exec make "$what"
