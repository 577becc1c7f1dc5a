// Hostile inputs, round three (issue 37): each example of the issue that this file names gets
// the documented exit code and one line on stderr, loses no file and writes none.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "app/process.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
namespace fs = std::filesystem;

namespace {

const fs::path kReports = fs::path(ROOFLINE_TEST_DATA_DIR) / "reports";
const std::string kBase = (kReports / "base.json").string();

// The tool with `args` under a 512 MiB address-space cap (prlimit --as), stderr into `err`.
app::ChildStatus run_capped(const std::vector<std::string>& args, const fs::path& err) {
  app::SpawnOptions options;
  options.argv = {"/usr/bin/prlimit", "--as=536870912", ROOFLINE_BINARY};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.stdout_path = "/dev/null";
  options.stderr_path = err;
  app::ChildProcess tool(options);
  return tool.wait();
}
const std::string kHead = (kReports / "head_improved.json").string();

std::size_t lines_of(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// A copy of the shipped H200 spec named `name`, with `aliases`, in `dir` as FILE.json.
void write_spec(const fs::path& dir, const std::string& file, const std::string& name,
                const std::string& alias) {
  nlohmann::json spec =
      nlohmann::json::parse(read_text(fs::path(ROOFLINE_TEST_SPECS_DIR) / "h200-sxm.json"));
  spec["name"] = name;
  spec["aliases"] = {alias};
  spec["device_names"] = {name};
  fs::create_directories(dir);
  std::ofstream(dir / (file + ".json")) << spec.dump();
}

}  // namespace

TEST_CASE("hardening: integers in decimal digits only, percentages finite") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"show", kBase, "--top", "0x10"}, "--top: must be a decimal integer"},
      {{"compare", kBase, kHead, "--process-noise", "nan"},
       "--process-noise: must be a percentage"},
      {{"compare", kBase, kHead, "--process-noise", "inf"},
       "--process-noise: must be a percentage"},
      {{"run", "--reps", "0x10"}, "--reps: must be a decimal integer"},
      {{"run", "--counter-repeats", "1e1"}, "--counter-repeats: must be a decimal integer"},
      {{"run", "--rounds", "0b1"}, "--rounds: must be a decimal integer"},
      {{"run", "--warmup", "0x3"}, "--warmup: must be a decimal integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    expect_input_error(cli(c.args), c.message);
  }
}

