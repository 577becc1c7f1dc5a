// Test helpers: temporary directories, file text, capturing stdout/stderr of run_cli.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "app/temp_dir.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/workload.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// A calibration overlay's header as `calibrate` writes it, on a GH100 of 132 SMs: the tests add
// their measurements and derive the ceilings.
inline CalibrationOverlay gh100_calibration(std::string spec_key, std::string device_name,
                                            std::string time_utc, double duration_seconds) {
  CalibrationOverlay overlay;
  overlay.tool_version = "0.1.0";
  overlay.time_utc = std::move(time_utc);
  overlay.host = "test";
  overlay.spec_key = std::move(spec_key);
  overlay.device.name = std::move(device_name);
  overlay.device.chip = "GH100";
  overlay.device.compute_capability = "9.0";
  overlay.device.sm_count = 132;
  overlay.duration_seconds = duration_seconds;
  return overlay;
}

// One micro-kernel's timings as calibrate records them ("test kernel ID" its method).
inline CalibrationMeasurement calibration_measurement(std::string id, std::string target,
                                                      bool flops, double work,
                                                      std::vector<double> samples,
                                                      double clock_mhz = 0) {
  CalibrationMeasurement m;
  m.id = std::move(id);
  m.target = std::move(target);
  m.method = "test kernel " + m.id;
  m.flops = flops;
  m.work = work;
  m.samples_seconds = std::move(samples);
  m.sm_clock_mhz = clock_mhz;
  return m;
}

// The error parse_calibration gives for `j` ("(no error)" when it reads it).
inline std::string calibration_parse_error(const nlohmann::json& j) {
  try {
    parse_calibration(j, "cal.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

// A change to a written calibration file and the one-line error it must give, from its start.
struct CalibrationErrorCase {
  std::function<void(nlohmann::json&)> change;
  std::string message;
};

inline void check_calibration_errors(const nlohmann::json& written,
                                     const std::vector<CalibrationErrorCase>& cases) {
  for (const CalibrationErrorCase& c : cases) {
    nlohmann::json j = written;
    c.change(j);
    const std::string error = calibration_parse_error(j);
    CAPTURE(error);
    CHECK(error.rfind(c.message, 0) == 0);
    CHECK(error.find('\n') == std::string::npos);
  }
}

#ifdef ROOFLINE_TEST_SPECS_DIR
// The specs of gpu_specs/ (unit tests: they define where), loaded once.
inline const SpecRegistry& shipped_registry() {
  static const SpecRegistry registry = [] {
    SpecRegistry r;
    r.add_directory(ROOFLINE_TEST_SPECS_DIR);
    return r;
  }();
  return registry;
}

// A spec of gpu_specs/ by name or alias ("h200").
inline const GpuSpec& shipped_spec(const char* name) {
  return shipped_registry().find(name);
}
#endif

// A launch row as `profile` records one: a kernel of `grid` × `block` on the H200's spec, its
// counters and one timed sample.
inline Row profiled_row(const std::string& kernel, std::array<int, 3> grid,
                        std::array<int, 3> block, std::map<std::string, double> counters,
                        double seconds) {
  Row row;
  row.kernel = kernel;
  row.spec_key = "h200-sxm";
  KernelLaunch launch;
  launch.grid = grid;
  launch.block = block;
  row.launch = launch;
  row.counters = std::move(counters);
  row.timing = Timing{{seconds}, 0, 0};
  return row;
}

// The one sentence Workload::validate throws, or "(no error)".
inline std::string validation_error(const Workload& w) {
  try {
    w.validate();
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The tool's own temporary directory (app/temp_dir.hpp), its path a member: dir.path / "x".
struct TempDir : app::TempDir {
  std::filesystem::path path;
  TempDir() : app::TempDir("roofline-test"), path(app::TempDir::path()) {}
};

// Redirects std::cout and std::cerr while alive.
struct CaptureStreams {
  std::ostringstream out, err;
  std::streambuf* old_out;
  std::streambuf* old_err;
  CaptureStreams() : old_out(std::cout.rdbuf(out.rdbuf())), old_err(std::cerr.rdbuf(err.rdbuf())) {}
  ~CaptureStreams() {
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
  }
};

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

// run_cli in-process with stdout and stderr captured.
inline CliResult cli(const std::vector<std::string>& args) {
  CaptureStreams capture;
  const int code = app::run_cli(args);
  return {code, capture.out.str(), capture.err.str()};
}

#ifdef ROOFLINE_FAKE_INJECTION
// `profile` with the stand-in injection library (fake_injection: it only looks like one), `args`
// after it: the program's records come from the program itself.
inline CliResult profile_with_stand_in(std::vector<std::string> args) {
  args.insert(args.begin(), {"profile", "--injection", ROOFLINE_FAKE_INJECTION});
  return cli(args);
}
#endif

// Exit 2, exactly one line on stderr, "error: " first, `needle` inside.
inline void expect_input_error(const CliResult& r, const std::string& needle) {
  CAPTURE(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace roofline
