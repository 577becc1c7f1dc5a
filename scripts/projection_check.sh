#!/usr/bin/env bash
# Issue 42's validation on the device: is a whole-GPU report projected onto N SMs (`show --gpu
# SPEC --sms N`) what a CUDA green context of N SMs measures (`run --sms N`)? Never changes the
# GPU's settings (clocks, MIG, MPS): a green context is a partition of this process's own
# launches, made and ended by the tool.
#
#   bash scripts/projection_check.sh [stages...]
#   stages (default all): build gputests sweep judge train
#
#   build     configure preset `device` and build the tool and the GPU tests
#   gputests  ctest -R gpu.green_context (green context, SM count seen by the kernels, run --sms)
#   sweep     the seed sweep (`run`, its default points and options, as energy_check.sh's) on
#             the whole GPU, then with --sms N for each N of SMS
#   judge     the whole-GPU report projected onto the SMs each green context got (its
#             context.green_context_sms: the driver rounds N up, 66 to 72 on Hopper) with `show
#             --gpu SPEC --sms <got> --json`, the projection's table by group, and
#             scripts/projection_vs_green.py: per row and in sum, projected against measured
#             (PASS: summed time within 10%, every row within 20%); with a share run (SHARE_RUN),
#             judged again with `--share-run` (the rows' bytes in flight read from it)
#   train     a PyTorch training step (scripts/programs/train_step.py) under `profile` on the
#             whole GPU and with --sms N (PyTorch's torch.cuda.green_contexts, beta since 2.10:
#             GreenContext.create(num_sms=N) and set_context(), which train_step.py documents),
#             the whole-GPU profile projected onto the SMs `run --sms N` got (the same driver
#             rounds the same N alike), judged by kernel name (--by name). If PyTorch has no
#             green contexts the program exits 2 and the stage says so.
#
#   SMS          the SM counts asked (default "66 33")
#   SHARE_RUN    the SM count of the share run (default 16: below the DRAM share curve's knee on
#                Hopper): the sweep on that many SMs too, given to the judge's second projection;
#                empty for none
#   SWEEP_ARGS   extra `run` arguments for all three sweeps (default none: the seed sweep)
#   TRAIN_ARGS   train_step.py's arguments (default none: its defaults)
#   TRAIN_MIN_SECONDS  kernel names whose projected time is below this are listed, not judged
#                (default 0: every name judged)
#
# $OUT (or out/projection-check/) gets summary.txt (every stage's lines, the judge's tables) and
# projection.tar.xz (the reports, the projections and the logs), to keep in tests/data/reports.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
check_folders projection
stages=" ${*:-build gputests sweep judge train} "
has() { [[ "$stages" == *" $1 "* ]]; }
sms_list="${SMS:-66 33}"
share_run="${SHARE_RUN-16}"
read -r -a sweep_args <<<"${SWEEP_ARGS:-}"
read -r -a train_args <<<"${TRAIN_ARGS:-}"

# json_get FILE EXPR: a Python expression over the report `r`, printed ("" when it fails).
json_get() { python3 -c "import json; r = json.load(open('$1')); print($2)" 2>/dev/null; }

if has build; then
  t=$(seconds)
  if ! device_build "$work/build.log" cuflash-roofline roofline_inject gpu_green_context_tests; then
    tail -30 "$work/build.log" >>"$summary"
    note "build failed"
    exit 4
  fi
  note "build: $(elapsed "$t" 0) s"
fi

if has gputests; then
  t=$(seconds)
  (cd "$build" && ctest -R 'gpu\.green_context' --output-on-failure) >"$work/gputests.log" 2>&1
  note "ctest -R gpu.green_context: rc=$? in $(elapsed "$t" 0) s;" \
    "$(grep -E 'tests passed|tests failed' "$work/gputests.log")"
  grep -E "SKIP|Failed|ERROR|error" "$work/gputests.log" | head -20 | tee -a "$summary"
fi

if has sweep; then
  for label in full $sms_list $share_run; do
    args=()
    [ "$label" != full ] && args=(--sms "$label")
    t=$(seconds)
    "$tool" run "${args[@]}" "${sweep_args[@]}" --wide --json "$work/sweep_$label.json" \
      >"$work/sweep_$label.txt" 2>"$work/sweep_$label.err"
    note "run ${args[*]} ${sweep_args[*]}: rc=$? in $(elapsed "$t" 1) s;" \
      "$(json_get "$work/sweep_$label.json" "len(r['rows']), 'rows', sorted({x['status'] for x in r['rows']}), 'green context SMs:', r['context'].get('green_context_sms')")"
    head -3 "$work/sweep_$label.txt" | tee -a "$summary"
    grep -E "warn|error" "$work/sweep_$label.err" | head -5 | tee -a "$summary"
  done
