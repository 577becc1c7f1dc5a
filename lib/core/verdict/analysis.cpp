#include "lib/core/verdict/analysis.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/sm_share.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/model/tail_effect.hpp"
#include "lib/core/verdict/roof.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::atomic<std::size_t> verdicts{0};  // calls of analyze(row, report)

double counter(const Row& row, const char* id) {
  auto it = row.counters.find(id);
  return it == row.counters.end() ? kNaN : it->second;
}

double or_zero(double value) {
  return std::isnan(value) ? 0 : value;
}

struct PathChoice {
  ComputePath path;
  TensorInstruction instruction;
  double flops;
  Source source;
  std::string note;
};

// The pipe that did most of the counted work decides the ceiling; without counters, the
// kernel's model path and the model's FLOPs. Tensor work is judged on the ceiling of the
// workload's dtype; a profiled launch has no dtype: BF16 when most of its counted tensor FLOPs
// had BF16 inputs, else FP16.
PathChoice choose_path(const Row& row, const KernelModel* model) {
  const double mma = or_zero(counter(row, quantity::kTensorMmaSync));
  const double wgmma = or_zero(counter(row, quantity::kTensorWgmma));
  const bool bf16 = has_workload(row)
                        ? row.workload.dtype == DType::kBf16
                        : or_zero(counter(row, quantity::kTensorBf16)) > 0.5 * (mma + wgmma);
  const ComputePath tensor_path = bf16 ? ComputePath::kTensorBf16 : ComputePath::kTensorFp16;
  const double fp32 = or_zero(counter(row, quantity::kFp32Flops));
  const double fp16 = or_zero(counter(row, quantity::kFp16Flops));
  const double total = mma + wgmma + fp32 + fp16;
  if (total > 0) {
    struct Candidate {
      ComputePath path;
      TensorInstruction instruction;
      double flops;
      const char* name;
    } candidates[] = {
        {tensor_path, TensorInstruction::kMmaSync, mma, "mma.sync"},
        {tensor_path, TensorInstruction::kWgmma, wgmma, "wgmma"},
        {ComputePath::kFp32, TensorInstruction::kNone, fp32, "FP32"},
        {ComputePath::kFp16CudaCore, TensorInstruction::kNone, fp16, "FP16 CUDA cores"},
    };
    const Candidate& best =
        *std::max_element(std::begin(candidates), std::end(candidates),
                          [](const Candidate& a, const Candidate& b) { return a.flops < b.flops; });
    return {
        best.path, best.instruction, best.flops, Source::kMeasured,
        "counters: " + format_fixed(100 * best.flops / total, 0) + "% of FLOPs on " + best.name};
  }
  if (model == nullptr)
    return {tensor_path, TensorInstruction::kNone, row.prediction.model_flops, Source::kModel,
            tensor_path == ComputePath::kTensorBf16 ? "unknown kernel: tensor BF16 assumed"
                                                    : "unknown kernel: tensor FP16 assumed"};
  return {model->path_for(row.workload), model->instruction_for(row.workload),
          row.prediction.model_flops, Source::kModel, "model: the kernel's path"};
}

const KernelModel* try_model(const std::string& name) {
  for (const KernelModel& model : kernel_models())
    if (model.name == name) return &model;
  return nullptr;
}

}  // namespace

