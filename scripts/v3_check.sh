#!/usr/bin/env bash
# flash-v3 on a Hopper GPU in one call: build, SASS census, the GPU grid, compute-sanitizer,
# --verify on the benchmark rows, the benchmark beside PyTorch, a counted profile and the
# speed gate on the other kernels.
#
#   scripts/v3_check.sh [stages...]
#   stages (default all, in this order): build sass grid sanitize verify bench profile gate;
#   quick and quickbench (not in the default; quickbench after quick)
#   pairs (not in the default): flash-v3 and cuDNN row by row, one right after the other
#     (V3_PAIRS, V3_PAIR_ROUNDS, V3_PAIR_SETTLE; see the stage)
#   power (not in the default): scripts/power_trace.py on V3_POWER_ROWS (default
#     "1:16:128:16384:full:fwd:fp16 1:16:128:16384:full:bwd:fp16"): the SM clock, board power and
#     clock-event reasons while flash-v3 and PyTorch's cuDNN and flash SDPA run under sustained
#     load (where each settles at the power cap)
#   stalls (not in the default): ncu's source counters on one flash-v3 row (V3_STALLS_SHAPE
#     "B:H:D:N", default 1:16:128:16384; V3_STALLS_PASS fwd or bwd, default bwd; V3_STALLS_MASK
#     --causal or --no-causal, default --no-causal), summarised per SASS instruction by
#     scripts/ncu_source_stalls.py: where the warps wait
#   quick: flash-v3 alone at the two acceptance shapes, or at V3_QUICK_SHAPES ("B:H:D:N ...";
#     default "4:16:128:16384 1:8:64:16384"), pass V3_QUICK_PASS (default fwd), in the dtypes
#     V3_QUICK_DTYPES (default fp16; "fp16 bf16" for both), masks V3_QUICK_MASKS (default
#     "both": causal and full in one process; "causal full": one process each, so that the
#     causal row's power draw does not set the full row's clock), no PyTorch,
#     in variants that the environment selects (V3_VARIANTS="NAME NAME=VAR ...": VAR=1 for
#     that variant; grid and sanitize cover them too), alternating A B A B so that clock or
#     thermal drift falls on all; for iterating.
#   verify/bench: the benchmark rows (flash-v2 beside flash-v3) with --verify, then
#     scripts/bench_vs_pytorch.py beside PyTorch's flash and cuDNN backends.
#   gate: `compare` between BASE_TOOL (a cuflash-roofline built from the base commit) and this
#     build on the other kernels (flash-v1, flash-v2, standard; the seed sweep, fwd and bwd, as
#     the CI gate runs it: counters on, --verify):
#     exit 0 when none got slower. Skipped without BASE_TOOL.
#
# Environment: V3_GRID_TIMEOUT (default 300 s), V3_RUN_TIMEOUT (90 s) and V3_SANITIZE_TIMEOUT
# (400 s) bound each grid, each quick `run` and each sanitizer process, so that a hanging kernel
# costs one command. V3_BIG=0 leaves out the B4 H16 N16384 rows from `verify`/`bench`;
# V3_PROFILE_SEQ (default 16384), V3_PROFILE_PASS (fwd,bwd) and V3_PROFILE_REPS (5) shape the
# profile.
#
# Everything is written to $WORK_DIR; $OUT (or out/v3-check/) gets summary.txt, logs.tar.xz and
# the benchmark JSON. The summary's tables are printed last. Never changes clocks.
# Exit: 2 (one line on stderr, before anything is written) for a word of V3_QUICK_MASKS other
# than both, causal, full, a V3_PAIRS entry not B:H:D:N:causal|full:fwd|bwd:fp16|bf16, or a
# V3_PAIR_SETTLE that is not a number;
# 4 when the build fails.
set -u -o pipefail
for mask in ${V3_QUICK_MASKS:-both}; do
  case "$mask" in
    both | causal | full) ;;
    *)
      echo "v3_check: V3_QUICK_MASKS takes both, causal or full, not '$mask'" >&2
      exit 2
      ;;
  esac
