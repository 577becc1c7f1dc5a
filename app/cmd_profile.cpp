// `cuflash-roofline profile [options] -- PROGRAM [ARGS...]`: run another program with the
// injection library (lib/inject), one row per profiled kernel launch, judged like our own
// kernels. The program never links our code; each of its processes that uses CUDA writes a
// record file (profile_protocol.hpp) that is read back here into one report.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/options.hpp"
#include "app/profile_process.hpp"
#include "app/profile_stalls.hpp"
#include "app/projection_output.hpp"
#include "app/temp_dir.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/profile/profile_protocol.hpp"
#include "lib/profile/profile_report.hpp"

namespace roofline::app {
namespace {

struct ProfileCommandOptions {
  std::vector<std::string> command;
  std::string counter_set = "roofline";
  std::string cache = "cold";
  std::string replay =  // the default is ProfileOptions's
      ProfileOptions{}.replay == ReplayMode::kBatch ? "batch" : "launch";
  std::string graph_nodes =  // the default is ProfileOptions's
      std::string(to_string(ProfileOptions{}.graph_nodes));
  std::string kernel_regex;
  std::int64_t launch_skip = 0;
  std::int64_t launch_count = -1;
  bool stalls = false;
  std::int64_t stalls_per_kernel = -1;
  std::string injection;
  std::string gpu;
  OutputOptions output;
};

// The record files in `dir`. A directory removed or made unreadable during the run, and a file
// that is no regular file (a FIFO would block for ever), are input errors: read_text_file
// refuses them without blocking.
std::vector<ProcessRecords> read_records(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error))
    if (it->path().extension() == ".jsonl") files.push_back(it->path());
  if (error)
    throw InputError("cannot read the record directory " + dir.string() + " (" + error.message() +
                     "): was it removed during the run?");
  std::vector<ProcessRecords> out;
  for (const auto& file : files)
    out.push_back(read_process_records(read_text_file(file), file.filename().string()));
  // Parents before children, each process's rows in launch order.
  std::sort(out.begin(), out.end(), [](const ProcessRecords& a, const ProcessRecords& b) {
    return a.process_id < b.process_id;
  });
  return out;
}

// --gpu's names (comma-separated), each a known spec: InputError for an empty or unknown one.
std::vector<std::string> gpu_names(const std::string& list, const SpecRegistry& registry) {
  std::vector<std::string> names;
  if (list.empty()) return names;
  for (const std::string& name : split(list, ',')) {
    if (trim(name).empty())
      throw InputError("--gpu " + quote_text(list, 80) +
                       ": an empty name (spec names, comma-separated: h100,b200)");
    registry.find(trim(name));  // InputError for an unknown name
    names.push_back(trim(name));
  }
  return names;
}

// The report written and shown. With --gpu naming GPUs other than the one the program ran on,
// the table's place goes to the program projected onto each of them, group by group (as `show
// REPORT --gpu` prints it); the files keep the report: judged against the one --gpu, or, with
// several, as measured.
void emit_report(const ProfileCommandOptions& options, const SpecRegistry& registry,
                 const std::vector<ProcessRecords>& processes, ProfileRun run,
                 const std::vector<std::string>& gpus) {
  if (gpus.size() == 1) run.gpu = gpus.front();
  const std::optional<Report> report = profile_report(processes, registry, run);
  throw_if_interrupted();  // a signal while the records were read: no report
  if (!report) return;
  if (gpus.empty()) return options.output.emit(*report);
  run.gpu.reset();
  std::optional<Report> measured = report;
  if (gpus.size() == 1) {
    try {
      measured = profile_report(processes, registry, run);
    } catch (const InputError& error) {  // no spec names the device: nothing to project from
      spdlog::warn("--gpu {}: the program is not projected ({})", gpus.front(), error.what());
      return options.output.emit(*report);
    }
  }
  const std::string own = measured->spec_for(measured->rows.front()).key;
  std::vector<GpuSpec> targets;
  for (const std::string& name : gpus)
    if (const GpuSpec& spec = registry.find(name); spec.key != own) targets.push_back(spec);
  if (targets.empty()) return options.output.emit(*report);
  const std::string text =
      project_program(JudgedReport(*measured), targets, GroupBy::kFunctor,
                      options.output.summary_top, options.output.table.fit().max_width, "profile")
          .text;
  options.output.emit(*report, &text);
}

int exit_code_of(ProfileErrorKind kind) {
  return kind == ProfileErrorKind::kInternal ? static_cast<int>(ExitCode::kInternal)
                                             : static_cast<int>(ExitCode::kNoGpu);
}