RowAnalysis analyze(const Row& row, const GpuSpec& spec, bool projection) {
  RowAnalysis a;
  a.has_verdict = row.status == RowStatus::kOk || row.status == RowStatus::kCountersUnavailable;
  a.algorithmic_flops = row.prediction.algorithmic_flops;

  const KernelModel* model = try_model(row.kernel);
  PathChoice choice = choose_path(row, model);
  // A profiled launch has no model: without counted FLOPs it is judged on its bytes alone.
  a.bandwidth_only = row.launch.has_value() && choice.source == Source::kModel;
  if (a.bandwidth_only) {
    choice.flops = kNaN;
    choice.note = "no FLOPs counted";
  }
  a.flops = choice.flops;
  a.flops_source = choice.source;
  a.path_note = choice.note;
  // Without counters, the kernel's own instruction where the GPU has it, else the best of its
  // path (cuBLAS runs mma.sync where there is no wgmma).
  if (a.bandwidth_only)
    a.ceiling = nullptr;
  else if (model != nullptr && choice.path == model->path_for(row.workload) &&
           choice.source == Source::kModel)
    a.ceiling = binding_ceiling(*model, spec, row.workload);
  else
    a.ceiling = spec.ceiling(choice.path, choice.instruction);
  if (!a.bandwidth_only && a.ceiling == nullptr && choice.instruction != TensorInstruction::kNone) {
    a.ceiling = spec.ceiling(choice.path);
    if (a.ceiling != nullptr)
      a.warnings.push_back({NoteKind::kNoInstructionCeiling,
                            std::string(to_string(choice.instruction)) + " " + a.ceiling->id(),
                            "spec has no " + std::string(to_string(choice.instruction)) +
                                " ceiling; judged against " + a.ceiling->label()});
  }

  const double mma = counter(row, quantity::kTensorMmaSync);
  const double wgmma = counter(row, quantity::kTensorWgmma);
  const double fp32 = counter(row, quantity::kFp32Flops);
  const double fp16 = counter(row, quantity::kFp16Flops);
  if (a.bandwidth_only)
    a.footnotes.push_back(
        std::isnan(fp32) || std::isnan(fp16)
            ? RowNote{NoteKind::kBytesOnly, "set",
                      "judged on bytes alone: the default counter set counts tensor FLOPs only "
                      "(--counter-set full adds CUDA-core FLOPs, and TF32 tensor FLOPs)"}
            : RowNote{NoteKind::kBytesOnly, "none",
                      "judged on bytes alone: no FLOPs counted on any pipe"});
  a.total_counted_flops =
      (std::isnan(mma) && std::isnan(wgmma) && std::isnan(fp32) && std::isnan(fp16))
          ? kNaN
          : or_zero(mma) + or_zero(wgmma) + or_zero(fp32) + or_zero(fp16);

  a.peak_flops_per_second = a.ceiling ? a.ceiling->peak_tflops * 1e12 : kNaN;
  a.measured_clock_hz = counter(row, quantity::kSmClock);
  if (std::isnan(a.measured_clock_hz) && row.timing && row.timing->sm_clock_mhz() > 0)
    a.measured_clock_hz = row.timing->sm_clock_mhz() * 1e6;
  a.peak_at_measured_clock =
      a.ceiling
          ? peak_at_clock(a.peak_flops_per_second, a.ceiling->clock_mhz * 1e6, a.measured_clock_hz)
          : kNaN;
  if (row.timing && row.timing->sm_clock_timed_mhz > 0 && !row.timing->clock_limit.empty() &&
      row.timing->clock_limit != "none")
    a.footnotes.push_back(
        {NoteKind::kClockLimited,
         row.timing->clock_limit + (a.ceiling && a.ceiling->clock_mhz > 0 ? " spec clock" : ""),
         "timed at the board's " + row.timing->clock_limit +
             ": the SM clock's median while timed " +
             format_fixed(row.timing->sm_clock_timed_mhz, 0) + " MHz (NVML, sampled every ms)" +
             (a.ceiling && a.ceiling->clock_mhz > 0
                  ? ", the spec's roofs are at " + format_fixed(a.ceiling->clock_mhz, 0) + " MHz"
                  : std::string())});

  // Time: the median of the timed runs, else the model's floor (computed below).
  const bool timed = row.timing.has_value() && !row.timing->samples_seconds.empty();
  a.time_source = timed ? Source::kMeasured : Source::kModel;

  // Every roof places the row (its floor raises the time floor), rates it once the time is
  // known, and binds where it is lower than the bound so far (roof.hpp).
  const RoofInputs in{row, spec, model, choice.instruction, choice.source, timed, projection};
  a.time_floor_seconds = seconds_at(a.flops, a.peak_flops_per_second);
  for (const auto& roof : roofs()) roof->place(in, a);

  a.time_seconds = timed ? row.timing->median_seconds() : a.time_floor_seconds;
  a.flops_per_second = a.flops / a.time_seconds;
  a.algorithmic_flops_per_second = a.algorithmic_flops / a.time_seconds;
  a.compute_utilisation = a.flops_per_second / a.peak_flops_per_second;
  a.compute_utilisation_measured_clock = a.flops_per_second / a.peak_at_measured_clock;
  for (const auto& roof : roofs()) roof->rate(a);

  // The compute ceiling bounds first; each roof lower than it takes the bound.
  a.attainable_flops_per_second = a.peak_flops_per_second;
  a.compute_bound = true;
  a.binding = a.ceiling ? a.ceiling->label() : "no ceiling";
  a.regime = "compute-bound (" + a.binding + ")";
  for (const auto& roof : roofs()) roof->bind(a);
  a.fraction_of_bound = a.time_floor_seconds / a.time_seconds;
  if (a.bandwidth_only) {
    // The level whose counted bytes take longest at its peak bounds the launch.
    const LevelAnalysis* slowest = nullptr;
    bool counted = false;
    for (const LevelAnalysis& level : a.levels) {
      if (level.bytes_source != Source::kMeasured || !(level.bytes > 0)) continue;
      counted = true;
      if (!level.partial && std::isfinite(level.time_floor_seconds) &&
          (slowest == nullptr || level.time_floor_seconds > slowest->time_floor_seconds))
        slowest = &level;
    }
    a.compute_bound = false;
    a.exp_bound = false;
    a.attainable_flops_per_second = kNaN;
    a.ridge_factor = kNaN;
    a.binding = slowest != nullptr ? std::string(display_name(slowest->level)) : "none";
    if (slowest == nullptr) {  // nothing to judge: the time alone
      a.time_floor_seconds = kNaN;
      a.fraction_of_bound = kNaN;
      a.footnotes.clear();
    }
    a.regime = slowest != nullptr
                   ? "memory-bound: " + a.binding + " at " +
                         format_fixed(100 * slowest->bandwidth_utilisation, 0) + "% of " +
                         format_fixed(slowest->peak_bandwidth_bytes_per_second / 1e9, 0) + " GB/s"
               : counted ? "no verdict: no counted level has a bandwidth in the spec"
                         : "time only: no bytes or FLOPs counted";
  }

  a.flops_vs_model =
      std::isnan(a.total_counted_flops) ? kNaN : a.total_counted_flops / row.prediction.model_flops;
  if (a.dram()->bytes_source == Source::kMeasured) {
    a.dram_bytes_vs_model = a.dram()->bytes / row.prediction.model_dram_bytes;
    a.dram_bytes_vs_compulsory = a.dram()->bytes / row.prediction.compulsory_dram_bytes;
  } else {
    a.dram_bytes_vs_model = kNaN;
    a.dram_bytes_vs_compulsory = kNaN;
  }

  if (a.ceiling == nullptr && !a.bandwidth_only)
    a.warnings.push_back({NoteKind::kNoCeiling,
                          spec.key + " " + std::string(to_string(choice.path)),
                          spec.key + " has no ceiling for " + std::string(to_string(choice.path))});
  if (timed && !projection && a.flops_per_second > a.peak_flops_per_second * 1.02)
    a.warnings.push_back({NoteKind::kAboveComputeRoof, "",
                          "above the compute roof: FLOPs or peak are wrong (units? sparse peak?)"});
  for (const auto& roof : roofs()) roof->check(in, a);
  return a;
}

