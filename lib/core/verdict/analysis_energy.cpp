#include "lib/core/verdict/analysis_energy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double counter(const Row& row, const char* id) {
  auto it = row.counters.find(id);
  return it == row.counters.end() ? kNaN : it->second;
}

std::string percent(double share) {
  return format_fixed(100 * share, 0) + "%";
}

}  // namespace

std::string energy_term_label(const EnergyTerm& term) {
  switch (term.kind) {
    case EnergyTermKind::kStatic:
      return "static";
    case EnergyTermKind::kExp:
      return "XU";
    case EnergyTermKind::kInstructions:
      return "integer instructions";
    case EnergyTermKind::kLevel:
      if (auto level = parse_memory_level(term.id)) return std::string(display_name(*level));
      return term.id;
    case EnergyTermKind::kPipe:
      break;
  }
  const std::size_t dot = term.id.find('.');
  const auto path = parse_compute_path(std::string_view(term.id).substr(0, dot));
  if (!path) return term.id;
  TensorInstruction instruction = TensorInstruction::kNone;
  if (dot != std::string::npos) {
    const auto parsed = parse_tensor_instruction(std::string_view(term.id).substr(dot + 1));
    if (!parsed) return term.id;
    instruction = *parsed;
  }
  return ComputeCeiling{*path, instruction, 0, 0, ""}.label();
}

