// A report with the verdict on each of its rows: analyze(row, report) and its advice made once,
// when the report is judged, and read by every writer, chart, summary and note after that.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "lib/core/report/report.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {

class JudgedReport {
 public:
  // Judges every row of `report` (kept, as given).
  explicit JudgedReport(Report report);
  // A verdict points into its report's specs (RowAnalysis::ceiling): a copy points into its own.
  JudgedReport(const JudgedReport& other);
  JudgedReport& operator=(const JudgedReport& other);
  JudgedReport(JudgedReport&&) noexcept = default;
  JudgedReport& operator=(JudgedReport&&) noexcept = default;

  const Report& report() const { return report_; }
  const std::vector<Row>& rows() const { return report_.rows; }
  const RowAnalysis& at(std::size_t row) const { return analyses_.at(row); }
  // `row` must be one of rows() (by address); throws std::logic_error otherwise.
  const RowAnalysis& of(const Row& row) const;
  // What to try next for the row (advise), none where nothing is to gain or judge.
  const std::optional<Advice>& advice_at(std::size_t row) const { return advice_.at(row); }
  const std::optional<Advice>& advice_of(const Row& row) const;

  // The rows at `indices` (in that order) as a report of their own, each with the verdict it
  // has here: the specs and context as here, except that rows of a merged report (origins)
  // take their own context and lose the origin. Nothing is judged again.
  JudgedReport part(const std::vector<std::size_t>& indices) const;
  // The rows at `indices` (in that order: a selection, a sort) in the same report: context,
  // specs and origins as here. Nothing is judged again.
  JudgedReport select(const std::vector<std::size_t>& indices) const;

 private:
  JudgedReport(Report report, const JudgedReport& from, const std::vector<std::size_t>& indices);
  std::size_t index_of(const Row& row) const;
  void point_into_own_specs(const Report& from);

  Report report_;
  std::vector<RowAnalysis> analyses_;
  std::vector<std::optional<Advice>> advice_;
};

}  // namespace roofline
