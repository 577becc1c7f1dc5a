// `cuflash-roofline metrics [--chip GH100] [--list]`: the metric catalogue, as collected.
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/terminal_width.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"

namespace roofline::app {
namespace {

struct MetricsOptions {
  std::string chip = "GH100";
  std::string set = "roofline";
  bool list = false;
};

// A metric's factor as written in the catalogue: 2, 0.5, 1e-9 (a time in ns to seconds); never
// rounded to "0.00".
std::string factor_text(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", factor);
  std::string out = text;
  // "1e-09" as "1e-9".
  const std::size_t e = out.find('e');
  if (e != std::string::npos) {
    std::size_t digits = e + 1;
    if (digits < out.size() && (out[digits] == '-' || out[digits] == '+')) {
      if (out[digits] == '+')
        out.erase(digits, 1);
      else
        ++digits;
    }
    while (digits + 1 < out.size() && out[digits] == '0') out.erase(digits, 1);
  }
  return out;
}

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
  const std::size_t width = terminal_columns();
  for (const CounterQuantity& q : counter_quantities()) {
    const auto terms = metric_terms(options.chip, q.id, set);
    if (terms.empty()) continue;
    std::vector<std::string> parts;
    for (const MetricTerm& term : terms)
      parts.push_back((term.factor == 1 ? "" : factor_text(term.factor) + " × ") + term.metric);
    // Fitted to the terminal: a sum too wide for one line gets a line a term.
    const std::string line = "  " + q.id + " [" + q.unit + "] = " + join(parts, " + ");
    if (width == 0 || display_width(line) <= width) {
      std::cout << line << "\n";
    } else {
      std::cout << "  " << q.id << " [" << q.unit << "] =\n";
      for (std::size_t i = 0; i < parts.size(); ++i)
        std::cout << "      " << (i == 0 ? "" : "+ ") << parts[i] << "\n";
    }
    const std::string meaning = "      " + q.meaning;
    std::cout << (width == 0 ? meaning + "\n" : wrap_words(meaning, width, "      "));
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
  set_command_help(*sub, {"metrics", "metrics --chip GA100 --set full", "metrics --list"},
                   {kExitOk, kExitUsage, kExitInternal});
  sub->callback([options, exit_code] { *exit_code = run_metrics(*options); });
}

}  // namespace roofline::app