int run_profile(const ProfileCommandOptions& options, const GlobalOptions& global) {
  options.output.check(global.specs.files, global.specs);  // no spec file overwritten
  if (!options.kernel_regex.empty()) check_kernel_regex(options.kernel_regex);
  const SpecRegistry registry = global.specs.load();
  const std::vector<std::string> gpus = gpu_names(options.gpu, registry);  // before any work
  const std::string program = resolve_program(options.command.front());
  const std::filesystem::path injection = find_injection_library(options.injection);

  ProfileOptions profile;
  profile.counter_set = options.counter_set == "full" ? CounterSet::kFull : CounterSet::kRoofline;
  profile.cache = options.cache == "warm" ? CacheControl::kWarm : CacheControl::kCold;
  profile.replay = options.replay == "launch" ? ReplayMode::kPerLaunch : ReplayMode::kBatch;
  profile.graph_nodes = *parse_graph_nodes(options.graph_nodes);  // checked by CLI11
  profile.kernel_regex = options.kernel_regex;
  profile.launch_skip = options.launch_skip;
  profile.launch_count = options.launch_count;
  profile.stalls = options.stalls;
  profile.stalls_per_kernel = options.stalls_per_kernel;

  TempDir records_dir("cuflash-profile");
  std::map<std::string, std::string> environment = to_environment(profile);
  environment["CUDA_INJECTION64_PATH"] = injection.string();
  environment[profile_env::kOutputDir] = records_dir.path().string();
  adopt_orphans();  // the program's children, should a signal end it before them
  const ChildStatus status = run_program(program, options.command, environment);
  // A signal was forwarded to the program: its children left are sent it too and reaped before
  // the record directory is removed (they would write into it); then no report.
  if (const int signal = pending_signal()) end_adopted(signal, std::chrono::seconds(5));
  throw_if_interrupted();
  std::vector<ProcessRecords> processes = read_records(records_dir.path());
  if (options.stalls) resolve_stall_pcs(processes, records_dir.path());

  const ProcessRecords::Error* fatal = nullptr;
  std::size_t rows = 0;
  for (const ProcessRecords& p : processes) {
    for (const ProcessRecords::Error& error : p.errors) {
      // The first error ends the command with its own line; the others are warnings.
      if (fatal == nullptr)
        fatal = &error;
      else
        spdlog::warn("process {} ({}): {}", p.process_id, p.process, error.message);
    }
    if (p.ended) {
      std::set<std::int64_t> launched;  // a graph launch and its nodes share one index
      for (const Row& row : p.rows) launched.insert(row.launch->index);
      if (static_cast<std::int64_t>(launched.size()) < p.profiled)
        spdlog::warn("process {} ({}): {} of its {} profiled launches have no row", p.process_id,
                     p.process, p.profiled - static_cast<std::int64_t>(launched.size()),
                     p.profiled);
    }
    if (p.ended)
      spdlog::debug(
          "process {} ({}): {} kernel launches, {} profiled; time in the injection "
          "library: {}",
          p.process_id, p.process, p.launches, p.profiled, describe_phases(p.phases));
    rows += p.rows.size();
  }
  ProfileRun run;
  run.command_line = global.command_line();
  run.program_command = options.command;
  run.options = profile;
  emit_report(options, registry, processes, run, gpus);

  if (fatal != nullptr) {
    const std::string message = "profile: " + fatal->message;
    if (exit_code_of(fatal->kind) == static_cast<int>(ExitCode::kInternal))
      throw std::runtime_error(message);
    throw GpuUnavailableError(message);
  }
  const std::string written =
      rows > 0 ? "; the " + std::to_string(rows) + " launches profiled before are written" : "";
  if (!status.ok()) throw InputError(options.command.front() + " " + status.describe() + written);
  if (processes.empty())
    throw InputError(options.command.front() +
                     " never initialised CUDA: no process loaded the injection library");
  if (rows == 0) {
    std::int64_t launches = 0;
    for (const ProcessRecords& p : processes) launches += p.launches;
    throw InputError(launches == 0 ? options.command.front() + " launched no CUDA kernel"
                                   : "none of the " + std::to_string(launches) +
                                         " kernel launches matched the filters");
  }
  return 0;
}

}  // namespace

