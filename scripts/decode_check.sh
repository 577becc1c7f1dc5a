#!/usr/bin/env bash
# Issue 41's decode kernel (flash-decode) on a GPU machine, in one call: build, the kernels' GPU
# tests, compute-sanitizer on small decode shapes, the GPU's measured roofs, the bandwidth sweep,
# split-KV off against on, the variants, and the table beside PyTorch (scripts/bench_decode.py).
#
#   OUT=DIR bash scripts/decode_check.sh [stages...]
#   stages (default all, in this order):
#     build gputests sanitize calibrate sweep pairs variants ncu profile bench
#
#   build     device_build of cuflash-roofline and gpu_kernel_tests (and the injection
#             library when the profile stage runs)
#   gputests  ctest -L gpu -R kernels: gpu.kernels, every kernel against the FP32 reference,
#             flash-decode's grid (FP16 and BF16, paged, ragged, split-KV) included
#   sanitize  compute-sanitizer memcheck and racecheck on `run --verify --no-counters` of small
#             decode shapes (B 3, q_len 1 and 8, split-KV off, 3 parts and chosen): a contiguous
#             cache of 300 (d 128) and a ragged paged-16 one (300, 17, 129; d 64)
#   calibrate `calibrate -o $work/cal.json`: the DRAM read bandwidth the sweep is judged against,
#             and its stream curve (a pure read of 4 MiB to 1 GiB timed as `run` times a launch:
#             what share of that bandwidth a cache of each size allows at most; bench's `% stream`
#             column and the advice's bound)
#   sweep     Hq 32, Hkv 32/8/4 (GQA 1/4/8), d 64/128, B 1/8/64, KV 1024/8192/32768/131072, FP16,
#             q_len 1, split-KV chosen, counters on, --ceilings calibrated: one `run` per
#             (B, Hkv, d) with --seq as a list, each to its own report; a KV cache (2·B·Hkv·N·d·2
#             bytes) over 24 GB is left out
#   pairs     split-KV off (1) and chosen (0), one `run` per batch (1 and 4), KV 8192 and 32768,
#             Hkv 8, d 128: the table and each row's advice
#   variants  B 8, Hq 32, Hkv 8, d 128, KV 32768, each with --verify: paged 16, paged 256, ragged
#             (--kv-lens), q_len 8 causal, BF16
#   ncu       DRAM bytes and time against ncu (kernel replay, metrics of `metrics --chip GH100`)
#             on B1 Hkv8 d128 KV 1k/8k/32k, B8 Hkv8 d64 KV 8k/32k, B64 Hkv8 d64 KV 8k (split-KV
#             chosen), by scripts/ncu_compare.py, and ncu's time per kernel; then `run --stalls`
#             on B1 Hkv8 d128 KV 32k and B8 Hkv8 d64 KV 8k, their `show --source`
#   profile   `profile` of scripts/programs/decode_loop.py --steps 4 --attention window (a
#             captured decode step, GQA over a full KV cache window, SDPA's fused kernels): the
#             kernels of its attention modules with their DRAM share and advice
#   bench     scripts/bench_decode.py over the sweep's, pairs' and variants' reports and cal.json,
#             the calibration's stream curve beside each row (our columns only, --no-torch, when
#             less than a minute is left)
#
# DEADLINE_S (default 540): a stage (or sweep point) that would not end within this many seconds
# of the start is skipped with a note, and every command is cut off there. DECODE_REPS (5) and
# DECODE_ROUNDS (2) shape the timed runs, DECODE_SANITIZE_TIMEOUT (120) bounds each sanitizer
# process, BENCH_REPS (10) PyTorch's repetitions.
#
# $OUT (or out/decode-check/) gets summary.txt (the bench table last), cal.json, bench.json and
# decode.tar.xz (every report and log but the build's), to keep in tests/data/reports. Never
# changes clocks (ncu runs with --clock-control none). Exit: 4 when the build fails, else 0 (a
# report, not a gate).
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
out="${OUT:-$repo/out/decode-check}"
work="${WORK_DIR:-$repo/out/decode-work}"
reports="$work/reports"
mkdir -p "$out" "$work" "$reports"
summary="$out/summary.txt"
tables="$work/tables.txt"
: >"$summary"
: >"$tables"
deadline=$(($(date +%s) + ${DEADLINE_S:-540}))
stages="${*:-build gputests sanitize calibrate sweep pairs variants ncu profile bench}"
reps="${DECODE_REPS:-5}"
rounds="${DECODE_ROUNDS:-2}"
sanitize_limit="${DECODE_SANITIZE_TIMEOUT:-120}"
bench_reps="${BENCH_REPS:-10}"
cal="$work/cal.json"
shopt -s nullglob

