#!/usr/bin/env bash
# `cuflash-roofline profile` on PyTorch programs shaped like real work (scripts/programs/), on
# a GPU machine, in one call: build, the profile GPU tests, then for each program
#   - the program alone, twice (its time and its checksum line: is it deterministic?);
#   - under `profile` in each counter set and replay mode: exit code, time, checksum (the
#     program must print what it prints alone);
#   - under `ncu --clock-control none --cache-control all --metrics LIST` (LIST: our own
#     metric list), the reference for agreement and for cost;
#   - scripts/profile_vs_ncu.py: launch by launch, time, DRAM, L2 and tensor FLOPs;
#   - scripts/summary_vs_ncu.py: each kernel group's share of the time, ours beside ncu's.
#
#   scripts/profile_programs.sh [build] [test] [gputests] [gate] [aa] [mlp] [train] [modes]
#                               [ncu-variants]
#
# `gputests` runs every GPU test; `gate` the seed sweep against a report recorded before the
# change (see below); `mlp-modes` / `train-modes` the other sets and modes for one program.
# ALONE_RUNS (default 2): runs of the program alone. NCU_REFERENCE_DIR: NAME_ncu.csv files of an
# earlier call to pair with instead of running ncu again. NCU_TWICE="mlp train": run ncu a
# second time on those programs and pair the two ncu runs (the reference's own spread).
# `modes` adds the non-default sets and replay modes (--replay launch, --counter-set full) to
# each program's legs. Writes under $OUT (or out/profile-programs/): summary.txt (tables last),
# logs.tar.xz, and the reports. Never changes clocks: ncu runs with --clock-control none.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
final="${OUT:-$repo/out/profile-programs}"
out="${WORK_DIR:-/tmp/profile-programs}"
rm -rf "$out"
mkdir -p "$final" "$out"
ncu_bin="$(command -v ncu || true)"
# The summary is written where it comes back even when the call is cut short.
summary="$final/summary.txt"
: >"$summary"
# Every leg ends by this many seconds after the start (DEADLINE_S), so that a device call's
# limit never cuts the script off before its summary.
deadline=$(($(date +%s) + ${DEADLINE_S:-560}))
left() { local l=$((deadline - $(date +%s))); echo $((l > 1 ? (l < $1 ? l : $1) : 1)); }
finish() { (cd "$out" && tar -cJf "$final/logs.tar.xz" --exclude='*.ncu-rep' .); }
trap finish EXIT
legs=" ${*:-build test mlp train} "
has() { [[ "$legs" == *" $1 "* ]]; }

if has build; then
  t=$(seconds)
  device_build "$out/build.log"
  rc=$?
  note "build: rc=$rc in $(elapsed "$t") s"
  [ $rc -ne 0 ] && { grep -E "error|Error" "$out/build.log" | head -30 | tee -a "$summary"; exit 1; }
fi

if has gputests; then
  t=$(seconds)
  timeout "$(left 300)" ctest --test-dir "$build" --output-on-failure --timeout 300 -L gpu \
    >"$out/ctest_gpu.log" 2>&1
  note "ctest -L gpu: rc=$? in $(elapsed "$t") s; $(grep -E 'tests passed|tests failed' "$out/ctest_gpu.log")"
  grep -E "Failed|\*\*\*|ERROR|error:|Skipped" "$out/ctest_gpu.log" | head -20 | tee -a "$summary"
fi

# gate: the seed sweep (`run --pass fwd,bwd`, default options) against a report of the same
# command recorded before the change (tests/data/reports/h200_gate.tar.xz, a_00: unchanged
# code of 2026-11-30): compare's verdicts, and the two tables' lines that differ in more than
# their digits.
if has gate; then
  t=$(seconds)
  mkdir -p "$out/gate" && tar -xJf tests/data/reports/h200_gate.tar.xz -C "$out/gate"
  timeout "$(left 120)" "$tool" run --pass fwd,bwd --json "$out/gate_new.json" >"$out/gate_new.txt" 2>&1
  note "run --pass fwd,bwd: rc=$? in $(elapsed "$t") s"
  "$tool" compare "$out/gate/h200_gate/a_00.json" "$out/gate_new.json" >"$out/gate_compare.txt" 2>&1
  note "compare a_00 (before) new: rc=$? (0: no regression); $(grep -E "rows compared" "$out/gate_compare.txt")"
  "$tool" show "$out/gate/h200_gate/a_00.json" >"$out/gate_old_table.txt" 2>&1
  "$tool" show "$out/gate_new.json" >"$out/gate_new_table.txt" 2>&1
  note "show before/after: $(python3 -c "
import re, sys
a = open('$out/gate_old_table.txt').read().splitlines()
b = open('$out/gate_new_table.txt').read().splitlines()
norm = lambda l: re.sub(r'[0-9.]+', '#', l)
other = [(x, y) for x, y in zip(a, b) if norm(x) != norm(y)]
print(f'{len(a)} and {len(b)} lines; {sum(x != y for x, y in zip(a, b))} differ, '
      f'{len(other)} in more than digits')
