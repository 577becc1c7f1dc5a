// `cuflash-roofline model`: the analytic roofline of each workload on one or more GPU specs,
// no device needed.
#include <algorithm>
#include <memory>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/verdict/assemble.hpp"

namespace roofline::app {
namespace {

struct ModelOptions {
  std::vector<std::string> gpus = {"a100"};
  SweepOptions sweep;
  OutputOptions output;
  CeilingOptions ceilings;
};

int run_model(const ModelOptions& options, const GlobalOptions& global) {
  std::vector<std::string> inputs = global.specs.files;  // never overwritten by an output
  inputs.insert(inputs.end(), options.ceilings.calibrations.begin(),
                options.ceilings.calibrations.end());
  options.output.check(inputs, global.specs);
  const SpecRegistry registry = global.specs.load();
  const std::vector<CalibrationOverlay> calibrations = options.ceilings.load();
  const std::vector<Workload> workloads = options.sweep.workloads();
  const std::vector<std::string> kernels = options.sweep.kernel_names();

  Report report;
  report.context = make_context("model");
  report.context.command_line = global.command_line();
  report.context.counters = "none: analytic model";
  std::vector<std::string> judged;  // spec keys, each once, in the order asked
  for (const std::string& gpu : options.gpus) {
    const GpuSpec& spec = registry.find(gpu);
    if (std::find(judged.begin(), judged.end(), spec.key) != judged.end()) continue;
    judged.push_back(spec.key);
    std::vector<Row> rows;
    for (const Workload& workload : workloads)
      for (const std::string& kernel : kernels) {
        Row row;
        row.kernel = kernel;
        row.workload = workload;
        row.message =
            unsupported_reason(find_kernel_model(kernel), workload, spec.compute_capability);
        if (!row.message.empty()) row.status = RowStatus::kUnsupported;
        rows.push_back(std::move(row));
      }
    add_rows(report, own_spec(spec), std::move(rows));
  }
  options.ceilings.apply(report, calibrations);
  options.output.emit(report);
  return 0;
}

}  // namespace

void setup_model(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<ModelOptions>();
  CLI::App* sub = root.add_subcommand(
      "model", "Analytic roofline of each workload on GPU specs (no GPU needed)");
  sub->add_option("--gpu", options->gpus, "GPU specs to judge against, comma-separated")
      ->delimiter(',')
      ->type_name("NAME,...")
      ->capture_default_str();
  options->sweep.add_to(*sub);
  options->output.add_to(*sub, true);
  options->ceilings.add_to(*sub, false);
  set_command_help(
      *sub,
      {"model --gpu h100 --seq 4096", "model --gpu a100,h200 --pass fwd,bwd --csv model.csv",
       "model --gpu h200 --kernel flash-v2,flash-v3 --svg roofline.svg",
       "model --gpu h200 --columns kernel,workload,time,regime,bound --flops pipe"},
      {kExitOk, kExitUsage, kExitInternal});
  sub->callback([options, &global, exit_code] { *exit_code = run_model(*options, global); });
}

}  // namespace roofline::app
