#!/usr/bin/env bash
# Runs the test suite of the preset scripts/setup.sh built, after a formatting check of the
# C++/CUDA sources against .clang-format (skipped, with a notice, where clang-format is not
# installed). GPU tests report themselves as skipped when no GPU is present; the run fails if
# no test ran at all. Then every fuzz target runs for ROOFLINE_FUZZ_SECONDS (default 15; 0 skips)
# through scripts/fuzz.sh (skipped, with a notice, where clang++ has no libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-$(cat build/.preset 2>/dev/null || echo ci)}"
echo "== format (clang-format --dry-run on every C++/CUDA source)"
if command -v clang-format >/dev/null 2>&1; then
  git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format --dry-run --Werror
  echo "format: ok (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))"
else
  echo "format: skipped (clang-format not installed)"
fi
# doctest_discover_tests hands each TEST_CASE name to CMake, where ';' splits a list: a name
# with one becomes two ctest entries that each run no test case, and pass.
if git grep -n 'TEST_CASE("[^"]*;' -- tests; then
  echo "tests: a TEST_CASE name above has ';', which ctest splits into tests that never run"
  exit 1
fi
echo "== tests (ctest --preset $preset)"
ctest --preset "$preset" --parallel "$(nproc)"
fuzz_seconds="${ROOFLINE_FUZZ_SECONDS:-15}"
if [ "$fuzz_seconds" != 0 ]; then
  echo "== fuzzing: the fuzz preset's build, then nine targets × $fuzz_seconds s" \
    "(ROOFLINE_FUZZ_SECONDS=0 skips it)"
  fuzz_status=0
  scripts/fuzz.sh "$fuzz_seconds" || fuzz_status=$?
  if [ "$fuzz_status" -eq 77 ]; then
    echo "fuzz: skipped (clang++ with libFuzzer not installed)"
  elif [ "$fuzz_status" -ne 0 ]; then
    exit "$fuzz_status"
  fi
fi
