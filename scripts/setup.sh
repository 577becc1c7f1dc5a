#!/usr/bin/env bash
# Installs the build dependencies (Debian/Ubuntu packages) and builds cuflash-roofline.
#   scripts/setup.sh            # configure preset `ci` (CUDA if /usr/local/cuda exists)
#   scripts/setup.sh native     # any other configure preset from CMakePresets.json
# Needs root or sudo for apt-get; installs only what is missing (tools already on PATH, e.g.
# cmake from pip, count as present), so it also runs on machines without a package mirror.
set -euo pipefail
cd "$(dirname "$0")/.."

preset="${1:-ci}"
declare -A tool_package=([cmake]=cmake [ninja]=ninja-build [g++]=g++)
libraries=(libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev doctest-dev)
# rsvg-convert, for the SVG rendering test; clang++ with libFuzzer, for scripts/fuzz.sh (both
# skipped by scripts/test.sh without them).
optional=(librsvg2-bin clang libclang-rt-dev)

missing=()
for tool in "${!tool_package[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${tool_package[$tool]}")
done
for p in "${libraries[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
missing_optional=()
for p in "${optional[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing_optional+=("$p"); done

if ((${#missing[@]} + ${#missing_optional[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq || true
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  for p in "${missing_optional[@]}"; do
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" ||
      echo "setup: $p not installed (optional)" >&2
  done
fi

if [ "$preset" != "nocuda" ] && ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  else
    echo "setup: no CUDA toolkit found (nvcc); building preset nocuda instead" >&2
    preset=nocuda
  fi
fi
export CUDACXX="${CUDACXX:-$(command -v nvcc || true)}"

cmake --preset "$preset"
cmake --build --preset "$preset" --parallel "$(nproc)"
echo "$preset" > build/.preset
