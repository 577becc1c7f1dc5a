#!/usr/bin/env bash
# Warp stalls (`run --stalls`, `profile --stalls`) against Nsight Compute's warp-state sampling,
# in one call: build, the GPU tests, then on each point of STALL_POINTS our stall pass and ncu's
# WarpStateStats and SourceCounters sections on the same launch (ncu twice: its own run-to-run
# spread of the instruction ranking), judged by
# scripts/stalls_vs_ncu.py; and the cost of each beside a run of the same points without it.
# Stage `profile`: the same for three kernels of a PyTorch program of our own
# (scripts/programs/stall_mix.py: a cuBLAS GEMM, cuDNN's SDPA backward, an element-wise
# kernel), one launch of each under `profile --stalls` and under ncu (the same launch: its
# regex, --launch-skip and --launch-count 1 in both), and the cost of each against the program
# alone; judged apart (stalls_vs_ncu.py on $WORK_DIR/profile).
#
#   bash scripts/stalls_check.sh [stages...]
#   stages (default all): build gputests stalls sweep profile
#
#   sweep: the seed sweep (`run`'s default points) with and without --stalls (an empty SASS
#   cache, then the warm one) against ncu's two sections on the same launches: the cost
#
#   STALL_POINTS   "KERNEL:PASS:D ..." (default: flash-v2 and flash-v3, fwd and bwd, d 64 and 128)
#   STALL_SHAPE    "B:H:N" of every point (default 4:16:4096), no causal mask, FP16
#   PROFILE_STALL_KERNELS  "LABEL=REGEX ..." of stage profile, each regex searched in the
#                  demangled name by both tools (default: gemm, sdpa_bwd, elementwise below)
#   PROFILE_STALL_SKIP     matching launches skipped first (default 1: the second iteration's)
#   COST_RUNS      stage profile: rounds per kernel, each the program alone, under profile --stalls
#                  (-v: each round's injection phases kept in ours_N_phases.txt) and under ncu;
#                  the medians of each tool's addition to its round's alone run give the cost
#                  (default 3)
#
# $OUT (or out/stalls-check/) gets summary.txt (the judge's tables last), stalls.tar.xz (our
# report, ncu's raw and source pages per point, the logs) and profile_stalls.tar.xz (the same
# for stage profile), to keep in tests/data/reports.
# Never changes clocks: ncu runs with --clock-control none.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
check_folders stalls
cost_runs="${COST_RUNS:-3}"
# median SECONDS...: the middle value (the mean of the two middle ones for an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
stages="${*:-build gputests stalls sweep profile}"
points="${STALL_POINTS:-flash-v2:fwd:64 flash-v2:bwd:64 flash-v2:fwd:128 flash-v2:bwd:128 flash-v3:fwd:64 flash-v3:bwd:64 flash-v3:fwd:128 flash-v3:bwd:128}"
IFS=: read -r B H N <<<"${STALL_SHAPE:-4:16:4096}"

if [[ " $stages " == *" build "* ]]; then
  t=$(seconds)
  if ! device_build "$work/build.log"; then
    tail -30 "$work/build.log" >>"$summary"
    note "build failed"
    exit 4
  fi
  note "build: $(elapsed "$t" 0) s"
fi

if [[ " $stages " == *" gputests "* ]]; then
  t=$(seconds)
  (cd "$build" && ctest -L gpu --output-on-failure) >"$work/gputests.log" 2>&1
  note "ctest -L gpu: rc=$? in $(elapsed "$t" 0) s; $(grep -E 'tests passed|tests failed' "$work/gputests.log")"
fi

