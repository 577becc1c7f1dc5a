#!/usr/bin/env bash
# Issue 9's acceptance table in one call: scripts/model_vs_counters.py on the GPU for every group
# of workloads (seed40 with --projection, then holdout and fresh..fresh5), one line per group,
# and the counted reports of each group merged (OUT/counted_GROUP.json.xz) for offline re-judging
# (model_vs_counters.py --offline FILE --groups GROUP --model TOOL).
#
#   scripts/model_groups.sh [GROUP...]      (default: every group)
#
# Env: BUILD_DIR (default build/device; the tool is built there when missing), OUT.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/model-groups}"
work="${WORK_DIR:-/tmp/model-groups}"
rm -rf "$work"
mkdir -p "$final" "$work"
if [ ! -x "$tool" ]; then
  device_build "$work/build.log" cuflash-roofline ||
    { grep -E "error" "$work/build.log" | head -30; exit 1; }
fi
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(seed40 holdout fresh fresh2 fresh3 fresh4 fresh5)
status=0
: >"$final/summary.txt"
say() { echo "$*" | tee -a "$final/summary.txt"; }
for group in "${groups[@]}"; do
  extra=()
  [ "$group" = seed40 ] && extra=(--projection)
  start=$(date +%s.%N)
  python3 scripts/model_vs_counters.py --tool "$tool" --out "$work/$group" --groups "$group" \
    "${extra[@]}" >"$work/$group.txt" 2>&1 || status=1
  seconds=$(python3 -c "print(f'{$(date +%s.%N) - $start:.0f}')")
  "$tool" merge "$work/$group"/counted_*.json -o "$final/counted_$group.json" >/dev/null 2>&1 &&
    xz -9f "$final/counted_$group.json"
  cp "$work/$group.txt" "$final/$group.txt"
  say "$(printf '%-8s %4s s  %s' "$group" "$seconds" \
    "$(grep -E 'rows compared' "$work/$group.txt" | sed 's/ (regime must.*//')")"
  while IFS= read -r line; do say "  $line"; done < <(grep -E ' NO *$' "$work/$group.txt" | cut -c1-150)
  if [ "$group" = seed40 ]; then
    while IFS= read -r line; do say "  $line"; done \
      < <(grep -E 'utilisation above|compute-bound rows,' "$work/$group.txt")
  fi
done
exit $status
