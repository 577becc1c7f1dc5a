#include "tests/fuzz/targets.hpp"
#include "lib/core/report/report_read.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "app/fanout.hpp"
#include "app/options.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/verdict/partition.hpp"
#include "lib/core/writers/report_writers.hpp"

#ifndef ROOFLINE_FUZZ_DATA_DIR
#error "ROOFLINE_FUZZ_DATA_DIR must name tests/data"
#endif

namespace roofline::fuzz {
namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The report in `data`, or nullopt when it is (correctly) rejected as input.
std::optional<Report> read_report(const std::uint8_t* data, std::size_t size) {
  try {
    return report_from_json(parse_json_text(text_of(data, size), "fuzz.json"), "fuzz.json");
  } catch (const InputError&) {
    return std::nullopt;
  }
}

const Report& fixture(const char* name) {
  static const Report base =
      read_report_file(std::string(ROOFLINE_FUZZ_DATA_DIR) + "/reports/base.json");
  static const Report head =
      read_report_file(std::string(ROOFLINE_FUZZ_DATA_DIR) + "/reports/head.json");
  return std::string_view(name) == "base" ? base : head;
}

void render_all(const Report& report) {
  (void)render_table(report);
  (void)render_table(report, TableOptions{true});
  (void)render_csv(report);
  (void)render_json(report);
  (void)render_ascii_plot(report, 72, 22);
  (void)render_svg(std::vector<Report>{report});
}

void render_comparison(const Report& base, const Report& head, const CompareOptions& options) {
  try {
    const Comparison comparison = compare_reports(base, head, options, "base.json", "head.json");
    (void)comparison.exit_code();
    (void)render_compare_table(comparison);
    (void)render_compare_markdown(comparison);
    (void)render_compare_json(comparison);
  } catch (const InputError&) {
    // Incompatible reports (another device without --allow-mismatch, no common row, ...).
  }
}

// Runs `body`; an exception other than InputError is a finding.
template <typename Body>
void guarded(const char* target, Body body) {
  try {
    body();
  } catch (const InputError&) {
    finding(std::string(target) + ": an input error after the input was read");
  } catch (const std::exception& error) {
    finding(std::string(target) + ": " + error.what());
  }
}

}  // namespace

void spec_reader(const std::uint8_t* data, std::size_t size) {
  GpuSpec spec;
  try {
    spec = parse_gpu_spec(parse_json_text(text_of(data, size), "fuzz.json"), "fuzz.json");
  } catch (const InputError&) {
    return;
  } catch (const std::exception& error) {
    finding(std::string("spec_reader: ") + error.what());
  }
  guarded("spec_reader", [&] {
    const GpuSpec again = parse_gpu_spec(to_json(spec), "fuzz.json");
    if (again.memory.size() != spec.memory.size() || again.compute.size() != spec.compute.size())
      finding("spec_reader: round trip changed the spec");
    Report report;
    report.context = make_context("model");
    report.specs.push_back(spec);
    Workload prefill;
    Workload decode;  // flash-decode's: one new token, GQA 4, a paged cache
    decode.q_len = 1;
    decode.kv_heads = 2;
    decode.page_size = 16;
    for (const KernelModel& kernel : kernel_models()) {
      const Workload& workload = kernel.decode_only ? decode : prefill;
      Row row;
      row.kernel = kernel.name;
      row.workload = workload;
      row.spec_key = spec.key;
      row.prediction = predict(kernel, workload, spec);
      report.rows.push_back(std::move(row));
    }
    render_all(report);
  });
}

void report_reader(const std::uint8_t* data, std::size_t size) {
  std::optional<Report> report;
  try {
    report = read_report(data, size);
  } catch (const std::exception& error) {
    finding(std::string("report_reader: ") + error.what());
  }
  // The streaming reader (report_from_text) gives the same report or the same error.
  std::string streamed_error;
  std::optional<Report> streamed;
  try {
    streamed = report_from_text(text_of(data, size), "fuzz.json");
  } catch (const InputError& error) {
    streamed_error = error.what();
  } catch (const std::exception& error) {
    finding(std::string("report_reader (streaming): ") + error.what());
  }
  if (streamed.has_value() != report.has_value())
    finding("report_reader: the streaming reader " +
            std::string(streamed ? "accepted" : "rejected (" + streamed_error + ")") +
            " what the document reader " + (report ? "accepted" : "rejected"));
  if (streamed && render_json(*streamed) != render_json(*report))
    finding("report_reader: the streaming reader read another report");
  if (!report) {
    try {
      (void)report_from_json(parse_json_text(text_of(data, size), "fuzz.json"), "fuzz.json");
    } catch (const InputError& error) {
      if (streamed_error != error.what())
        finding("report_reader: the streaming reader's error differs: " + streamed_error);
    }
    return;
  }
  guarded("report_reader", [&] {
    const std::string written = render_json(*report);
    const Report again = report_from_json(parse_json_text(written, "again.json"), "again.json");
    if (again.rows.size() != report->rows.size() || render_json(again) != written)
      finding("report_reader: writing and reading back changed the report");
  });
}