fi

# project N [SUFFIX ARGS...]: the whole-GPU sweep projected onto the SMs the green context of
# `--sms N` got, into projected_N$SUFFIX.{json,txt,err}, with ARGS (--share-run); prints that
# count (nothing when the sweep of N has none).
project() {
  local n=$1 suffix=${2:-} got spec
  shift 2 2>/dev/null || shift $#
  got=$(json_get "$work/sweep_$n.json" "r['context']['green_context_sms']")
  spec=$(json_get "$work/sweep_full.json" "r['rows'][0]['spec']")
  [ -n "$got" ] && [ -n "$spec" ] || return 1
  local base="$work/projected_$n$suffix"
  "$tool" show "$work/sweep_full.json" --gpu "$spec" --sms "$got" "$@" --json "$base.json" \
    >/dev/null 2>"$base.err" || return 1
  "$tool" show "$work/sweep_full.json" --gpu "$spec" --sms "$got" "$@" --group-by shape --top 0 \
    --wide >"$base.txt" 2>>"$base.err"
  echo "$got"
}

if has judge; then
  for n in $sms_list; do
    note "== --sms $n: the whole-GPU sweep projected, against the green context's measurement"
    if ! got=$(project "$n"); then
      note "no projection (see $work/projected_$n.err): $(head -2 "$work/projected_$n.err" 2>/dev/null)"
      continue
    fi
    note "asked $n SMs, got $got"
    cat "$work/projected_$n.txt" >>"$summary"
    python3 scripts/projection_vs_green.py "$work/projected_$n.json" "$work/sweep_$n.json" \
      2>&1 | tee -a "$summary"
    [ -n "$share_run" ] && [ -s "$work/sweep_$share_run.json" ] || continue
    note "== --sms $n with --share-run (the sweep on --sms $share_run): each row's bytes in flight from there"
    if ! project "$n" .share --share-run "$work/sweep_$share_run.json" >/dev/null; then
      note "no projection (see $work/projected_$n.share.err): $(head -2 "$work/projected_$n.share.err" 2>/dev/null)"
      continue
    fi
    python3 scripts/projection_vs_green.py "$work/projected_$n.share.json" "$work/sweep_$n.json" \
      2>&1 | tee -a "$summary"
  done
fi

if has train; then
  program=(python3 scripts/programs/train_step.py "${train_args[@]}")
  for label in full $sms_list; do
    args=()
    [ "$label" != full ] && args=(--sms "$label")
    t=$(seconds)
    "$tool" profile --json "$work/train_$label.json" -- "${program[@]}" "${args[@]}" \
      >"$work/train_$label.txt" 2>"$work/train_$label.err"
    rc=$?
    note "profile train_step.py ${args[*]}: rc=$rc in $(elapsed "$t" 1) s;" \
      "$(grep -E 'green context|checksum|no green contexts' "$work/train_$label.txt" "$work/train_$label.err" | tr '\n' ' ')"
  done
  for n in $sms_list; do
    note "== train_step.py --sms $n: the whole-GPU profile projected, by kernel name"
    got=$(json_get "$work/sweep_$n.json" "r['context']['green_context_sms']")
    spec=$(json_get "$work/train_full.json" "r['rows'][0]['spec']")
    if [ ! -s "$work/train_$n.json" ] || [ -z "$got" ] || [ -z "$spec" ]; then
      note "not judged: no green profile or no SM count from the sweep of --sms $n (stage sweep)"
      continue
    fi
    "$tool" show "$work/train_full.json" --gpu "$spec" --sms "$got" \
      --json "$work/train_projected_$n.json" >/dev/null 2>"$work/train_projected_$n.err"
    "$tool" show "$work/train_full.json" --gpu "$spec" --sms "$got" --group-by name --top 25 \
      --wide 2>&1 | tee -a "$summary"
    python3 scripts/projection_vs_green.py "$work/train_projected_$n.json" "$work/train_$n.json" \
      --by name --min-seconds "${TRAIN_MIN_SECONDS:-0}" 2>&1 | tee -a "$summary"
  done
fi

tar -C "$work" -cJf "$out/projection.tar.xz" --exclude=build.log . 2>/dev/null
cat "$summary"
