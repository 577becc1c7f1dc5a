#include "lib/core/compare/compare_rows.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

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

std::string microseconds(double seconds) {
  if (!(seconds > 0)) return "-";
  return seconds >= 1e-3 ? format_fixed(seconds * 1e3, 2) + " ms"
                         : format_fixed(seconds * 1e6, 1) + " µs";
}

std::string workload_label(const json& w) {
  if (!w.is_object()) return "";
  auto integer = [&](const char* key) {
    return w.contains(key) && w.at(key).is_number_integer()
               ? std::to_string(w.at(key).get<long long>())
               : std::string("?");
  };
  std::string out = "B" + integer("batch") + " H" + integer("heads") + " N" + integer("seq_len") +
                    " d" + integer("head_dim") +
                    (w.value("causal", false) ? " causal " : " full ") +
                    text_of(w.value("pass", json()));
  if (text_of(w.value("dtype", json())) == "bf16") out += " bf16";
  return out;
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
    cells.push_back({base_kernel == head_kernel ? head_kernel : base_kernel + " → " + head_kernel,
                     workload_label(row.value("workload", json())),
                     microseconds(number_of(
                         time.value("base", json::object()).value("median_seconds", json()))),
                     microseconds(number_of(
                         time.value("head", json::object()).value("median_seconds", json()))),
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
