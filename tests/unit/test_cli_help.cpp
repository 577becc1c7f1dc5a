// The command line that helps: "did you mean" for mistyped commands, options, GPU and kernel
// names; help screens in plain words with each command's examples and exit codes; -q and -v
// anywhere; the command line kept in reports; the CI exports checked against their published
// field lists (Google Benchmark's JSON as github-action-benchmark and Bencher read it, and
// Bencher's BMF schema).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";

// One line on stderr, exit 2, and the line as expected.
void check_usage_error(const std::vector<std::string>& args, const std::string& line) {
  CAPTURE(join(args, " "));
  const CliResult r = cli(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == line + "\n");
}

// Changes the working directory while alive.
struct WorkingDirectory {
  std::filesystem::path before = std::filesystem::current_path();
  explicit WorkingDirectory(const std::filesystem::path& to) { std::filesystem::current_path(to); }
  ~WorkingDirectory() { std::filesystem::current_path(before); }
};

}  // namespace

// ---- did you mean ----

TEST_CASE("suggest: edit distance counts a swap of neighbours as one edit, ignoring case") {
  CHECK(edit_distance("run", "run") == 0);
  CHECK(edit_distance("rnu", "run") == 1);
  CHECK(edit_distance("h20", "h200") == 1);
  CHECK(edit_distance("--seqs", "--seq") == 1);
  CHECK(edit_distance("H200", "h200") == 0);
  CHECK(edit_distance("flsh-v2", "flash-v2") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggest: only names within a typo's reach, nearest first") {
  const std::vector<std::string> commands = {"model", "run",     "profile",   "compare", "plot",
                                             "specs", "metrics", "calibrate", "merge",   "show"};
  CHECK(closest_names("rnu", commands) == std::vector<std::string>{"run"});
  CHECK(closest_names("comapre", commands) == std::vector<std::string>{"compare"});
  CHECK(closest_names("shwo", commands) == std::vector<std::string>{"show"});
  CHECK(closest_names("xyzzy", commands).empty());
  CHECK(closest_names("run", commands).empty());  // an exact name is no typo
  // Ties keep the candidates' order; farther names are left out once a nearer one is found.
  CHECK(closest_names("flash-v9", {"standard", "flash-v1", "flash-v2"}) ==
        std::vector<std::string>{"flash-v1", "flash-v2"});
  CHECK(did_you_mean("mrege", commands) == "did you mean merge?");
  CHECK(did_you_mean("flash-v9", {"flash-v1", "flash-v2", "flash-v3"}) ==
        "did you mean flash-v1, flash-v2 or flash-v3?");
  CHECK(did_you_mean("zzz", commands).empty());
}

TEST_CASE("cli: a mistyped command, option, GPU or kernel gets one line naming what was meant") {
  check_usage_error({"rnu"},
                    "error: unknown command \"rnu\" for cuflash-roofline: did you mean run? (see "
                    "--help)");
  check_usage_error({"-q", "comapre", "a.json", "b.json"},
                    "error: unknown command \"comapre\" for cuflash-roofline: did you mean "
                    "compare? (see --help)");
  check_usage_error({"specs", "lsit"},
                    "error: unknown command \"lsit\" for cuflash-roofline specs: did you mean "
                    "list? (see --help)");
  check_usage_error({"model", "--seqs", "1024"},
                    "error: unknown option --seqs for cuflash-roofline model: did you mean --seq? "
                    "(see --help)");
  check_usage_error({"model", "--gpu=h100", "--casual"},
                    "error: unknown option --casual for cuflash-roofline model: did you mean "
                    "--causal? (see --help)");
  check_usage_error({"compare", "a.json", "b.json", "--treshold=5"},
                    "error: unknown option --treshold for cuflash-roofline compare: did you mean "
                    "--threshold? (see --help)");
  // A root option after the command is found too.
  check_usage_error({"model", "--quiett"},
                    "error: unknown option --quiett for cuflash-roofline model: did you mean "
                    "--quiet? (see --help)");
  {
    const CliResult r = cli({"model", "--gpu", "h20"});
    CHECK(r.code == 2);
    CHECK(r.err.rfind("error: unknown GPU \"h20\": did you mean h200? (all ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("a100") == std::string::npos);  // not the whole list
  }
  check_usage_error({"model", "--kernel", "flsh-v2"},
                    "error: unknown kernel \"flsh-v2\": did you mean flash-v2? (known: standard, "
                    "flash-v1, flash-v2, flash-v3, flash-decode)");
  check_usage_error({"show", kReports + "base.json", "--export", "gbnch=-"},
                    "error: --export: unknown format \"gbnch\" (did you mean gbench?) (see "
                    "--help)");
  // Nothing near: CLI11's own words, or the list.
  check_usage_error({"xyzzy"},
                    "error: unknown command \"xyzzy\" for cuflash-roofline: one of model, run, "
                    "profile, compare, plot, specs, metrics, calibrate, merge, show (see --help)");
  {
    const CliResult r = cli({"model", "--frobnicate"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: The following argument was not expected: --frobnicate (see --help)\n");
  }
}

// ---- help screens ----

TEST_CASE("cli: help screens in plain words, with each command's examples and exit codes") {
  const std::vector<std::vector<std::string>> commands = {
      {"model"},     {"run"},           {"profile"},       {"compare"},           {"plot"},
      {"specs"},     {"specs", "list"}, {"specs", "show"}, {"specs", "validate"}, {"metrics"},
      {"calibrate"}, {"merge"},         {"show"}};
  std::set<std::string> footers;
  for (std::vector<std::string> args : commands) {
    CAPTURE(join(args, " "));
    args.push_back("--help");
    const CliResult r = cli(args);
    CHECK(r.code == 0);
    const std::string& help = r.out;
    // No raw parser syntax.
    for (const char* raw : {"INT:INT", ":PATH", "Excludes:", "Needs:", "(1x)", "(2x)", " x 2",
                            "TEXT:{", "REQUIRED", "=[", "UINT64:"})
      CHECK_MESSAGE(help.find(raw) == std::string::npos, raw);
    CHECK(help.find("Exit codes:") != std::string::npos);
    // A build without CUDA: run and calibrate exit 3, always.
    if (help.find("has no CUDA support") == std::string::npos)
      CHECK(help.find("  0  ") != std::string::npos);
    CHECK(help.find("Every command also takes -q") != std::string::npos);
    footers.insert(help.substr(help.find("Exit codes:")));
    // Exit 1 is compare's alone.
    if (args.front() != "compare") CHECK(help.find("regression") == std::string::npos);
  }
  // Each command its own codes: not one block on every screen.
  CHECK(footers.size() >= 5);

  const std::string model = cli({"model", "--help"}).out;
  CHECK(model.find("--batch INT") != std::string::npos);
  CHECK(model.find("(default: 1)") != std::string::npos);
  CHECK(model.find("(default: 1024,4096,8192,16384)") != std::string::npos);
  CHECK(model.find("(default: a100)") != std::string::npos);
  CHECK(model.find("(not with --no-causal)") != std::string::npos);
  CHECK(model.find("Workloads and kernels:") != std::string::npos);
  CHECK(model.find("Output:") != std::string::npos);
  CHECK(model.find("Examples:\n  cuflash-roofline model ") != std::string::npos);
  CHECK(model.find("\n  2  usage or input error") != std::string::npos);

  const std::string compare = cli({"compare", "--help"}).out;
  CHECK(compare.find("Usage: cuflash-roofline compare [OPTIONS] BASE.json [HEAD.json]") !=
        std::string::npos);
  CHECK(compare.find("--fail-on-more-work") != std::string::npos);
  CHECK(compare.find("\n  1  a regression") != std::string::npos);
  CHECK(compare.find("--threshold PCT") != std::string::npos);

  const std::string show = cli({"show", "--help"}).out;
  CHECK(show.find("Usage: cuflash-roofline show [OPTIONS] REPORT.json...") != std::string::npos);
  CHECK(show.find("--group-by functor|name|shape|nvtx") != std::string::npos);
  CHECK(show.find("--export FORMAT=PATH") != std::string::npos);

  const std::string root = cli({"--help"}).out;
  CHECK(root.find("Exit codes (each command's --help lists those it returns):") !=
        std::string::npos);
  CHECK(root.find("Every command:") != std::string::npos);
}

namespace {

// Every line of `args`'s standard output at most `width` columns; the output.
std::string output_fits(const std::vector<std::string>& args, std::size_t width) {
  CAPTURE(args.front());
  const CliResult r = cli(args);
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(display_width(line) <= width);
  }
  return r.out;
}

}  // namespace

TEST_CASE("cli: help, specs list and show, and metrics fit an 80-column terminal") {
  // They were wrapped at 100 columns whatever the terminal (150-column lines at 80); a long
  // example goes on in the next line after a shell line continuation.
  setenv("COLUMNS", "80", 1);
  for (const char* command : {"show", "profile", "run", "compare", "model", "merge", "plot",
                              "calibrate", "specs", "metrics"})
    output_fits({command, "--help"}, 80);
  const std::string compare = output_fits({"compare", "--help"}, 80);
  CHECK(compare.find("--markdown \\\n      \"$GITHUB_STEP_SUMMARY\"") != std::string::npos);
  // specs list too (104 columns before): the name cut, the peaks kept.
  const std::string specs = output_fits({"specs", "list"}, 80);
  CHECK(specs.find("FP16 TFLOP/s") != std::string::npos);
  CHECK(specs.find("h200-sxm") != std::string::npos);
  // specs show too (375 columns before): each source wrapped under its key.
  const std::string show = output_fits({"specs", "show", "h200"}, 80);
  CHECK(show.find("    launch_floor_us: the shortest kernel time") != std::string::npos);
  CHECK(show.find("  floors: a launch 1.12 µs, a graph node 0.67 µs\n") != std::string::npos);
  // metrics too (161 columns before): a wide sum a term a line.
  const std::string metrics = output_fits({"metrics", "--chip", "GH100"}, 80);
  CHECK(metrics.find("+ sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum") !=
        std::string::npos);
  unsetenv("COLUMNS");
}

TEST_CASE("cli: -q and -v anywhere on the line") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-q", "model", "--gpu", "h100", "--seq", "1024"},
        {"model", "-q", "--gpu", "h100", "--seq", "1024"},
        {"model", "--gpu", "h100", "--seq", "1024", "-q"},
        {"model", "--gpu", "h100", "--seq", "1024", "-vv"},
        {"-v", "specs", "list"},
        {"specs", "list", "-q"},
        {"specs", "show", "h200", "--verbose"}}) {
    CAPTURE(join(args, " "));
    CHECK(cli(args).code == 0);
  }
}

TEST_CASE("cli: metrics writes a metric's factor as it is (1e-9, not 0.00)") {
  const CliResult r = cli({"metrics"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("0.00 ×") == std::string::npos);
  CHECK(r.out.find("1e-9 × gpu__time_duration.sum") != std::string::npos);
}

// ---- the command line kept ----

TEST_CASE("cli: a report keeps the command line that wrote it") {
  TempDir dir;
  const std::string path = (dir.path / "model.json").string();
  const std::vector<std::string> args = {"model",    "--gpu",    "h100",   "--seq", "1024",
                                         "--kernel", "flash-v2", "--json", path};
  REQUIRE(cli(args).code == 0);
  const auto j = nlohmann::json::parse(read_text(path));
  std::vector<std::string> expected = {"cuflash-roofline"};
  expected.insert(expected.end(), args.begin(), args.end());
  CHECK(j["context"]["command"] == "model");
  CHECK(j["context"]["command_line"] == expected);
  CHECK(j["context"]["program_command"].is_null());
  // Read back and written again (show), the line stays the original's.
  const CliResult again = cli({"show", path, "--json", "-"});
  REQUIRE(again.code == 0);
  CHECK(nlohmann::json::parse(again.out)["context"]["command_line"] == expected);
  // Reports written before it was kept are read as they are.
  const CliResult old = cli({"show", kReports + "base.json", "--json", "-"});
  REQUIRE(old.code == 0);
  CHECK(nlohmann::json::parse(old.out)["context"]["command_line"] == nlohmann::json::array());
}

// ---- CI ----

TEST_CASE("cli: compare's Markdown names reports relative to the working directory") {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "reports");
  std::filesystem::copy_file(kReports + "base.json", dir.path / "reports" / "base.json");
  std::filesystem::copy_file(kReports + "head_improved.json", dir.path / "reports" / "head.json");
  const std::string base = (dir.path / "reports" / "base.json").string();
  const std::string head = (dir.path / "reports" / "head.json").string();
  WorkingDirectory here(dir.path);
  const CliResult r = cli({"compare", base, head, "--markdown", "-"});
  CHECK(r.code == 0);
  CHECK(r.out.find("**base** `reports/base.json (") != std::string::npos);
  CHECK(r.out.find("**head** `reports/head.json (") != std::string::npos);
  CHECK(r.out.find(dir.path.string()) == std::string::npos);
}

namespace {

nlohmann::json export_of(const std::string& format, const std::string& report) {
  const CliResult r = cli({"show", report, "--export", format + "=-"});
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("export: Google Benchmark JSON has the fields its readers take") {
  const nlohmann::json j = export_of("gbench", kReports + "base.json");
  // Google Benchmark's reporter: {"context": {...}, "benchmarks": [...]}. Bencher's cpp_google
  // adapter requires context.caches (an array); github-action-benchmark's googlecpp tool reads
  // name, real_time, time_unit, iterations, cpu_time and threads of each benchmark.
  REQUIRE(j.is_object());
  REQUIRE(j["context"].is_object());
  CHECK(j["context"]["caches"].is_array());
  CHECK(j["context"]["date"] == "2026-11-20T09:14:03Z");
  CHECK(j["context"]["host_name"] == "gpu-runner-07");
  CHECK(j["context"]["executable"].is_string());
  CHECK(j["context"]["library_build_type"] == "release");
  REQUIRE(j["benchmarks"].is_array());
  CHECK(j["benchmarks"].size() == 24);
  std::set<std::string> names;
  for (const auto& b : j["benchmarks"]) {
    CHECK(b["name"].is_string());
    names.insert(b["name"].get<std::string>());
    CHECK(b["run_name"] == b["name"]);
    CHECK(b["run_type"] == "iteration");
    CHECK(b["repetitions"].is_number_integer());
    CHECK(b["repetition_index"].is_number_integer());
    CHECK(b["threads"] == 1);
    CHECK(b["family_index"].is_number_integer());
    CHECK(b["per_family_instance_index"].is_number_integer());
    CHECK(b["iterations"].get<long>() >= 1);
    CHECK(b["real_time"].get<double>() > 0);
    CHECK(b["cpu_time"].is_number());
    const std::string unit = b["time_unit"].get<std::string>();
    CHECK((unit == "ns" || unit == "us" || unit == "ms" || unit == "s"));
    // User counters: numbers, as Google Benchmark writes them beside the fixed fields.
    CHECK(b["flops_per_second"].get<double>() > 0);
    CHECK(b["fraction_of_bound"].get<double>() > 0);
    CHECK(b["dram_bytes_per_second"].get<double>() > 0);
    for (const auto& [key, value] : b.items())
      if (key != "name" && key != "run_name" && key != "run_type" && key != "time_unit")
        CHECK_MESSAGE(value.is_number(), key);
  }
  CHECK(names.size() == 24);  // unique: a dashboard's series key
  CHECK(names.count("flash-v2 B1 H8 N4096 d64 causal fwd [h100-sxm5]") == 1);
}

TEST_CASE("export: Bencher Metric Format with the confidence bounds") {
  const nlohmann::json j = export_of("bmf", kReports + "base.json");
  // bencher.dev/bmf.json: an object of benchmarks, each an object of measures, each an object
  // with "value" (required) and "lower_value", "upper_value", all numbers, nothing else.
  REQUIRE(j.is_object());
  CHECK(j.size() == 24);
  for (const auto& [name, measures] : j.items()) {
    CAPTURE(name);
    CHECK_FALSE(name.empty());
    REQUIRE(measures.is_object());
    REQUIRE(measures.contains("latency"));
    CHECK(measures.contains("throughput"));
    for (const auto& [measure, metric] : measures.items()) {
      CAPTURE(measure);
      CHECK(measure.size() <= 64);  // a measure slug's limit
      REQUIRE(metric.is_object());
      REQUIRE(metric["value"].is_number());
      for (const auto& [key, value] : metric.items()) {
        CHECK((key == "value" || key == "lower_value" || key == "upper_value"));
        CHECK(value.is_number());
      }
      if (metric.contains("lower_value")) {
        CHECK(metric["lower_value"].get<double>() <= metric["value"].get<double>());
        CHECK(metric["value"].get<double>() <= metric["upper_value"].get<double>());
      }
    }
    // The recorded samples vary: the time has bounds, and they are not the value itself.
    const auto& latency = measures["latency"];
    REQUIRE(latency.contains("lower_value"));
    CHECK(latency["lower_value"].get<double>() < latency["value"].get<double>());
  }
}

TEST_CASE("export: both formats name the same rows with the same time") {
  const nlohmann::json gbench = export_of("gbench", kReports + "head.json");
  const nlohmann::json bmf = export_of("bmf", kReports + "head.json");
  REQUIRE(gbench["benchmarks"].size() == bmf.size());
  for (const auto& b : gbench["benchmarks"]) {
    const std::string name = b["name"].get<std::string>();
    REQUIRE(bmf.contains(name));
    CHECK(bmf[name]["latency"]["value"].get<double>() ==
          doctest::Approx(b["real_time"].get<double>() * 1e3).epsilon(1e-9));  // us → ns
  }
}

TEST_CASE("export: refusals are one line, exit 2, and no file") {
  TempDir dir;
  const std::string out = (dir.path / "bench.json").string();
  check_usage_error({"show", kReports + "model.json", "--export", "gbench=" + out},
                    "error: --export: the report has no timed rows to export (an analytic model "
                    "report has no measured time, or every row failed)");
  CHECK_FALSE(std::filesystem::exists(out));
  check_usage_error({"show", kReports + "base.json", "--export", "gbench"},
                    "error: --export: must be FORMAT=PATH with FORMAT gbench or bmf (got "
                    "\"gbench\") (see --help)");
  check_usage_error(
      {"show", kReports + "base.json", "--export", "bmf=" + out, "--export", "bmf=" + out + "2"},
      "error: --export bmf is given twice");
  check_usage_error({"show", kReports + "base.json", "--export", "bmf=-", "--json", "-"},
                    "error: --json - and --export bmf - name the same output");
  CHECK_FALSE(std::filesystem::exists(out));
}
