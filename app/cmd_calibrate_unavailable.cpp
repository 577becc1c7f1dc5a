// `calibrate` in a build without CUDA: say so.
#include "app/commands.hpp"
#include "app/help.hpp"
#include "lib/core/base/errors.hpp"

namespace roofline::app {

void setup_calibrate(CLI::App& root, const GlobalOptions&, int*) {
  CLI::App* sub =
      root.add_subcommand("calibrate", "Measure the GPU's achievable roofs with micro-kernels");
  sub->allow_extras();
  set_command_help(
      *sub, {}, {{"3", "always: this build has no CUDA support"}},
      "This build of cuflash-roofline has no CUDA support (ROOFLINE_ENABLE_CUDA=OFF).");
  sub->callback([] {
    throw GpuUnavailableError(
        "this build of cuflash-roofline has no CUDA support (ROOFLINE_ENABLE_CUDA=OFF); "
        "calibrate needs a GPU");
  });
}

}  // namespace roofline::app
