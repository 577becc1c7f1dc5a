#!/usr/bin/env bash
# Runs the test suite of the preset scripts/setup.sh built. GPU tests report themselves as
# skipped when no GPU is present; the run fails if no test ran at all.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-$(cat build/.preset 2>/dev/null || echo ci)}"
ctest --preset "$preset" --parallel "$(nproc)"