has() { [[ " $stages " == *" $1 "* ]]; }
# left N: seconds a command may run: N, or what is left before the deadline when that is less.
left() {
  local l=$((deadline - $(date +%s)))
  echo $((l > 1 ? (l < $1 ? l : $1) : 1))
}
# due WHAT N: true when N seconds are left before the deadline; else a note that WHAT is skipped.
due() {
  local l=$((deadline - $(date +%s)))
  [ "$l" -ge "$2" ] && return 0
  note "$1: skipped, $l s left before DEADLINE_S (it needs about $2 s)"
  return 1
}
# report_rows check|brief|full REPORT...: each report's rows. check: the statuses and how many
# passed --verify, on one line; brief: the statuses and each row's KV, DRAM GB/s and share of the
# DRAM roof on one line; full: a line per row (time, DRAM, --verify) and its advice below.
report_rows() {
  python3 - "$@" <<'PY'
import collections, json, sys
mode = sys.argv[1]
for path in sys.argv[2:]:
    try:
        rows = json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"  {path.rsplit('/', 1)[-1]}: unreadable ({error})")
        continue
    parts = []
    for r in rows:
        w = r.get("workload") or {}
        a = r.get("analysis") or {}
        t = (r.get("timing") or {}).get("median_seconds")
        c = r.get("counters") or {}
        read = c.get("dram_read_bytes")
        dram = (read + (c.get("dram_write_bytes") or 0)) if isinstance(read, (int, float)) else None
        level = next((l for l in a.get("levels") or [] if l.get("level") == "dram"), {})
        share = (level.get("bandwidth_utilisation") or {}).get("value")
        rate = f"{dram / t / 1e9:.0f} GB/s" if dram is not None and t else "no counters"
        if isinstance(share, (int, float)):
            rate += f" {100 * share:.0f}%"
        kv = f"KV≤{w.get('seq_len')} ragged" if w.get("kv_lens") else f"KV{w.get('seq_len')}"
        if mode == "check":
            continue
        if mode == "brief":
            parts.append(f"{kv} {rate}" if r.get("status") in ("ok", "counters_unavailable")
                         else f"{kv} {r.get('status')}")
            continue
        label = (f"B{w.get('batch')} H{w.get('heads')}/{w.get('kv_heads')} Q{w.get('q_len')} {kv} "
                 f"d{w.get('head_dim')}" + (f" paged{w['page_size']}" if w.get("page_size") else "")
                 + f" split{w.get('kv_splits') or '=auto'} "
                 + ("causal" if w.get("causal") else "full") + f" {w.get('dtype')}")
        v = r.get("verification")
        checked = ("" if not v else "; verify passed" if v.get("passed") else
                   f"; verify FAILED ({v.get('worst_output')}, "
                   f"relative L2 {v.get('relative_l2_error')})")
        time = f"{t * 1e6:.1f} µs" if t else "no time"
        print(f"  {label}: {r.get('status')}, {time}, DRAM {rate} of the roof{checked}")
        if r.get("message"):
            print(f"    message: {r['message']}")
        advice = a.get("advice") or {}
        if advice.get("text"):
            print(f"    advice: {advice['text']}")
    statuses = collections.Counter(r.get("status") for r in rows)
    counted = f"{len(rows)} rows ({', '.join(f'{k} {n}' for k, n in statuses.items())})"
    if mode == "brief":
        print(f"{counted}: " + ", ".join(parts))
    elif mode == "check":
        verified = [r["verification"] for r in rows if r.get("verification")]
        print(f"{counted}, --verify passed in {sum(1 for v in verified if v.get('passed'))} of "
              f"{len(verified)}")
