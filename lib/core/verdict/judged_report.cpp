#include "lib/core/verdict/judged_report.hpp"

#include <stdexcept>
#include <utility>

namespace roofline {
JudgedReport::JudgedReport(Report report) : report_(std::move(report)) {
  analyses_.reserve(report_.rows.size());
  advice_.reserve(report_.rows.size());
  for (const Row& row : report_.rows) {
    analyses_.push_back(analyze(row, report_));
    advice_.push_back(advise(row, analyses_.back(), report_.spec_for(row)));
  }
}

JudgedReport::JudgedReport(Report report, const JudgedReport& from,
                           const std::vector<std::size_t>& indices)
    : report_(std::move(report)) {
  for (std::size_t i : indices) {
    analyses_.push_back(from.analyses_.at(i));
    advice_.push_back(from.advice_.at(i));
  }
  point_into_own_specs(from.report_);
}

JudgedReport::JudgedReport(const JudgedReport& other)
    : report_(other.report_), analyses_(other.analyses_), advice_(other.advice_) {
  point_into_own_specs(other.report_);
}

JudgedReport& JudgedReport::operator=(const JudgedReport& other) {
  if (this != &other) {
    report_ = other.report_;
    analyses_ = other.analyses_;
    advice_ = other.advice_;
    point_into_own_specs(other.report_);
  }
  return *this;
}

// The analyses were copied from a report `from` whose specs this report holds copies of, in the
// same order: each ceiling pointer moves to the same ceiling of this report's spec.
void JudgedReport::point_into_own_specs(const Report& from) {
  for (RowAnalysis& a : analyses_) {
    if (a.ceiling == nullptr) continue;
    for (std::size_t s = 0; s < from.specs.size() && s < report_.specs.size(); ++s) {
      const std::vector<ComputeCeiling>& theirs = from.specs[s].compute;
      if (a.ceiling < theirs.data() || a.ceiling >= theirs.data() + theirs.size()) continue;
      a.ceiling = &report_.specs[s].compute.at(static_cast<std::size_t>(a.ceiling - theirs.data()));
      break;
    }
  }
}

std::size_t JudgedReport::index_of(const Row& row) const {
  const Row* first = report_.rows.data();
  if (&row < first || &row >= first + report_.rows.size())
    throw std::logic_error("JudgedReport: the row is not one of the report's");
  return static_cast<std::size_t>(&row - first);
}

const RowAnalysis& JudgedReport::of(const Row& row) const {
  return analyses_[index_of(row)];
}

const std::optional<Advice>& JudgedReport::advice_of(const Row& row) const {
  return advice_[index_of(row)];
}

JudgedReport JudgedReport::part(const std::vector<std::size_t>& indices) const {
  Report part;
  part.schema_version = report_.schema_version;
  part.specs = report_.specs;
  part.context = indices.empty() ? report_.context : report_.context_of(report_.rows[indices[0]]);
  for (std::size_t i : indices) {
    Row row = report_.rows.at(i);
    row.origin.reset();
    part.rows.push_back(std::move(row));
  }
  return JudgedReport(std::move(part), *this, indices);
}

JudgedReport JudgedReport::select(const std::vector<std::size_t>& indices) const {
  Report selected;  // everything but the rows, which are chosen below
  selected.schema_version = report_.schema_version;
  selected.context = report_.context;
  selected.specs = report_.specs;
  selected.origins = report_.origins;
  for (std::size_t i : indices) selected.rows.push_back(report_.rows.at(i));
  return JudgedReport(std::move(selected), *this, indices);
}

}  // namespace roofline
