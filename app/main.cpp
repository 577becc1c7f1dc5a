// cuflash-roofline: parse the command line and map errors to exit codes (app/cli.cpp).
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <spdlog/spdlog.h>

#include "app/cli.hpp"

int main(int argc, char** argv) {
  const int code = roofline::app::run_cli(std::vector<std::string>(argv + 1, argv + argc));
  // Leave without the teardown of the CUDA runtime, cuBLAS and CUPTI: by now every file is
  // closed and every device allocation freed (RAII, inside run_cli), and what remains (the
  // contexts) the driver reclaims when the process ends. `run --devices` waits for its
  // workers to end, so their exits are on its critical path.
  spdlog::default_logger()->flush();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
