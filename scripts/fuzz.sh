#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, everything under ASan and UBSan) and runs
# each for SECONDS (default 20), seeded with gpu_specs/ (spec_reader) or tests/data/reports/
# (the others) and the inputs in tests/data/fuzz/<target>/. New coverage is kept in
# build/fuzz/corpus/<target>/ across runs. A crash, a sanitizer report, a leak, an input slower
# than 10 s or more than 2 GB fails the run; libFuzzer writes that input to
# build/fuzz/findings/<target>/. Once fixed, copy it to tests/data/fuzz/<target>/: the unit
# test "every fuzz finding ..." (test_hardening.cpp) replays it from then on.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: spec_reader report_reader compare writers merge output_paths options command_line
#   show_options (default: all)
# Seeds: gpu_specs/ (spec_reader), a few paths (output_paths), option values (options), command
# lines (command_line) and show options (show_options),
# tests/data/reports/ (the others).
# Exit: 0 no finding, 1 a finding (or a failed build), 77 clang++ has no libFuzzer.
# Builds with $FUZZ_BUILD_JOBS jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(spec_reader report_reader compare writers merge output_paths options command_line
    show_options)
fi

probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
  >/dev/null 2>&1; then
  echo "fuzz: clang++ with libFuzzer not found (Debian packages clang, libclang-rt-dev)" >&2
  exit 77
fi

mkdir -p build
# A copied checkout brings the original's CMake cache, which CMake refuses for another source
# directory: configure afresh (the corpus in build/fuzz/corpus stays).
cache=build/fuzz/CMakeCache.txt
if [ -f "$cache" ] && [ "$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")" != "$(pwd -P)" ]; then
  echo "fuzz: build/fuzz was configured for another checkout: configuring afresh" >&2
  rm -rf "$cache" build/fuzz/CMakeFiles build/fuzz/build.ninja build/fuzz/.ninja_deps \
    build/fuzz/.ninja_log
fi
if ! { cmake --preset fuzz && cmake --build --preset fuzz --parallel "${FUZZ_BUILD_JOBS:-$(nproc)}" \
  --target $(printf 'fuzz_%s ' "${targets[@]}"); } >build/fuzz-build.log 2>&1; then
  tail -n 30 build/fuzz-build.log >&2
  echo "fuzz: the build failed (build/fuzz-build.log)" >&2
  exit 1
fi

summary=""
status=0
for target in "${targets[@]}"; do
  corpus="build/fuzz/corpus/$target"
  findings="build/fuzz/findings/$target"
  seeds="build/fuzz/seeds/$target"
  mkdir -p "$corpus" "$findings" "$seeds"
  rm -f "$seeds"/*
  case "$target" in
    spec_reader) cp gpu_specs/*.json "$seeds/" ;;
    output_paths)
      printf 'o.json\n./o.json\n-\n' >"$seeds/1"
      printf '/dev/stdout\n/dev/fd/1\n/tmp/x.json\n/tmp/x.json\n' >"$seeds/2"
      printf 'a/../b.json\n/proc/self/fd/2\n/dev/null\n' >"$seeds/3" ;;
    options)
      printf '0,1' >"$seeds/1"
      printf '3/8' >"$seeds/2"
      printf '(flash|v2)_fwd.*' >"$seeds/3"
      printf '18446744073709551615' >"$seeds/4"
      printf -- '-1' >"$seeds/5" ;;
    command_line)
      printf 'profile\n--json\np.json\n--export\ngbench=b.json\n--\n./prog\n--batch\n64' >"$seeds/1"
      printf 'show\nr.json\n--top\n5\n--kernel-regex\nflash' >"$seeds/2"
      printf 'run\n--gpu\na100\n--seq\n8192\n--pass\nfwd,bwd' >"$seeds/3"
      printf 'compare\nb.json\nh.json\n--threshold\n4\n--process-noise\n0.5' >"$seeds/4"
      printf 'model\n--gpu\nh100\n--seq\n1024,2048\n--head-dim\n64' >"$seeds/5" ;;
    show_options)
      printf -- '--top\n5' >"$seeds/1"
      printf -- '--group-by\nnvtx\n--view\nsummary' >"$seeds/2"
      printf -- '--kernel-regex\nflash\n--columns\nkernel,time\n--wide' >"$seeds/3"
      printf -- '--sort\ngain\n--view\nboth\n--flops\npipe' >"$seeds/4" ;;
    *) cp tests/data/reports/*.json "$seeds/" ;;
  esac
  if [ -d "tests/data/fuzz/$target" ]; then cp "tests/data/fuzz/$target"/* "$seeds/" 2>/dev/null || true; fi
  log="build/fuzz/$target.log"
  start=$(date +%s)
  if "build/fuzz/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$seeds" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log; the input is in $findings/)"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  summary+=$(printf '%-14s %10s %6ss  %s' "$target" "$runs" "$(($(date +%s) - start))" "$result")$'\n'
done
printf 'fuzz target        inputs   time  result\n%s' "$summary"
exit $status
