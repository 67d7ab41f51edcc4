#!/bin/sh
# SPDX-License-Identifier: MIT
# Golden outputs: the simulator scenarios of scripts/golden.sh give, byte for byte, the files
# committed under tests/data/golden/ (regenerate on purpose: sh scripts/golden.sh --update ECO).
# determinism.sh proves two runs agree; this proves a refactor left the output unchanged.
set -u
ECO="$1"; SRC="$2"
exec sh "$SRC/scripts/golden.sh" "$ECO" "$SRC"