void compare(const std::uint8_t* data, std::size_t size) {
  std::optional<Report> report;
  try {
    report = read_report(data, size);
  } catch (const std::exception& error) {
    finding(std::string("compare: ") + error.what());
  }
  if (!report) return;
  guarded("compare", [&] {
    CompareOptions options;
    render_comparison(*report, *report, options);
    options.allow_mismatch = true;
    render_comparison(fixture("base"), *report, options);
    render_comparison(*report, fixture("head"), options);
    if (report->rows.size() >= 2 && report->rows.front().kernel != report->rows.back().kernel) {
      options.kernel_base = report->rows.front().kernel;
      options.kernel_head = report->rows.back().kernel;
      render_comparison(*report, *report, options);
    }
  });
}

void writers(const std::uint8_t* data, std::size_t size) {
  std::optional<Report> report;
  try {
    report = read_report(data, size);
  } catch (const std::exception& error) {
    finding(std::string("writers: ") + error.what());
  }
  if (!report) return;
  guarded("writers", [&] {
    render_all(*report);
    (void)render_svg(std::vector<Report>{*report, fixture("base")});
  });
}

void merge(const std::uint8_t* data, std::size_t size) {
  std::optional<Report> report;
  try {
    report = read_report(data, size);
  } catch (const std::exception& error) {
    finding(std::string("merge: ") + error.what());
  }
  if (!report) return;
  guarded("merge", [&] {
    // With the fixtures: a conflict is an input error, a merge reads back as it was written.
    for (const std::vector<Report>& parts :
         {std::vector<Report>{*report, *report}, std::vector<Report>{*report, fixture("base")},
          std::vector<Report>{fixture("head"), *report}}) {
      Report merged;
      try {
        merged = merge_reports(parts, {"a.json", "b.json"});
      } catch (const InputError&) {
        continue;
      }
      const std::string written = render_json(merged);
      const Report again = report_from_text(written, "merged.json");
      if (again.rows.size() != merged.rows.size() || render_json(again) != written)
        finding("merge: the merged report does not read back as written");
    }
  });
}

void output_paths(const std::uint8_t* data, std::size_t size) {
  // Lines: up to three outputs, then inputs. Nothing is written: only checked.
  std::vector<std::string> lines;
  std::string line;
  for (char c : text_of(data, std::min<std::size_t>(size, 4096))) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  lines.push_back(line);
  std::vector<OutputPath> outputs;
  for (std::size_t i = 0; i < lines.size() && i < 3; ++i)
    outputs.push_back({"--o" + std::to_string(i), lines[i]});
  const std::vector<std::string> inputs(lines.begin() + static_cast<std::ptrdiff_t>(outputs.size()),
                                        lines.end());
  // The same verdict in either order: "the same file" is symmetric.
  auto refused = [&](const std::vector<OutputPath>& order) {
    try {
      check_output_paths(order, inputs);
      return false;
    } catch (const InputError&) {
      return true;
    } catch (const std::exception& error) {
      finding(std::string("output_paths: ") + error.what());
    }
  };
  std::vector<OutputPath> reversed(outputs.rbegin(), outputs.rend());
  if (refused(outputs) != refused(reversed))
    finding("output_paths: the verdict depends on the order of the outputs");
  for (const OutputPath& out : outputs) {
    (void)writes_stdout(out.path);
    try {
      check_output_path(out.path);
    } catch (const InputError&) {
    } catch (const std::exception& error) {
      finding(std::string("output_paths: ") + error.what());
    }
  }
}

