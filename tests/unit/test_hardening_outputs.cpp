// Issue 20, outputs: one policy for every command. Inputs are never overwritten (by any
// spelling), outputs are written together or not at all, every write is checked, and a
// descriptor is written through in its own mode. Each case: exit 2 and one line on stderr, the
// inputs unchanged (same inode, same bytes), no output and no temporary file left.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
namespace fs = std::filesystem;

namespace {

const fs::path kReports = fs::path(ROOFLINE_TEST_DATA_DIR) / "reports";

// A file's inode and bytes, to show that it was left alone.
struct FileState {
  ino_t inode = 0;
  std::string bytes;
  bool operator==(const FileState& other) const {
    return inode == other.inode && bytes == other.bytes;
  }
};
FileState state_of(const fs::path& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return {info.st_ino, read_text(path)};
}

// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

void expect_one_line_error(const std::string& err, int code, const std::string& needle) {
  CAPTURE(err);
  CHECK(code == 2);
  CHECK(err.rfind("error: ", 0) == 0);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(err.find(needle) != std::string::npos);
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The tool run as a process by /bin/sh: `command` is shell text after the binary's name; its
// stderr is returned (unless `command` redirects it), with the exit status.
struct ShellRun {
  int code;
  std::string err;
};
ShellRun tool(const TempDir& dir, const std::string& command) {
  const fs::path err = dir.path / "stderr.txt";
  const std::string line = "cd " + quoted(dir.path) + " && " + quoted(ROOFLINE_BINARY) + " " +
                           command + " 2>" + quoted(err.string());
  const int status = std::system(("/bin/sh -c " + quoted(line)).c_str());
  ShellRun run{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text(err)};
  fs::remove(err);
  return run;
}

}  // namespace

TEST_CASE("outputs: merge never overwrites its inputs, by any spelling") {
  TempDir dir;
  const fs::path a = dir.path / "a.json";
  const fs::path b = dir.path / "b.json";
  fs::copy_file(kReports / "base.json", a);
  fs::copy_file(kReports / "head.json", b);
  fs::create_symlink(a, dir.path / "link.json");
  const FileState a_before = state_of(a);
  const FileState b_before = state_of(b);
  const std::vector<std::string> names = names_in(dir.path);
  const std::string out = (dir.path / "out.json").string();
  const std::string dot_a = (dir.path / "." / "a.json").string();
  const std::vector<std::vector<std::string>> cases = {
      {"merge", a, b, "-o", b},
      {"merge", a, "-o", a},
      {"merge", a, "-o", dot_a},
      {"merge", a, "-o", (dir.path / "sub" / ".." / "a.json").string()},
      {"merge", a, "-o", (dir.path / "link.json").string()},
      {"merge", a, "-o", out, "--csv", a},
      {"merge", a, "-o", out, "--csv", (dir.path / "." / "out.json").string()},
      {"merge", a, "-o", "-", "--csv", "/dev/stdout"},
  };
  fs::create_directory(dir.path / "sub");
  for (const auto& args : cases) {
    CAPTURE(join(args, " "));
    const CliResult r = cli(args);
    expect_one_line_error(r.err, r.code, "");
    CHECK((r.err.find("would overwrite the input") != std::string::npos ||
           r.err.find("name the same output") != std::string::npos ||
           r.err.find("cannot both write to stdout") != std::string::npos));
    CHECK(state_of(a) == a_before);
    CHECK(state_of(b) == b_before);
    fs::remove(dir.path / "sub");
    CHECK(names_in(dir.path) == names);
    fs::create_directory(dir.path / "sub");
  }
}

TEST_CASE("outputs: two spellings of one new file are one output") {
  TempDir dir;
  for (const std::string& second : {"./o.json", "$PWD/o.json", "sub/../o.json"}) {
    CAPTURE(second);
    fs::create_directory(dir.path / "sub");
    const ShellRun r = tool(dir, "model --gpu h100 --json o.json --csv " + second + " >/dev/null");
    expect_one_line_error(r.err, r.code, "name the same output");
    CHECK_FALSE(fs::exists(dir.path / "o.json"));
    fs::remove(dir.path / "sub");
    CHECK(names_in(dir.path).empty());
  }
}

TEST_CASE("outputs: a failed write to stdout is exit 2 with one line, for every command") {
  TempDir dir;
  fs::copy_file(kReports / "base.json", dir.path / "a.json");
  fs::copy_file(kReports / "head.json", dir.path / "b.json");
  const std::vector<std::string> commands = {"model --gpu h100 --json -",
                                             "model --gpu h100 --csv -",
                                             "model --gpu h100",
                                             "merge a.json -o -",
                                             "compare a.json b.json --markdown -",
                                             "compare a.json b.json",
                                             "specs list",
                                             "metrics --chip GH100",
                                             "model --gpu h100 --json /dev/stdout"};
  for (const std::string& command : commands)
    for (const std::string& redirect : {" >/dev/full", " >&-"}) {
      CAPTURE(command + redirect);
      const ShellRun r = tool(dir, command + redirect);
      expect_one_line_error(r.err, r.code, "cannot write");
    }
  CHECK(names_in(dir.path) == std::vector<std::string>{"a.json", "b.json"});
}

TEST_CASE("outputs: when one output fails, no other is left behind or replaced") {
  TempDir dir;
  const fs::path json = dir.path / "r.json";
  CliResult r = cli({"model", "--gpu", "h100", "--json", json.string(), "--csv", "/dev/full"});
  expect_one_line_error(r.err, r.code, "cannot write /dev/full");
  CHECK(names_in(dir.path).empty());
  write_text(json, "old");
  const FileState before = state_of(json);
  r = cli({"model", "--gpu", "h100", "--json", json.string(), "--csv", "/dev/full"});
  expect_one_line_error(r.err, r.code, "cannot write /dev/full");
  CHECK(state_of(json) == before);
  CHECK(names_in(dir.path) == std::vector<std::string>{"r.json"});
}

TEST_CASE("outputs: a closed pipe is a failed write, not a silent exit") {
  ::signal(SIGPIPE, SIG_IGN);  // as main() does
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  const std::string path = "/dev/fd/" + std::to_string(fds[1]);
  CHECK_THROWS_WITH_AS(write_output(path, "text"),
                       ("cannot write " + path + ": Broken pipe").c_str(), InputError);
  ::close(fds[1]);
  CHECK_THROWS_WITH_AS(
      write_output(path, "text"),
      ("cannot write " + path + ": descriptor " + std::to_string(fds[1]) + " is not open").c_str(),
      InputError);
}

TEST_CASE("outputs: /dev/stdout and /dev/stderr are written through in their own mode") {
  TempDir dir;
  write_text(dir.path / "log.txt", "earlier\n");
  const FileState before = state_of(dir.path / "log.txt");
  ShellRun r = tool(dir, "model --gpu h100 --seq 1024 --json /dev/stdout >> log.txt");
  CHECK(r.code == 0);
  FileState after = state_of(dir.path / "log.txt");
  CHECK(after.inode == before.inode);
  REQUIRE(after.bytes.rfind("earlier\n", 0) == 0);
  // Only the report: the table is not printed where stdout gets it.
  CHECK(nlohmann::json::parse(after.bytes.substr(8))["rows"].size() > 0);

  write_text(dir.path / "err.log", "earlier\n");
  const std::string line = "cd " + quoted(dir.path) + " && " + quoted(ROOFLINE_BINARY) +
                           " model --gpu h100 --seq 1024 --csv /dev/stderr >/dev/null 2>>err.log";
  CHECK(std::system(("/bin/sh -c " + quoted(line)).c_str()) == 0);
  const FileState err_after = state_of(dir.path / "err.log");
  CHECK(err_after.bytes.rfind("earlier\nkernel,batch,", 0) == 0);

  // On a pipe: the report alone, never followed by the table.
  r = tool(dir, "model --gpu h100 --seq 1024 --json /dev/stdout | cat > piped.json");
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(read_text(dir.path / "piped.json"))["rows"].size() > 0);
  r = tool(dir, "model --gpu h100 --seq 1024 --json - --csv /dev/stdout");
  expect_one_line_error(r.err, r.code, "name the same output");
}

TEST_CASE("outputs: names of up to 255 bytes are written, longer ones refused in one line") {
  TempDir dir;
  for (std::size_t length : {245, 250, 255}) {
    CAPTURE(length);
    const fs::path path = dir.path / (std::string(length - 5, 'n') + ".json");
    const CliResult r = cli({"model", "--gpu", "h100", "--seq", "1024", "--json", path.string()});
    CHECK(r.code == 0);
    CHECK(fs::exists(path));
    fs::remove(path);
  }
  const fs::path path = dir.path / (std::string(251, 'n') + ".json");
  const CliResult r = cli({"model", "--gpu", "h100", "--json", path.string()});
  expect_one_line_error(r.err, r.code, "File name too long");
  CHECK(names_in(dir.path).empty());
}
