#include "lib/core/report/report_notes.hpp"

#include <cctype>
#include <map>

namespace roofline {
namespace {

// The cause of a note: its text with every number replaced, so that rows that differ only in
// their measurements share it.
std::string cause_of(const std::string& text) {
  std::string out;
  bool in_number = false;
  for (char c : text) {
    const bool digit =
        std::isdigit(static_cast<unsigned char>(c)) != 0 || (in_number && (c == '.' || c == ','));
    if (digit && !in_number) out += '#';
    if (!digit) out += c;
    in_number = digit;
  }
  return out;
}

class Gathering {
 public:
  void add(const std::string& text, const Row& row) {
    const std::string cause = cause_of(text);
    auto [it, inserted] = index_.try_emplace(cause, notes_.size());
    if (inserted) notes_.push_back({text, 0, row.kernel + " " + row_label(row)});
    ++notes_[it->second].rows;
  }
  std::vector<ReportNote> take() { return std::move(notes_); }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<ReportNote> notes_;
};

}  // namespace

std::vector<ReportNote> report_warnings(const JudgedReport& report) {
  Gathering g;
  for (const Row& row : report.rows()) {
    const RowAnalysis& a = report.of(row);
    for (const std::string& warning : a.warnings) g.add(warning, row);
    if (row.status == RowStatus::kCountersUnavailable && !row.message.empty())
      g.add(row.message, row);
  }
  return g.take();
}

std::vector<ReportNote> report_footnotes(const JudgedReport& report) {
  Gathering g;
  for (const Row& row : report.rows()) {
    const RowAnalysis& a = report.of(row);
    if (!a.has_verdict) continue;
    for (const std::string& footnote : a.footnotes) g.add(footnote, row);
  }
  return g.take();
}

std::string describe(const ReportNote& note) {
  return note.text + " (" +
         (note.rows == 1 ? note.first_row
                         : std::to_string(note.rows) + " rows, the first: " + note.first_row) +
         ")";
}

}  // namespace roofline
