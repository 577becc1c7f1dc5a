#!/usr/bin/env bash
# `cuflash-roofline profile` on a GPU machine, in one call: build, the profile GPU tests, then
# PyTorch SDPA (flash, cuDNN, unfused; scripts/sdpa_program.py) over the seed sweep profiled by
# us and by Nsight Compute: per-kernel agreement, the time each adds, one chart with the
# bundled kernels beside PyTorch's, and compare between flash-v2 and PyTorch's flash kernel.
#
#   scripts/profile_acceptance.sh [build]
#
# `profile` runs twice, in both replay modes: --replay batch (the default: one counter pass over
# many launches) and --replay launch (a pass per launch); the cost table has both, the
# agreement tables compare each with ncu, and batch with launch.
#
# Legs left out when set to 1: PROFILE_SKIP_NCU_ROOFLINE (about 140 s), PROFILE_SKIP_NCU_METRICS,
# PROFILE_SKIP_WARM.
#
# Writes under $OUT (or out/profile-acceptance/): summary.txt (tables last), logs.tar.xz,
# chart.svg, profile.json. Never changes clocks: ncu runs with --clock-control none.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/profile-acceptance}"
out="${WORK_DIR:-/tmp/profile-acceptance}"
rm -rf "$out"
mkdir -p "$final" "$out"
summary="$out/summary.txt"
: >"$summary"
program=(python3 scripts/sdpa_program.py)
finish() {
  cp "$summary" "$final/" 2>/dev/null
  for f in chart.svg profile.json profile_launch.json; do [ -f "$out/$f" ] && cp "$out/$f" "$final/"; done
  (cd "$out" && tar -cJf "$final/logs.tar.xz" --exclude='*.ncu-rep' .)
}
trap finish EXIT

if [ "${1:-build}" = build ]; then
  t=$(seconds)
  device_build "$out/build.log" -k
  rc=$?
  note "build: rc=$rc in $(elapsed "$t") s"
  # Keep going: whatever built is still measured.
  [ $rc -ne 0 ] && grep -E "error|Error" "$out/build.log" | head -30 | tee -a "$summary"
fi

t=$(seconds)
ctest --test-dir "$build" --output-on-failure --timeout 300 -R 'gpu.profile|unit.*profile|launch|lease' \
  >"$out/ctest.log" 2>&1
note "ctest (profile tests): rc=$? in $(elapsed "$t") s; $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
grep -E "Failed|Not Run|\*\*\*|ERROR|error:" "$out/ctest.log" | head -30 | tee -a "$summary"
# When a profile test failed: profile_target under cuda-gdb (the device image has no gdb),
# profiled in each replay mode, so that a crash in the injection library leaves a backtrace.
if grep -q "gpu.profile .*Failed" "$out/ctest.log" && command -v cuda-gdb >/dev/null; then
  for replay in batch launch; do
    timeout 180 "$tool" profile --replay "$replay" --json "$out/gdb_$replay.json" -- cuda-gdb -q \
      -batch -ex run -ex bt --args "$build/tests/gpu/profile_target" >"$out/gdb_$replay.txt" 2>&1
    note "profile_target under cuda-gdb, --replay $replay: rc=$?"
    grep -E "^#[0-9]+|signal|SIG" "$out/gdb_$replay.txt" | head -25 | tee -a "$summary"
  done
fi

# Processes that share the GPU: profile_target's parent and child take the counters in turn.
# -v prints where each process's injection library spent its time.
t=$(seconds)
timeout 120 "$tool" -v profile --json "$out/target.json" -- "$build/tests/gpu/profile_target" \
  --spawn-child >"$out/target.txt" 2>"$out/target.err"
note "profile_target --spawn-child: rc=$? in $(elapsed "$t") s; rows by process and status: $(python3 -c "
import json, collections
rows = json.load(open('$out/target.json'))['rows']
print(dict(collections.Counter((r['launch']['process_id'], r['status']) for r in rows)))" 2>&1)"
grep "time in the injection library" "$out/target.err" | sed 's/^/profile_target /' | tee -a "$summary"