if [[ " $stages " == *" stalls "* ]]; then
  n=0
  for p in $points; do
    IFS=: read -r kernel pass d <<<"$p"
    args=(run --kernel "$kernel" --batch "$B" --heads "$H" --seq "$N" --head-dim "$d"
      --no-causal --pass "$pass" --reps 5 --rounds 1)
    # Ours: the same run with and without the stall pass (counters on in both).
    t=$(seconds)
    "$tool" "${args[@]}" --json "$work/plain_$n.json" >"$work/plain_$n.txt" 2>&1
    plain=$(elapsed "$t" 2)
    t=$(seconds)
    "$tool" "${args[@]}" --stalls --json "$work/ours_$n.json" >"$work/ours_$n.txt" 2>&1
    rc=$?
    ours=$(elapsed "$t" 2)
    # ncu: the first timed launch (--no-counters wraps it in cudaProfilerStart/Stop), cold.
    t=$(seconds)
    "$tool" "${args[@]}" --no-counters >/dev/null 2>&1
    alone=$(elapsed "$t" 2)
    t=$(seconds)
    ncu --clock-control none --cache-control all --profile-from-start off \
      --section WarpStateStats --section SourceCounters \
      --metrics "regex:smsp__pcsamp_warps_issue_stalled_.*" -f -o "$work/ncu_$n" \
      "$tool" "${args[@]}" --no-counters >"$work/ncu_$n.log" 2>&1
    ncu_rc=$?
    with_ncu=$(elapsed "$t" 2)
    ncu -i "$work/ncu_$n.ncu-rep" --page raw --csv >"$work/ncu_raw_$n.csv" 2>>"$work/ncu_$n.log"
    ncu -i "$work/ncu_$n.ncu-rep" --page source --csv --print-source sass \
      >"$work/ncu_source_$n.csv" 2>>"$work/ncu_$n.log"
    # ncu once more on the same launch: its own run-to-run spread of the instruction ranking.
    ncu --clock-control none --cache-control all --profile-from-start off \
      --section WarpStateStats --section SourceCounters -f -o "$work/ncu_again_$n" \
      "$tool" "${args[@]}" --no-counters >>"$work/ncu_$n.log" 2>&1
    ncu -i "$work/ncu_again_$n.ncu-rep" --page source --csv --print-source sass \
      >"$work/ncu_source_again_$n.csv" 2>>"$work/ncu_$n.log"
    echo "$p plain=$plain stalls=$ours alone=$alone ncu=$with_ncu rc=$rc ncu_rc=$ncu_rc" >>"$work/cost.txt"
    note "$p: run ${plain} s, run --stalls ${ours} s (rc $rc); alone ${alone} s, under ncu ${with_ncu} s (rc $ncu_rc)"
    n=$((n + 1))
  done
  python3 scripts/stalls_vs_ncu.py "$work" >"$work/judge.txt" 2>&1
  echo "stalls_vs_ncu rc=$?" >>"$work/judge.txt"
  cat "$work/judge.txt" >>"$summary"
  rm -f "$work"/ncu_*.ncu-rep
  tar -C "$work" -cJf "$out/stalls.tar.xz" --exclude=build.log . 2>/dev/null
fi
if [[ " $stages " == *" sweep "* ]]; then
  # The cost on the seed sweep (`run`'s default points): the stall pass against ncu's two
  # sections on the same launches (the first timed launch of each point), with nvdisasm's
  # listings first computed (an empty cache) and then read from the cache of the run before.
  cache="$work/sass_cache"
  rm -rf "$cache"
  t=$(seconds)
  "$tool" run --json "$work/sweep_plain.json" >"$work/sweep_plain.txt" 2>&1
  plain=$(elapsed "$t" 2)
  t=$(seconds)
  ROOFLINE_SASS_CACHE="$cache" "$tool" run --stalls --json "$work/sweep_cold.json" \
    >"$work/sweep_cold.txt" 2>&1
  cold_rc=$?
  cold=$(elapsed "$t" 2)
  t=$(seconds)
  ROOFLINE_SASS_CACHE="$cache" "$tool" run --stalls --json "$work/sweep_warm.json" \
    >"$work/sweep_warm.txt" 2>&1
  warm_rc=$?
  warm=$(elapsed "$t" 2)
  t=$(seconds)
  "$tool" run --no-counters >/dev/null 2>&1
  alone=$(elapsed "$t" 2)
  t=$(seconds)
  ncu --clock-control none --cache-control all --profile-from-start off \
    --section WarpStateStats --section SourceCounters -f -o "$work/ncu_sweep" \
    "$tool" run --no-counters >"$work/ncu_sweep.log" 2>&1
  ncu_rc=$?
  with_ncu=$(elapsed "$t" 2)
  rm -f "$work/ncu_sweep.ncu-rep"
  python3 - "$plain" "$cold" "$warm" "$alone" "$with_ncu" <<'PY' | tee -a "$summary"
import sys
plain, cold, warm, alone, ncu = map(float, sys.argv[1:])
added = ncu - alone
for name, ours in (("empty SASS cache", cold), ("SASS cache warm", warm)):
    print(f"seed sweep, {name}: run --stalls adds {ours - plain:.2f} s to run's {plain:.2f} s; "
          f"ncu's sections add {added:.2f} s to {alone:.2f} s: {(ours - plain) / added:.2f} of "
          f"ncu's ({'PASS' if ours - plain <= added / 5 else 'FAIL'} at a fifth)")
PY
  note "seed sweep: run rc (stalls) $cold_rc/$warm_rc, ncu rc $ncu_rc; $(grep -o 'warp stalls: [^;]*' "$work/sweep_warm.txt" | head -1)"
  tar -C "$work" -cJf "$out/stalls.tar.xz" --exclude=build.log --exclude=sass_cache . 2>/dev/null
fi

