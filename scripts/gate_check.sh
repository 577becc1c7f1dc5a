#!/usr/bin/env bash
# The CI gate checked on real measurements, in one call on a GPU machine: does `compare` stay
# quiet on unchanged code and catch a slowdown or more bytes?
#
#   scripts/gate_check.sh [PAIRS]        (default 20)
#
# Every run is a separate process with default options (`run --pass fwd,bwd`: the seed sweep,
# 48 rows), one after the other:
#   a_0, then for i = 1..k: a_i (unchanged code) and h_i (the head: the test aids of `run`).
#   A/A pairs:  (a_{i-1}, a_i)  — k pairs of independent processes of unchanged code.
#   A/B pairs:  (a_i, h_i)      — h_i makes one kernel 5% slower (--test-slowdown), another 10%
#               slower, and the third read 12% of its model DRAM bytes more in every counted
#               range (--test-extra-bytes); which kernel gets which rotates with i. Each variant
#               is judged by `compare a_i h_i --kernel-base K --kernel-head K`, its exit code as a
#               gate on that kernel alone.
# The first run's wall time decides k: the runs must fit GATE_BUDGET_S (default 270) seconds.
# Then scripts/gate_rates.py prints the false-alarm and detection rates and the gate's wall time
# (base run + head run + compare). The reports, walls and variants are packed into
# $OUT/gate_reports.tar.xz (re-rate them anywhere with gate_rates.py).
#
# Env: BUILD_DIR (default build/device; built here when the binary is missing), OUT.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
pairs="${1:-20}"
budget="${GATE_BUDGET_S:-270}"
final="${OUT:-$repo/out/gate-check}"
work="${WORK_DIR:-/tmp/gate-check}"
rec="$work/gate_reports"
rm -rf "$work"
mkdir -p "$final" "$rec"

if [ ! -x "$tool" ]; then
  t=$(seconds)
  device_build "$work/build.log" cuflash-roofline
  rc=$?
  echo "build: rc=$rc in $(elapsed "$t" 1) s"
  if [ $rc -ne 0 ]; then grep -E "error" "$work/build.log" | head -30; exit 1; fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader \
  >"$rec/gpu.txt" 2>&1
echo "gpu: $(cat "$rec/gpu.txt")"

kernels=(flash-v1 flash-v2 standard)
start=$(seconds)
# run NAME [extra args...]: one process, its wall time appended to walls.tsv.
run() {
  local name=$1
  shift
  local t
  t=$(seconds)
  "$tool" run --pass fwd,bwd --json "$rec/$name.json" "$@" >"$rec/$name.txt" 2>"$rec/$name.err"
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(python3 -c "print(f'{$(seconds) - $t:.3f}')")" "$rc" \
    >>"$rec/walls.tsv"
  [ $rc -eq 0 ] || { echo "$name: exit $rc: $(tail -1 "$rec/$name.err")"; return 1; }
}

run a_00 || exit 1
first=$(cut -f2 "$rec/walls.tsv" | head -1)
k=$(python3 -c "
left = $budget - ($(seconds) - $start)
print(max(0, min($pairs, int(left // (2 * $first + 0.5)))))")
echo "one run: $first s; budget $budget s: $k pairs (asked for $pairs)"
for i in $(seq 1 "$k"); do
  n=$(printf '%02d' "$i")
  slow5=${kernels[$((i % 3))]}
  slow10=${kernels[$(((i + 1) % 3))]}
  bytes=${kernels[$(((i + 2) % 3))]}
  printf '%s\t%s\t%s\t%s\n' "$n" "$slow5" "$slow10" "$bytes" >>"$rec/variants.tsv"
  run "a_$n" || exit 1
  run "h_$n" --test-slowdown "$slow5=5,$slow10=10" --test-extra-bytes "$bytes=12" || exit 1
done
echo "measured in $(python3 -c "print(f'{$(seconds) - $start:.1f}')") s"

python3 scripts/gate_rates.py "$tool" "$rec" | tee "$work/rates.txt"
cp "$work/rates.txt" "$final/rates.txt"
tar -cJf "$final/gate_reports.tar.xz" -C "$work" gate_reports