void setup_profile(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<ProfileCommandOptions>();
  CLI::App* sub = root.add_subcommand(
      "profile",
      "Run a CUDA program and place each of its kernel launches on the roofline "
      "(cuflash-roofline profile [options] -- PROGRAM [ARGS...])");
  auto* counter_set =
      sub->add_option("--counter-set", options->counter_set,
                      "roofline: one pass, no instrumentation; full: adds CUDA-core FLOPs and "
                      "shared-memory bytes (kernel replay, 3 passes, instrumented)")
          ->check(CLI::IsMember({"roofline", "full"}))
          ->capture_default_str();
  sub->add_option("--cache", options->cache,
                  "cold: empty the instruction caches and L2 before each profiled launch (as "
                  "ncu --cache-control all); "
                  "warm: leave the caches as the program left them")
      ->check(CLI::IsMember({"cold", "warm"}))
      ->capture_default_str();
  auto* replay =
      sub->add_option(
             "--replay", options->replay,
             "batch: one counter pass spans many launches, a range around each (one-pass "
             "sets; a graph launch is one range); launch: a pass per launch (kernel replay; "
             "always so for --counter-set full)")
          ->check(CLI::IsMember({"batch", "launch"}))
          ->capture_default_str();
  auto* graph_nodes =
      sub->add_option("--graph-nodes", options->graph_nodes,
                      "counted: a row per node of each CUDA graph launch (kernel, memcpy, memset) "
                      "with its time as the graph ran it and the NVTX ranges of its capture, each "
                      "kernel node counted by a replay of its own before the launch (device memory "
                      "saved and restored; --replay batch, one-pass sets); timed: the same rows, "
                      "timed only, as the program runs them; off: the graph launch is one row. "
                      "The launch is the nodes' parent, counted as one range")
          ->check(CLI::IsMember({"counted", "timed", "off"}))
          ->capture_default_str();
  auto* stalls = sub->add_flag(
      "--stalls", options->stalls,
      "Sample the warps of each chosen launch instead of counting it (CUPTI PC sampling, "
      "kernel-serialized): why it stalls, by reason (ncu's names), SASS instruction and source "
      "line; rows are timed, not counted (PC sampling cannot run beside the counters: profile "
      "again without --stalls for the roofline). Graph launches are sampled whole and their "
      "nodes timed (--graph-nodes counted is refused)");
  stalls->excludes(counter_set);
  stalls->excludes(replay);
  sub->add_option("--stalls-per-kernel", options->stalls_per_kernel,
                  "With --stalls: sample at most N launches of each kernel (or executable graph); "
                  "its later launches run unprofiled, without a row (-1: all)")
      ->type_name("N")
      ->check(decimal_in(-1, std::numeric_limits<std::int64_t>::max()))
      ->needs(stalls)
      ->capture_default_str();
  sub->add_option("--kernel-regex", options->kernel_regex,
                  "Profile only kernels whose demangled name matches (ECMAScript, search); in "
                  "CUDA graphs, the nodes that match")
      ->type_name("REGEX");
  sub->add_option("--launch-skip", options->launch_skip,
                  "Skip the first N matching launches (a graph launch counts as one)")
      ->type_name("N")
      ->check(decimal_in(0, std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str();
  sub->add_option("--launch-count", options->launch_count,
                  "Profile at most N matching launches (-1: all)")
      ->type_name("N")
      ->check(decimal_in(-1, std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str();
  sub->add_option("--injection", options->injection,
                  "The injection library (default: next to this executable)")
      ->type_name("PATH")
      ->check(kNonEmpty);
  sub->add_option("--gpu", options->gpu,
                  "GPU specs, comma-separated: the program projected onto each other GPU, group "
                  "by group, in the table's place (as show REPORT --gpu prints it); one name also "
                  "judges the report's launches against it, as run --gpu does (default: the "
                  "device's own spec)")
      ->type_name("NAME[,NAME...]");
  options->output.add_to(*sub, true);
  options->output.add_export_to(*sub);
  options->output.summary_top = 15;  // where the time goes, then the launches
  sub->add_option("command", options->command, "The program and its arguments, after --")
      ->type_name("-- PROGRAM [ARGS...]");
  set_command_help(
      *sub,
      {"profile -- python train_step.py", "profile --json mlp.json -- ./mlp --batch 64",
       "profile --kernel-regex gemm --launch-count 20 --counter-set full -- ./app",
       "profile --stalls --kernel-regex gemm --launch-count 5 -- python train_step.py"},
      {kExitOk,
       {"2",
        "usage or input error (--stalls with --counter-set, --replay or --graph-nodes counted), "
        "or the program launched no kernel: nothing written; the program failed (exit status or "
        "signal in the message): the launches profiled "
        "before it failed are written"},
       {"3",
        "no usable GPU, counters not permitted, or another profiler attached: the launches "
        "profiled before, if any, are written"},
       {"4", "internal error: the launches profiled before are written"},
       kExitSignal});
  sub->callback([options, &global, exit_code, graph_nodes] {
    if (options->stalls) {
      if (graph_nodes->count() > 0 && options->graph_nodes == "counted")
        throw InputError(
            "profile: --stalls cannot count graph nodes (--graph-nodes counted replays them "
            "under the counters, which PC sampling cannot run beside): use --graph-nodes timed "
            "or off");
      if (graph_nodes->count() == 0) options->graph_nodes = "timed";  // sampled, not counted
    }
    if (!global.program.empty()) options->command = global.program;  // after "--" (cli.cpp)
    if (options->command.empty())
      throw InputError("profile: no program to run (profile [options] -- PROGRAM [ARGS...])");
    *exit_code = run_profile(*options, global);
  });
}

}  // namespace roofline::app
