// Input limits: what a spec file, a report or a command line may hold. Values outside them are
// input errors (exit 2) whose message names the bound; docs/exit-codes.md lists them.
// The physical bounds are generous (10-1000x beyond any GPU of 2025) and exist so that no
// later computation meets a value it cannot represent (a 1e300 GB/s bandwidth, a 5e-324
// TFLOP/s peak, a tensor of 2^93 elements).
#pragma once

#include <cstdint>

namespace roofline {

// A plausibility bound for a physical quantity: [min, max] in `unit`, named in its errors.
struct Bound {
  const char* name;  // "bandwidths"
  double min;
  double max;
  const char* unit;  // "GB/s"; empty for plain counts
};

// Files.
inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{1} << 30;  // 1 GiB
// A report's error is that of the whole document's reader (report/report_read.hpp) up to this size;
// above it, the first met in reading order (the whole tree would take ~20x the text).
inline constexpr std::size_t kMaxWholeParseBytes = std::size_t{16} << 20;  // 16 MiB
// `plot` parses the whole report before it draws, and parsing the JSON text dominates its time:
// measured with scripts/bench_plot.py on the shared 2-core build machine, 10,000 `model` rows
// (68 MB) took 1.19 s and 100,000 rows (695 MB) 12.48 s, about 18 ms per MB, beyond issue 10's
// 5 s. 200 MiB is about 30,000 `model` rows (fewer `run` rows, which carry counters and
// samples); 30,000 rows (206 MB) took 3.64 s. A larger report is refused before it is read.
inline constexpr std::uintmax_t kMaxPlotInputBytes = std::uintmax_t{200} << 20;  // 200 MiB

// GPU specs (and the specs embedded in reports).
inline constexpr Bound kBandwidthGbps{"bandwidths", 1, 1e6, "GB/s"};
inline constexpr Bound kPeakTflops{"compute peaks", 1e-3, 1e5, "TFLOP/s"};
inline constexpr Bound kClockMhz{"clocks", 100, 1e4, "MHz"};
inline constexpr Bound kTdpWatts{"board power", 1, 1e5, "W"};
// Per-SM, per-clock rates of a spec: MUFU results (XU pipe) and shared-memory bytes.
inline constexpr Bound kPerSmPerClock{"per-SM rates", 0.5, 1e4, "per clock and SM"};
// The shortest kernel time of a GPU (launch_floor_us).
inline constexpr Bound kLaunchFloorUs{"launch floors", 0.05, 100, "µs"};
// The points of a DRAM level's stream curve (MemoryLevelSpec::stream): a pure read's bytes and
// its time.
inline constexpr Bound kStreamBytes{"stream sizes", 1024, 1e15, "bytes"};
inline constexpr Bound kStreamSeconds{"stream times", 1e-8, 3600, "s"};
inline constexpr std::int64_t kMaxSmCount = 10000;
inline constexpr std::int64_t kMinL2Bytes = 1024;
inline constexpr std::int64_t kMaxL2Bytes = std::int64_t{1} << 34;      // 16 GiB
inline constexpr std::int64_t kMinMemoryBytes = std::int64_t{1} << 20;  // 1 MiB
inline constexpr std::int64_t kMaxMemoryBytes = std::int64_t{1} << 50;  // 1 PiB

// Reports.
inline constexpr Bound kSampleSeconds{"timing samples", 1e-9, 3600, "s"};
inline constexpr Bound kMeasuredClockMhz{"measured clocks", 1, 1e4, "MHz"};
inline constexpr Bound kJoules{"energies", 0, 1e9, "J"};
inline constexpr Bound kWatts{"powers", 0, 1e5, "W"};
inline constexpr Bound kFlops{"FLOP counts", 0, 1e21, "FLOPs"};
inline constexpr Bound kBytes{"byte counts", 0, 1e21, "bytes"};
inline constexpr Bound kExponentials{"exponential counts", 0, 1e21, "exponentials"};
// A term of the cache-aware DRAM model: negative for bytes it subtracts (outputs still in L2
// when the kernel ends).
inline constexpr Bound kByteTerm{"byte terms", -1e21, 1e21, "bytes"};
inline constexpr Bound kCounterValue{"counter values", 0, 1e21, ""};
inline constexpr Bound kErrorNorm{"error norms", 0, 1e30, ""};
inline constexpr std::int64_t kMaxSamples = 1000000;
inline constexpr std::int64_t kMaxCounterPasses = 10000;
// `profile`'s per-process cost: seconds per phase, and the count of counter sessions.
inline constexpr Bound kProfilePhase{"profiling phases", 0, 1e7, ""};
inline constexpr std::int64_t kMaxRegistersPerThread = 255;
inline constexpr std::int64_t kMaxSharedBytes = std::int64_t{1} << 30;  // per launch
// `run`'s kernel pass (Row::kernels): kernels per launch and each one's times.
inline constexpr std::int64_t kMaxKernelsPerLaunch = 4096;
inline constexpr Bound kKernelSeconds{"kernel times", 0, 3600, "s"};

// Calibration files (`calibrate`): the work of one measurement (FLOPs or bytes), its SM clock
// (0: not measured) and the whole run's duration.
inline constexpr Bound kCalibrationWork{"calibration work", 1, 1e21, ""};
inline constexpr Bound kCalibrationClockMhz{"measured clocks", 0, 1e4, "MHz"};
inline constexpr Bound kCalibrationSeconds{"calibration durations", 0, 1e6, "s"};
// Energy coefficients (spec files and calibration files, `calibrate --energy`): joules per
// FLOP, exp2 result or byte (a few pJ on GPUs of 2025), and the static power.
inline constexpr Bound kJoulesPerUnit{"energy coefficients", 0, 1e-6, "J"};
inline constexpr Bound kStaticWatts{"static powers", 1e-3, 1e5, "W"};
inline constexpr Bound kPowerLimitWatts{"power limits", 1, 1e5, "W"};

// Workloads (command line and reports alike).
inline constexpr std::int64_t kMaxSeqLen = std::int64_t{1} << 24;  // 16,777,216
// B·H·N·d of one Q/K/V/O tensor: 2^36 elements is 128 GiB in FP16, beyond any GPU's memory.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 36;
// Decode workloads: new query tokens per sequence (speculative decoding's few), and split-KV
// parts (flash-decode's kDecodeMaxSplits, kernels/decode_plan.hpp).
inline constexpr int kMaxDecodeQueryLen = 16;
inline constexpr int kMaxDecodeSplits = 128;

}  // namespace roofline