done
if ! [[ "${V3_PAIR_SETTLE:-0}" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  echo "v3_check: V3_PAIR_SETTLE takes seconds (a number from 0 to 60), not '${V3_PAIR_SETTLE}'" >&2
  exit 2
fi
for spec in ${V3_PAIRS:-}; do
  if ! [[ "$spec" =~ ^[0-9]+:[0-9]+:[0-9]+:[0-9]+:(causal|full):(fwd|bwd):(fp16|bf16)$ ]]; then
    echo "v3_check: V3_PAIRS entries are B:H:D:N:causal|full:fwd|bwd:fp16|bf16, not '$spec'" >&2
    exit 2
  fi
done
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/v3-check}"
out="${WORK_DIR:-/tmp/v3-check}"
rm -rf "$out"
mkdir -p "$final" "$out"
stages="${*:-build sass grid sanitize verify bench profile gate}"
profile_seq="${V3_PROFILE_SEQ:-16384}"
# A kernel that hangs must cost one command, not the whole device call.
grid_limit="${V3_GRID_TIMEOUT:-300}"
run_limit="${V3_RUN_TIMEOUT:-90}"
sanitize_limit="${V3_SANITIZE_TIMEOUT:-400}"
summary="$out/summary.txt"
tables="$out/tables.txt"
: >"$summary"
: >"$tables"
has() { [[ " $stages " == *" $1 "* ]]; }
tests="$build/tests/gpu/gpu_kernel_tests"
finish() {
  cat "$tables" >>"$summary"
  cp "$summary" "$final/summary.txt"
  [ -f "$out/bench.json" ] && cp "$out/bench.json" "$final/"
  (cd "$out" && tar -cJf "$final/logs.tar.xz" .)
  echo "==== tables ===="
  cat "$tables"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader >"$out/gpu.txt" 2>&1
note "gpu: $(cat "$out/gpu.txt")"

if has build; then
  t=$(seconds)
  device_build "$out/build.log" cuflash-roofline gpu_kernel_tests
  rc=$?
  note "build: rc=$rc in $(elapsed "$t" 1) s"
  if [ $rc -ne 0 ]; then
    grep -E "error|Error" "$out/build.log" | head -30 | tee -a "$summary"
    exit 4
  fi
fi

if has sass; then
  # Per kernel: HGMMA count, WARPGROUP.DEPBAR (waits on wgmma groups), WARPGROUP.ARRIVE,
  # local-memory traffic (spills). A DEPBAR after every HGMMA means ptxas serialised them.
  lib="$(find "$build" -name 'libroofline_kernels_sm90.a' | head -1)"
  cuobjdump -sass "$lib" >"$out/sass.txt" 2>&1
  python3 - "$out/sass.txt" <<'PY' | tee -a "$summary"
import re, sys
counts, name = {}, None
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1)
        counts[name] = dict(HGMMA=0, DEPBAR=0, ARRIVE=0, LDL=0, STL=0)
        continue
    if name is None:
        continue
    c = counts[name]
    for key, pat in (("HGMMA", r"\bHGMMA\."), ("DEPBAR", r"WARPGROUP\.DEPBAR"),
                     ("ARRIVE", r"WARPGROUP\.ARRIVE"), ("LDL", r"\bLDL\b"), ("STL", r"\bSTL\b")):
        if re.search(pat, line):
            c[key] += 1
print("sass (cuobjdump): kernel, HGMMA, WARPGROUP.DEPBAR, WARPGROUP.ARRIVE, LDL, STL")
for name, c in counts.items():
    if "flash_v3" in name and c["HGMMA"]:
        short = re.sub(r"_ZN8roofline7kernels\d+_GLOBAL__N__\w+?(\d+flash_v3)", r"\1", name)[:70]
        print(f"  {short:<70} {c['HGMMA']:4d} {c['DEPBAR']:4d} {c['ARRIVE']:4d} {c['LDL']:3d} {c['STL']:3d}")
PY
fi

if has grid; then
  t=$(seconds)
  timeout "$grid_limit" "$tests" -tc='flash-v3*' >"$out/grid.log" 2>&1
  note "grid (gpu_kernel_tests -tc='flash-v3*'): rc=$? in $(elapsed "$t" 1) s; $(grep -E '^\[doctest\] (test cases|assertions)' "$out/grid.log" | tr '\n' ' ')"
  for variant in ${V3_VARIANTS:-}; do
    [[ "$variant" == *=* ]] || continue
    t=$(seconds)
    timeout "$grid_limit" env "${variant#*=}=1" "$tests" -tc='flash-v3*' >"$out/grid_${variant%%=*}.log" 2>&1
    note "grid (flash-v3, ${variant%%=*}): rc=$? in $(elapsed "$t" 1) s; $(grep -E '^\[doctest\] (test cases|assertions)' "$out/grid_${variant%%=*}.log" | tr '\n' ' ')"
  done
fi

if has sanitize; then
  # The three flash-v3 test cases in parallel processes (racecheck on the small grid takes
  # minutes since it gained shapes of more work items than SMs).
  sanitize_cases() {  # sanitize_cases TOOL LABEL [VAR=1]
    local check=$1 label=$2 t pids=() i=0 tc
    shift 2
    t=$(seconds)
    for tc in 'flash-v3 backward*' 'flash-v3 matches*' 'flash-v3 BF16*'; do
      i=$((i + 1))
      # racecheck instruments flash-v3's kernels alone (the reference's and flash-v2's, which
      # feed the backward case, run uninstrumented): 5 s instead of minutes on the small grid.
      # The filter instruments what it names: a kernel named flash_v3_race_probe with a
      # deliberate race gave 1 hazard with it, 0 with kns=no_such_kernel (H200, 2026-12-01).
      local only=()
      [ "$check" = racecheck ] && only=(--kernel-name kns=flash_v3)
      env "$@" ROOFLINE_GPU_TEST_SMALL=1 timeout "$sanitize_limit" compute-sanitizer --tool "$check" \
        "${only[@]}" --error-exitcode 9 "$tests" -tc="$tc" >"$out/sanitize_${check}${label}_$i.log" 2>&1 &
      pids+=($!)
    done
    i=0
    for pid in "${pids[@]}"; do
      i=$((i + 1))
      wait "$pid"
      note "compute-sanitizer $check (flash-v3 small grid${label:+, ${label#_}}, case $i): rc=$? after $(elapsed "$t" 1) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_${check}${label}_$i.log" | tail -1)"
    done
  }
  for check in memcheck racecheck; do
    sanitize_cases "$check" ""
    for variant in ${V3_VARIANTS:-}; do
      [[ "$variant" == *=* ]] || continue
      sanitize_cases "$check" "_${variant%%=*}" "${variant#*=}=1"
    done
  done
