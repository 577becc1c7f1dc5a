#include "lib/core/compare/compare_rows.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/report/json_values.hpp"

namespace roofline {
namespace {

using nlohmann::json;

const json& member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw InputError(where + ": no \"" + std::string(key) + "\"");
  return object.at(key);
}

std::string text_of(const json& value) {
  return value.is_string() ? value.get<std::string>() : std::string();
}

double number_of(const json& value) {
  return value.is_number() ? value.get<double>() : std::nan("");
}

}  // namespace

bool is_compare_json(const json& document) {
  return document.is_object() && document.contains("kind") &&
         document.at("kind") == "cuflash-roofline compare";
}

std::string render_compare_rows(const json& document, const std::string& origin,
                                const TableFit& fit) {
  const json& rows = member(document, "rows", origin);
  if (!rows.is_array()) throw InputError(origin + ": \"rows\" must be an array");
  std::vector<std::vector<std::string>> cells;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string where = origin + ": rows[" + std::to_string(i) + "]";
    const json& row = rows[i];
    const std::string base_kernel = text_of(member(row, "kernel_base", where));
    const std::string head_kernel = text_of(member(row, "kernel_head", where));
    const json& time = member(row, "time", where);
    const double change = number_of(time.value("relative_change", json()));
    std::vector<std::string> notes;
    for (const json& note : row.value("notes", json::array()))
      if (note.is_string()) notes.push_back(note.get<std::string>());
    cells.push_back(
        {base_kernel == head_kernel ? head_kernel : base_kernel + " → " + head_kernel,
         // "point" (a launch group's label) since profiles compare by group; else the workload.
         row.contains("point") && row["point"].is_string()
             ? one_line(row["point"].get<std::string>())
             : workload_from_json(JsonReader(origin), member(row, "workload", where),
                                  where + ".workload")
                   .label(),
         time_text(number_of(time.value("base", json::object()).value("median_seconds", json()))),
         time_text(number_of(time.value("head", json::object()).value("median_seconds", json()))),
         !std::isfinite(change) ? std::string("-")
         : std::fabs(100 * change) < 0.05
             ? std::string("0.0%")
             : (change > 0 ? "+" : "") + format_fixed(100 * change, 1) + "%",
         text_of(member(row, "verdict", where)), join(notes, "; ")});
  }
  // The columns of compare's own table that a saved document holds, fitted the same way; the
  // notes move below the table when their column does not fit.
  static const std::vector<TableColumn> columns = [] {
    std::vector<TableColumn> kept;
    for (const TableColumn& column : compare_table_columns())
      for (const char* key : {"kernel", "workload", "base", "head", "change", "verdict", "note"})
        if (column.key == key) kept.push_back(column);
    return kept;
  }();
  std::ostringstream out;
  out << wrap_words("cuflash-roofline compare (saved: " + one_line(origin) + ")", fit.max_width);
  const FittedTable table = fit_table(columns, cells, fit);
  out << table.text << fit_footer(table, fit.max_width);
  constexpr std::size_t kNote = 6;
  if (std::find(table.shown.begin(), table.shown.end(), kNote) == table.shown.end())
    for (const auto& row : cells)
      if (!row[kNote].empty())
        out << wrap_words(
            "note: " + one_line(row[0]) + " " + one_line(row[1]) + ": " + one_line(row[kNote]),
            fit.max_width);
  return out.str();
}

}  // namespace roofline
