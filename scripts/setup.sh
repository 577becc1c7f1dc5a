#!/usr/bin/env bash
# Installs the build dependencies (Debian/Ubuntu packages) and builds cuflash-roofline.
#   scripts/setup.sh            # configure preset `ci` (CUDA if /usr/local/cuda exists)
#   scripts/setup.sh nocuda     # any other configure preset from CMakePresets.json
# Needs root or sudo for apt-get; skips installation when every package is already present.
set -euo pipefail
cd "$(dirname "$0")/.."

preset="${1:-ci}"
packages=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          doctest-dev librsvg2-bin)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
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