fi

if has quick; then
  # Forward variants selected by environment in the same binary (V3_VARIANTS: words
  # NAME or NAME=VAR, VAR set to 1 for that variant), alternating A B A B.
  t=$(seconds)
  quick_files=()
  for round in 1 2; do
    for variant in ${V3_VARIANTS:-default}; do
      name="${variant%%=*}"
      var=""
      [[ "$variant" == *=* ]] && var="${variant#*=}=1"
      for shape in ${V3_QUICK_SHAPES:-4:16:128:16384 1:8:64:16384}; do
        IFS=: read -r b h d seq <<<"$shape"
        for dtype in ${V3_QUICK_DTYPES:-fp16}; do
          for mask in ${V3_QUICK_MASKS:-both}; do
            mask_flag=()
            [ "$mask" = causal ] && mask_flag=(--causal)
            [ "$mask" = full ] && mask_flag=(--no-causal)
            f="$out/quick_${name}_b${b}h${h}d${d}n${seq}${dtype}${mask}_${round}.json"
            timeout "$run_limit" env $var "$tool" run --no-counters --reps 10 --kernel flash-v3 --batch "$b" \
              --heads "$h" --head-dim "$d" --seq "$seq" --dtype "$dtype" --pass "${V3_QUICK_PASS:-fwd}" \
              "${mask_flag[@]}" --json "$f" >"${f%.json}.txt" 2>&1
            quick_files+=("$f")
          done
        done
      done
    done
  done
  note "quick: $(elapsed "$t" 1) s"
  python3 - "${quick_files[@]}" <<'PY' >>"$tables"
