#!/usr/bin/env bash
# `profile` inside CUDA graphs, on a GPU machine, in one call: build, the profile GPU tests, then
# for each program (scripts/programs/, and profile_target's two-stream graph)
#   - the program alone: its time and its checksum line;
#   - under `profile` with --graph-nodes counted (the default), timed and off, and the LEGS_EXTRA legs
#     (LABEL:OPTIONS, commas for spaces, e.g. "full:--counter-set,full launch:--replay,launch"):
#     exit code, time, checksum (the program must print what it prints alone), rows by kind;
#   - under `ncu --graph-profiling node` with our metric list: once with --cache-control none,
#     the reference for node time and for cost, and once with --cache-control all (twice for the
#     programs in NCU_TWICE: ncu's own spread), the reference for the counters (ncu flushes the
#     caches before each node, as `profile --cache cold` does before each node's replay;
#     NCU_ALL_RUNS_<program>=3 runs it three times, the third judged by the rule ours are: what
#     the criterion gives ncu against itself);
#     NCU_CACHES ("none all"; empty: no ncu) or NCU_CACHES_<program> choose the runs (without a `none` run,
#     time is judged against the `all` run); `time` in them adds a run with --cache-control none
#     and gpu__time_duration alone (one pass: nothing saved and restored between passes, whose
#     dirty lines the next node would write back), then the time reference before `none`; LEGS
#     replaces the three base legs;
#   - scripts/graph_nodes_vs_ncu.py: node by node, time and counters (and those of plain launches),
#     NVTX, serial graphs; the time each leg and ncu took beside the program alone (its second
#     run: the first fills on-disk caches), and what each adds to it, judged (counted adds at
#     most a tenth of what ncu adds).
#
#   scripts/graph_nodes_check.sh [build] [gputests] [branches] [decode] [gpt] [mlp] [parallel]
#
# Program arguments: DECODE_ARGS, GPT_ARGS, MLP_ARGS, PARALLEL_ARGS (defaults below). NCU_NVTX_decode="decode/"
# filters ncu to the decode replays (our rows are then paired graph nodes only). Writes under
# $OUT (or out/graph-nodes/): summary.txt (the tables), reports.tar.xz (every report and ncu
# CSV judged), logs.tar.xz. Never changes clocks: ncu runs with --clock-control none.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/graph-nodes}"
out="${WORK_DIR:-/tmp/graph-nodes}"
rm -rf "$out"
mkdir -p "$final" "$out/reports"
summary="$final/summary.txt"
: >"$summary"
deadline=$(($(date +%s) + ${DEADLINE_S:-570}))
left() { local l=$((deadline - $(date +%s))); echo $((l > 1 ? (l < $1 ? l : $1) : 1)); }
finish() {
  (cd "$out" && tar -cJf "$final/logs.tar.xz" --exclude=reports --exclude='*.ncu-rep' .)
  (cd "$out/reports" && tar -cJf "$final/reports.tar.xz" .)
}
trap finish EXIT
legs=" ${*:-build gputests branches decode gpt mlp parallel} "
has() { [[ "$legs" == *" $1 "* ]]; }
checksum() { grep -E "checksum" "$1" | tail -1; }
ncu_bin="$(command -v ncu || true)"

if has build; then
  t=$(seconds)
  device_build "$out/build.log"
  rc=$?
  note "build: rc=$rc in $(elapsed "$t") s"
  [ $rc -ne 0 ] && { grep -E "error" "$out/build.log" | head -30 | tee -a "$summary"; exit 1; }
fi
metrics="$("$tool" metrics --chip GH100 --list | paste -sd, -)"

if has gputests; then
  t=$(seconds)
  timeout "$(left 300)" ctest --test-dir "$build" --output-on-failure --timeout 300 -R 'profile' \
    >"$out/ctest_profile.log" 2>&1
  note "ctest -R profile: rc=$? in $(elapsed "$t") s; $(grep -E 'tests passed|tests failed' "$out/ctest_profile.log")"
  grep -E "ERROR|error:|Failed|CHECK|REQUIRE" "$out/ctest_profile.log" | head -30 | tee -a "$summary"
fi

