// cuflash-roofline: parse the command line and map errors to exit codes (app/cli.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <spdlog/spdlog.h>

#include "app/cli.hpp"
#include "app/process.hpp"

int main(int argc, char** argv) {
  // A closed standard descriptor would be taken by the next file opened (a report written to
  // stdout would land in it): hold each with /dev/null opened for reading, so that a write to
  // a closed stdout fails (exit 2) rather than vanish.
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int held = ::open("/dev/null", O_RDONLY);
      if (held >= 0 && held != fd) {
        ::dup2(held, fd);
        ::close(held);
      }
    }
  roofline::app::install_signal_handlers();
  int code = roofline::app::run_cli(std::vector<std::string>(argv + 1, argv + argc));
  // Leave without the teardown of the CUDA runtime, cuBLAS and CUPTI: by now every file is
  // closed and every device allocation freed (RAII, inside run_cli), and what remains (the
  // contexts) the driver reclaims when the process ends. `run --devices` waits for its
  // workers to end, so their exits are on its critical path. Closing stdout is the last check
  // of what was written to it (run_cli flushed it).
  spdlog::default_logger()->flush();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (::close(STDOUT_FILENO) != 0 && errno != EBADF && code == 0) {
    std::fprintf(stderr, "error: cannot write to standard output: %s\n", std::strerror(errno));
    code = 2;
  }
  std::_Exit(code);
}