import json, re, sys
print("== flash-v3 variants (run --no-counters --reps 10), TFLOP/s@SM GHz after the row, one column per round")
rates = {}
for path in sys.argv[1:]:
    name, rnd = re.search(r"quick_(\w+)_b\d+h\d+d\d+n\d+[a-z0-9]+_(\d)\.json", path).groups()
    try:
        rows = json.load(open(path))["rows"]
    except Exception:
        rows = []
    for row in rows:
        w, t = row["workload"], row["timing"]
        flops = 4.0 * w["batch"] * w["heads"] * w["seq_len"] ** 2 * w["head_dim"]
        flops *= (0.5 if w["causal"] else 1.0) * (2.5 if w["pass"] == "bwd" else 1.0)
        rate = f"{flops / t['median_seconds'] / 1e12:.1f}" if t else row["status"]
        clock = t and (t.get("sm_clock_timed_mhz") or t.get("sm_clock_after_mhz"))
        if clock:
            rate += f"@{clock / 1000:.2f}"  # the SM clock while timed (median), GHz
        key = (name, f"B{w['batch']} H{w['heads']} d{w['head_dim']} N{w['seq_len']} {w['pass']} "
               f"{w.get('dtype', 'fp16')}", "causal" if w["causal"] else "full")
        rates.setdefault(key, []).append(rate)
for (name, shape, mask), r in sorted(rates.items(), key=lambda kv: (kv[0][1], kv[0][2])):
    print(f"  {shape:<29} {mask:<6} {name:<10} " + "  ".join(f"{x:>12}" for x in r))
PY
fi

# quickbench: the quick leg's first-round reports of its first variant beside PyTorch's flash and
# cuDNN backends (bench_vs_pytorch.py), at the same shapes.
if has quickbench && has quick; then
  t=$(seconds)
  first="${V3_VARIANTS:-default}"
  first="${first%% *}"
  python3 scripts/bench_vs_pytorch.py "$out"/quick_"${first%%=*}"_*_1.json --torch flash,cudnn \
    >"$out/quickbench.txt" 2>&1
  note "quickbench: rc=$? in $(elapsed "$t" 1) s"
  {
    echo "== flash-v3 (${first%%=*}, quick round 1) beside PyTorch (bench_vs_pytorch.py --torch flash,cudnn)"
    cat "$out/quickbench.txt"
  } >>"$tables"
fi

# pairs: flash-v3 and cuDNN on one row at a time, one right after the other (our `run`, then
# bench_vs_pytorch.py --torch cudnn on that report), V3_PAIR_ROUNDS times (default 2), for the
# rows V3_PAIRS ("B:H:D:N:MASK:PASS:DTYPE ...", MASK causal or full): both then run in the same
# power and thermal state, which a table of all our rows followed by all of PyTorch's does not
# give (the SM clock under load moved between 1.57 and 1.98 GHz with the row before, H200).
# V3_PAIR_SETTLE=S (default 0) runs each side as timed for S seconds before its timing
# (`run --settle`, bench_vs_pytorch.py --settle): both timed at the power cap they reach under
# sustained load. Our side is timed in one round of 10 (`--rounds 1`), as PyTorch's is. Each cell
# is TFLOP/s@the median SM clock while timed (GHz).
if has pairs; then
  t=$(seconds)
  pair_files=()
  for round in $(seq 1 "${V3_PAIR_ROUNDS:-2}"); do
    for spec in ${V3_PAIRS:-1:16:128:16384:causal:bwd:fp16 4:32:128:8192:causal:bwd:fp16}; do
      IFS=: read -r b h d seq mask pass dtype <<<"$spec"
      mask_flag=--no-causal
      [ "$mask" = causal ] && mask_flag=--causal
      f="$out/pair_b${b}h${h}d${d}n${seq}${mask}${pass}${dtype}_${round}"
      timeout "$run_limit" "$tool" run --no-counters --reps 10 --rounds 1 --kernel flash-v3 \
        --batch "$b" --heads "$h" --head-dim "$d" --seq "$seq" --dtype "$dtype" --pass "$pass" "$mask_flag" \
        --settle "${V3_PAIR_SETTLE:-0}" --json "$f.json" >"$f.txt" 2>&1
      python3 scripts/bench_vs_pytorch.py "$f.json" --torch cudnn --settle "${V3_PAIR_SETTLE:-0}" \
        --json "${f}_torch.json" >"${f}_torch.txt" 2>&1
      pair_files+=("$f")
    done
  done
  note "pairs: $(elapsed "$t" 1) s"
  python3 - "${pair_files[@]}" <<'PY' >>"$tables"
import json, sys
import os
print("== flash-v3 and cuDNN one right after the other (pairs, settle "
      f"{os.environ.get('V3_PAIR_SETTLE', '0')} s): TFLOP/s@SM GHz while timed, per round")