# program NAME COMMAND...: alone, under profile in every leg, under ncu, node by node.
program() {
  local name="$1"
  shift
  local cmd=("$@") t rc
  # Alone twice: the first run fills the caches PyTorch, Triton and the driver keep on disk
  # (a cold first run took 34.5 s where profile's took 27.7 s), so the second is the baseline
  # every cost below is measured against.
  timeout "$(left 200)" "${cmd[@]}" >"$out/${name}_alone_first.txt" 2>&1
  t=$(seconds)
  timeout "$(left 200)" "${cmd[@]}" >"$out/${name}_alone.txt" 2>&1
  rc=$?
  local alone_s
  alone_s=$(elapsed "$t")
  note "== $name: alone rc=$rc in ${alone_s} s (its second run); $(checksum "$out/${name}_alone.txt")"
  local costs="$out/${name}_cost.txt"
  echo "alone $alone_s" >"$costs"
  local reference
  reference="$(checksum "$out/${name}_alone.txt")"
  local leg label options
  for leg in ${LEGS:-counted: timed:--graph-nodes,timed off:--graph-nodes,off} ${LEGS_EXTRA:-}; do
    label="${leg%%:*}"
    options="${leg#*:}"
    options="${options//,/ }"
    t=$(seconds)
    # shellcheck disable=SC2086
    timeout "$(left 240)" "$tool" -v profile $options --json "$out/reports/${name}_$label.json" \
      -- "${cmd[@]}" >"$out/${name}_$label.txt" 2>"$out/${name}_$label.err"
    rc=$?
    echo "profile:$label $(elapsed "$t")" >>"$costs"
    local same="OUTPUT DIFFERS"
    [ "$(checksum "$out/${name}_$label.txt")" = "$reference" ] && same="same output"
    note "$name profile $label (${options:-default}): rc=$rc in $(elapsed "$t") s (alone ${alone_s}); $same;" \
      "$(python3 -c "
import json, collections
rows = json.load(open('$out/reports/${name}_$label.json'))['rows']
kinds = collections.Counter('graph' if r['launch'].get('graph') else r['launch'].get('node_kind', 'launch') for r in rows)
print(len(rows), 'rows', dict(kinds), dict(collections.Counter(r['status'] for r in rows)))" 2>&1)"
    grep -o "time in the injection library.*" "$out/${name}_$label.err" | head -1 | cut -c1-400 | tee -a "$summary"
    grep -E "^\[.*(warn|error)" "$out/${name}_$label.err" | head -4 | tee -a "$summary"
  done
  [ -n "$ncu_bin" ] || { note "$name: no ncu"; return; }
  local nvtx_var="NCU_NVTX_$name" filter=() only=()
  if [ -n "${!nvtx_var:-}" ]; then
    filter=(--nvtx --nvtx-include "${!nvtx_var}")
    only=(--graphs-only)
  fi
  local caches_var="NCU_CACHES_$name" runs=() c
  local repeat_var="NCU_ALL_RUNS_$name" repeat=1 k
  [[ " ${NCU_TWICE:-} " == *" $name "* ]] && repeat=2
  repeat="${!repeat_var:-$repeat}"
  for c in ${!caches_var-${NCU_CACHES-none all}}; do
    runs+=("$c:1")
    if [ "$c" = all ]; then
      for ((k = 2; k <= repeat; ++k)); do runs+=("all:$k"); done
    fi
  done
  [ ${#runs[@]} -gt 0 ] || return 0
  local run cache n
  for run in "${runs[@]}"; do
    cache="${run%%:*}"
    n="${run#*:}"
    local control="$cache" list="$metrics"
    [ "$cache" = time ] && control=none list=gpu__time_duration.sum
    t=$(seconds)
    local csv="$out/reports/${name}_ncu_${cache}$n.csv"
    timeout "$(left 300)" "$ncu_bin" --clock-control none --cache-control "$control" \
      --graph-profiling node "${filter[@]}" --csv --page raw --metrics "$list" "${cmd[@]}" \
      >"$csv" 2>"$out/${name}_ncu_${cache}$n.err"
    rc=$?
    # A run cut by the deadline (or failed) says nothing of what ncu adds: left out of the cost.
    # Nor is its CSV a reference: kept beside the others as .cut.csv.
    if [ $rc -eq 0 ]; then
      echo "ncu:$cache$n $(elapsed "$t")" >>"$costs"
    else
      mv "$csv" "${csv%.csv}.cut.csv"
      csv="${csv%.csv}.cut.csv"
    fi
    note "$name under ncu --graph-profiling node --cache-control $control ${filter[*]}$([ "$cache" = time ] && echo " (gpu__time_duration alone)") (run $n): rc=$rc in $(elapsed "$t") s (alone ${alone_s}); $(grep -c '^"[0-9]' "$csv") results; $(grep checksum "$csv" | head -1)"
  done
  local extra=()
  [ -s "$out/reports/${name}_ncu_all1.csv" ] && extra+=(--counters "$out/reports/${name}_ncu_all1.csv")
  [ -s "$out/reports/${name}_ncu_all2.csv" ] && extra+=(--ncu2 "$out/reports/${name}_ncu_all2.csv")
  [ -s "$out/reports/${name}_ncu_all3.csv" ] && extra+=(--ncu3 "$out/reports/${name}_ncu_all3.csv")
  local time_ref="$out/reports/${name}_ncu_time1.csv"
  [ -s "$time_ref" ] || time_ref="$out/reports/${name}_ncu_none1.csv"
  [ -s "$time_ref" ] || time_ref="$out/reports/${name}_ncu_all1.csv"
  python3 scripts/graph_nodes_vs_ncu.py "$out/reports/${name}_counted.json" \
    "$time_ref" "${extra[@]}" "${only[@]}" \
    --timed "$out/reports/${name}_counted.json" >"$out/${name}_vs_ncu.txt" 2>&1
  note "-- $name: profile (graph nodes counted) against ncu --graph-profiling node (time: $(basename "$time_ref" .csv); counters: all)"
  grep -vE "^  " "$out/${name}_vs_ncu.txt" | tee -a "$summary"
  grep -E "^  " "$out/${name}_vs_ncu.txt" | head -12 >>"$summary"
  # Cost: what each leg and each ncu run adds to the program's second run alone; the issue's
  # bar: the default leg (counted) at most a tenth of what ncu adds, timed no more than off.
  python3 - "$costs" <<'PY' | tee -a "$summary"
import sys
times = dict(line.split() for line in open(sys.argv[1]) if line.strip())
alone = float(times.pop("alone"))
added = {k: float(v) - alone for k, v in times.items()}
# ncu with our metric list (a time-only run is not what the bar compares with)
ncu = [v for k, v in added.items() if k.startswith("ncu:") and not k.startswith("ncu:time")]
print("cost (seconds added to the program's second run alone, %.2f s): " % alone +
      ", ".join(f"{k} {v:+.2f}" for k, v in added.items()))
if ncu and "profile:counted" in added:
    least = min(ncu)
    share = added["profile:counted"] / least if least > 0 else float("nan")
    print(f"cost: counted adds {share:.3f} of the least ncu adds ({least:.2f} s): "
          f"{'PASS' if share <= 0.10 else 'FAIL'} (at most 0.10)")
if "profile:timed" in added and "profile:off" in added:
    print(f"cost: timed adds {added['profile:timed']:.2f} s, off {added['profile:off']:.2f} s")
PY
  COLUMNS=120 "$tool" show "$out/reports/${name}_counted.json" --top 8 >"$out/${name}_show.txt" 2>&1
  COLUMNS=120 "$tool" show "$out/reports/${name}_counted.json" --group-by nvtx --top 8 \
    >"$out/${name}_show_nvtx.txt" 2>&1
}

has branches && program branches "$build/tests/gpu/profile_target" --graph-branches
has decode && program decode python3 scripts/programs/decode_loop.py ${DECODE_ARGS:---steps 8}
has gpt && program gpt python3 scripts/programs/gpt_compiled.py ${GPT_ARGS:---infer 6 --train 2}
has mlp && program mlp python3 scripts/programs/mlp_block.py ${MLP_ARGS:-}
has parallel && program parallel python3 scripts/programs/parallel_block.py ${PARALLEL_ARGS:-}
exit 0
