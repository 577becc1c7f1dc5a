#!/usr/bin/env bash
# Issue 13's acceptance on a host with two or more GPUs, in one call: the seed sweep fwd+bwd with
# --reps 30 on one GPU and spread over two (`--devices 0,1`), FLEET_PAIRS times each (default
# 3), interleaved; the wall time ratio of the medians; `compare` of each two-GPU report against
# the one-GPU report of its pair (goal: exit 0); and one more two-GPU run with -v, whose log
# says how the points were priced and how long each worker took.
#
#   scripts/fleet_check.sh
#
# Env: BUILD_DIR (default build/device; built here when the binary is missing), OUT, FLEET_PAIRS.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/fleet-check}"
work="${WORK_DIR:-/tmp/fleet-check}"
rm -rf "$work"
mkdir -p "$final" "$work"

if [ ! -x "$tool" ]; then
  device_build "$work/build.log" cuflash-roofline ||
    { grep -E "error" "$work/build.log" | head -30; exit 1; }
fi
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader \
  | tee "$work/gpus.txt"
if [ "$gpus" -lt 2 ]; then
  echo "fleet check: $gpus GPU(s) on this host; it needs two"
  exit 77
fi

# timed NAME ARGS...: one `run` process; its wall time goes to walls.tsv.
timed() {
  local name=$1
  shift
  local t
  t=$(seconds)
  "$tool" run --pass fwd,bwd --reps 30 --json "$work/$name.json" "$@" >"$work/$name.txt" \
    2>"$work/$name.err"
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(python3 -c "print(f'{$(seconds) - $t:.3f}')")" "$rc" \
    | tee -a "$work/walls.tsv"
}
pairs="${FLEET_PAIRS:-3}"
for i in $(seq 1 "$pairs"); do
  timed "one_$i" --device 0
  timed "two_$i" --devices 0,1
done
"$tool" -v run --pass fwd,bwd --reps 30 --devices 0,1 --json "$work/two_v.json" >"$work/two_v.txt" \
  2>"$work/two_v.err"
grep -E "priced|points in|device [0-9]+:|workers|report written" "$work/two_v.err" | grep -v ": worker /" | cut -c1-200 | tee "$work/two_v_summary.txt"

for i in $(seq 1 "$pairs"); do
  "$tool" compare "$work/one_$i.json" "$work/two_$i.json" --markdown "$work/compare_$i.md" \
    >"$work/compare_$i.txt" 2>&1
  echo "compare one_$i.json two_$i.json: exit $?" | tee -a "$work/compares.txt"
done
# The A/A reference: two one-GPU processes.
"$tool" compare "$work/one_1.json" "$work/one_2.json" >"$work/compare_aa.txt" 2>&1
echo "compare one_1.json one_2.json (A/A, one GPU each): exit $?" | tee -a "$work/compares.txt"

python3 - "$work" <<'PY' | tee "$work/fleet.txt"
import json, statistics, sys
work = sys.argv[1]
walls = {}
for line in open(f"{work}/walls.tsv"):
    name, wall, rc = line.split("\t")
    walls[name] = (float(wall), int(rc))
pairs = sorted(int(name.split("_")[1]) for name in walls if name.startswith("one_"))
one = [walls[f"one_{i}"][0] for i in pairs]
two = [walls[f"two_{i}"][0] for i in pairs]
def line(runs, names):
    return " ".join(f"{t:6.2f}" for t in runs) + "  exit " + " ".join(str(walls[n][1]) for n in names)
print("seed sweep fwd+bwd, --reps 30, whole-process wall time (s):")
print(f"  one GPU (--device 0):     {line(one, [f'one_{i}' for i in pairs])}")
print(f"  two GPUs (--devices 0,1): {line(two, [f'two_{i}' for i in pairs])}")
print(f"  ratio two/one (median):   {statistics.median(two) / statistics.median(one):.3f}  (goal <= 0.6)")
print("  ratio per pair:           " + " ".join(f"{b / a:.3f}" for a, b in zip(one, two)))
for i in pairs:
    r = json.load(open(f"{work}/two_{i}.json"))
    rows = r["rows"]
    status = {}
    for row in rows:
        status[row.get("status")] = status.get(row.get("status"), 0) + 1
    print(f"  two_{i}.json: {len(rows)} rows {status}; origins {len(r.get('origins', []))}")
print(open(f"{work}/compares.txt").read().rstrip())
PY
tar -cJf "$final/fleet.tar.xz" -C "$work" .
cp "$work/fleet.txt" "$final/fleet.txt"