namespace {

const GpuSpec* find_spec(const Report& report, const std::string& key) {
  for (const GpuSpec& spec : report.specs)
    if (spec.key == key) return &spec;
  return nullptr;
}

// A bundled flash grid bound by compute on both GPUs: the tail effect's bound assumes the best
// schedule and an SM's whole rate for a lone CTA, but the CTAs are handed out in launch order,
// an SM that holds fewer CTAs than its slots runs below its rate (co_resident_rate), and the
// share of the SMs that schedule keeps busy changes with their count (tail_effect.hpp): a causal
// grid's heavy CTAs pile up or spread, a small grid's CTAs run alone on many SMs or two to an SM
// on few. The time at the measured fraction of the bound, times this, carries the measured
// fraction of the launch-order schedule over instead. 1 elsewhere.
double launch_order_change(const Row& row, const KernelModel* model, const RowAnalysis& here,
                           const RowAnalysis& there, std::vector<std::string>& notes) {
  const auto compute = [](const RowAnalysis& a) { return a.compute_bound || a.exp_bound; };
  if (model == nullptr || row.launch.has_value() || !compute(here) || !compute(there) ||
      !here.tail || !there.tail)
    return 1;
  const std::optional<LaunchGrid> grid_here =
      bundled_grid(*model, row.workload, here.tail->sm_count);
  const std::optional<LaunchGrid> grid_there =
      bundled_grid(*model, row.workload, there.tail->sm_count);
  if (!grid_here || !grid_there) return 1;
  const double order_here = launch_order_efficiency(*grid_here, here.tail->sm_count);
  const double order_there = launch_order_efficiency(*grid_there, there.tail->sm_count);
  const double change =
      (order_here / here.tail->efficiency) / (order_there / there.tail->efficiency);
  if (!std::isfinite(change) || !(change > 0)) return 1;
  const int slots = std::max(1, grid_here->ctas_per_sm);
  notes.push_back(
      "its " + std::string(row.workload.causal ? "CTAs of unequal work" : "CTAs") +
      ", handed out in launch order" +
      (slots > 1 ? " (" + std::to_string(slots) + " resident per SM; an SM holding fewer runs at " +
                       "the square root of their share of its rate)"
                 : std::string()) +
      ", keep " + format_fixed(100 * order_here, 0) + "% of " +
      std::to_string(here.tail->sm_count) + " SMs busy and " + format_fixed(100 * order_there, 0) +
      "% of " + std::to_string(there.tail->sm_count) + " (time × " + format_fixed(change, 2) + ")");
  return change;
}

// The bytes `row` moved through `level` on its share run: those counted there, or, where the
// share run counted none (CUPTI's range profiler counts nothing in a green context), those
// counted on all SMs (`counted_there` says which). NaN without a share run or with one on all
// `all_sms` SMs.
double share_run_bytes(const Row& row, const LevelAnalysis& level, int all_sms,
                       bool& counted_there) {
  if (!row.share_run) return kNaN;
  const ShareRun& few = *row.share_run;
  if (few.sms <= 0 || few.sms >= all_sms || !(few.seconds > 0)) return kNaN;
  const auto bytes = few.bytes.find(level.level);
  counted_there = bytes != few.bytes.end() && bytes->second > 0;
  return counted_there ? bytes->second : level.bytes;
}

// A row bound by DRAM or L2 on its GPU and on a share of that GPU's SMs: its time at what its
// kernels, with their bytes in flight per SM, draw from that level on the share; 0 elsewhere
// (the time at the measured fraction of the bound stands). Its bytes in flight are read off the
// level's share curve when the row has a share run (sm_share.hpp: ShareRun), fitted with a part
// no SM count changes to its times on all the SMs and on the few (fit_share_run), else from what
// it drew on all of them (share_drawn_gbps), which past the curve's knee gives the least it may
// hold, and the note says so. `from_share_run` and `at_most` say which of the two applied.
double time_on_share(const Row& row, const GpuSpec& measured_on, const GpuSpec& target,
                     const RowAnalysis& here, const RowAnalysis& there,
                     std::vector<std::string>& notes, bool& from_share_run, bool& at_most) {
  if (!is_share_of(target, measured_on) || here.binding != there.binding) return 0;
  for (const LevelAnalysis& level : here.levels) {
    if (here.binding != display_name(level.level) || level.level == MemoryLevel::kL1) continue;
    const MemoryLevelSpec* spec = measured_on.level(level.level);
    if (spec == nullptr || !(level.achieved_bytes_per_second > 0)) return 0;
    const std::string name(display_name(level.level));
    const double drawn = level.achieved_bytes_per_second / 1e9;
    const std::string all = std::to_string(measured_on.sm_count);
    const std::string sms = std::to_string(target.sm_count);
    bool counted_there = false;
    if (const double bytes_few = share_run_bytes(row, level, measured_on.sm_count, counted_there);
        bytes_few > 0) {
      const ShareRun& few = *row.share_run;
      const std::string on_few = std::to_string(few.sms) + " (its share run" +
                                 (counted_there ? "" : ", with the bytes counted on all SMs") + ")";
      const double seconds_all = row.timing->median_seconds();
      if (const std::optional<ShareFit> fit =
              fit_share_run(*spec, measured_on.sm_count, level.bytes, seconds_all, few.sms,
                            bytes_few, few.seconds)) {
        const double seconds = share_fit_seconds(*spec, *fit, level.bytes, target.sm_count);
        from_share_run = true;
        notes.push_back(name + ": " + seconds_text(seconds_all) + " on " + all + " SMs and " +
                        seconds_text(few.seconds) + " on " + on_few + ": its bytes as the share " +
                        "curve's kernel draws them with " + format_fixed(fit->per_sm, 2) +
                        " of its bytes in flight per SM, and " + seconds_text(fit->fixed_seconds) +
                        " no SM count changes; " + seconds_text(seconds) + " on " + sms);
        return seconds;
      }
      // No fit with a fixed part: the share run's bytes in flight alone, never drawing more than
      // on all the SMs.
      const double drawn_few = bytes_few / few.seconds / 1e9;
      const double curve_sms = share_curve_sms(*spec, drawn_few);
      const double gbps =
          std::min(drawn, share_curve_gbps(*spec, curve_sms * target.sm_count / few.sms));
      if (!(gbps > 0)) return 0;
      notes.push_back(name + ": drew " + format_fixed(drawn, 0) + " GB/s on " + all + " SMs and " +
                      format_fixed(drawn_few, 0) + " on " + on_few +
                      ": the bytes in flight of the share curve's kernel on " +
                      format_fixed(curve_sms, 1) + " of " + std::to_string(few.sms) + ", " +
                      format_fixed(gbps, 0) + " GB/s on " + sms);
      return seconds_all * drawn / gbps;
    }
    const double gbps = share_drawn_gbps(*spec, measured_on.sm_count, drawn, target.sm_count);
    if (!(gbps > 0)) return 0;
    at_most = past_share_knee(*spec, drawn);
    notes.push_back(name + ": drew " + format_fixed(drawn, 0) + " GB/s on " + all +
                    " SMs; with its bytes in flight per SM, " + format_fixed(gbps, 0) +
                    " GB/s on " + sms + " (the level's share curve)" +
                    (at_most
                         ? "; it filled the level on all SMs, which shows the least it holds in "
                           "flight, not how much more: at most this long (a run on a few SMs, "
                           "--share-run, measures it)"
                         : ""));
    return row.timing->median_seconds() * drawn / gbps;
  }
  return 0;
}

RowAnalysis project(const Row& row, const GpuSpec& measured_on, const GpuSpec& target) {
  const RowAnalysis here = analyze(row, measured_on, false);
  Row p = row;
  std::vector<std::string> notes;
  // DRAM bytes for the target's L2.
  const KernelModel* model = try_model(row.kernel);
  bool dram_scaled = false;
  if (model != nullptr) {
    const Prediction there = predict(*model, row.workload, target);
    const Prediction measured_model = predict(*model, row.workload, measured_on);
    const double scale = there.model_dram_bytes / measured_model.model_dram_bytes;
    p.prediction = there;
    for (const char* id : {quantity::kDramRead, quantity::kDramWrite})
      if (auto it = p.counters.find(id); it != p.counters.end() && std::isfinite(scale)) {
        it->second *= scale;
        dram_scaled = true;
      }
    if (dram_scaled && std::fabs(scale - 1) > 1e-9)
      notes.push_back("DRAM bytes × " + format_fixed(scale, 2) + " for " +
                      format_fixed(static_cast<double>(target.l2_cache_bytes) / 1e6, 0) +
                      " MB of L2");
  }
  // The measured clocks are not the target's.
  p.counters.erase(quantity::kSmClock);
  // The target's floor with these counts, then the time at the measured fraction of the bound.
  Row untimed = p;
  untimed.timing.reset();
  const RowAnalysis floor = analyze(untimed, target, true);
  double fraction = here.fraction_of_bound;
  if (!(fraction > 0)) {
    fraction = 1;
    notes.push_back("no bound on " + measured_on.name + ": projected at the target's bound");
  } else if (fraction > 1) {
    fraction = 1;
  } else {
    notes.push_back("at " + format_fixed(100 * fraction, 0) + "% of the bound, as measured on " +
                    measured_on.name);
  }
  // Never below the target's floor: the launch order's change may shorten the time.
  double projected_time =
      std::max(floor.time_floor_seconds, floor.time_floor_seconds / fraction *
                                             launch_order_change(row, model, here, floor, notes));
  bool from_share_run = false;
  bool at_most = false;
  if (const double shared =
          time_on_share(row, measured_on, target, here, floor, notes, from_share_run, at_most);
      shared > 0)
    projected_time = std::max(floor.time_floor_seconds, shared);
  const double measured_time = row.timing->median_seconds();
  if (std::isfinite(projected_time) && projected_time > 0 && measured_time > 0) {
    const double factor = projected_time / measured_time;
    for (double& sample : p.timing->samples_seconds) sample *= factor;
  }
  // The measured GPU's clocks say nothing about the target's.
  p.timing->sm_clock_before_mhz = 0;
  p.timing->sm_clock_after_mhz = 0;
  p.timing->sm_clock_timed_mhz = 0;
  p.timing->clock_limit.clear();
  RowAnalysis a = analyze(p, target, true);
  a.projected = true;
  a.from_share_run = from_share_run;
  a.share_time_at_most = at_most;
  a.time_source = Source::kProjected;
  for (LevelAnalysis& level : a.levels)
    if (level.level == MemoryLevel::kDram && dram_scaled) level.bytes_source = Source::kProjected;
  // A pipe the target does not have.
  if (here.ceiling != nullptr && a.ceiling != nullptr &&
      here.ceiling->instruction != TensorInstruction::kNone &&
      a.ceiling->instruction != here.ceiling->instruction)
    notes.push_back(target.name + " has no " + std::string(to_string(here.ceiling->instruction)) +
                    ": the work falls back to " + a.ceiling->label() + " at " +
                    format_fixed(a.ceiling->peak_tflops, 1) + " TFLOP/s (" +
                    format_fixed(here.ceiling->peak_tflops, 1) + " on " + measured_on.name + ", ×" +
                    format_fixed(here.ceiling->peak_tflops / a.ceiling->peak_tflops, 2) +
                    " the time at the roof)");
  a.projection_note = "projected from " + measured_on.name + ": " + join(notes, "; ");
  return a;
}

}  // namespace

std::size_t verdicts_made() {
  return verdicts;
}

RowAnalysis analyze(const Row& row, const Report& report) {
  ++verdicts;
  const GpuSpec& spec = report.spec_for(row);
  const ReportContext& context = report.context_of(row);  // its own, in a merged report
  const bool projection = context.projection;
  const GpuSpec* measured = projection && !context.measured_spec.empty()
                                ? find_spec(report, context.measured_spec)
                                : nullptr;
  const bool timed = row.timing.has_value() && !row.timing->samples_seconds.empty();
  const bool verdict =
      row.status == RowStatus::kOk || row.status == RowStatus::kCountersUnavailable;
  if (measured != nullptr && timed && verdict) return project(row, *measured, spec);
  RowAnalysis a = analyze(row, spec, projection);
  // The energy verdict with the coefficients of the GPU measured on: none for a projection.
  if (const EnergyCoefficients* coefficients = energy_coefficients_for(report, spec);
      coefficients != nullptr && !projection)
    a.energy = analyze_energy(row, a, *coefficients);
  return a;
}

}  // namespace roofline
