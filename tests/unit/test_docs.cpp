// The documentation that is generated from the code: the CSV column reference in
// docs/columns.md, between its csv-columns markers, equals render_csv_column_reference().
// After adding or changing a CSV column, regenerate it:
//   ROOFLINE_UPDATE_GOLDEN=1 ctest --test-dir build/nocuda -R docs
// and review `git diff docs/columns.md` before committing it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lib/core/report/report_io.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kColumnsDoc = std::filesystem::path(ROOFLINE_DOCS_DIR) / "columns.md";
const std::string kBegin =
    "<!-- csv-columns:begin (generated from lib/core/report/report_csv.cpp) -->\n";
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