PY
}
finish() {
  cat "$tables" >>"$summary"
  [ -f "$cal" ] && cp "$cal" "$out/cal.json"
  [ -f "$work/bench.json" ] && cp "$work/bench.json" "$out/bench.json"
  tar -C "$work" -cJf "$out/decode.tar.xz" --exclude=build.log . 2>/dev/null
  cat "$summary"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$work/gpu.txt" 2>&1
# COMMIT from the caller where the tree was copied without its history (a device machine's
# copy may carry a stale .git); else git's HEAD.
commit="${COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
note "gpu: $(tail -1 "$work/gpu.txt"); commit $commit"

if has build; then
  t=$(seconds)
  targets=(cuflash-roofline gpu_kernel_tests)
  has profile && targets+=(roofline_inject)  # profile's injection library
  if ! device_build "$work/build.log" "${targets[@]}"; then
    grep -E "error|Error" "$work/build.log" | head -30 >>"$summary"
    note "build failed in $(elapsed "$t" 0) s"
    exit 4
  fi
  note "build: $(elapsed "$t" 0) s"
fi

if has gputests && due gputests 90; then
  t=$(seconds)
  timeout "$(left 240)" ctest --test-dir "$build" -L gpu -R kernels --output-on-failure \
    --timeout 240 >"$work/gputests.log" 2>&1
  rc=$?
  note "ctest -L gpu -R kernels: rc=$rc in $(elapsed "$t" 0) s;" \
    "$(grep -E 'tests passed|tests failed' "$work/gputests.log")"
  grep -E "ERROR|error:|FAILED|Failed|REQUIRE|CHECK\(" "$work/gputests.log" | head -20 |
    tee -a "$summary"
fi

if has sanitize; then
  # NAME:OPTIONS of each small decode problem (B 3, q_len 1 and 8: q_len 8 gives causal and full).
  shapes=("contiguous:--seq 300 --heads 8 --kv-heads 2 --head-dim 128"
    "ragged_paged16:--kv-lens 300,17,129 --page-size 16 --heads 16 --kv-heads 2 --head-dim 64")
  for shape in "${shapes[@]}"; do
    name="${shape%%:*}"
    read -ra options <<<"${shape#*:}"
    for check in memcheck racecheck; do
      due "compute-sanitizer $check ($name)" 30 || continue
      rm -f "$reports/sanitize_${name}_$check.json"
      t=$(seconds)
      timeout "$(left "$sanitize_limit")" compute-sanitizer --tool "$check" --error-exitcode 9 \
        "$tool" run --kernel flash-decode --q-len 1,8 --batch 3 "${options[@]}" --kv-splits 1,3,0 \
        --no-counters --reps 1 --rounds 1 --warmup 0 --verify \
        --json "$reports/sanitize_${name}_$check.json" >"$work/sanitize_${name}_$check.log" 2>&1
      rc=$?
      log="$work/sanitize_${name}_$check.log"
      note "compute-sanitizer $check ($name: ${shape#*:}): rc=$rc in $(elapsed "$t" 0) s;" \
        "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1);" \
        "$(report_rows check "$reports/sanitize_${name}_$check.json")"
    done
  done
fi

if has calibrate && due calibrate 15; then
  rm -f "$cal"
  t=$(seconds)
  timeout "$(left 60)" "$tool" calibrate -o "$cal" >"$work/calibrate.txt" 2>"$work/calibrate.err"
  rc=$?
  note "calibrate: rc=$rc in $(elapsed "$t") s;" \
    "$(grep -iE 'dram' "$work/calibrate.txt" | tr -s ' ' | paste -sd';' -)"
  # The DRAM stream curve (a pure read of 4 MiB to 1 GiB, timed as run times a launch): each
  # size's share of the read bandwidth, what a cache of that size allows at most.
  sed -n '/^DRAM stream/,$p' "$work/calibrate.txt" | grep '^  ' | tr -s ' ' | paste -sd';' - |
    sed 's/^/calibrate: DRAM stream:/' | tee -a "$summary"
  {
    echo "== calibrate: the measured roofs"
    cat "$work/calibrate.txt"
    echo
  } >>"$tables"
fi
# The runs below are judged against the measured roofs when there are some (this call's, or an
# earlier call's on this machine), else against the spec sheet's.
cal_args=()
if [ -f "$cal" ]; then
  cal_args=(--calibration "$cal" --ceilings calibrated)
else
  note "no $cal: the runs below are judged against the spec sheet's ceilings"
fi
timed=(--reps "$reps" --rounds "$rounds")

if has sweep; then
  rm -f "$reports"/sweep_*.json
  t=$(seconds)
  skipped=""
  for kv in 8 4 32; do
    for d in 128 64; do
      for b in 8 1 64; do
        seqs=""
        for n in 1024 8192 32768 131072; do
          if ((2 * b * kv * n * d * 2 <= 24000000000)); then
            seqs+="${seqs:+,}$n"
          else
            skipped+=" B$b/Hkv$kv/d$d/KV$n"
          fi
        done
        [ -n "$seqs" ] || continue
        name="sweep_b${b}_kv${kv}_d${d}"
        due "sweep $name" 20 || break 3
        t1=$(seconds)
        timeout "$(left 120)" "$tool" run --kernel flash-decode --q-len 1 --batch "$b" --heads 32 \
          --kv-heads "$kv" --head-dim "$d" --seq "$seqs" --dtype fp16 --no-causal --kv-splits 0 \
          "${timed[@]}" "${cal_args[@]}" --json "$reports/$name.json" \
          >"$work/$name.txt" 2>"$work/$name.err"
        note "$name: rc=$? in $(elapsed "$t1") s; $(report_rows brief "$reports/$name.json")"
      done
    done
  done
  note "sweep: $(elapsed "$t" 0) s; KV caches over 24 GB left out:${skipped:- none}"
fi

if has pairs; then
  rm -f "$reports"/pairs_*.json
  for b in 1 4; do
    name="pairs_b$b"
    due "pairs B $b" 15 || break
    t=$(seconds)
    timeout "$(left 90)" "$tool" run --kernel flash-decode --q-len 1 --batch "$b" --heads 32 \
      --kv-heads 8 --head-dim 128 --seq 8192,32768 --dtype fp16 --no-causal --kv-splits 1,0 \
      "${timed[@]}" "${cal_args[@]}" --json "$reports/$name.json" \
      >"$work/$name.txt" 2>"$work/$name.err"
    note "$name (split-KV off and chosen): rc=$? in $(elapsed "$t") s"
    {
      echo "== split-KV off (1) and chosen (0), B $b: the table of run"
      cat "$work/$name.txt"
      echo "== the same rows, each with its advice"
      report_rows full "$reports/$name.json"
      echo
    } >>"$tables"
  done
fi

if has variants; then
  rm -f "$reports"/variant_*.json
  variant_list=("paged16:--q-len 1 --seq 32768 --page-size 16 --no-causal"
    "paged256:--q-len 1 --seq 32768 --page-size 256 --no-causal"
    "ragged:--q-len 1 --kv-lens 32768,1024,8192,300,20000,32768,5000,16384 --no-causal"
    "q8_causal:--q-len 8 --seq 32768 --causal"
    "bf16:--q-len 1 --seq 32768 --dtype bf16 --no-causal")
  for variant in "${variant_list[@]}"; do
    name="variant_${variant%%:*}"
    read -ra options <<<"${variant#*:}"
    due "$name" 15 || break
    t=$(seconds)
    timeout "$(left 90)" "$tool" run --kernel flash-decode --batch 8 --heads 32 --kv-heads 8 \
      --head-dim 128 --kv-splits 0 "${options[@]}" --verify "${timed[@]}" "${cal_args[@]}" \
      --json "$reports/$name.json" >"$work/$name.txt" 2>"$work/$name.err"
    note "$name (${variant#*:}): rc=$? in $(elapsed "$t") s"
    report_rows full "$reports/$name.json" | tee -a "$summary"
  done
fi

if has ncu; then
  # flash-decode's counted DRAM bytes and times against Nsight Compute on the same launches
  # (kernel replay, caches flushed before each kernel, the first timed launch of each point:
  # `run --no-counters` wraps it in cudaProfilerStart/Stop), judged by scripts/ncu_compare.py;
  # then the stall pass on two of the points, to say where the short streams lose their time.
  metrics=$("$tool" metrics --chip GH100 --list 2>/dev/null)
  ncu_points=("b1_kv8_d128:--batch 1 --kv-heads 8 --head-dim 128 --seq 1024,8192,32768"
    "b8_kv8_d64:--batch 8 --kv-heads 8 --head-dim 64 --seq 8192,32768"
    "b64_kv8_d64:--batch 64 --kv-heads 8 --head-dim 64 --seq 8192")
  for point in "${ncu_points[@]}"; do
    name="ncu_${point%%:*}"
    read -ra options <<<"${point#*:}"
    due "$name" 40 || break
    t=$(seconds)
    args=(run --kernel flash-decode --q-len 1 --heads 32 --dtype fp16 --no-causal --kv-splits 0
      "${options[@]}")
    timeout "$(left 90)" "$tool" "${args[@]}" "${timed[@]}" "${cal_args[@]}" \
      --json "$reports/$name.json" >"$work/$name.txt" 2>"$work/$name.err"
    rc=$?
    timeout "$(left 180)" ncu --clock-control none --cache-control all --profile-from-start off \
      --metrics "$metrics" --csv --page raw "$tool" "${args[@]}" --no-counters --reps 1 \
      --warmup 0 >"$work/${name}_ncu.csv" 2>"$work/${name}_ncu.err"
    note "$name (${point#*:}): run rc=$rc, ncu rc=$? in $(elapsed "$t") s"
    python3 scripts/ncu_compare.py "$reports/$name.json" "$work/${name}_ncu.csv" 2>&1 |
      tee -a "$summary"
    # ncu's time of each kernel of the split launches (the main kernel and the combine).
    python3 - "$work/${name}_ncu.csv" <<'PY' | tee -a "$summary"
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.DictReader(lines))[1:]
print("  ncu per kernel: " + "; ".join(
    f"{r['Kernel Name'][:28]} {r.get('gpu__time_duration.sum', '?')}" for r in rows))