if [[ " $stages " == *" profile "* ]]; then
  pwork="$work/profile"
  mkdir -p "$pwork"
  : >"$pwork/cost.txt"
  program=(python3 scripts/programs/stall_mix.py --iterations 3)
  kernels="${PROFILE_STALL_KERNELS:-gemm=nvjet|gemm|xmma sdpa_bwd=bprop elementwise=vectorized_elementwise_kernel.*MulFunctor}"
  skip="${PROFILE_STALL_SKIP:-1}"
  # The program alone: its first run fills the caches PyTorch and the driver keep on disk (10.6 s
  # against 7-9 s for the runs after it on an H100); it is not timed.
  "${program[@]}" >"$pwork/alone_first.txt" 2>&1
  expected=$(grep '^stall_mix:' "$pwork/alone_first.txt")
  note "profile: stall_mix.py: $expected"
  n=0
  for spec in $kernels; do
    label=${spec%%=*}
    regex=${spec#*=}
    # COST_RUNS rounds, each the program alone, under profile --stalls and under ncu, one after
    # the other: one program's wall time varies by seconds from run to run (6.2-8.6 s on an
    # H200), more than our addition, so each tool's addition is taken against the alone run of
    # its own round and the medians of those differences are compared (the first round's
    # reports are the ones judged).
    alone_runs=()
    ours_runs=()
    ncu_runs=()
    ours_added=()
    ncu_added=()
    for k in $(seq "$cost_runs"); do
      t=$(seconds)
      "${program[@]}" >"$pwork/alone.txt" 2>&1
      alone_k=$(elapsed "$t" 2)
      alone_runs+=("$alone_k")
      json="$pwork/ours_$n.json"
      [ "$k" -gt 1 ] && json="$pwork/ours_${n}_again.json"
      t=$(seconds)
      "$tool" -v profile --stalls --kernel-regex "$regex" --launch-skip "$skip" --launch-count 1 \
        --json "$json" -- "${program[@]}" >"$pwork/ours_$n.txt" 2>&1
      rc=$?
      ours_k=$(elapsed "$t" 2)
      ours_runs+=("$ours_k")
      [ "$k" -eq 1 ] && cp "$pwork/ours_$n.txt" "$pwork/ours_${n}_first.txt"
      # Where our seconds went (-v): the injection library's phases and the naming after it.
      grep -E "time in the injection library|stall PCs named" "$pwork/ours_$n.txt" |
        sed "s/^/round $k: /" >>"$pwork/ours_${n}_phases.txt"
      report="$pwork/ncu_$n"
      [ "$k" -gt 1 ] && report="$pwork/ncu_${n}_again"
      t=$(seconds)
      ncu --clock-control none --cache-control all --kernel-name-base demangled \
        -k "regex:$regex" --launch-skip "$skip" --launch-count 1 \
        --section WarpStateStats --section SourceCounters \
        --metrics "regex:smsp__pcsamp_warps_issue_stalled_.*" -f -o "$report" \
        "${program[@]}" >>"$pwork/ncu_$n.log" 2>&1
      ncu_rc=$?
      ncu_k=$(elapsed "$t" 2)
      ncu_runs+=("$ncu_k")
      ours_added+=("$(awk -v a="$ours_k" -v b="$alone_k" 'BEGIN { printf "%.2f", a - b }')")
      ncu_added+=("$(awk -v a="$ncu_k" -v b="$alone_k" 'BEGIN { printf "%.2f", a - b }')")
    done
    mv "$pwork/ours_${n}_first.txt" "$pwork/ours_$n.txt"
    rm -f "$pwork/ours_${n}_again.json" "$pwork/ncu_${n}_again.ncu-rep"
    alone=$(median "${alone_runs[@]}")
    ours=$(median "${ours_runs[@]}")
    with_ncu=$(median "${ncu_runs[@]}")
    ncu -i "$pwork/ncu_$n.ncu-rep" --page raw --csv >"$pwork/ncu_raw_$n.csv" 2>>"$pwork/ncu_$n.log"
    ncu -i "$pwork/ncu_$n.ncu-rep" --page source --csv --print-source sass \
      >"$pwork/ncu_source_$n.csv" 2>>"$pwork/ncu_$n.log"
    same=no
    [ -n "$expected" ] && grep -qxF "$expected" "$pwork/ours_$n.txt" && same=yes
    kernel=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; print(r[0]['kernel'] if r else '-')" "$pwork/ours_$n.json" 2>/dev/null)
    echo "$label plain=$alone stalls=$ours alone=$alone ncu=$with_ncu rc=$rc ncu_rc=$ncu_rc" \
      "added=$(median "${ours_added[@]}") ncu_added=$(median "${ncu_added[@]}")" \
      "alone_runs=$(IFS=/; echo "${alone_runs[*]}") stalls_runs=$(IFS=/; echo "${ours_runs[*]}")" \
      "ncu_runs=$(IFS=/; echo "${ncu_runs[*]}")" >>"$pwork/cost.txt"
    note "profile $label ($regex, launch skip $skip): $kernel; profile --stalls ${ours} s (rc $rc, output as alone: $same); under ncu ${with_ncu} s (rc $ncu_rc); alone ${alone} s"
    n=$((n + 1))
  done
  python3 scripts/stalls_vs_ncu.py "$pwork" >"$pwork/judge.txt" 2>&1
  echo "stalls_vs_ncu rc=$?" >>"$pwork/judge.txt"
  cat "$pwork/judge.txt" >>"$summary"
  rm -f "$pwork"/ncu_*.ncu-rep
  tar -C "$pwork" -cJf "$out/profile_stalls.tar.xz" . 2>/dev/null
fi
cat "$summary"
