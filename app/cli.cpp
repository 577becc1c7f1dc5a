#include "app/cli.hpp"

#include <algorithm>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/base/version.hpp"

namespace roofline::app {
namespace {

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0  success\n"
    "  1  regression found (compare)\n"
    "  2  usage or input error (bad option, unknown GPU, malformed spec or report, unwritable "
    "output)\n"
    "  3  no usable GPU, or hardware counters not permitted when asked for\n"
    "  4  internal error\n";

void setup_logging(const GlobalOptions& global) {
  spdlog::drop("cuflash-roofline");  // run_cli may run many times in one process (tests)
  auto logger = spdlog::stderr_color_mt("cuflash-roofline");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(global.quiet            ? spdlog::level::err
                    : global.verbosity >= 2 ? spdlog::level::trace
                    : global.verbosity == 1 ? spdlog::level::debug
                                            : spdlog::level::info);
}

}  // namespace

int run_cli(const std::vector<std::string>& args) {
  CLI::App root("cuflash-roofline: where your attention kernels stand on the roofline",
                "cuflash-roofline");
  root.footer(kExitCodes);
  root.set_version_flag("--version", std::string("cuflash-roofline ") + kToolVersion);
  root.require_subcommand(1);
  // -q, -v and the spec options also after the subcommand ("run ... -q").
  root.fallthrough();
  GlobalOptions global;
  global.args = args;
  global.specs.add_to(root);
  root.add_flag("-v,--verbose", global.verbosity, "More log output on stderr (-vv for trace)");
  root.add_flag("-q,--quiet", global.quiet, "Only errors on stderr");

  int exit_code = 0;
  setup_model(root, global, &exit_code);
  setup_run(root, global, &exit_code);
  setup_profile(root, global, &exit_code);
  setup_compare(root, global, &exit_code);
  setup_plot(root, global, &exit_code);
  setup_specs(root, global, &exit_code);
  setup_metrics(root, global, &exit_code);
  setup_calibrate(root, global, &exit_code);
  setup_merge(root, global, &exit_code);
  setup_show(root, global, &exit_code);

  // CLI11 wants argv order reversed in a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    root.parse_complete_callback([&global] { setup_logging(global); });
    root.parse(reversed);
    return exit_code;
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the extra arguments of the reversed vector, last first: name them in order.
    std::vector<std::string> extras = root.remaining(true);
    std::sort(extras.begin(), extras.end(), [&](const std::string& a, const std::string& b) {
      return std::find(args.begin(), args.end(), a) < std::find(args.begin(), args.end(), b);
    });
    std::cerr << "error: "
              << one_line(extras.empty() ? e.what()
                                         : "The following argument" +
                                               std::string(extras.size() > 1 ? "s were" : " was") +
                                               " not expected: " + join(extras, " "))
              << " (see --help)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << one_line(e.what()) << " (see --help)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const InputError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const GpuUnavailableError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kNoGpu);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
}

}  // namespace roofline::app
