#!/usr/bin/env bash
# Builds only roofline_kernels and the GPU test/bench (a throwaway CMake project, so it does
# not depend on the rest of the repository), then on the GPU: runs the kernel tests, the
# benchmark table, PyTorch's baselines and compute-sanitizer (memcheck, racecheck) on the
# small-shape mode of the tests. Logs go to $OUT (or out/device-kernels/).
#
# usage: scripts/device_kernels.sh [steps...]   steps: build test bench torch sanitize (default all)
#   PREBUILT=dir  use gpu_kernel_tests / gpu_kernel_bench from dir when they start there
set -u -o pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$repo/out/device-kernels}"
mkdir -p "$out"
steps="${*:-build test bench torch sanitize}"
build="${BUILD_DIR:-/tmp/roofline-kernels-build}"
export PATH="/usr/local/cuda/bin:$PATH"
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$out/gpu.txt" 2>&1

bin="$build/gpu"
if [[ " $steps " == *" build "* ]]; then
  if [[ -n "${PREBUILT:-}" ]] && "$PREBUILT/gpu_kernel_tests" --list-test-cases >/dev/null 2>&1; then
    bin="$PREBUILT"
    note "build: using prebuilt binaries from $PREBUILT"
  else
    scratch="$(mktemp -d)"
    cat >"$scratch/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(roofline_kernels_only LANGUAGES CXX CUDA)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CUDA_STANDARD 17)
find_package(CUDAToolkit REQUIRED)
find_package(doctest REQUIRED)
enable_testing()
add_subdirectory($repo/kernels kernels)
add_subdirectory($repo/tests/gpu gpu)
CMAKE
    start=$(date +%s)
    cmake -S "$scratch" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
      cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1
    note "build: rc=$? in $(($(date +%s) - start)) s"
  fi
  if command -v cuobjdump >/dev/null; then
    # Per kernel: tensor-core instructions, ldmatrix, and local-memory traffic (spills).
    cuobjdump -sass "$bin/gpu_kernel_tests" | awk '
      /Function :/ { fn = $3 }
      /HMMA/ { hmma[fn]++ } /LDSM/ { ldsm[fn]++ } /LDL|STL/ { local[fn]++ } { seen[fn] = 1 }
      END { for (f in seen) if (f != "") printf "%-100s HMMA=%d LDSM=%d LDL/STL=%d\n", f, hmma[f], ldsm[f], local[f] }
    ' | sort >"$out/sass.txt"
    note "sass: $(grep -c . "$out/sass.txt") kernels; with HMMA: $(grep -vc 'HMMA=0 ' "$out/sass.txt"); with LDL/STL: $(grep -vc 'LDL/STL=0$' "$out/sass.txt")"
  fi
fi

if [[ " $steps " == *" test "* ]]; then
  start=$(date +%s)
  timeout 240 "$bin/gpu_kernel_tests" >"$out/test.log" 2>&1
  note "test: rc=$? in $(($(date +%s) - start)) s; $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test.log" | tr '\n' ' ')"
fi

if [[ " $steps " == *" bench "* ]]; then
  timeout 300 "$bin/gpu_kernel_bench" --verify >"$out/bench.log" 2>&1
  note "bench: rc=$?"
fi

if [[ " $steps " == *" torch "* ]]; then
  PYTHONUNBUFFERED=1 timeout 200 python3 "$repo/scripts/bench_torch_attention.py" >"$out/torch.log" 2>&1
  note "torch: rc=$?"
fi

if [[ " $steps " == *" sanitize "* ]]; then
  for tool in memcheck racecheck; do
    start=$(date +%s)
    ROOFLINE_GPU_TEST_SMALL=1 timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$bin/gpu_kernel_tests" >"$out/sanitizer-$tool.log" 2>&1
    note "sanitizer $tool: rc=$? in $(($(date +%s) - start)) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
  done
fi

echo
cat "$summary"
[[ -f "$out/bench.log" ]] && sed -n '/^| kernel/,$p' "$out/bench.log"
[[ -f "$out/torch.log" ]] && sed -n '/^| kernel/,$p' "$out/torch.log"
grep -E "ERROR|FAILED|error" "$out/test.log" 2>/dev/null | head -40
exit 0
