#include "app/cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/process.hpp"
#include "app/typos.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/base/version.hpp"

namespace roofline::app {
namespace {

// The root screen's footer; each command's own screen lists its own codes (app/help.hpp).
constexpr const char* kRootFooter =
    "Examples:\n"
    "  cuflash-roofline model --gpu h100 --seq 4096\n"
    "  cuflash-roofline run --json report.json\n"
    "  cuflash-roofline compare base.json head.json --markdown comment.md\n"
    "\n"
    "Exit codes (each command's --help lists those it returns):\n"
    "  0      success\n"
    "  1      regression found (compare)\n"
    "  2      usage or input error (bad option, unknown GPU, malformed spec or report, unwritable "
    "output)\n"
    "  3      no usable GPU, or hardware counters not permitted when asked for\n"
    "  4      internal error\n"
    "  128+N  ended by signal N (SIGINT, SIGTERM, SIGHUP: forwarded to the program or workers, "
    "temporary files removed)\n"
    "\n"
    "cuflash-roofline COMMAND --help: that command's options, examples and exit codes.\n";

void setup_logging(const GlobalOptions& global) {
  spdlog::drop("cuflash-roofline");  // run_cli may run many times in one process (tests)
  // Coloured levels on a terminal, none under NO_COLOR (no-color.org).
  const char* no_color = std::getenv("NO_COLOR");
  auto logger = spdlog::stderr_color_mt("cuflash-roofline", no_color != nullptr && *no_color != '\0'
                                                                ? spdlog::color_mode::never
                                                                : spdlog::color_mode::automatic);
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(global.quiet            ? spdlog::level::err
                    : global.verbosity >= 2 ? spdlog::level::trace
                    : global.verbosity == 1 ? spdlog::level::debug
                                            : spdlog::level::info);
}

// What the command printed is on its way: std::cout and stdout flushed and checked. A failed
// write (a full disk, a closed pipe or stdout) turns success or a regression into exit 2.
int checked_stdout(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return code;
  const int saved = errno;
  std::cout.clear();
  std::clearerr(stdout);
  if (code > static_cast<int>(ExitCode::kRegression)) return code;  // its error is said
  std::cerr << "error: cannot write to standard output: "
            << (saved != 0 ? std::strerror(saved) : "write error") << "\n";
  return static_cast<int>(ExitCode::kUsage);
}

int interrupted(int signal) {
  const char* name = sigabbrev_np(signal);
  std::cerr << "error: interrupted by signal " << signal
            << (name != nullptr ? std::string(" (SIG") + name + ")" : std::string()) << "\n";
  return 128 + signal;
}

}  // namespace

namespace {

// Thrown when a parse-only run (parse_cli) has parsed and checked every option: before the
// command's callback, which would run it. (Replacing the callbacks would free the options they
// own while CLI11 still writes into them.)
struct ParsedOnly {};

int cli(const std::vector<std::string>& args, bool run) {
  CLI::App root("cuflash-roofline: where your attention kernels stand on the roofline",
                "cuflash-roofline");
  // Before the subcommands: they inherit the formatter (and would inherit a footer, set last).
  root.formatter(help_formatter());
  root.set_version_flag("--version", std::string("cuflash-roofline ") + kToolVersion);
  root.require_subcommand(1);
  // -q, -v and the spec options also after the subcommand ("run ... -q").
  root.fallthrough();
  GlobalOptions global;
  global.args = args;
  global.specs.add_to(root);
  root.add_flag("-v,--verbose", global.verbosity, "More log output on stderr (-vv for trace)")
      ->group("Every command");
  root.add_flag("-q,--quiet", global.quiet, "Only errors on stderr")->group("Every command");

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
  root.footer(kRootFooter);

  // `profile ... -- PROGRAM ARGS`: the program apart (GlobalOptions::program).
  std::vector<std::string> parsed = args;
  if (const auto dash = std::find(parsed.begin(), parsed.end(), "--");
      dash != parsed.end() && std::find(parsed.begin(), dash, "profile") != dash) {
    global.program.assign(dash + 1, parsed.end());
    parsed.erase(dash, parsed.end());
  }
  // CLI11 wants argv order reversed in a vector.
  std::vector<std::string> reversed(parsed.rbegin(), parsed.rend());
  try {
    // CLI11 calls it once every option is parsed and checked, before any command's callback.
    root.parse_complete_callback([&global, run] {
      setup_logging(global);
      if (!run) throw ParsedOnly{};
    });
    root.parse(reversed);
    if (const int signal = take_pending_signal()) return interrupted(signal);
    return checked_stdout(exit_code);
  } catch (const ParsedOnly&) {
    return 0;
  } catch (const Interrupted& e) {
    return interrupted(e.signal());
  } catch (const CLI::CallForHelp& e) {
    return checked_stdout(root.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return checked_stdout(root.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return checked_stdout(root.exit(e));
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the extra arguments of the reversed vector, last first: name them in order.
    std::vector<std::string> extras = root.remaining(true);
    std::sort(extras.begin(), extras.end(), [&](const std::string& a, const std::string& b) {
      return std::find(args.begin(), args.end(), a) < std::find(args.begin(), args.end(), b);
    });
    if (const std::string hint = command_line_hint(root, args); !hint.empty()) {
      std::cerr << "error: " << hint << " (see --help)\n";
      return static_cast<int>(ExitCode::kUsage);
    }
    std::cerr << "error: "
              << one_line(extras.empty() ? e.what()
                                         : "The following argument" +
                                               std::string(extras.size() > 1 ? "s were" : " was") +
                                               " not expected: " + join(extras, " "))
              << " (see --help)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const CLI::RequiredError& e) {
    // "A subcommand is required" after a mistyped one ("rnu"): say which was meant.
    const std::string hint = command_line_hint(root, args);
    std::cerr << "error: " << (hint.empty() ? one_line(e.what()) : hint) << " (see --help)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << one_line(e.what()) << " (see --help)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const InputError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const std::bad_alloc&) {
    // The machine's limit, not a bug: docs/exit-codes.md, "Input limits", says what a report needs.
    std::cerr << "error: out of memory (a report needs about 3 times its size to read, 6 times "
                 "to merge or rewrite: docs/exit-codes.md, Input limits)\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const GpuUnavailableError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kNoGpu);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << one_line(e.what()) << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args) {
  return cli(args, true);
}

int parse_cli(const std::vector<std::string>& args) {
  return cli(args, false);
}

}  // namespace roofline::app