for x, y in other[:6]: print('  before:', x[:150]); print('  after: ', y[:150])")"
fi

if has test; then
  t=$(seconds)
  timeout "$(left 300)" ctest --test-dir "$build" --output-on-failure --timeout 300 -R 'gpu.profile|profile|launch' \
    >"$out/ctest.log" 2>&1
  note "ctest (profile tests): rc=$? in $(elapsed "$t") s; $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E "Failed|\*\*\*|ERROR|error:" "$out/ctest.log" | head -40 | tee -a "$summary"
fi

# checksum FILE: the program's checksum line.
checksum() { grep -E "checksum" "$1" | tail -1; }

# profile_leg LABEL:OPTIONS: the program (name, cmd, reference of the caller) under profile.
profile_leg() {
  local mode="$1"
  local label="${mode%%:*}" options="${mode#*:}"
  t=$(seconds)
  # shellcheck disable=SC2086
  timeout "$(left 300)" "$tool" -v profile $options --json "$out/${name}_$label.json" -- "${cmd[@]}" \
    >"$out/${name}_$label.txt" 2>"$out/${name}_$label.err"
  rc=$?
  local same="output differs"
  [ "$(checksum "$out/${name}_$label.txt")" = "$reference" ] && same="same output"
  note "$name under profile ($label${options:+: $options}): rc=$rc in $(elapsed "$t") s; $same;" \
    "$(python3 -c "
import json, collections
rows = json.load(open('$out/${name}_$label.json'))['rows']
print(len(rows), 'rows', dict(collections.Counter(r['status'] for r in rows)))" 2>&1)"
  grep -E "^\[.*(warn|error)" "$out/${name}_$label.err" | head -8 | tee -a "$summary"
  grep -o "time in the injection library.*" "$out/${name}_$label.err" | head -2 | tee -a "$summary"
}

# program NAME ARGS...: alone, under profile (default options) and under ncu.
program() {
  local name="$1"
  shift
  local cmd=(python3 "$@")
  local t rc
  for i in $(seq 1 "${ALONE_RUNS:-2}"); do
    t=$(seconds)
    timeout "$(left 120)" "${cmd[@]}" >"$out/${name}_alone$i.txt" 2>&1
    rc=$?
    note "$name alone ($i): rc=$rc in $(elapsed "$t") s; $(checksum "$out/${name}_alone$i.txt")"
  done
  local reference
  reference="$(checksum "$out/${name}_alone1.txt")"
  [ ! -f "$out/${name}_alone2.txt" ] || [ "$reference" = "$(checksum "$out/${name}_alone2.txt")" ] ||
    note "$name: NOT deterministic alone (two runs, two checksums): output compared loosely"
  profile_leg "default:"
  if [ -n "$ncu_bin" ]; then
    local metrics
    metrics="$("$tool" metrics --chip GH100 --list | paste -sd, -)"
    t=$(seconds)
    if [ -s "${NCU_REFERENCE_DIR:-/nonexistent}/${name}_ncu.csv" ]; then
      # ncu's counts of an earlier call on the same program (its launches are the same).
      cp "$NCU_REFERENCE_DIR/${name}_ncu.csv" "$out/${name}_ncu.csv"
      note "$name: ncu reference from $NCU_REFERENCE_DIR (an earlier call)"
    else
      timeout "$(left 400)" "$ncu_bin" --clock-control none --cache-control all --csv --page raw \
        --metrics "$metrics" "${cmd[@]}" >"$out/${name}_ncu.csv" 2>"$out/${name}_ncu.err"
      note "$name under ncu --metrics (our list): rc=$? in $(elapsed "$t") s"
    fi
    if [[ " ${NCU_TWICE:-} " == *" $name "* ]]; then
      # ncu against itself: a second run of the same program, paired launch by launch with the
      # first, shows how far two runs of the reference are apart (the floor under our misses).
      t=$(seconds)
      timeout "$(left 400)" "$ncu_bin" --clock-control none --cache-control all --csv --page raw \
        --metrics "$metrics" "${cmd[@]}" >"$out/${name}_ncu2.csv" 2>"$out/${name}_ncu2.err"
      note "$name under ncu --metrics, second run: rc=$? in $(elapsed "$t") s"
      python3 scripts/profile_vs_ncu.py --ours-ncu "$out/${name}_ncu2.csv" "$out/${name}_ncu.csv" \
        >"$out/${name}_ncu_vs_ncu.txt" 2>&1
      note "== $name: ncu (second run) against ncu (first run) =="
      grep -E "^(time|first|DRAM|L2|tensor|largest)" "$out/${name}_ncu_vs_ncu.txt" | tee -a "$summary"
    fi
    python3 scripts/profile_vs_ncu.py "$out/${name}_default.json" "$out/${name}_ncu.csv" \
      >"$out/${name}_vs_ncu.txt" 2>&1
    note "== $name: profile (default) against ncu, launch by launch =="
    # The whole table goes to the summary; the acceptance lines to the terminal too.
    cat "$out/${name}_vs_ncu.txt" >>"$summary"
    grep -vE "^ *[0-9]+ " "$out/${name}_vs_ncu.txt"
    # Where the time goes, by kernel group: the summary's shares with ncu's times beside ours.
    python3 scripts/summary_vs_ncu.py "$tool" "$out/${name}_default.json" "$out/${name}_ncu.csv" \
      >"$out/${name}_summary_vs_ncu.txt" 2>&1
    note "== $name: show --view summary with our times and with ncu's (summary_vs_ncu.py) =="
    cat "$out/${name}_summary_vs_ncu.txt" | tee -a "$summary"
  else
    note "$name: no ncu on this machine"
  fi
}

