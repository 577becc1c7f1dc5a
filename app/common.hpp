// Options and helpers shared by the subcommands.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/table_options.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/workload.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/report.hpp"

namespace roofline::app {

// Where spec files come from: the shipped directory, plus --specs-dir and --spec.
struct SpecOptions {
  std::vector<std::string> dirs;
  std::vector<std::string> files;
  void add_to(CLI::App& app);
  SpecRegistry load() const;
  // Throws InputError when an output would replace a --spec file, or write a *.json file into
  // the shipped spec folder or a --specs-dir (every later command would read it as a spec).
  void check_outputs(const std::vector<OutputPath>& outputs) const;
};

// The workload grid of `model` and `run`, and the kernels to cover.
struct SweepOptions {
  std::vector<int> seq_lens = {1024, 4096, 8192, 16384};
  int batch = 1;
  int heads = 8;
  int head_dim = 64;
  bool causal_only = false;
  bool non_causal_only = false;
  std::vector<std::string> kernels;  // empty: all bundled kernels
  std::vector<std::string> passes = {"fwd"};
  std::string dtype = "fp16";  // --dtype fp16|bf16: the element type of every workload
  // Decode workloads (--q-len given): new tokens per sequence against a KV cache of --seq
  // tokens (or --kv-lens, one length per sequence), --kv-heads K/V heads, --page-size,
  // --kv-splits (each a row: 0 lets the kernel choose).
  std::vector<int> q_lens;
  int kv_heads = 0;
  int page_size = 0;
  std::vector<int> kv_splits = {0};
  std::vector<int> kv_lens;
  bool seq_given = false;

  void add_to(CLI::App& app);
  // Every workload of the grid, validated (throws InputError).
  std::vector<Workload> workloads() const;
  std::vector<Workload> decode_workloads() const;  // workloads() with --q-len
  // A workload of the grid's batch, heads, head dim and dtype, not yet validated.
  Workload base_workload(int seq_len, bool causal, Pass pass) const;
  bool decode() const { return !q_lens.empty(); }
  // Validated. Without --kernel, the kernels that run the dtype and the kind of workload
  // (decode with --q-len, else prefill); a named kernel that does not (flash-v1 with --dtype
  // bf16, flash-decode without --q-len) is an InputError.
  std::vector<std::string> kernel_names() const;
};

// Result files: --json, --csv (PATH or - for stdout), and the terminal table otherwise.
struct OutputOptions {
  std::string json_path;
  std::string csv_path;
  std::string svg_path;
  bool ascii_plot = false;
  std::vector<std::string> exports;  // --export FORMAT=PATH (app/export_option.hpp)
  // Print where the time goes (summary.hpp, the top groups) before the table: `profile`.
  std::size_t summary_top = 0;
  TableChoice table;  // --wide, --columns, --flops
  void add_to(CLI::App& app, bool with_plots);
  void add_export_to(CLI::App& app);  // --export: for commands whose rows are timed
  // Fails early (InputError) when a path cannot be written, two outputs are the same file or
  // an output is one of `inputs`, before any work.
  void check(const std::vector<std::string>& inputs, const SpecOptions& specs) const;
  // Writes every requested output; prints the table to stdout unless stdout already got JSON
  // or CSV; `terminal`, where given, is printed in the table's place (profile --gpu's
  // projection).
  void emit(const Report& report, const std::string* terminal = nullptr) const;
};

// --ceilings spec|calibrated and --calibration FILE: which roofs judge the rows (calibration.hpp).
// `keep_recorded`: without --ceilings, leave a report's own choice alone (plot).
struct CeilingOptions {
  std::string ceilings;
  std::vector<std::string> calibrations;
  bool keep_recorded = false;
  void add_to(CLI::App& app, bool keep_recorded_choice);
  // Reads the calibration files (InputError for a bad one, or for `--ceilings calibrated`
  // without one where the report cannot carry its own): call before any work.
  std::vector<CalibrationOverlay> load() const;
  // Applies the choice to `report`.
  void apply(Report& report, const std::vector<CalibrationOverlay>& overlays) const;
};

// Help groups shared by the commands' options.
extern const char* const kWorkloadGroup;
extern const char* const kDecodeGroup;
extern const char* const kOutputGroup;

// Rejects an empty PATH argument (`--json ''` would otherwise mean "no output").
extern const CLI::Validator kNonEmptyPath;

bool stderr_is_tty();
bool stdout_is_tty();
// ANSI colours on stdout: a terminal, and NO_COLOR unset or empty (no-color.org).
bool colour_wanted();

// A report's path as the outputs show it: relative to the working directory when given as an
// absolute path inside it (a CI runner's /home/runner/work/repo/repo/base.json reads as
// base.json), else as given.
std::string display_path(const std::string& path);

}  // namespace roofline::app
