// The energy roofline's coefficients from a calibration (`calibrate --energy`): the static
// power measured with the GPU active but idle, and for each target (pipe, exponential unit,
// memory level) the dynamic energy per unit of work of its micro-kernel,
//   (P_kernel − P_static) × seconds per launch ÷ work per launch
// (domain/energy_coefficients.hpp), from the kernel with the highest rate on that target, as
// the ceilings are (derive_ceilings); the bulk-copy, write and reduction streams (by id) price
// their own kinds of byte instead of competing for their level's coefficient.
// A compute kernel that drew the board's power limit on the whole device ran at the cap's lower
// clock and voltage; where calibrate measured it again on a share of the SMs below the cap
// (share_of that kernel, with an energy), the share with the fewest SMs (calibrate's last: it
// stops at the first share below the cap at the full clock) that drew less than
// kAtPowerLimit of the limit prices the pipe's FLOP instead: the price at the clock a launch
// below the cap runs at (the energy model bounds one whose terms would draw more by the limit).
#pragma once

#include <string>
#include <vector>

#include "lib/core/report/calibration.hpp"

namespace roofline {

// A board drawing at least this share of its enforced power limit runs at the cap's clock.
inline constexpr double kAtPowerLimit = 0.95;

// Sets overlay.energy from overlay.static_power and the measurements' energies (resets it
// without a static power). Returns one line per target left without a coefficient ("l1: the
// power under shared_read (61.0 W) is not above the static power (62.5 W)").
std::vector<std::string> derive_energy_coefficients(CalibrationOverlay& overlay);

}  // namespace roofline
