#!/usr/bin/env bash
# The device code of the flash kernels unchanged by a refactor, without a GPU: compiles the five
# flash kernel files of REV (a commit, default HEAD) and of the working tree to cubins (nvcc
# -cubin, sm_90; flash-v3 sm_90a; the build's flags) and compares every kernel's .text section
# byte for byte (scripts/kernel_text.py).
#
#   scripts/kernel_text_check.sh [REV]
#
# Exit: 0 every kernel identical, 1 a difference or a failed compile, 2 usage.
set -u -o pipefail
cd "$(dirname "$0")/.."
rev="${1:-HEAD}"
git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "kernel_text_check: no commit $rev" >&2; exit 2; }
nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1; rm -rf "$work"' EXIT
git worktree add --detach -q "$work/before" "$rev" || exit 1
status=0
for file in flash_v1 flash_v2_fwd flash_v2_bwd flash_v3_fwd flash_v3_bwd; do
  arch=sm_90
  case "$file" in flash_v3*) arch=sm_90a ;; esac
  for side in before after; do
    root="$work/before"
    [ "$side" = after ] && root="$(pwd)"
    if ! "$nvcc" -I"$root" -O3 -DNDEBUG -arch="$arch" --expt-relaxed-constexpr -lineinfo \
      -std=c++17 -cubin -x cu "$root/kernels/$file.cu" -o "$work/$side-$file.cubin"; then
      echo "kernel_text_check: $file ($side) did not compile" >&2
      status=1
      continue 2
    fi
  done
  python3 scripts/kernel_text.py "$work/before-$file.cubin" "$work/after-$file.cubin" || status=1
done
exit $status