TEST_CASE("hardening: an empty output path is refused, not ignored") {
  TempDir dir;
  const std::string out = (dir.path / "m.json").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"merge", kBase, "-o", out, "--csv", ""},
        std::vector<std::string>{"merge", kBase, "-o", ""},
        std::vector<std::string>{"show", kBase, "--json", ""},
        std::vector<std::string>{"show", kBase, "--markdown", ""},
        std::vector<std::string>{"compare", kBase, kHead, "--json", ""},
        std::vector<std::string>{"plot", kBase, "-o", ""}}) {
    CAPTURE(args);
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("a path must not be empty") != std::string::npos);
    CHECK(lines_of(r.err) == 1);
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("hardening: show's --kernel-regex has profile's limits") {
  for (const std::string& pattern :
       {std::string("(a+)+$"), std::string("(x|y)*z"), std::string(100'000, 'a'),
        std::string(20'000, '(') + std::string(20'000, ')')}) {
    CAPTURE(pattern.substr(0, 20));
    const CliResult r = cli({"show", kBase, "--kernel-regex", pattern});
    CHECK(r.code == 2);
    CHECK(r.err.rfind("error: --kernel-regex", 0) == 0);
    CHECK(lines_of(r.err) == 1);
  }
}

TEST_CASE("hardening: profile's program after -- keeps its options, whatever comes before") {
  // --export (an option of several values) before "--" took the "--", and the program's own
  // --batch was then read as an option of ours.
  TempDir dir;
  const std::string missing = (dir.path / "prog").string();
  for (const std::vector<std::string>& before :
       {std::vector<std::string>{"--json", (dir.path / "p.json").string(), "--export",
                                 "gbench=" + (dir.path / "b.json").string()},
        std::vector<std::string>{"--export", "gbench=" + (dir.path / "b.json").string()}}) {
    std::vector<std::string> args = {"profile", "--injection", ROOFLINE_FAKE_INJECTION};
    args.insert(args.end(), before.begin(), before.end());
    args.insert(args.end(), {"--", missing, "--batch", "64"});
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("not expected") == std::string::npos);
    CHECK(r.err.find(missing) != std::string::npos);  // the program is looked for, and missing
  }
  const CliResult none = cli({"profile", "--injection", ROOFLINE_FAKE_INJECTION, "--"});
  CHECK(none.code == 2);
  CHECK(none.err.find("no program to run") != std::string::npos);
}

TEST_CASE("hardening: a spec's control characters never reach the terminal") {
  TempDir dir;
  write_spec(dir.path / "specs", "evil", "Evil\x1b[31mGPU\x07", "evilgpu");
  const CliResult list = cli({"specs", "list", "--specs-dir", (dir.path / "specs").string()});
  CHECK(list.code == 0);
  CHECK(list.out.find('\x1b') == std::string::npos);
  CHECK(list.out.find('\x07') == std::string::npos);
  CHECK(list.out.find("Evil\\x1b[31mGPU\\x07") != std::string::npos);
  const CliResult show =
      cli({"specs", "show", "evilgpu", "--specs-dir", (dir.path / "specs").string()});
  CHECK(show.code == 0);
  CHECK(show.out.find('\x1b') == std::string::npos);
}

TEST_CASE("hardening: one spec key in two of the user's folders is refused, not chosen") {
  TempDir dir;
  write_spec(dir.path / "a", "mine", "My GPU", "mygpu");
  write_spec(dir.path / "b", "mine", "My GPU", "mygpu");
  const CliResult r = cli({"specs", "list", "--specs-dir", (dir.path / "a").string(), "--specs-dir",
                           (dir.path / "b").string()});
  CHECK(r.code == 2);
  CHECK(r.err.find("both define the spec \"mine\"") != std::string::npos);
  CHECK(lines_of(r.err) == 1);
  // A user's spec still replaces a shipped one of the same key.
  write_spec(dir.path / "c", "h200-sxm", "My H200", "my-h200");
  CHECK(cli({"specs", "list", "--specs-dir", (dir.path / "c").string()}).code == 0);
}

TEST_CASE("hardening: Markdown to GitHub's step summary is appended, elsewhere replaced") {
  TempDir dir;
  const std::string summary = (dir.path / "summary.md").string();
  std::ofstream(summary) << "# an earlier step\n";
  ::setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  const CliResult r = cli({"compare", kBase, kHead, "--markdown", summary});
  ::unsetenv("GITHUB_STEP_SUMMARY");
  CHECK(r.code == 0);
  const std::string text = read_text(summary);
  CHECK(text.rfind("# an earlier step\n\n", 0) == 0);
  CHECK(text.find("cuflash-roofline compare") != std::string::npos);
  // Without the variable the same path is replaced.
  CHECK(cli({"compare", kBase, kHead, "--markdown", summary}).code == 0);
  CHECK(read_text(summary).find("an earlier step") == std::string::npos);
}

TEST_CASE("hardening: no output replaces a spec or lands in a spec folder") {
  TempDir dir;
  write_spec(dir.path / "specs", "mine", "My GPU", "mygpu");
  const std::string spec = (dir.path / "specs" / "mine.json").string();
  const std::string before = read_text(spec);
  const std::string specs_dir = (dir.path / "specs").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"model", "--specs-dir", specs_dir, "--json", spec}, "into the spec folder"},
      {{"model", "--specs-dir", specs_dir, "--json", specs_dir + "/new.json"},
       "into the spec folder"},
      {{"model", "--json", (fs::path(ROOFLINE_TEST_SPECS_DIR) / "report.json").string()},
       "into the spec folder"},
      {{"show", kBase, "--spec", spec, "--json", spec}, "would replace the --spec file"},
      {{"merge", kBase, "--spec", spec, "-o", spec}, "would replace the --spec file"},
      {{"compare", kBase, kHead, "--spec", spec, "--json", spec}, "would replace the --spec file"},
      {{"plot", kBase, "--spec", spec, "-o", spec}, "would replace the --spec file"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    expect_input_error(cli(c.args), c.message);
  }
  CHECK(read_text(spec) == before);
  CHECK_FALSE(fs::exists(dir.path / "specs" / "new.json"));
  CHECK_FALSE(fs::exists(fs::path(ROOFLINE_TEST_SPECS_DIR) / "report.json"));
}

