// cuflash-roofline: parse the command line and map errors to exit codes (app/cli.cpp).
#include "app/cli.hpp"

int main(int argc, char** argv) {
  return roofline::app::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
