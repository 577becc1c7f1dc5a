#include "lib/core/verdict/report_notes.hpp"

#include <cctype>
#include <map>
#include <utility>

namespace roofline {
namespace {

// A row's own message (a record of `profile`, free text) as a subject: its words without its
// numbers, so that "kept the counters for more than 10 s" and "... 12 s" are one cause.
std::string without_numbers(const std::string& text) {
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

// Notes of one kind and subject are one cause, whatever their numbers.
class Gathering {
 public:
  void add(const RowNote& note, const Row& row) {
    auto [it, inserted] =
        index_.try_emplace(std::make_pair(note.kind, note.subject), notes_.size());
    if (inserted) notes_.push_back({note.text, 0, row.kernel + " " + row_label(row)});
    ++notes_[it->second].rows;
  }
  std::vector<ReportNote> take() { return std::move(notes_); }

 private:
  std::map<std::pair<NoteKind, std::string>, std::size_t> index_;
  std::vector<ReportNote> notes_;
};

}  // namespace

std::vector<ReportNote> report_warnings(const JudgedReport& report) {
  Gathering g;
  for (const Row& row : report.rows()) {
    const RowAnalysis& a = report.of(row);
    for (const RowNote& warning : a.warnings) g.add(warning, row);
    if (row.status == RowStatus::kCountersUnavailable && !row.message.empty())
      g.add({NoteKind::kCountersUnavailable, without_numbers(row.message), row.message}, row);
  }
  return g.take();
}

std::vector<ReportNote> report_footnotes(const JudgedReport& report) {
  Gathering g;
  for (const Row& row : report.rows()) {
    const RowAnalysis& a = report.of(row);
    if (!a.has_verdict) continue;
    for (const RowNote& footnote : a.footnotes) g.add(footnote, row);
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