cells = {}
for f in sys.argv[1:]:
    try:
        row = json.load(open(f + ".json"))["rows"][0]
        torch_row = json.load(open(f + "_torch.json"))[0]
    except Exception as error:
        cells.setdefault(f.rsplit("_", 1)[0], []).append(f"failed ({error.__class__.__name__})")
        continue
    w, t = row["workload"], row["timing"]
    key = (f"B{w['batch']} H{w['heads']} d{w['head_dim']} N{w['seq_len']} "
           f"{'causal' if w['causal'] else 'full'} {w['pass']} {w.get('dtype', 'fp16')}")
    ours = torch_row["tflops"]["flash-v3"]
    cudnn = torch_row["tflops"]["torch-cudnn"]
    clock = torch_row.get("sm_clock_timed_mhz", {}).get("torch-cudnn")
    ours_clock = t.get("sm_clock_timed_mhz") or t.get("sm_clock_after_mhz") or float("nan")
    text = (f"{ours:.1f}@{ours_clock / 1000:.2f} "
            f"{cudnn:.1f}@{clock / 1000 if clock else float('nan'):.2f} "
            f"{ours / cudnn:.3f}" if isinstance(cudnn, float) else f"{ours:.1f} cudnn {cudnn}")
    cells.setdefault(key, []).append(text)
print(f"  {'row':<38} {'v3 cuDNN v3/cuDNN, per round'}")
for key, texts in cells.items():
    print(f"  {key:<38} " + "   ".join(texts))
PY
fi

# One `run` per shape group; rows that fail --verify print `incorrect` (counted below).
runs=()
if has verify || has bench; then
  verify_flag=""
  has verify && verify_flag="--verify"
  common=(run --no-counters $verify_flag --reps 10 --kernel flash-v2,flash-v3)
  t=$(seconds)
  "$tool" "${common[@]}" --batch 4 --heads 16 --head-dim 128 --seq 1024,2048 --pass fwd \
    --json "$out/d128_small.json" >"$out/d128_small.txt" 2>&1
  note "run d128 N 1024,2048 fwd $verify_flag: rc=$?"
  "$tool" "${common[@]}" --batch 1 --heads 8 --head-dim 64 --seq 1024,2048 --pass fwd,bwd \
    --json "$out/d64.json" >"$out/d64.txt" 2>&1
  note "run d64 B1 H8 N 1024,2048 fwd,bwd $verify_flag: rc=$?"
  "$tool" "${common[@]}" --batch 2 --heads 12 --head-dim 128 --seq 3000 --causal --pass fwd,bwd \
    --json "$out/n3000.json" >"$out/n3000.txt" 2>&1
  note "run B2 H12 N3000 d128 causal fwd,bwd $verify_flag: rc=$?"
  runs+=("$out/d128_small.json" "$out/d64.json" "$out/n3000.json")
  if [ "${V3_BIG:-1}" = 1 ]; then
    "$tool" "${common[@]}" --batch 4 --heads 16 --head-dim 128 --seq 16384 --pass fwd,bwd \
      --json "$out/d128_big.json" >"$out/d128_big.txt" 2>&1
    note "run B4 H16 N16384 d128 fwd,bwd $verify_flag: rc=$?"
    "$tool" "${common[@]}" --batch 1 --heads 8 --head-dim 64 --seq 16384 --pass fwd,bwd \
      --json "$out/d64_big.json" >"$out/d64_big.txt" 2>&1
    note "run B1 H8 N16384 d64 fwd,bwd $verify_flag: rc=$?"
    runs+=("$out/d128_big.json" "$out/d64_big.json")
  fi
  note "verify/bench runs: $(elapsed "$t" 1) s; rows incorrect: $(cat "$out"/d128_small.txt "$out"/d64.txt "$out"/n3000.txt "$out"/d128_big.txt "$out"/d64_big.txt 2>/dev/null | grep -c incorrect)"
fi

if has bench; then
  t=$(seconds)
  python3 scripts/bench_vs_pytorch.py "${runs[@]}" --torch flash,cudnn --json "$out/bench.json" \
    >"$out/bench.txt" 2>&1
  note "bench_vs_pytorch: rc=$? in $(elapsed "$t" 1) s"
  {
    echo "== flash-v2 / flash-v3 beside PyTorch (bench_vs_pytorch.py --torch flash,cudnn)"
    cat "$out/bench.txt"
  } >>"$tables"
