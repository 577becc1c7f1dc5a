#!/usr/bin/env bash
# ptxas_check.sh BUILD_DIR: recompiles the sm_90a kernels (target roofline_kernels_sm90) of a
# Ninja build with ptxas's verbose report and fails when ptxas says it serialised the wgmma of a
# kernel (C7513, C7514: "Potential Performance Loss: wgmma.mma_async instructions are
# serialized ..."). ptxas prints those as info, not warnings, so the build itself passes: one such
# note cost the causal flash-v3 backward 5-12% unseen (docs/results/2026-12-01-h200-flash-v3-causal-80.md).
#
# Exit: 0 none; 1 a note (printed) or a failed compile; 2 usage; 77 (CTest's skip) when BUILD_DIR
# is not a Ninja build or has no sm_90a target. Writes only to a temporary directory.
set -u -o pipefail
build="${1:-}"
if [ -z "$build" ] || [ $# -ne 1 ]; then
  echo "usage: ptxas_check.sh BUILD_DIR" >&2
  exit 2
fi
if [ ! -f "$build/build.ninja" ] || ! command -v ninja >/dev/null 2>&1; then
  echo "SKIPPED: $build is not a Ninja build (or ninja is missing)"
  exit 77
fi
objects=$(ninja -C "$build" -t targets all |
  grep -o 'kernels/CMakeFiles/roofline_kernels_sm90.dir/[^:]*\.cu\.o' | sort -u)
if [ -z "$objects" ]; then
  echo "SKIPPED: no sm_90a kernels in $build"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP  # through the EXIT trap: no temporary directory left behind
found=0
for object in $objects; do
  # The build's own command, with its object and dependency file sent to the temporary directory.
  command=$(ninja -C "$build" -t commands "$object" | tail -1 |
    sed -E "s# -MD##; s# -MT [^ ]+##; s# -MF [^ ]+##; s# -o [^ ]+# -o $tmp/object.o -Xptxas -v#")
  if ! (cd "$build" && eval "$command") >"$tmp/log" 2>&1; then
    echo "ptxas_check: compiling $object failed:"
    cat "$tmp/log"
    exit 1
  fi
  if grep -E '\(C751[34]\)' "$tmp/log"; then
    echo "ptxas_check: $object: ptxas serialised wgmma (above)"
    found=1
  fi
done
[ $found -eq 0 ] && echo "ptxas_check: no serialised wgmma in $(echo "$objects" | wc -l) objects"
exit $found
