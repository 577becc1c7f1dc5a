#!/usr/bin/env bash
# Energy on the device, in two stages. Builds first unless the build is there.
#  1. Repeatable? The seed sweep (`run`, its default points, no counters) twice with
#     --energy, judged row by row by scripts/energy_repeat.py (every row within 3%), after a
#     third, unjudged sweep that brings the board to the temperature it holds under the sweep
#     (a cold board's first sweep drew 0.5-4% less than the next: leakage grows with heat);
#     the reports keep each row's temperature. WARMUP=0 skips the warm-up.
#  2. Does the energy roofline's model hold? `calibrate --energy -o cal.json` (the coefficients
#     from the micro-kernels), then `run --energy --counters --counter-set full --calibration
#     cal.json` on six shapes no coefficient was fitted on (flash-v3 fwd d128 N8192 and bwd d128
#     N4096, flash-v2 bwd d64 N4096 and fwd BF16 d128 N4096, standard fwd d64 N2048, flash-decode
#     B8 H32/8 KV32768 d128; all non-causal), judged by scripts/energy_model.py:
#     modelled against measured joules per row (every row within 10%); and by
#     scripts/power_cap_check.py: each compute roof of cal.json burst vs at the power cap (with
#     their clocks), and no measured row of the three runs above the roof of its pipe.
#
#   bash scripts/energy_check.sh            # both stages
#   STAGES=model bash scripts/energy_check.sh  # stage 2 only (STAGES=repeat: stage 1 only)
#
# $OUT (or out/energy-check/) gets energy_summary.txt and energy.tar.xz (the reports, the
# calibration and the tables), to keep in tests/data/reports. Never changes clocks.
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
stages="${STAGES:-repeat,model}"
if [[ ",$stages," == *",repeat,"* ]]; then
  echo "== stage 1: run --energy repeatable" | tee -a "$summary"
  sweeps="1 2"
  [ "${WARMUP:-1}" = 0 ] || sweeps="0 1 2"
  for k in $sweeps; do
    t=$(seconds)
    "$tool" run --no-counters --energy --json "$work/sweep_$k.json" \
      >"$work/sweep_$k.txt" 2>&1
    rc=$?
    note=""
    [ "$k" = 0 ] && note=" (warm-up, not judged)"
    echo "sweep $k$note: rc=$rc in $(elapsed "$t" 1) s" | tee -a "$summary"
  done
  python3 scripts/energy_repeat.py "$work/sweep_1.json" "$work/sweep_2.json" >>"$summary" 2>&1
fi
if [[ ",$stages," == *",model,"* ]]; then
  echo "== stage 2: the energy model on held-out shapes" | tee -a "$summary"
  t=$(seconds)
  "$tool" calibrate --energy -o "$work/cal.json" >"$work/calibrate.txt" 2>&1
  echo "calibrate --energy: rc=$? in $(elapsed "$t" 1) s" | tee -a "$summary"
  cat "$work/calibrate.txt" >>"$summary"
  # name|arguments: shapes that none of the micro-kernels the coefficients come from ran.
  # The first three since the model was built; the others add a backward on wgmma, BF16 and
  # the DRAM-bound decode kernel (its cache streamed at the DRAM roof: the byte's price alone).
  shapes=(
    "v3_fwd_d128_n8192|--kernel flash-v3 --pass fwd --head-dim 128 --seq 8192"
    "v2_bwd_d64_n4096|--kernel flash-v2 --pass bwd --head-dim 64 --seq 4096"
    "standard_fwd_d64_n2048|--kernel standard --pass fwd --head-dim 64 --seq 2048"
    "v3_bwd_d128_n4096|--kernel flash-v3 --pass bwd --head-dim 128 --seq 4096"
    "v2_fwd_bf16_d128_n4096|--kernel flash-v2 --pass fwd --head-dim 128 --seq 4096 --dtype bf16"
    "decode_b8_kv32768|--kernel flash-decode --q-len 1 --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --seq 32768 --kv-splits 0"
  )
  reports=()
  for shape in "${shapes[@]}"; do
    name=${shape%%|*}
    read -r -a args <<<"${shape#*|}"
    t=$(seconds)
    "$tool" run "${args[@]}" --no-causal --energy --counters --counter-set full \
      --calibration "$work/cal.json" --columns kernel,workload,time,energy,energy-model \
      --json "$work/model_$name.json" >"$work/model_$name.txt" 2>&1
    echo "run $name: rc=$? in $(elapsed "$t" 1) s" | tee -a "$summary"
    cat "$work/model_$name.txt" >>"$summary"
    reports+=("$work/model_$name.json")
  done
  python3 scripts/energy_model.py "${reports[@]}" --limit 0.10 >>"$summary" 2>&1
  echo "== stage 2b: the power-capped roofs (calibrate --energy implies --power-cap)" |
    tee -a "$summary"
  python3 scripts/power_cap_check.py "$work/cal.json" "${reports[@]}" >>"$summary" 2>&1
fi
tar -C "$work" -cJf "$out/energy.tar.xz" --exclude=build.log . 2>/dev/null
cat "$summary"
