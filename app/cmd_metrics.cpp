// `cuflash-roofline metrics [--chip GH100] [--list]`: the metric catalogue, as collected.
#include <iostream>
#include <memory>

#include "app/commands.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"

namespace roofline::app {
namespace {

struct MetricsOptions {
  std::string chip = "GH100";
  std::string set = "roofline";
  bool list = false;
};

int run_metrics(const MetricsOptions& options) {
  const CounterSet set = options.set == "full" ? CounterSet::kFull : CounterSet::kRoofline;
  const std::vector<std::string> metrics =
      catalogue_metrics(options.chip, set);  // throws if unknown
  if (options.list) {
    std::cout << join(metrics, ",") << "\n";
    return 0;
  }
  std::cout << "counter set " << to_string(set) << " on " << options.chip << " (" << metrics.size()
            << " hardware metrics):\n";
  for (const CounterQuantity& q : counter_quantities()) {
    const auto terms = metric_terms(options.chip, q.id, set);
    if (terms.empty()) continue;
    std::vector<std::string> parts;
    for (const MetricTerm& term : terms)
      parts.push_back((term.factor == 1 ? "" : format_si(term.factor) + " × ") + term.metric);
    std::cout << "  " << q.id << " [" << q.unit << "] = " << join(parts, " + ") << "\n      "
              << q.meaning << "\n";
  }
  return 0;
}

}  // namespace

void setup_metrics(CLI::App& root, const GlobalOptions&, int* exit_code) {
  auto options = std::make_shared<MetricsOptions>();
  CLI::App* sub = root.add_subcommand("metrics", "Show the hardware metrics collected per chip");
  sub->add_option("--chip", options->chip, "Chip as CUPTI names it (GA100, GH100)")
      ->capture_default_str();
  sub->add_option("--set", options->set, "Counter set: roofline or full")
      ->check(CLI::IsMember({"roofline", "full"}))
      ->capture_default_str();
  sub->add_flag("--list", options->list,
                "Print the metric names comma-separated (for ncu --metrics)");
  sub->callback([options, exit_code] { *exit_code = run_metrics(*options); });
}

}  // namespace roofline::app
