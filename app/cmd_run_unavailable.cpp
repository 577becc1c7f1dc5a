// `run` in a build without CUDA: say so, and point at `model`.
#include <memory>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "lib/core/base/errors.hpp"

namespace roofline::app {

void setup_run(CLI::App& root, const GlobalOptions&, int*) {
  CLI::App* sub = root.add_subcommand("run", "Measure the bundled kernels on the GPU present");
  sub->allow_extras();
  set_command_help(
      *sub, {}, {{"3", "always: this build has no CUDA support"}},
      "This build of cuflash-roofline has no CUDA support (ROOFLINE_ENABLE_CUDA=OFF):\n"
      "`cuflash-roofline model` gives the analytic roofline without a GPU.");
  sub->callback([] {
    throw GpuUnavailableError(
        "this build of cuflash-roofline has no CUDA support (ROOFLINE_ENABLE_CUDA=OFF); "
        "`cuflash-roofline model` works without a GPU");
  });
}

}  // namespace roofline::app
