// The energy verdict of a row (model/energy_model.hpp): where its joules go by the calibrated
// coefficients, which cost dominates, and where it sits on the energy roofline. Made only for
// a row with counters, a measured time and coefficients for its GPU; nothing is invented for
// the others.
#pragma once

#include <optional>
#include <string>

#include "lib/core/domain/energy_coefficients.hpp"
#include "lib/core/model/energy_model.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

struct RowAnalysis;

struct EnergyAnalysis {
  EnergyModel model;
  std::string dominant;  // the dominant term's label: "static", "tensor FP16 (wgmma)", "DRAM"
  double dominant_share = 0;
  // FLOPs (the row's roofline FLOPs) per joule: ÷ the measured energy per launch when the row
  // has one (`run --energy`), else ÷ the modelled joules.
  double flops_per_joule = 0;
  Source flops_per_joule_source = Source::kModel;
  // The energy roof at the row's DRAM intensity on its pipe (NaN without a coefficient for the
  // pipe or DRAM), and the achieved FLOP/J ÷ it.
  double roof_flops_per_joule = 0;
  double fraction_of_roof = 0;
  double measured_joules = 0;       // per launch; NaN when not measured
  double modelled_vs_measured = 0;  // NaN when not measured
  // "energy: 58% static (P_static × time): faster is cheaper", "energy: tensor FP16 (wgmma)
  // 61%", "energy: DRAM 47%".
  std::string verdict;
  // Counted work without a coefficient, or pipes not counted, in one line; empty when none.
  std::string note;
};

// The label of a term in tables and verdicts: "static", "FP32", "tensor FP16 (wgmma)", "XU",
// "DRAM", "L2", "L1".
std::string energy_term_label(const EnergyTerm& term);

// `a`: the row's time verdict (its time, FLOPs, levels, exponentials, ceiling). None for a row
// that is not ok, was not timed or counted, or is projected onto another GPU.
std::optional<EnergyAnalysis> analyze_energy(const Row& row, const RowAnalysis& a,
                                             const EnergyCoefficients& coefficients);

// The coefficients that judge `spec`'s rows in `report`: the spec's own, else those of its
// calibrated twin in the report (calibration.hpp: `--calibration FILE` embeds the twin beside
// the sheet); nullptr when neither has any.
const EnergyCoefficients* energy_coefficients_for(const Report& report, const GpuSpec& spec);

}  // namespace roofline