TEST_CASE("hardening: a row's skipped analysis block is checked for duplicates, in linear time") {
  // A row's `analysis` (recomputed, never read) of 100,000 keys: read (it took 13 s at 80,000
  // with a linear search per key); a duplicate key inside it is still an error.
  nlohmann::json report = nlohmann::json::parse(read_text(kBase));
  nlohmann::json analysis = nlohmann::json::object();
  for (int i = 0; i < 100'000; ++i) analysis["k" + std::to_string(i)] = i;
  report["rows"][0]["analysis"] = analysis;
  TempDir dir;
  const std::string path = (dir.path / "big.json").string();
  std::ofstream(path) << report.dump();
  const CliResult ok = cli({"show", path, "--view", "table"});
  CHECK(ok.code == 0);
  std::string text = report.dump();
  const std::size_t at = text.find("\"k1\":1");
  REQUIRE(at != std::string::npos);
  text.replace(at, 6, "\"k2\":1");
  std::ofstream(path, std::ios::trunc) << text;
  const CliResult dup = cli({"show", path});
  CHECK(dup.code == 2);
  CHECK(dup.err.find("duplicate key") != std::string::npos);
  CHECK(lines_of(dup.err) == 1);
}

TEST_CASE("hardening: BF16 on a GPU without BF16 is unsupported, not judged") {
  const CliResult r =
      cli({"model", "--gpu", "v100", "--dtype", "bf16", "--seq", "1024", "--json", "-"});
  REQUIRE(r.code == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  REQUIRE(!report["rows"].empty());
  for (const nlohmann::json& row : report["rows"]) {
    CAPTURE(row["kernel"]);
    CHECK(row["status"] == "unsupported");
  }
  CHECK(report["rows"][0]["message"].get<std::string>().find("BF16 needs compute capability 8.0") !=
        std::string::npos);
}

TEST_CASE("hardening: out of memory while reading JSON is exit 2 and one line, not an abort") {
  // An 80 MB calibration and a report with a 4,000,000-element member (a tree of about 700 MB),
  // read under a 512 MiB address-space cap: the half-built tree's teardown allocated and aborted
  // (exit 134) before.
  if (!fs::exists("/usr/bin/prlimit")) {
    MESSAGE("SKIP: /usr/bin/prlimit not installed");
    return;
  }
  TempDir dir;
  const std::string big = (dir.path / "big.json").string();
  {
    std::ofstream out(big);
    out << "{\"schema_version\": 1, \"x\": [";
    for (int i = 0; i < 4'000'000; ++i) out << (i ? "," : "") << "{\"a" << i << "\": " << i << "}";
    out << "]}";
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"model", "--seq", "1024", "--ceilings", "calibrated",
                                 "--calibration", big},
        std::vector<std::string>{"show", big}}) {
    CAPTURE(args);
    const app::ChildStatus status = run_capped(args, dir.path / "err.txt");
    const std::string err = read_text(dir.path / "err.txt");
    CAPTURE(err);
    CHECK(status.code() == 2);
    CHECK(lines_of(err) == 1);
    CHECK(err.find("not enough memory to read " + big) != std::string::npos);
  }
}

TEST_CASE("hardening: the commands that need no GPU start under a 512 MiB address-space cap") {
  // cuBLAS (libcublasLt maps 540 MB) was linked into the binary: no command could start.
  if (!fs::exists("/usr/bin/prlimit")) {
    MESSAGE("SKIP: /usr/bin/prlimit not installed");
    return;
  }
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"specs", "list"},
        std::vector<std::string>{"model", "--gpu", "h100", "--seq", "1024"},
        std::vector<std::string>{"show", kBase}}) {
    CAPTURE(args);
    const app::ChildStatus status = run_capped(args, dir.path / "err.txt");
    CAPTURE(read_text(dir.path / "err.txt"));
    CHECK(status.code() == 0);
  }
}

TEST_CASE("hardening: a link to /dev/stdout and /proc/PID/fd/1 are written through") {
  // The log a user appends to keeps its lines; the link stays a link (it was replaced by the
  // report, renamed over it).
  TempDir dir;
  const fs::path link = dir.path / "out";
  fs::create_symlink("/dev/stdout", link);
  const fs::path log = dir.path / "log.txt";
  for (const std::string& target : {link.string(), std::string("/proc/$$/fd/1")}) {
    CAPTURE(target);
    std::ofstream(log) << "an earlier line\n";
    app::SpawnOptions options;
    options.argv = {"/bin/sh",
                    "-c",
                    "exec \"$0\" show \"$1\" --view summary --json " + target + " >> \"$2\"",
                    ROOFLINE_BINARY,
                    kBase,
                    log.string()};
    app::ChildProcess shell(options);
    CHECK(shell.wait().code() == 0);
    const std::string text = read_text(log);
    CHECK(text.rfind("an earlier line\n{", 0) == 0);
    CHECK(fs::is_symlink(link));
  }
}

TEST_CASE("parse_cli: every option checked, `--` kept apart, and nothing run") {
  // The fuzz target of the command line parses what run_cli parses, without running it.
  TempDir dir;
  const std::string report = (dir.path / "p.json").string();
  CHECK(app::parse_cli({"profile", "--json", report, "--export",
                        "gbench=" + (dir.path / "b.json").string(), "--", "./prog", "--batch",
                        "64"}) == 0);
  CHECK(app::parse_cli({"profile", "--json", report, "--", "./prog", "--batch", "64"}) == 0);
  CHECK(!fs::exists(report));  // not run
  CHECK(app::parse_cli({"show", report, "--top", "0x10"}) == 2);
  // A pattern is checked when show runs (the show_options fuzz target runs it).
  CHECK(app::parse_cli({"show", report, "--kernel-regex", std::string(5000, '(')}) == 0);
  CHECK(cli({"show", kBase, "--kernel-regex", std::string(5000, '(')}).code == 2);
  CHECK(app::parse_cli({"model", "--gpu", "h100", "--seq", "1024", "--json", report}) == 0);
  CHECK(!fs::exists(report));
  CHECK(app::parse_cli({"rnu"}) == 2);
}