PY
  done
  for point in "b1_kv8_d128:--batch 1 --kv-heads 8 --head-dim 128 --seq 32768" \
    "b8_kv8_d64:--batch 8 --kv-heads 8 --head-dim 64 --seq 8192"; do
    name="stalls_${point%%:*}"
    read -ra options <<<"${point#*:}"
    due "$name" 20 || break
    t=$(seconds)
    timeout "$(left 60)" "$tool" run --kernel flash-decode --q-len 1 --heads 32 --dtype fp16 \
      --no-causal --kv-splits 0 "${options[@]}" --reps 3 --rounds 1 --stalls "${cal_args[@]}" \
      --json "$reports/$name.json" >"$work/$name.txt" 2>"$work/$name.err"
    note "$name (${point#*:} --stalls): rc=$? in $(elapsed "$t") s"
    "$tool" show "$reports/$name.json" --source >"$work/${name}_show.txt" 2>&1
    head -40 "$work/${name}_show.txt" >>"$tables"
  done
fi

if has profile && due profile 90; then
  # The verdict on a program's own decode: profile a PyTorch decode loop (GQA over a KV cache
  # that is a full window, so that SDPA takes its fused kernels; the step captured as a CUDA
  # graph) and list the kernels of its attention modules (NVTX "...attn") with their DRAM share
  # and advice, the fused attention kernels first.
  t=$(seconds)
  timeout "$(left 240)" "$tool" profile --json "$reports/profile_decode_loop.json" -- \
    python3 scripts/programs/decode_loop.py --steps 4 --attention window \
    >"$work/profile_decode_loop.txt" 2>"$work/profile_decode_loop.err"
  note "profile decode_loop.py --steps 4 --attention window: rc=$? in $(elapsed "$t" 0) s"
  # The recorded report judged (show --json writes each row's analysis and advice).
  "$tool" show "$reports/profile_decode_loop.json" --json "$work/profile_decode_loop_judged.json" \
    >/dev/null 2>>"$work/profile_decode_loop.err"
  python3 - "$work/profile_decode_loop_judged.json" <<'PY' | tee -a "$summary"
