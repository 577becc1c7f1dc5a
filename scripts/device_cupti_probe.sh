#!/usr/bin/env bash
# Builds and runs scripts/device_cupti_probe.cu against lib/gpu/range_profiler.cpp on a GPU
# machine, and gathers what the CUPTI work needs from that machine: where CUPTI lives, its
# samples, and Nsight Compute's metric lists. Usage, from the repository root:
#   scripts/device_cupti_probe.sh OUT_DIR
# OUT_DIR receives: probe.log, the probe's counter-data images and value list, cupti_samples.tar.gz,
# ncu_metrics.tar.gz. Nothing is installed; the toolkit is found under $CUDA_HOME or /usr/local/cuda.
set -u
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
log="$out/probe.log"
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
  uname -r
  echo "== CUPTI layout"
  readlink -f "$cuda"
  ls -d "$cuda"/extras/CUPTI/{include,lib64} 2>&1
  find / -xdev \( -name 'libcupti.so*' -o -name 'libnvperf_host.so' -o -name 'cupti_range_profiler.h' \) \
    -not -path '/proc/*' 2>/dev/null | sort
} >"$log" 2>&1

inc=""
for d in "$cuda/extras/CUPTI/include" "$cuda/include" "$cuda/targets/x86_64-linux/include"; do
  if [ -f "$d/cupti_range_profiler.h" ]; then inc=$d; break; fi
done
lib=""
for d in "$cuda/extras/CUPTI/lib64" "$cuda/lib64" "$cuda/lib" "$cuda/targets/x86_64-linux/lib"; do
  if [ -e "$d/libcupti.so" ]; then lib=$d; break; fi
done
echo "CUPTI include: $inc; CUPTI lib: $lib" >>"$log"

# Metric lists and samples in the background while the probe builds and runs.
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
(
  mkdir -p "$work/ncu"
  for chip in gh100 ga100 gb100 ad102 ga102; do
    timeout 40 "$ncu_bin" --query-metrics --chip "$chip" >"$work/ncu/${chip}_metrics.txt" 2>&1
  done
  "$ncu_bin" --version >"$work/ncu/ncu_version.txt" 2>&1
  tar -C "$work" -czf "$out/ncu_metrics.tar.gz" ncu
) &
meta=$!
samples=$(find / -xdev -type d -path '*CUPTI/samples' -not -path '/proc/*' 2>/dev/null | head -1)
if [ -n "$samples" ]; then
  tar -C "$(dirname "$samples")" -czf "$out/cupti_samples.tar.gz" --exclude='*.o' \
    --exclude='*.so' "$(basename "$samples")" 2>>"$log"
  echo "samples: $samples" >>"$log"
fi

{
  echo "== build"
  set -x
  g++ -std=c++20 -O2 -Wall -Wextra -I. -I"$cuda/include" -I"$inc" \
    -c lib/gpu/range_profiler.cpp -o "$work/range_profiler.o" &&
    "$cuda/bin/nvcc" -std=c++17 -O2 -arch=sm_90 -I. -I"$inc" \
      scripts/device_cupti_probe.cu "$work/range_profiler.o" \
      -L"$lib" -lcupti -Xlinker -rpath -Xlinker "$lib" -o "$work/probe"
  set +x
  echo "== ldd"
  ldd "$work/probe" | grep -E 'cupti|nvperf|cuda'
  echo "== run"
  "$work/probe" "$out"
  echo "probe exit: $?"
} >>"$log" 2>&1

wait "$meta"
ls -l "$out" >>"$log"