void options(const std::uint8_t* data, std::size_t size) {
  const std::string text(text_of(data, std::min<std::size_t>(size, 2048)));
  // Integers: accepted only as decimal digits within the range.
  std::string value = text;
  if (app::decimal_in(-1, 1000)(value).empty()) {
    const long long parsed = std::stoll(text);
    if (parsed < -1 || parsed > 1000 || text.find_first_not_of("+-0123456789") != std::string::npos)
      finding("options: decimal_in accepted " + text);
  }
  value = text;
  if (app::kDecimalUint64(value).empty() &&
      (text.empty() || text.find_first_not_of("0123456789") != std::string::npos))
    finding("options: kDecimalUint64 accepted " + text);
  // Lists and shards: parsed or refused with an input error.
  auto input_error_only = [&](const char* what, const std::function<void()>& parse) {
    try {
      parse();
    } catch (const InputError&) {
    } catch (const std::exception& error) {
      finding(std::string("options: ") + what + ": " + error.what());
    }
  };
  input_error_only("--devices", [&] { (void)app::parse_devices(text, 8); });
  input_error_only("--points", [&] { (void)app::parse_points(text, 100); });
  input_error_only("--shard", [&] { (void)parse_shard(text); });
  // A pattern the guard accepts compiles, and searching a kernel name with it ends (libFuzzer's
  // -timeout catches one that does not).
  bool accepted = true;
  input_error_only("--kernel-regex", [&] {
    accepted = false;
    app::check_kernel_regex(text);
    accepted = true;
  });
  if (accepted) {
    try {
      const std::regex pattern(text, std::regex::ECMAScript);
      (void)std::regex_search("void flash_fwd_kernel<64, true>(Params)", pattern);
    } catch (const std::exception& error) {
      finding(std::string("options: --kernel-regex accepted ") + text + ": " + error.what());
    }
  }
}

namespace {

// The input's lines as arguments: at most 24, of at most 256 bytes each.
std::vector<std::string> arguments_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string_view text = text_of(data, std::min<std::size_t>(size, 8192));
  while (!text.empty() && args.size() < 24) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    args.emplace_back(text.substr(0, std::min<std::size_t>(end, 256)));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return args;
}

// std::cout and std::cerr swallowed while it lives (the command line's help and errors).
class Quiet {
 public:
  Quiet() : out_(std::cout.rdbuf(&null_)), err_(std::cerr.rdbuf(&null_)) {}
  ~Quiet() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

 private:
  struct Null : std::streambuf {
    int overflow(int c) override { return c; }
  } null_;
  std::streambuf* out_;
  std::streambuf* err_;
};

void expect_usage_codes(const char* target, const std::vector<std::string>& args, int code) {
  if (code == 0 || code == 2) return;
  std::string line;
  for (const std::string& a : args) line += " [" + a + "]";
  finding(std::string(target) + ": exit " + std::to_string(code) + " for" + line);
}

}  // namespace

void command_line(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> args = arguments_of(data, size);
  const Quiet quiet;
  const int code = app::parse_cli(args);
  expect_usage_codes("command_line", args, code);
  const auto dash = std::find(args.begin(), args.end(), "--");
  if (dash == args.end() || std::find(args.begin(), dash, "profile") == dash) return;
  std::vector<std::string> plain(args.begin(), dash + 1);
  plain.push_back("program");
  if (app::parse_cli(plain) != code)
    finding("command_line: the program's arguments after `--` changed the parse (exit " +
            std::to_string(code) + ")");
}

void show_options(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> options = arguments_of(data, size);
  for (const std::string& o : options) {
    // No file written or read beyond the fixture: no output, spec or path argument, no stdin.
    if (o == "-" || o.find('/') != std::string::npos) return;
    for (const char* skipped : {"--json", "--csv", "--markdown", "--export", "--svg", "--spec",
                                "--calibration", "-o", "--output"})
      if (o.rfind(skipped, 0) == 0) return;
  }
  std::vector<std::string> args{"show", std::string(ROOFLINE_FUZZ_DATA_DIR) + "/reports/base.json"};
  args.insert(args.end(), options.begin(), options.end());
  const Quiet quiet;
  expect_usage_codes("show_options", args, app::run_cli(args));
}

Target find_target(std::string_view name) {
  if (name == "spec_reader") return spec_reader;
  if (name == "report_reader") return report_reader;
  if (name == "compare") return compare;
  if (name == "writers") return writers;
  if (name == "merge") return merge;
  if (name == "output_paths") return output_paths;
  if (name == "options") return options;
  if (name == "command_line") return command_line;
  if (name == "show_options") return show_options;
  return nullptr;
}

}  // namespace roofline::fuzz
