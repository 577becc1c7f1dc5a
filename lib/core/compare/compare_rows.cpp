#include "lib/core/compare/compare_rows.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
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

std::string render_compare_rows(const json& document, const std::string& origin) {
  const json& rows = member(document, "rows", origin);
  if (!rows.is_array()) throw InputError(origin + ": \"rows\" must be an array");
  const std::vector<std::string> header = {"kernel", "workload", "base", "head",
                                           "change", "verdict",  "note"};
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
         workload_from_json(JsonReader(origin), member(row, "workload", where), where + ".workload")
             .label(),
         time_text(number_of(time.value("base", json::object()).value("median_seconds", json()))),
         time_text(number_of(time.value("head", json::object()).value("median_seconds", json()))),
         !std::isfinite(change) ? std::string("-")
         : std::fabs(100 * change) < 0.05
             ? std::string("0.0%")
             : (change > 0 ? "+" : "") + format_fixed(100 * change, 1) + "%",
         text_of(member(row, "verdict", where)), join(notes, "; ")});
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    widths[c] = display_width(header[c]);
    for (const auto& row : cells) widths[c] = std::max(widths[c], display_width(one_line(row[c])));
  }
  std::ostringstream out;
  out << "cuflash-roofline compare (saved: " << one_line(origin) << ")\n";
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) text += "  ";
      text += c + 1 == row.size() ? one_line(row[c])
                                  : pad(one_line(row[c]), widths[c], c >= 2 && c <= 4);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header);
  for (const auto& row : cells) line(row);
  return out.str();
}

}  // namespace roofline
