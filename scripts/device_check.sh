#!/usr/bin/env bash
# One call on a GPU machine: build, test, sanitize, record counter fixtures, cross-check the
# counters with Nsight Compute, compare the cost with ncu's, benchmark against PyTorch.
#
#   scripts/device_check.sh [stages...]
#   stages (default all, in this order):
#     build test sanitize fixture fidelity cost calibrate verdicts l1probe corners profile bf16
#     bench
#   bf16 (about 3 minutes on an H200, after build): the BF16 kernel tests, `run --verify` BF16
#   beside FP16 on a small grid, compute-sanitizer memcheck of one small BF16 shape per kernel,
#   and a speed table of BF16 against FP16 at large shapes (target: within 3%).
#   and, only when named: advice (the advice and the tail roof judged on measured pairs)
#   and, named only: xu (issue 23's acceptance: `build xu`, ~3 min)
#   and, named only: sets (the bundled kernels at three held-out shapes, FP16 and BF16, under
#   both counter sets: the same lever, counted exponentials against the model; ~40 s)
#   and, named only: clocks (the SM clock `run` samples while it times, against ncu's cycles of
#   the same kernel over our time; ~1 min)
#
# Everything goes under $OUT (or out/device-check/): logs, reports, summary.txt. The summary's
# tables are printed last. Never changes clocks: ncu always runs with --clock-control none.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
# Everything is written to $work; $OUT (at most 8 files come back from the device tool) gets
# summary.txt, logs.tar.xz and the counter fixture.
final="${OUT:-$repo/out/device-check}"
work="${WORK_DIR:-/tmp/device-check}"
rm -rf "$work"
mkdir -p "$final" "$work"
out="$work"
stages="${*:-build test sanitize fixture fidelity cost calibrate verdicts l1probe corners profile bf16 bench}"
summary="$out/summary.txt"
: >"$summary"
has() { [[ " $stages " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$out/gpu.txt" 2>&1
note "gpu: $(tail -1 "$out/gpu.txt")"

if has build; then
  t=$(seconds)
  device_build "$out/build.log"
  rc=$?
  note "build: rc=$rc in $(elapsed "$t") s"
  if [ $rc -ne 0 ]; then grep -E "error|Error" "$out/build.log" | head -30; exit 1; fi
fi

if has test; then
  t=$(seconds)
  ctest --test-dir "$build" --output-on-failure -j 8 >"$out/ctest.log" 2>&1
  note "ctest: rc=$? in $(elapsed "$t") s; $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E "Failed|Not Run|\*\*\*" "$out/ctest.log" | head -20 | tee -a "$summary"
fi

if has sanitize; then
  t=$(seconds)
  for check in memcheck racecheck; do
    ROOFLINE_GPU_TEST_SMALL=1 compute-sanitizer --tool "$check" --error-exitcode 9 \
      "$build/tests/gpu/gpu_kernel_tests" >"$out/sanitize_kernels_$check.log" 2>&1
    note "compute-sanitizer $check (kernel tests, small shapes): rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_kernels_$check.log" | tail -1)"
  done
  compute-sanitizer --tool memcheck --error-exitcode 9 "$tool" run --no-counters --seq 17,100 \
    --pass fwd,bwd --reps 2 --warmup 0 --verify --json "$out/sanitize_run.json" \
    >"$out/sanitize_run_memcheck.log" 2>&1
  note "compute-sanitizer memcheck (cuflash-roofline run --verify, N 17 and 100, fwd+bwd): rc=$? $(grep 'ERROR SUMMARY' "$out/sanitize_run_memcheck.log" | tail -1)"
  note "sanitize: $(elapsed "$t") s"
fi

if has fixture; then
  # The seed sweep with counters: the cost of our counters, and the CI fixture.
  mkdir -p "$out/fixture"
  t=$(seconds)
  "$tool" run --counters --counter-set full --json "$out/fixture/report.json" --save-counter-data "$out/fixture" \
    >"$out/sweep_counters.txt" 2>"$out/sweep_counters.err"
  rc=$?
  ours_counters=$(elapsed "$t")
  note "seed sweep with the full counter set: rc=$rc, whole process ${ours_counters} s"
  cat "$out/sweep_counters.txt" "$out/sweep_counters.err" | tee -a "$summary"
  (cd "$out/fixture" && tar -cJf ../gh100_seed_sweep.tar.xz counter_data.bin fixture.json report.json)
fi

metrics=$("$tool" metrics --chip GH100 --list 2>/dev/null)

if has fidelity; then
  t=$(seconds)
  "$tool" run --counters --seq 4096,16384 --json "$out/fidelity_ours.json" >"$out/fidelity_ours.txt" 2>&1
  # Kernel replay, caches flushed before each kernel, one launch per point (the binary wraps
  # its first timed launch in cudaProfilerStart/Stop when counters are off).
  ncu --clock-control none --cache-control all --profile-from-start off --metrics "$metrics" \
    --csv --page raw "$tool" run --no-counters --seq 4096,16384 --reps 1 --warmup 0 \
    >"$out/fidelity_ncu.csv" 2>"$out/fidelity_ncu.err"
  note "ncu (kernel replay): rc=$? ($(grep -c '^"' "$out/fidelity_ncu.csv") csv lines)"
  python3 scripts/ncu_compare.py "$out/fidelity_ours.json" "$out/fidelity_ncu.csv" \
    >"$out/fidelity.txt" 2>&1
  note "fidelity: $(elapsed "$t") s"
  cat "$out/fidelity.txt" | tee -a "$summary"
fi

if has cost; then
  t=$(seconds); "$tool" run --no-counters >/dev/null 2>&1; plain=$(elapsed "$t")
  t=$(seconds); "$tool" run --counters >"$out/cost_ours.txt" 2>&1; ours=$(elapsed "$t")
  grep "counters:" "$out/cost_ours.txt" | tee -a "$summary"
  t=$(seconds); "$tool" run --counters --counter-set full >/dev/null 2>&1; ours_full=$(elapsed "$t")
  t=$(seconds)
  ncu --clock-control none --profile-from-start off --set roofline -f -o "$out/ncu_roofline" \
    "$tool" run --no-counters >"$out/ncu_roofline.log" 2>&1
  ncu_roofline=$(elapsed "$t")
  t=$(seconds)
  ncu --clock-control none --profile-from-start off --metrics "$metrics" -f -o "$out/ncu_metrics" \
    "$tool" run --no-counters >"$out/ncu_metrics.log" 2>&1
  ncu_metrics=$(elapsed "$t")
  python3 - "$plain" "$ours" "$ncu_roofline" "$ncu_metrics" "$ours_full" <<'PY' | tee -a "$summary"
import sys
plain, ours, roof, met, full = map(float, sys.argv[1:])
print("cost, the seed sweep (run's default points), whole process wall time:")
print(f"  run --no-counters                    {plain:7.2f} s")
print(f"  run with counters (ours, default)    {ours:7.2f} s   added {ours - plain:6.2f} s")
print(f"  run --counter-set full (ours)        {full:7.2f} s   added {full - plain:6.2f} s")
print(f"  ncu --set roofline, one launch/point {roof:7.2f} s   added {roof - plain:6.2f} s")
print(f"  ncu --metrics (our default list)     {met:7.2f} s   added {met - plain:6.2f} s")
print(f"  ncu roofline / ours: {roof / ours:.1f}x whole run, {(roof - plain) / max(ours - plain, 1e-3):.1f}x added")
print(f"  ncu our-list / ours: {met / ours:.1f}x whole run, {(met - plain) / max(ours - plain, 1e-3):.1f}x added")
PY
fi

if has calibrate; then
  # Measured ceilings, twice (agreement between runs), each with its wall time; then one
  # sweep judged against them.
  for i in 1 2; do
    t=$(seconds)
    "$tool" calibrate -o "$out/calibration_$i.json" >"$out/calibrate_$i.txt" 2>"$out/calibrate_$i.err"
    note "calibrate run $i: rc=$? in $(elapsed "$t") s (whole process)"
  done
  cat "$out/calibrate_1.txt" | tee -a "$summary"
  python3 - "$out/calibration_1.json" "$out/calibration_2.json" <<'PY' | tee -a "$summary"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"calibration agreement ({a['device']['name']}, spec {a['spec']}):")
print(f"  {'kernel':<12} {'run 1':>10} {'run 2':>10} {'unit':<8} {'diff':>7}  {'MHz 1':>6} {'MHz 2':>6}")
rate = lambda m: m["work"] / sorted(m["samples_seconds"])[len(m["samples_seconds"]) // 2]
mb = {m["id"]: m for m in b["measurements"]}
for m in a["measurements"]:
    n = mb.get(m["id"])
    if n is None:
        continue
    unit, scale = ("TFLOP/s", 1e12) if m["unit"] == "flops" else ("GB/s", 1e9)
    r1, r2 = rate(m) / scale, rate(n) / scale
    print(f"  {m['id']:<12} {r1:10.1f} {r2:10.1f} {unit:<8} {100 * (r2 - r1) / r1:+6.2f}%"
          f"  {m['sm_clock_mhz']:6.0f} {n['sm_clock_mhz']:6.0f}")
print(f"  durations: {a['duration_seconds']:.1f} s, {b['duration_seconds']:.1f} s (measuring only)")
PY
  "$tool" run --no-counters --seq 16384 --kernel flash-v2,standard --no-causal --ceilings calibrated \
    --calibration "$out/calibration_1.json" --json "$out/run_calibrated.json" \
    >"$out/run_calibrated.txt" 2>&1
  note "run --ceilings calibrated: rc=$?"
  cat "$out/run_calibrated.txt" | tee -a "$summary"
fi

if has verdicts; then
  # Issue 9's acceptance: the --no-counters regime against the counted one, and the
  # cache-aware model's DRAM bytes against the counted ones, on 40 workloads off the seed sweep;
  # the counted rows projected onto every spec (utilisation <= 100%) and onto the H100 SXM.
  t=$(seconds)
  python3 scripts/model_vs_counters.py --tool "$tool" --out "$out/verdicts" --projection \
    >"$out/verdicts.txt" 2>&1
  note "verdicts (scripts/model_vs_counters.py): rc=$? in $(elapsed "$t") s"
  grep -E "^(NO |[0-9]+ workloads|strictly|[0-9]+ compute-bound|utilisation above|  )|\| NO" \
    "$out/verdicts.txt" | tee -a "$summary"
fi

if has l1probe; then
  # What each kernel of `standard` moves through L1 at odd N (cuBLAS's mma.sync fallback) and at
  # N % 8 == 0 (wgmma), per kernel, from ncu: the evidence behind the model's L1 bytes for it
  # (lib/core/model/model_l1.cpp). Caches flushed, clocks untouched, one launch per point.
  t=$(seconds)
  l1_metrics=l1tex__t_bytes.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum
  # L1PROBE_SHAPES: "B H d N[,N...]" entries separated by ';' (default: the seed-40 shapes).
  IFS=';' read -r -a l1_shapes <<<"${L1PROBE_SHAPES:-1 3 64 777,5001;1 1 64 65537;4 16 32 2047;1 3 64 4096}"
  for shape in "${l1_shapes[@]}"; do
    set -- $shape
    ncu --clock-control none --cache-control all --profile-from-start off --metrics "$l1_metrics" \
      --csv --page raw "$tool" run --no-counters --kernel standard --batch "$1" --heads "$2" \
      --head-dim "$3" --seq "$4" --pass fwd,bwd --reps 1 --warmup 0 \
      >"$out/l1probe_b$1h$2d$3_n${4//,/_}.csv" 2>"$out/l1probe_b$1h$2d$3_n${4//,/_}.err"
    note "l1probe B$1 H$2 d$3 N$4: rc=$? ($(grep -c '^"' "$out/l1probe_b$1h$2d$3_n${4//,/_}.csv") csv lines)"
  done
  note "l1probe: $(elapsed "$t") s"
fi

if has corners; then
  # Verification at exact zeros (dK = 0 at N = 1) and a sweep of which no point can run.
  "$tool" run --verify --seq 1 --pass bwd --reps 3 >"$out/corner_n1.txt" 2>&1
  note "run --verify --seq 1 --pass bwd: rc=$? (expect 0); $(grep -c incorrect "$out/corner_n1.txt") rows incorrect"
  "$tool" run --seq 4096 --batch 100000 --heads 64 --kernel standard --json "$out/none.json" \
    >"$out/corner_none.txt" 2>"$out/corner_none.err"
  note "run where no point fits: rc=$? (expect 2); $(head -1 "$out/corner_none.err"); json written: $([ -e "$out/none.json" ] && echo yes || echo no)"
fi

if has profile; then
  # Issue 12's acceptance; PROFILE_SKIP_* leave legs out (profile_acceptance.sh says which).
  t=$(seconds)
  OUT="$out/profile" WORK_DIR=/tmp/profile-acceptance BUILD_DIR="$build" \
    bash scripts/profile_acceptance.sh nobuild >"$out/profile.log" 2>&1
  note "profile acceptance: rc=$? in $(elapsed "$t") s"
  sed -n '/== cost/,/== profile table/p' "$out/profile/summary.txt" 2>/dev/null | tee -a "$summary"
  grep -E "^(ctest|profile|program|ncu|plot|compare)" "$out/profile/summary.txt" | tee -a "$summary"
fi

if has advice; then
  # Advice on pairs whose answer is known (standard -> flash-v3, flash-v1 -> flash-v2,
  # flash-v2 -> flash-v3), at B4 H16 N2048, d 64 and 128, both masks and passes; and the tail
  # roof on grids below two waves (B1 H2 and B2 H8, N 1024 and 2048). Default counters.
  t=$(seconds)
  for d in 64 128; do
    "$tool" -q run --batch 4 --heads 16 --seq 2048 --head-dim "$d" --pass fwd,bwd --reps 10 \
      --json "$out/advice_d$d.json" >"$out/advice_d$d.txt" 2>&1
    note "run B4 H16 N2048 d$d (every kernel, fwd+bwd): rc=$?"
    for bh in "1 2" "2 8"; do
      set -- $bh
      "$tool" -q run --kernel flash-v2,flash-v3 --batch "$1" --heads "$2" --seq 1024,2048 \
        --head-dim "$d" --pass fwd,bwd --reps 10 --json "$out/tail_b$1h$2_d$d.json" \
        >"$out/tail_b$1h$2_d$d.txt" 2>&1
      note "run flash-v2,flash-v3 B$1 H$2 N1024,2048 d$d: rc=$?"
    done
  done
  python3 scripts/advice_check.py "$out"/advice_d*.json "$out"/tail_*.json >"$out/advice.txt" 2>&1
  note "advice and tail roof: $(elapsed "$t") s"
  cat "$out/advice.txt" >>"$summary"
  "$tool" show --view table "$out/advice_d128.json" >"$out/advice_d128_table.txt" 2>&1
fi

if has sets; then
  t=$(seconds)
  mkdir -p "$out/sets"
  i=0
  for shape in "--batch 2 --heads 8 --seq 3000 --head-dim 64" \
    "--batch 1 --heads 16 --seq 1536 --head-dim 128" "--batch 4 --heads 4 --seq 5000 --head-dim 128"; do
    i=$((i + 1))
    for dt in fp16 bf16; do
      for set in roofline full; do
        # shellcheck disable=SC2086
        "$tool" run $shape --dtype "$dt" --pass fwd,bwd --reps 3 --rounds 1 --warmup 1 \
          --counter-set "$set" --json "$out/sets/s${i}_${dt}_${set}.json" \
          >"$out/sets/s${i}_${dt}_${set}.txt" 2>&1 || note "sets: shape $i $dt $set: rc=$?"
      done
    done
  done
  python3 scripts/counter_sets_check.py "$tool" "$out/sets" | tee -a "$summary"
  note "sets: $(elapsed "$t") s"
fi

if has xu; then
  # Issue 23: the exponential unit (XU) and shared memory. Counted XU instructions against the
  # model's exponentials ÷ 32 and counted shared wavefronts against ncu's (by operation); no
  # row above its XU roof; `calibrate`'s XU rate against the spec at the running clock;
  # flash-v3 d64 forward: XU roof against tensor roof; d128 projected onto the B200. Clocks are
  # never changed (ncu --clock-control none).
  t=$(seconds)
  mkdir -p "$out/xu"
  xu_shape=(--batch 2 --heads 8 --seq 4096 --pass fwd,bwd --reps 3 --warmup 1)
  for d in 64 128; do
    "$tool" run --counters --counter-set full --kernel flash-v2,flash-v3 --head-dim "$d" \
      "${xu_shape[@]}" --json "$out/xu/counted_d$d.json" >"$out/xu/counted_d$d.txt" 2>&1
    note "xu: run --counter-set full d$d: rc=$?"
    # The same points under ncu, flash-v3 only (wgmma): shared wavefronts by operation, XU.
    ncu --clock-control none --profile-from-start off --csv --page raw \
      --metrics sm__inst_executed_pipe_xu.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum \
      "$tool" run --no-counters --kernel flash-v3 --head-dim "$d" --batch 2 --heads 8 --seq 4096 \
      --pass fwd,bwd --reps 1 --warmup 0 --json "$out/xu/ncu_points_d$d.json" \
      >"$out/xu/ncu_d$d.csv" 2>"$out/xu/ncu_d$d.err"
    note "xu: ncu d$d: rc=$? ($(grep -c '^"' "$out/xu/ncu_d$d.csv") csv lines)"
  done
  "$tool" calibrate -o "$out/xu/calibration.json" >"$out/xu/calibrate.txt" 2>&1
  note "xu: calibrate: rc=$?"
  grep -E "XU|roof" "$out/xu/calibrate.txt" | tee -a "$summary"
  # Projection onto the B200 of flash-v3 d128 (forward and backward), from H200 timings and
  # the full set's counts (XU instructions, shared wavefronts: the B200's shared-memory roof).
  "$tool" run --counters --counter-set full --gpu b200 --kernel flash-v3 --head-dim 128 \
    --batch 4 --heads 16 \
    --seq 8192 --no-causal --pass fwd,bwd --reps 3 --json "$out/xu/b200.json" \
    >"$out/xu/b200.txt" 2>&1
  note "xu: run --gpu b200: rc=$?"
  # The SASS of the XU micro-kernel: 128 MUFU.EX2 per loop trip unless ptxas merged chains.
  cuobjdump -sass "$tool" 2>/dev/null | awk '/Function : .*exp2_kernel/{f=1;next} /Function :/{f=0} f' \
    >"$out/xu/exp2_kernel.sass"
  note "xu: exp2 micro-kernel SASS: $(grep -c 'MUFU.EX2' "$out/xu/exp2_kernel.sass") MUFU.EX2 (expect 128 per trip, plus any of a peeled trip)"
  python3 scripts/xu_check.py "$out/xu" | tee -a "$summary"
  note "xu: $(elapsed "$t") s"
fi

if has clocks; then
  # The SM clock while timed (NVML, sampled every ms; the row's sm_clock_timed_mhz, which the
  # verdict takes as the measured clock when counters are off) against the clock our time
  # implies: ncu's elapsed SM cycles of the same kernel (sm__cycles_elapsed.max; a compute-bound
  # kernel's cycle count hardly moves with the clock) over our median time. Each point runs
  # `--settle 1` first, so the timed launches are at the clock the kernel holds under load.
  t=$(seconds)
  mkdir -p "$out/clocks"
  i=0
  for shape in "4 32 128 8192 --no-causal fwd" "1 16 128 16384 --no-causal fwd" \
    "4 32 128 8192 --causal bwd" "8 16 64 2048 --no-causal fwd" "16 8 64 1024 --causal bwd"; do
    read -r b h d n mask pass <<<"$shape"
    i=$((i + 1))
    point=(--kernel flash-v3 --batch "$b" --heads "$h" --head-dim "$d" --seq "$n" "$mask" --pass "$pass")
    "$tool" run --no-counters --settle 1 --rounds 1 --reps 20 "${point[@]}" \
      --json "$out/clocks/ours_$i.json" >"$out/clocks/ours_$i.txt" 2>&1
    ncu --clock-control none --profile-from-start off --csv --page raw --print-units base \
      --metrics sm__cycles_elapsed.max,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
      "$tool" run --no-counters --reps 1 --warmup 1 "${point[@]}" --json "$out/clocks/ncu_points_$i.json" \
      >"$out/clocks/ncu_$i.csv" 2>"$out/clocks/ncu_$i.err"
    note "clocks: point $i ($shape): ncu rc=$?"
  done
  python3 - "$out/clocks" "$i" <<'PY' | tee -a "$summary"
import csv, json, sys
folder, count = sys.argv[1], int(sys.argv[2])
print("clocks: SM clock while timed (NVML median) against ncu's cycles / our median time")
print(f"  {'point':<34} {'ours ms':>9} {'NVML MHz':>9} {'limit':<10} {'ncu cycles':>12} "
      f"{'implied MHz':>11} {'NVML/implied':>12} {'ncu MHz':>8}")
for i in range(1, count + 1):
    row = json.load(open(f"{folder}/ours_{i}.json"))["rows"][0]
    w, t = row["workload"], row["timing"]
    label = (f"B{w['batch']} H{w['heads']} d{w['head_dim']} N{w['seq_len']} "
             f"{'causal' if w['causal'] else 'full'} {w['pass']}")
    lines = [l for l in open(f"{folder}/ncu_{i}.csv") if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    # Every kernel of the point (the backward's preprocessing too: our time covers them all),
    # after the units line.
    data = [r for r in rows if r.get("ID", "").strip().isdigit()]
    if not data or not t:
        print(f"  {label:<34} no ncu row or no timing")
        continue
    units = next((r for r in rows if not r.get("ID", "").strip()), {})
    scale = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3,
             "ms": 1e-3, "second": 1.0, "s": 1.0}[units.get("gpu__time_duration.sum", "nsecond")]
    number = lambda r, k: float(r[k].replace(",", ""))
    cycles = sum(number(r, "sm__cycles_elapsed.max") for r in data)
    ncu_hz = cycles / sum(number(r, "gpu__time_duration.sum") * scale for r in data)
    seconds = t["median_seconds"]
    implied = cycles / seconds / 1e6
    nvml = t.get("sm_clock_timed_mhz") or 0
    print(f"  {label:<34} {seconds * 1e3:9.3f} {nvml:9.0f} {t.get('clock_limit') or '-':<10} "
          f"{cycles:12.0f} {implied:11.0f} {nvml / implied:12.3f} {ncu_hz / 1e6:8.0f}")
PY
  note "clocks: $(elapsed "$t") s"
fi

if has bf16; then
  t=$(seconds)
  mkdir -p "$out/bf16"
  "$build/tests/gpu/gpu_kernel_tests" -tc='*BF16*' >"$out/bf16/gpu_tests.log" 2>&1
  note "bf16 gpu tests (gpu_kernel_tests -tc='*BF16*'): rc=$? $(grep -E '^\[doctest\] (test cases|assertions)' "$out/bf16/gpu_tests.log" | tr '\n' ' ')"
  grep -E "ERROR|FAILED" "$out/bf16/gpu_tests.log" | head -10 | tee -a "$summary"
  # --verify on a small grid, both dtypes: standard, flash-v2, flash-v3; fwd and bwd, causal and
  # not, d 64 and 128, an aligned and a ragged N.
  for dtype in fp16 bf16; do
    for d in 64 128; do
      "$tool" run --no-counters --verify --dtype "$dtype" --kernel standard,flash-v2,flash-v3 \
        --batch 2 --heads 4 --head-dim "$d" --seq 256,1000 --pass fwd,bwd --reps 2 --warmup 1 \
        --json "$out/bf16/verify_${dtype}_d$d.json" >"$out/bf16/verify_${dtype}_d$d.txt" 2>&1
      note "bf16 verify: run --verify --dtype $dtype d$d: rc=$?"
    done
  done
  python3 - "$out"/bf16/verify_*.json <<'PY' | tee -a "$summary"
import json, sys
rows = {}
for path in sys.argv[1:]:
    try:
        report = json.load(open(path))
    except (OSError, ValueError) as error:
        print("bf16 verify: cannot read", path, error)
        continue
    for r in report["rows"]:
        w = r["workload"]
        key = (r["kernel"], w["head_dim"], w["seq_len"], "causal" if w["causal"] else "full", w["pass"])
        v = r.get("verification") or {}
        rows.setdefault(key, {})[w.get("dtype", "fp16")] = (r["status"], v.get("relative_l2_error"),
                                                           v.get("fp16_relative_l2_error"))
print("bf16 verify: kernel d N mask pass | fp16 status rel-L2 (plain) | bf16 status rel-L2 (plain)")
bad = 0
for key in sorted(rows):
    cells = []
    for dtype in ("fp16", "bf16"):
        status, err, plain = rows[key].get(dtype, ("missing", None, None))
        bad += status not in ("ok", "counters_unavailable")
        fmt = lambda x: "%.2e" % x if isinstance(x, (int, float)) else "-"
        cells.append("%-9s %s (%s)" % (status, fmt(err), fmt(plain)))
    print("  %-9s d%-3d N%-5d %-6s %s | %s | %s" % (key + tuple(cells)))
print("bf16 verify: %d rows, %d not ok" % (2 * len(rows), bad))
PY
  # memcheck: one small BF16 shape per kernel, forward and backward, verified.
  compute-sanitizer --tool memcheck --error-exitcode 9 "$tool" run --no-counters --dtype bf16 \
    --kernel standard,flash-v2,flash-v3 --batch 1 --heads 2 --head-dim 64 --seq 130 --causal \
    --pass fwd,bwd --reps 1 --warmup 0 --verify --json "$out/bf16/sanitize.json" \
    >"$out/bf16/sanitize_memcheck.log" 2>&1
  note "bf16 compute-sanitizer memcheck (run --verify --dtype bf16, B1 H2 N130 d64 causal, fwd+bwd, standard/flash-v2/flash-v3): rc=$? $(grep 'ERROR SUMMARY' "$out/bf16/sanitize_memcheck.log" | tail -1)"
  # Speed: FP16 and BF16 processes alternate (fp16, bf16, bf16, fp16) so that clock drift
  # falls on both; each cell is the better of its dtype's two medians.
  for shape in "4 16 128 8192" "8 16 64 4096"; do
    read -r b h d n <<<"$shape"
    for dtype in fp16 bf16 bf16 fp16; do
      i=$(ls "$out/bf16" | grep -c "^speed_${dtype}_d${d}_")
      "$tool" run --no-counters --reps 10 --dtype "$dtype" --kernel standard,flash-v2,flash-v3 \
        --batch "$b" --heads "$h" --head-dim "$d" --seq "$n" --pass fwd,bwd \
        --json "$out/bf16/speed_${dtype}_d${d}_$i.json" >"$out/bf16/speed_${dtype}_d${d}_$i.txt" 2>&1 ||
        note "bf16 speed: run --dtype $dtype B$b H$h d$d N$n failed (rc=$?)"
    done
  done
  python3 - "$out"/bf16/speed_*.json <<'PY' | tee -a "$summary"
import json, sys
best = {}
for path in sys.argv[1:]:
    try:
        report = json.load(open(path))
    except (OSError, ValueError):
        continue
    for r in report["rows"]:
        w, t = r["workload"], r.get("timing")
        if not t or r["status"] not in ("ok", "counters_unavailable"):
            continue
        flops = 4.0 * w["batch"] * w["heads"] * w["seq_len"] ** 2 * w["head_dim"]
        flops *= (0.5 if w["causal"] else 1.0) * (2.5 if w["pass"] == "bwd" else 1.0)
        key = (r["kernel"], w["batch"], w["heads"], w["head_dim"], w["seq_len"],
               "causal" if w["causal"] else "full", w["pass"])
        rate = flops / t["median_seconds"] / 1e12
        cell = best.setdefault(key, {})
        dtype = w.get("dtype", "fp16")
        cell[dtype] = max(cell.get(dtype, 0.0), rate)
print("bf16 speed (TFLOP/s, FlashAttention convention, best of two alternating processes, --reps 10)")
print("  %-9s %-16s %-6s %-4s %8s %8s %9s" % ("kernel", "B H d N", "mask", "pass", "fp16", "bf16", "bf16/fp16"))
slow = 0
for key in sorted(best):
    cell = best[key]
    a, b = cell.get("fp16"), cell.get("bf16")
    ratio = b / a if a and b else None
    flag = ""
    if ratio is not None and ratio < 0.97:
        flag, slow = "  < 0.97", slow + 1
    print("  %-9s %-16s %-6s %-4s %8s %8s %9s%s" % (
        key[0], "B%d H%d d%d N%d" % key[1:5], key[5], key[6],
        "%.1f" % a if a else "-", "%.1f" % b if b else "-",
        "%.3f" % ratio if ratio else "-", flag))
print("bf16 speed: %d rows, %d below 0.97 of FP16" % (len(best), slow))
PY
  note "bf16: $(elapsed "$t") s"
fi

if has bench; then
  t=$(seconds)
  "$tool" run --no-counters --reps 10 --batch 1 --heads 8 --head-dim 64 --pass fwd,bwd \
    --json "$out/bench_b1h8d64.json" >"$out/bench_b1h8d64.txt" 2>&1
  "$tool" run --no-counters --reps 10 --batch 4 --heads 16 --head-dim 128 --pass fwd,bwd \
    --json "$out/bench_b4h16d128.json" >"$out/bench_b4h16d128.txt" 2>&1
  python3 scripts/bench_vs_pytorch.py "$out/bench_b1h8d64.json" "$out/bench_b4h16d128.json" \
    --json "$out/bench.json" >"$out/bench.txt" 2>&1
  note "bench: $(elapsed "$t") s"
  cat "$out/bench.txt" >>"$summary"
fi

cp "$summary" "$final/summary.txt"
[ -f "$out/gh100_seed_sweep.tar.xz" ] && cp "$out/gh100_seed_sweep.tar.xz" "$final/"
[ -f "$out/bench.json" ] && cp "$out/bench.json" "$final/"
[ -f "$out/calibration_1.json" ] && cp "$out/calibration_1.json" "$final/"
[ -f "$out/xu/calibration.json" ] && cp "$out/xu/calibration.json" "$final/xu_calibration.json"
(cd "$out" && tar -cJf "$final/logs.tar.xz" --exclude='*.ncu-rep' --exclude='fixture' --exclude='*.tar.xz' .)
echo "==== summary ===="
cat "$summary"
