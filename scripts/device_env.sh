# The preamble of the device scripts (device_check.sh, fleet_check.sh, gate_check.sh,
# model_groups.sh, profile_acceptance.sh, v3_check.sh), sourced, not run:
#
#   source "$(dirname "$0")/device_env.sh"
#
# Leaves the shell in the repository root with:
#   repo   the repository root
#   build  the build directory: $BUILD_DIR, else build/device (CMake preset `device`)
#   tool   $build/app/cuflash-roofline
#   PATH   CUDA's bin directory first, then Nsight Compute's when ncu is not on PATH already
#          (find_ncu); PYTHONUNBUFFERED=1, so that Python's output interleaves with ours.
# and the functions below. Never changes clocks or anything else on the GPU.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo" || exit 1
build="${BUILD_DIR:-$repo/build/device}"
tool="$build/app/cuflash-roofline"
export PATH="/usr/local/cuda/bin:$PATH"
export PYTHONUNBUFFERED=1

# seconds: the time now, for elapsed.
seconds() { date +%s.%N; }
# elapsed T [DIGITS]: seconds since T (from `seconds`), with DIGITS decimals (default 2).
elapsed() { python3 -c "print(f'{$(seconds) - $1:.${2:-2}f}')"; }
# note LINE...: prints the line and appends it to the script's $summary.
note() { echo "$*" | tee -a "$summary"; }
# check_folders NAME: $out (what comes back from the device: $OUT, else out/NAME-check) and
# $work ($WORK_DIR, else out/NAME-work), both made; $summary ($out/summary.txt) emptied.
check_folders() {
  out="${OUT:-$repo/out/$1-check}"
  work="${WORK_DIR:-$repo/out/$1-work}"
  mkdir -p "$out" "$work"
  summary="$out/summary.txt"
  : >"$summary"
}

# find_ncu: puts Nsight Compute's ncu on PATH when it is not there already: the newest
# $NSIGHT_COMPUTE_ROOT/*/ncu (default /opt/nvidia/nsight-compute), else /usr/local/cuda/bin/ncu.
# Returns 1 when there is none (the ncu legs then fail and say so in their logs; nothing else
# depends on ncu).
find_ncu() {
  command -v ncu >/dev/null 2>&1 && return 0
  local candidate
  candidate="$(ls -d "${NSIGHT_COMPUTE_ROOT:-/opt/nvidia/nsight-compute}"/*/ncu 2>/dev/null |
    sort -V | tail -1)"
  [ -x "$candidate" ] || candidate=/usr/local/cuda/bin/ncu
  [ -x "$candidate" ] || return 1
  PATH="$(dirname "$candidate"):$PATH"
  export PATH
}

# device_build LOG [-k] [TARGET...]: configures the CMake preset `device` (Release, sm_90) into
# $build and builds TARGETs (everything when none), all output to LOG. -k keeps going past
# failed targets (whatever built can still be measured). Returns the build's status.
device_build() {
  local log=$1
  shift
  local keep_going=()
  if [ "${1:-}" = -k ]; then
    keep_going=(-- -k 0)
    shift
  fi
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --preset device -B "$build" >"$log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" "${targets[@]}" "${keep_going[@]}" >>"$log" 2>&1
}

find_ncu || true
