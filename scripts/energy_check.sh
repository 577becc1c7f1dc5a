#!/usr/bin/env bash
# Energy per launch (`run --energy`) repeatable? The seed sweep (`run --pass fwd,bwd`, default
# shapes, no counters) twice with --energy, judged row by row by scripts/energy_repeat.py
# (every row within 3%). Builds first unless the build is there.
#
#   bash scripts/energy_check.sh
#
# $OUT (or out/energy-check/) gets energy_summary.txt and energy.tar.xz (both reports and the
# tables), to keep in tests/data/reports. Never changes clocks.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
out="${OUT:-$repo/out/energy-check}"
work="${WORK_DIR:-$repo/out/energy-work}"
mkdir -p "$out" "$work"
summary="$out/energy_summary.txt"
: >"$summary"
if [ ! -x "$tool" ]; then
  device_build "$work/build.log" || {
    tail -20 "$work/build.log" >>"$summary"
    exit 4
  }
fi
for k in 1 2; do
  t=$(seconds)
  "$tool" run --pass fwd,bwd --no-counters --energy --json "$work/sweep_$k.json" \
    >"$work/sweep_$k.txt" 2>&1
  echo "sweep $k: rc=$? in $(elapsed "$t" 1) s" | tee -a "$summary"
done
python3 scripts/energy_repeat.py "$work/sweep_1.json" "$work/sweep_2.json" >>"$summary" 2>&1
tar -C "$work" -cJf "$out/energy.tar.xz" --exclude=build.log . 2>/dev/null
cat "$summary"