std::optional<EnergyAnalysis> analyze_energy(const Row& row, const RowAnalysis& a,
                                             const EnergyCoefficients& coefficients) {
  const bool timed = row.timing.has_value() && !row.timing->samples_seconds.empty();
  const LevelAnalysis* dram = a.dram();
  if (row.status != RowStatus::kOk || !a.has_verdict || a.projected || !timed || dram == nullptr ||
      dram->bytes_source != Source::kMeasured)
    return std::nullopt;

  EnergyWork work;
  // The launch's own time back to back where its energy was measured so (the window the
  // measured joules cover), else the timed median.
  work.seconds = row.energy && row.energy->seconds_per_launch > 0 ? row.energy->seconds_per_launch
                                                                  : a.time_seconds;
  const std::string tensor = a.ceiling != nullptr && is_tensor(a.ceiling->path)
                                 ? std::string(to_string(a.ceiling->path))
                                 : std::string("tensor_fp16");
  std::vector<std::string> not_counted;
  const struct {
    const char* quantity;
    std::string id;
    const char* name;
  } pipes[] = {
      {quantity::kTensorMmaSync, tensor + ".mma_sync", "mma.sync"},
      {quantity::kTensorWgmma, tensor + ".wgmma", "wgmma"},
      {quantity::kFp32Flops, "fp32", "FP32"},
      {quantity::kFp16Flops, "fp16_cuda_core", "FP16"},
  };
  for (const auto& pipe : pipes) {
    const double flops = counter(row, pipe.quantity);
    if (std::isnan(flops))
      not_counted.push_back(pipe.name);
    else
      work.flops[pipe.id] = flops;
  }
  if (a.exp.exponentials_source == Source::kMeasured && std::isfinite(a.exp.exponentials))
    work.exponentials = a.exp.exponentials;
  else if (!std::isnan(counter(row, quantity::kXuInstructions)))
    work.exponentials = 32 * counter(row, quantity::kXuInstructions);
  else {
    work.exponentials = kNaN;
    not_counted.push_back("XU");
  }
  work.int_instructions = counter(row, quantity::kIntInstructions);
  if (std::isnan(work.int_instructions)) not_counted.push_back("integer instructions");
  for (const LevelAnalysis& level : a.levels)
    if (level.bytes_source == Source::kMeasured) work.bytes[level.level] = level.bytes;
  // The L1 level's bytes hold shared memory's wavefronts (full set): apart for the energy
  // model, less wgmma's operand reads (energy_model.hpp).
  const double l1_global = counter(row, quantity::kL1);
  const double shared_wavefronts = counter(row, quantity::kSharedWavefronts);
  if (work.bytes.count(MemoryLevel::kL1) != 0 && std::isfinite(l1_global) &&
      std::isfinite(shared_wavefronts)) {
    const double gmma = counter(row, quantity::kSharedWavefrontsGmma);
    work.bytes[MemoryLevel::kL1] = l1_global;
    work.shared_bytes =
        kSharedWavefrontBytes * std::max(0.0, shared_wavefronts - (std::isfinite(gmma) ? gmma : 0));
  }

  // The bulk copies' share of the SMs' L2 traffic: what reached L2 from the SMs and never
  // crossed L1 (energy_model.hpp).
  const double l2_sm = counter(row, quantity::kL2);
  if (std::isfinite(l2_sm) && l2_sm > 0 && std::isfinite(l1_global))
    work.bulk_share = std::clamp((l2_sm - l1_global) / l2_sm, 0.0, 1.0);
  // Bytes written to DRAM and reduced in L2, priced apart where the calibration measured them.
  if (const double written = counter(row, quantity::kDramWrite); std::isfinite(written))
    work.dram_write_bytes = std::max(0.0, written);
  if (const double reduced = counter(row, quantity::kL2Reduction); std::isfinite(reduced))
    work.l2_reduction_bytes = std::max(0.0, reduced);

  EnergyAnalysis e;
  e.model = model_energy(work, coefficients);
  const EnergyTerm* dominant = e.model.dominant();
  if (dominant == nullptr || !(e.model.joules > 0)) return std::nullopt;
  e.dominant = energy_term_label(*dominant);
  e.dominant_share = dominant->share;
  e.verdict =
      dominant->kind == EnergyTermKind::kStatic
          ? "energy: " + percent(dominant->share) + " static (P_static × time): faster is cheaper"
          : "energy: " + e.dominant + " " + percent(dominant->share);
  if (e.model.at_power_limit)
    // The terms would draw more than the board allows over this time: it ran at the limit.
    e.verdict += " (at the board's power limit: the terms would draw " +
                 format_fixed(e.model.terms_joules / work.seconds, 0) + " W over its time, the " +
                 "limiter holds " + format_fixed(e.model.power_limit_watts, 0) + " W)";

  const bool measured = row.energy.has_value() && row.energy->joules_per_launch > 0;
  e.measured_joules = measured ? row.energy->joules_per_launch : kNaN;
  e.modelled_vs_measured = measured ? e.model.joules / e.measured_joules : kNaN;
  e.flops_per_joule = a.flops / (measured ? e.measured_joules : e.model.joules);
  e.flops_per_joule_source = measured ? Source::kMeasured : Source::kModel;
  const double* e_pipe = a.ceiling != nullptr ? coefficients.flop(a.ceiling->id()) : nullptr;
  // The roof prices a DRAM byte the cheapest way the calibration moved one: by bulk copies
  // where they cost less than loads (a kernel that streams by TMA pays no more).
  const double* e_loaded = coefficients.byte(MemoryLevel::kDram);
  const double e_dram = e_loaded == nullptr ? kNaN
                        : coefficients.joules_per_bulk_dram_byte > 0
                            ? std::min(*e_loaded, coefficients.joules_per_bulk_dram_byte)
                            : *e_loaded;
  e.roof_flops_per_joule = e_pipe != nullptr && e_loaded != nullptr && !a.bandwidth_only
                               ? energy_roof_flops_per_joule(
                                     dram->intensity, *e_pipe, e_dram, coefficients.static_watts,
                                     a.peak_flops_per_second, dram->peak_bandwidth_bytes_per_second)
                               : kNaN;
  e.fraction_of_roof = e.flops_per_joule / e.roof_flops_per_joule;

  std::vector<std::string> notes;
  if (!e.model.uncosted.empty())
    notes.push_back("no coefficient for " + join(e.model.uncosted, ", ") +
                    ": their energy is left out");
  if (!not_counted.empty())
    notes.push_back(join(not_counted, ", ") + " not counted (--counter-set full counts them)");
  e.note = join(notes, "; ");
  return e;
}

const EnergyCoefficients* energy_coefficients_for(const Report& report, const GpuSpec& spec) {
  if (spec.energy) return &*spec.energy;
  for (const GpuSpec& other : report.specs)
    if (other.calibrated_from == spec.key && other.energy) return &*other.energy;
  return nullptr;
}

}  // namespace roofline