fi

if has profile; then
  # Dogfood: the roofline's counters on flash-v3 at the acceptance shapes.
  t=$(seconds)
  "$tool" run --counter-set full --reps "${V3_PROFILE_REPS:-5}" --kernel flash-v3 --batch 4 --heads 16 --head-dim 128 \
    --seq "$profile_seq" --no-causal --pass "${V3_PROFILE_PASS:-fwd,bwd}" --json "$out/profile_d128.json" \
    >"$out/profile_d128.txt" 2>&1
  note "profile d128: rc=$? in $(elapsed "$t" 1) s"
  "$tool" run --counter-set full --reps "${V3_PROFILE_REPS:-5}" --kernel flash-v3 --batch 1 --heads 8 --head-dim 64 \
    --seq "$profile_seq" --no-causal --pass fwd --json "$out/profile_d64.json" \
    >"$out/profile_d64.txt" 2>&1
  note "profile d64: rc=$?"
  {
    echo "== cuflash-roofline run --counter-set full --kernel flash-v3 (profile_d128.txt, profile_d64.txt)"
    cat "$out/profile_d128.txt" "$out/profile_d64.txt"
  } >>"$tables"
fi

if has stalls; then
  # Dogfood beside ncu: which instructions the warps of one flash-v3 kernel wait at.
  t=$(seconds)
  IFS=: read -r b h d seq <<<"${V3_STALLS_SHAPE:-1:16:128:16384}"
  stalls_pass="${V3_STALLS_PASS:-bwd}"
  stalls_kernel=flash_v3_backward_kernel
  [ "$stalls_pass" = fwd ] && stalls_kernel=flash_v3_forward_kernel
  timeout 300 ncu --clock-control none --section SourceCounters --section WarpStateStats \
    -k "regex:$stalls_kernel" --launch-skip 1 --launch-count 1 -o "$out/stalls" \
    "$tool" run --no-counters --reps 1 --kernel flash-v3 --batch "$b" --heads "$h" --head-dim "$d" \
    --seq "$seq" "${V3_STALLS_MASK:---no-causal}" --pass "$stalls_pass" >"$out/stalls_ncu.log" 2>&1
  note "stalls (ncu source counters, $stalls_kernel B$b H$h d$d N$seq ${V3_STALLS_MASK:---no-causal}): rc=$? in $(elapsed "$t" 1) s"
  ncu -i "$out/stalls.ncu-rep" --page source --csv --print-source sass >"$out/stalls_source.csv" 2>&1
  python3 scripts/ncu_source_stalls.py "$out/stalls_source.csv" >"$out/stalls.txt" 2>&1
  {
    echo "== ncu source counters of $stalls_kernel (scripts/ncu_source_stalls.py; stalls.txt has all)"
    tail -n +2 "$out/stalls.txt" | head -60
  } >>"$tables"
fi

if has power; then
  t=$(seconds)
  # shellcheck disable=SC2086
  timeout 300 python3 scripts/power_trace.py "$tool" \
    ${V3_POWER_ROWS:-1:16:128:16384:full:fwd:fp16 1:16:128:16384:full:bwd:fp16} \
    >"$out/power.txt" 2>&1
  note "power trace (power_trace.py): rc=$? in $(elapsed "$t" 1) s"
  {
    echo "== flash-v3 and PyTorch's SDPA under sustained load (scripts/power_trace.py)"
    cat "$out/power.txt"
  } >>"$tables"
fi

if has gate && [ -n "${BASE_TOOL:-}" ]; then
  t=$(seconds)
  others=(run --verify --pass fwd,bwd --kernel flash-v1,flash-v2,standard)
  "$BASE_TOOL" "${others[@]}" --json "$out/gate_base.json" >"$out/gate_base.txt" 2>&1
  "$tool" "${others[@]}" --json "$out/gate_head.json" >"$out/gate_head.txt" 2>&1
  "$tool" compare "$out/gate_base.json" "$out/gate_head.json" >"$out/gate_compare.txt" 2>&1
  rc=$?
  note "gate: compare base (BASE_TOOL) head (this build), flash-v1/flash-v2/standard: rc=$rc in $(elapsed "$t" 1) s"
  {
    echo "== compare: base build against this build, the other kernels (exit $rc)"
    cat "$out/gate_compare.txt"
  } >>"$tables"
fi
