#!/usr/bin/env bash
# Issue 39's advice on real programs, in one call on a GPU machine: five programs of our own
# (scripts/programs: the MLP block with a graph replay, a training step, the compiled GPT block,
# the decode loop captured as a graph, the jitted JAX block), each started cold as a user starts
# it, alone and under `profile` (the default counter set), then scripts/floor_check.py on the
# reports: no estimated gain beyond the launch floor, waiting kernels called so. Each program
# must print under `profile` what it prints alone (its checksum line); one that does not runs
# once more under `profile --launch-count 0` (nothing measured), which says whether measuring
# changed it or the injection's presence alone. A JAX program's autotuner logs of the two legs
# are compared by scripts/autotune_logs.py (which fastest configs differ, how its candidates'
# times moved).
#
#   bash scripts/floor_check.sh [build]
#
#   FLOOR_PROGRAMS  "NAME ..." of scripts/programs/NAME.py (default: mlp_block train_step
#                   gpt_compiled decode_loop jax_block)
#
# $OUT (or out/floor-check/) gets summary.txt (the judge's lines last) and floor.tar.xz (the
# reports and logs), to keep in tests/data/reports. Never changes clocks or GPU settings.
set -u -o pipefail
source "$(dirname "$0")/device_env.sh"
check_folders floor
programs="${FLOOR_PROGRAMS:-mlp_block train_step gpt_compiled decode_loop jax_block}"
if [[ " $* " == *" build "* ]]; then
  t=$(seconds)
  device_build "$work/build.log"
  note "build: rc=$? in $(elapsed "$t") s"
fi
reports=()
# xla_logs NAME LEG: a JAX program's XLA_FLAGS with its autotuner's log (every candidate and the
# time it measured, text proto) written to $work/NAME_LEG_autotune.txt, to compare the legs'
# choices; for the other programs a variable they do not read (FLOOR_PROGRAM).
xla_logs() {
  if [[ $1 == jax* ]]; then
    printf '%s' "XLA_FLAGS=${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_dump_autotune_logs_to=$work/$1_$2_autotune.txt"
  else
    printf '%s' "FLOOR_PROGRAM=$1"
  fi
}
for name in $programs; do
  program=(python3 "scripts/programs/$name.py")
  t=$(seconds)
  env "$(xla_logs "$name" alone)" "${program[@]}" >"$work/${name}_alone.txt" 2>"$work/${name}_alone.err"
  rc=$?
  alone=$(elapsed "$t")
  if [ $rc -ne 0 ]; then
    note "$name: exits $rc alone in $alone s: $(tail -1 "$work/${name}_alone.err")"
    continue
  fi
  t=$(seconds)
  env "$(xla_logs "$name" profile)" "$tool" profile --json "$work/$name.json" -- "${program[@]}" \
    >"$work/${name}_profile.txt" 2>"$work/${name}_profile.err"
  prc=$?
  expected=$(grep -E "^$name: checksum" "$work/${name}_alone.txt")
  same=no
  [ -n "$expected" ] && grep -qxF "$expected" "$work/${name}_profile.txt" && same=yes
  note "$name: alone ${alone} s (cold), under profile $(elapsed "$t") s rc=$prc, prints what it" \
    "prints alone: $same ($expected)"
  if [ "$same" = no ] && [ -n "$expected" ]; then
    # Does measuring change it, or the injection's presence alone? The same program under
    # profile with nothing measured (--launch-count 0: the callbacks and activity records only).
    t=$(seconds)
    env "$(xla_logs "$name" none)" "$tool" profile --launch-count 0 --json "$work/${name}_none.json" \
      -- "${program[@]}" \
      >"$work/${name}_none.txt" 2>"$work/${name}_none.err"
    nrc=$?
    none=no
    grep -qxF "$expected" "$work/${name}_none.txt" && none=yes
    note "$name: under profile --launch-count 0 (nothing measured) $(elapsed "$t") s rc=$nrc," \
      "prints what it prints alone: $none ($(grep -E "^$name: checksum" "$work/${name}_none.txt"))"
  fi
  if [ -s "$work/${name}_alone_autotune.txt" ] && [ -s "$work/${name}_profile_autotune.txt" ]; then
    python3 scripts/autotune_logs.py "$work/${name}_alone_autotune.txt" \
      "$work/${name}_profile_autotune.txt" >"$work/${name}_autotune_diff.txt" 2>&1
    note "$name: the autotuner alone against under profile: $(tail -2 "$work/${name}_autotune_diff.txt" | tr '\n' ' ')"
  fi
  [ -f "$work/$name.json" ] && reports+=("$work/$name.json")
done
[ ${#reports[@]} -gt 0 ] && python3 scripts/floor_check.py "$tool" "${reports[@]}" | tee -a "$summary"
tar -C "$work" -cJf "$out/floor.tar.xz" . 2>/dev/null