# modes NAME ARGS...: the program under the other sets and modes (after every program's
# default leg and ncu, so that a short call keeps those).
modes() {
  local name="$1"
  shift
  local cmd=(python3 "$@")
  local reference t rc
  reference="$(checksum "$out/${name}_alone1.txt")"
  profile_leg "launch:--replay launch"
  profile_leg "full:--counter-set full"
  if [ -s "$out/${name}_launch.json" ] && [ -s "$out/${name}_ncu.csv" ]; then
    python3 scripts/profile_vs_ncu.py "$out/${name}_launch.json" "$out/${name}_ncu.csv" \
      >"$out/${name}_launch_vs_ncu.txt" 2>&1
    note "== $name: profile --replay launch against ncu (summary) =="
    grep -E "^(time|first|DRAM|L2|tensor|largest)" "$out/${name}_launch_vs_ncu.txt" | tee -a "$summary"
  fi
}

# ncu-variants: ncu on the MLP program with only gpu__time_duration and the SM clock, with and
# without its cache flush, paired with the full list's run: does ncu's own time of a kernel
# depend on what else it collects, or on the flush?
if has ncu-variants && [ -n "$ncu_bin" ]; then
  for cache in all none; do
    t=$(seconds)
    timeout "$(left 120)" "$ncu_bin" --clock-control none --cache-control "$cache" --csv \
      --page raw --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
      python3 scripts/programs/mlp_block.py >"$out/mlp_ncu_time_$cache.csv" 2>"$out/mlp_ncu_time_$cache.err"
    note "mlp under ncu (time and clock only, --cache-control $cache): rc=$? in $(elapsed "$t") s"
    ref="$out/mlp_ncu.csv"
    [ -s "$ref" ] || ref="${NCU_REFERENCE_DIR:-/nonexistent}/mlp_ncu.csv"
    python3 scripts/profile_vs_ncu.py --ours-ncu "$out/mlp_ncu_time_$cache.csv" "$ref" \
      >"$out/mlp_ncu_time_$cache.txt" 2>&1
    note "== ncu time-only ($cache) against ncu with our list =="
    grep -E "^ *[0-9]+ .*!|^(time|first)" "$out/mlp_ncu_time_$cache.txt" | head -14 | tee -a "$summary"
  done
fi

# aa: each of AA_PROGRAMS (NAME=ARGS, commas for spaces; default the MLP and the compiled GPT
# block) under `profile` (default options) AA_RUNS times (default 3) in separate processes:
# `compare` of profiles on unchanged code (false alarms) and on the same reports with every
# launch made 5% and 10% slower (scripts/profile_compare_rates.py). The reports go to
# $final/aa.tar.xz.
if has aa; then
  mkdir -p "$out/aa"
  for spec in ${AA_PROGRAMS:-mlp=scripts/programs/mlp_block.py gpt=scripts/programs/gpt_compiled.py,--infer,3,--train,1}; do
    name="${spec%%=*}"
    args="${spec#*=}"
    for i in $(seq 1 "${AA_RUNS:-3}"); do
      t=$(seconds)
      # shellcheck disable=SC2086
      timeout "$(left 200)" "$tool" profile --json "$out/aa/${name}_$i.json" -- python3 ${args//,/ } \
        >"$out/aa/${name}_$i.txt" 2>"$out/aa/${name}_$i.err"
      note "aa: $name run $i under profile: rc=$? in $(elapsed "$t") s; $(checksum "$out/aa/${name}_$i.txt")"
    done
  done
  python3 scripts/profile_compare_rates.py "$tool" "$out/aa" >"$out/aa_rates.txt" 2>&1
  note "== compare of profiles, A/A and with the head made slower (profile_compare_rates.py) =="
  tee -a "$summary" <"$out/aa_rates.txt"
  (cd "$out" && tar -cJf "$final/aa.tar.xz" aa)
fi

has mlp && program mlp scripts/programs/mlp_block.py
has train && program train scripts/programs/train_step.py
{ has modes || has mlp-modes; } && has mlp && modes mlp scripts/programs/mlp_block.py
{ has modes || has train-modes; } && has train && modes train scripts/programs/train_step.py