# Cost: the program alone, under profile, under ncu --set roofline, under ncu --metrics with
# our default list (that run is also the reference for agreement: caches flushed per kernel).
metrics=$("$tool" metrics --chip GH100 --list)
# One untimed run first: the first run of the program also loads libraries and fills caches
# (10.3 s against ~6 s for the later runs on the H200), which would count against "alone".
"${program[@]}" >"$out/alone_warmup.log" 2>&1
t=$(seconds); "${program[@]}" >"$out/alone.log" 2>&1; rc=$?; alone=$(elapsed "$t")
note "program alone: rc=$rc $alone s"
# profile_as REPLAY JSON: the program under `profile --replay REPLAY`; its wall time in $wall.
profile_as() {
  local replay=$1 json=$2 t rc
  t=$(seconds)
  timeout 600 "$tool" -v profile --replay "$replay" --json "$out/$json.json" -- "${program[@]}" \
    >"$out/$json.txt" 2>"$out/$json.err"
  rc=$?; wall=$(elapsed "$t")
  note "profile --replay $replay: rc=$rc $wall s; $(grep -vc '^warning' "$out/$json.err") lines on stderr"
  grep "time in the injection library" "$out/$json.err" | sed "s/^/profile $replay phases: /" |
    tee -a "$summary"
}
profile_as batch profile; ours=$wall
profile_as launch profile_launch; per_launch=$wall
note "profile rows by status (batch, then launch): $(python3 -c "
import json, collections
for f in ('$out/profile.json', '$out/profile_launch.json'):
    print(dict(collections.Counter(r['status'] for r in json.load(open(f))['rows'])), end='  ')" 2>&1)"
if [ "${PROFILE_SKIP_WARM:-0}" != 1 ]; then
  t=$(seconds)
  timeout 600 "$tool" -v profile --cache warm --json "$out/profile_warm.json" -- "${program[@]}" \
    >"$out/profile_warm.txt" 2>"$out/profile_warm.err"
  note "profile --cache warm: rc=$? $(elapsed "$t") s; $(python3 -c "
import json
def total(path, key):
    rows = json.load(open(path))['rows']
    return sum(r['counters'].get(key) or 0 for r in rows), sum(r['status'] == 'ok' for r in rows), len(rows)
for key in ('dram_read_bytes', 'l2_bytes'):
    (w, ok, n), (c, _, _) = total('$out/profile_warm.json', key), total('$out/profile.json', key)
    print(f'{key} warm/cold {w / c:.3f};', end=' ')
print(f'{ok} of {n} rows ok')" 2>&1)"
fi
ncu_metrics=nan
if [ "${PROFILE_SKIP_NCU_METRICS:-0}" != 1 ]; then
  t=$(seconds)
  ncu --clock-control none --cache-control all --metrics "$metrics" --csv --page raw \
    "${program[@]}" >"$out/ncu_metrics.csv" 2>"$out/ncu_metrics.err"
  rc=$?; ncu_metrics=$(elapsed "$t")
  note "ncu --metrics (our list): rc=$rc $ncu_metrics s"
else
  note "ncu --metrics: not run (PROFILE_SKIP_NCU_METRICS=1)"
fi
# PROFILE_NCU_REPEAT=1: ncu --metrics a second time, to see how far ncu agrees with itself
# (kernels whose own traffic changes between runs, as cuDNN's L2 bytes seemed to).
if [ "${PROFILE_NCU_REPEAT:-0}" = 1 ] && [ "${PROFILE_SKIP_NCU_METRICS:-0}" != 1 ]; then
  ncu --clock-control none --cache-control all --metrics "$metrics" --csv --page raw \
    "${program[@]}" >"$out/ncu_metrics_2.csv" 2>"$out/ncu_metrics_2.err"
  note "ncu --metrics, second run: rc=$?"
