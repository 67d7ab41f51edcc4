#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/consolidation.md (the work is in results_consolidation.py: every
# consolidation policy with the co-location gate, tuned on tuning seeds at a service level and
# reported on held-out seeds on two openb pod lists, beside the co-location bound).
# Usage: scripts/results_consolidation.sh [BUILD_DIR] > docs/results/consolidation.md
# Environment: JOBS (parallel runs, default 2), WORK=DIR (resumable), QUICK=1 (a subset).
set -eu
exec python3 "$(dirname "$0")/results_consolidation.py" "$@"