import collections, json, re, statistics, sys
try:
    rows = json.load(open(sys.argv[1]))["rows"]
except (OSError, ValueError, KeyError) as error:
    sys.exit(f"  unreadable: {error}")
attention = [r for r in rows if "attn" in str((r.get("launch") or {}).get("nvtx_range"))]
fused = re.compile(r"attn|attention|fmha|flash|splitkv|sdpa|cudnn", re.I)
groups = collections.defaultdict(list)
for r in attention:
    groups[r["kernel"]].append(r)
total = sum((r.get("timing") or {}).get("median_seconds") or 0 for r in attention)
print(f"  {len(rows)} rows, {len(attention)} in attention modules ({total * 1e6:.0f} us), "
      f"{sum(1 for r in attention if fused.search(r['kernel']))} of them fused attention kernels")
def key(item):
    name, group = item
    return (not fused.search(name), -sum((g.get("timing") or {}).get("median_seconds") or 0
                                         for g in group))
for name, group in sorted(groups.items(), key=key)[:6]:
    times = [(g.get("timing") or {}).get("median_seconds") or 0 for g in group]
    shares = []
    for g in group:
        level = next((l for l in (g.get("analysis") or {}).get("levels") or []
                      if l.get("level") == "dram"), {})
        value = (level.get("bandwidth_utilisation") or {}).get("value")
        if isinstance(value, (int, float)):
            shares.append(value)
    first = group[0]
    a = first.get("analysis") or {}
    share = f"{100 * statistics.median(shares):.0f}%" if shares else "?"
    print(f"  {name[:70]}: {len(group)} launches, median {statistics.median(times) * 1e6:.1f} us, "
          f"grid {(first.get('launch') or {}).get('grid')}, DRAM {share} of its bandwidth; "
          f"{a.get('regime')}")
    print(f"    advice: {(a.get('advice') or {}).get('text')}")