fi
# PROFILE_SKIP_NCU_ROOFLINE=1 leaves out the slowest leg (about 140 s on the H200).
ncu_roofline=nan
if [ "${PROFILE_SKIP_NCU_ROOFLINE:-0}" != 1 ]; then
  t=$(seconds)
  ncu --clock-control none --set roofline -f -o "$out/ncu_roofline" "${program[@]}" \
    >"$out/ncu_roofline.log" 2>&1
  rc=$?; ncu_roofline=$(elapsed "$t")
  note "ncu --set roofline: rc=$rc $ncu_roofline s"
else
  note "ncu --set roofline: not run (PROFILE_SKIP_NCU_ROOFLINE=1)"
fi

# One chart and one comparison with the bundled kernels (the seed sweep).
"$tool" run --json "$out/bundled.json" >"$out/bundled.txt" 2>&1
note "bundled run: rc=$?"
"$tool" plot "$out/bundled.json" "$out/profile.json" -o "$out/chart.svg" >"$out/plot.log" 2>&1
note "plot: rc=$? $(grep -c 'class="point"' "$out/chart.svg" 2>/dev/null) points"
flash=$(python3 -c "
import json,sys
from collections import Counter
names=Counter(r['kernel'] for r in json.load(open('$out/profile.json'))['rows'] if 'flash_fwd' in r['kernel'])
print(names.most_common(1)[0][0] if names else '')")
"$tool" compare "$out/bundled.json" "$out/profile.json" --kernel-base flash-v2 \
  --kernel-head "$flash" --allow-mismatch >"$out/compare.txt" 2>&1
note "compare flash-v2 -> $flash: rc=$?"

{
  echo
  echo "== cost (seed sweep of PyTorch SDPA, whole-process wall time)"
  python3 - "$alone" "$ours" "$ncu_roofline" "$ncu_metrics" "$per_launch" <<'PY'
import sys
alone, ours, roof, met, launch = map(float, sys.argv[1:])
add = lambda x: x - alone
print(f"  program alone                       {alone:7.2f} s")
print(f"  profile --replay batch (default)    {ours:7.2f} s   added {add(ours):6.2f} s")
print(f"  profile --replay launch             {launch:7.2f} s   added {add(launch):6.2f} s")
print(f"  ncu --set roofline                  {roof:7.2f} s   added {add(roof):6.2f} s")
print(f"  ncu --metrics (our list)            {met:7.2f} s   added {add(met):6.2f} s")
print(f"  added by ours / added by ncu --set roofline: {add(ours) / add(roof):.3f} (goal <= 0.2)")
print(f"  added by ours / added by ncu --metrics:      {add(ours) / add(met):.3f} (goal < 1)")
print(f"  (--replay launch: {add(launch) / add(roof):.3f} and {add(launch) / add(met):.3f})")
PY
  echo
  echo "== agreement with ncu --clock-control none --cache-control all, per kernel"
  echo "   (ours: --replay batch, the default)"
  [ -s "$out/ncu_metrics.csv" ] && python3 scripts/profile_vs_ncu.py "$out/profile.json" "$out/ncu_metrics.csv"
  echo
  echo "   (ours: --replay launch)"
  [ -s "$out/ncu_metrics.csv" ] && python3 scripts/profile_vs_ncu.py "$out/profile_launch.json" "$out/ncu_metrics.csv"
  if [ -s "$out/ncu_metrics_2.csv" ]; then
    echo
    echo "== agreement of ncu's second run (\"ours\" column) with its first, per kernel"
    python3 scripts/profile_vs_ncu.py --ours-ncu "$out/ncu_metrics_2.csv" "$out/ncu_metrics.csv"
  fi
  echo
  echo "== agreement of --replay batch (ours) with --replay launch (\"ncu\" column), per kernel"
  python3 scripts/profile_vs_ncu.py "$out/profile.json" "$out/profile_launch.json"
  echo
  echo "== profile table"
  cat "$out/profile.txt"
  echo
  echo "== compare flash-v2 (bundled) -> $flash (PyTorch)"
  cat "$out/compare.txt"
  echo
  echo "== ctest"
  tail -15 "$out/ctest.log"
} >>"$summary" 2>&1
cat "$summary"
