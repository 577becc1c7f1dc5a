// The documentation that is generated from the code: the CSV column reference in
// docs/columns.md, between its csv-columns markers, equals render_csv_column_reference(). And
// the README opens with the two commands CI runs (.ci/run), in its first code block.
// After adding or changing a CSV column, regenerate it:
//   ROOFLINE_UPDATE_GOLDEN=1 ctest --test-dir build/nocuda -R docs
// and review `git diff docs/columns.md` before committing it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kColumnsDoc = std::filesystem::path(ROOFLINE_DOCS_DIR) / "columns.md";
const std::string kBegin =
    "<!-- csv-columns:begin (generated from lib/core/writers/report_csv.cpp) -->\n";
const std::string kEnd = "<!-- csv-columns:end -->";

}  // namespace

TEST_CASE("docs: the CSV column reference in docs/columns.md is the code's") {
  std::string text = read_text(kColumnsDoc);
  const std::size_t begin = text.find(kBegin);
  REQUIRE_MESSAGE(begin != std::string::npos, "no csv-columns:begin marker in " << kColumnsDoc);
  const std::size_t from = begin + kBegin.size();
  const std::size_t end = text.find(kEnd, from);
  REQUIRE_MESSAGE(end != std::string::npos, "no csv-columns:end marker in " << kColumnsDoc);
  const std::string expected = render_csv_column_reference();
  if (std::getenv("ROOFLINE_UPDATE_GOLDEN") != nullptr) {
    text.replace(from, end - from, expected);
    write_text(kColumnsDoc, text);
    return;
  }
  CHECK_MESSAGE(text.substr(from, end - from) == expected,
                kColumnsDoc.string() << " lists other CSV columns than report_csv.cpp: run "
                                     << "ROOFLINE_UPDATE_GOLDEN=1 ctest -R docs");
}

TEST_CASE("docs: the column reference names every CSV column once, in order") {
  const std::string reference = render_csv_column_reference();
  std::size_t at = 0;
  for (const std::string& name : csv_columns()) {
    const std::size_t found = reference.find("| `" + name + "` |", at);
    REQUIRE_MESSAGE(found != std::string::npos, name);
    at = found;
  }
}

TEST_CASE("docs: the README opens with the commands .ci/run runs") {
  const std::filesystem::path root = std::filesystem::path(ROOFLINE_DOCS_DIR).parent_path();
  const std::string readme = read_text(root / "README.md");
  const std::size_t open = readme.find("```sh\n");
  REQUIRE(open != std::string::npos);
  const std::size_t close = readme.find("```", open + 6);
  REQUIRE(close != std::string::npos);
  const std::string first_block = readme.substr(open, close - open);
  std::istringstream ci(read_text(root / ".ci" / "run"));
  int commands = 0;
  for (std::string line; std::getline(ci, line);) {
    if (line.rfind("scripts/", 0) != 0) continue;
    ++commands;
    CHECK_MESSAGE(first_block.find("\n" + line + " ") != std::string::npos,
                  ".ci/run's `" << line << "` is not in the README's first code block");
  }
  CHECK(commands == 2);
}
