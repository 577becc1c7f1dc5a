// How wide the terminal that stdout prints to is, for the tables that fit themselves to it.
#pragma once

#include <cstddef>

namespace roofline::app {

// The columns of stdout's terminal: its window size (TIOCGWINSZ) when stdout is a terminal,
// else $COLUMNS when it holds a positive number (a script can ask for a width), else 0: no
// limit, so that output piped to a file or another program keeps every column whole.
std::size_t terminal_columns();

}  // namespace roofline::app