PY
fi

if has bench; then
  bench_reports=("$reports"/sweep_*.json "$reports"/pairs_*.json "$reports"/variant_*.json)
  if [ ! -f "$cal" ]; then
    note "bench: skipped, no calibration ($cal)"
  elif [ ${#bench_reports[@]} -eq 0 ]; then
    note "bench: skipped, no report of sweep, pairs or variants in $reports"
  elif due bench 10; then
    bench_args=()
    if [ $((deadline - $(date +%s))) -lt 60 ]; then
      bench_args=(--no-torch)
      note "bench: under a minute left, our columns only (--no-torch)"
    fi
    rm -f "$work/bench.json"
    t=$(seconds)
    timeout "$(left 300)" python3 scripts/bench_decode.py "${bench_reports[@]}" \
      --calibration "$cal" --reps "$bench_reps" "${bench_args[@]}" --json "$work/bench.json" \
      >"$work/bench.txt" 2>"$work/bench.err"
    note "bench_decode.py (${#bench_reports[@]} reports): rc=$? in $(elapsed "$t" 0) s"
    head -5 "$work/bench.err" | tee -a "$summary"
    {
      echo "== the decode table beside PyTorch (scripts/bench_decode.py)"
      cat "$work/bench.txt"
    } >>"$tables"
  fi
fi
