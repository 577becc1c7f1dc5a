// Outputs under hostile conditions (issue 10): limits that are NaN, outputs that are inputs,
// character devices and FIFOs written through, links kept; every refusal exit 2 and one line.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kReports = fs::path(ROOFLINE_TEST_DATA_DIR) / "reports";

}  // namespace

TEST_CASE("hardening: compare and plot refuse NaN limits and outputs that are inputs") {
  TempDir dir;
  const fs::path base = dir.path / "base.json";
  const fs::path head = dir.path / "head.json";
  fs::copy_file(kReports / "base.json", base);
  fs::copy_file(kReports / "head.json", head);
  const std::string base_text = read_text(base);
  const std::string head_text = read_text(head);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"compare", base.string(), head.string(), "--threshold", "nan"},
       "error: --threshold: must be a percentage from 0 to 1000000 (got \"nan\")"},
      {{"compare", base.string(), head.string(), "--tolerance", "nan"},
       "error: --tolerance: must be a percentage"},
      {{"compare", base.string(), head.string(), "--threshold", "inf"}, "error: --threshold: must"},
      {{"compare", base.string(), head.string(), "--tolerance", "-1"}, "error: --tolerance: must"},
      {{"compare", base.string(), head.string(), "--json", head.string()},
       "error: --json " + head.string() + " would overwrite the input " + head.string()},
      {{"compare", base.string(), head.string(), "--markdown", base.string()},
       "would overwrite the input"},
      {{"compare", base.string(), head.string(), "--json", ""}, "error: --json: a path must"},
      {{"compare", base.string(), head.string(), "--json", (dir.path / "c.json").string(),
        "--markdown", (dir.path / "c.json").string()},
       "name the same output"},
      {{"plot", base.string(), "-o", base.string()},
       "error: -o " + base.string() + " would overwrite the input " + base.string()},
      {{"plot", base.string(), "-o", ""}, "error: --output: a path must not be empty"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    const CliResult r = cli(c.args);
    expect_input_error(r, c.message);
    if (c.message.rfind("error: ", 0) == 0) CHECK(r.err.rfind(c.message, 0) == 0);
    CHECK(read_text(base) == base_text);
    CHECK(read_text(head) == head_text);
    CHECK_FALSE(fs::exists(dir.path / "c.json"));
  }
  // A spec file is an input of model.
  const fs::path spec = dir.path / "mine.json";
  fs::copy_file(fs::path(ROOFLINE_TEST_SPECS_DIR) / "h100-sxm5.json", spec);
  const std::string spec_text = read_text(spec);
  expect_input_error(cli({"--spec", spec.string(), "model", "--json", spec.string()}),
                     "would overwrite the input");
  CHECK(read_text(spec) == spec_text);
}

TEST_CASE("hardening: outputs to character devices and FIFOs are written through") {
  TempDir dir;
  struct stat before {};
  REQUIRE(stat("/dev/null", &before) == 0);
  const CliResult r = cli({"model", "--seq", "1024", "--json", "/dev/null", "--csv", "/dev/null"});
  CHECK(r.code == 2);  // the same output twice
  CHECK(cli({"model", "--seq", "1024", "--json", "/dev/null"}).code == 0);
  struct stat after {};
  REQUIRE(stat("/dev/null", &after) == 0);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_ino == before.st_ino);

  const fs::path fifo = dir.path / "out.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  const CliResult w =
      cli({"model", "--seq", "1024", "--kernel", "flash-v2", "--json", fifo.string()});
  reader.join();
  CHECK(w.code == 0);
  CHECK(json::parse(received)["rows"].size() == 2);
  struct stat info {};
  REQUIRE(stat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
}

TEST_CASE("hardening: a symbolic link to a regular file stays a link") {
  TempDir dir;
  const fs::path target = dir.path / "target.json";
  write_text(target, "old");
  const fs::path link = dir.path / "link.json";
  fs::create_symlink(target, link);
  write_output(link.string(), "new\n");
  CHECK(fs::is_symlink(link));
  CHECK(read_text(target) == "new\n");
}
