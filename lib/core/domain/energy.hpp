// What a launch costs in energy (`run --energy`): the board's energy counter (NVML) read while
// the point runs back to back for about a second, between two of the counter's updates, so that
// its steps (about 100 ms apart on the H200) fall at both ends of the window, not inside it.
// Raw quantities; FLOP/J and bytes/J are derived from the row's counted or modelled work.
#pragma once

#include <vector>

namespace roofline {

struct EnergyMeasurement {
  double joules_per_launch = 0;   // mean board power × GPU time per launch
  double watts = 0;               // mean board power over the window
  double seconds_per_launch = 0;  // GPU time per launch back to back, the gaps between included
  double window_seconds = 0;      // between the first and the last counter update used
  int updates = 0;                // counter updates inside the window (its steps)
  // Half the distance between the 25th and 75th percentiles of the steps' powers, relative to
  // their median: how steady the board was over the window.
  double relative_spread = 0;
  // The GPU die's temperature at the window's end, °C; 0 where NVML did not say. At one load a
  // warmer board draws more (leakage): two figures compare at like temperatures.
  double temperature_c = 0;

  friend bool operator==(const EnergyMeasurement&, const EnergyMeasurement&) = default;
};

// The counter's readings (host seconds of each change, millijoules) to a measurement: the mean
// power over [first reading at or after `from`, last reading at or before `to`], and each step's
// power for the spread. `seconds_per_launch` is the GPU's time per launch over the loop. None
// (watts 0) with fewer than two readings in the window.
EnergyMeasurement energy_from_readings(const std::vector<double>& seconds,
                                       const std::vector<double>& millijoules, double from,
                                       double to, double seconds_per_launch);

}  // namespace roofline
