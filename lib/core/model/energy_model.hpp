// The energy roofline's model of one launch (energy_coefficients.hpp for the coefficients):
//   joules = P_static × time + Σ_pipe FLOPs_pipe × e_pipe + exp2 results × e_xu
//            + integer and control instructions × e_int + Σ_level bytes charged × e_level.
// The instructions term prices what is neither a FLOP nor a byte: address and index
// arithmetic, masks, branches and barriers, shuffles (thread instructions, counted in the full
// set). The other coefficients hold their own micro-kernels' instructions (an FFMA's issue is in
// the FP32 FLOP's price, a 16-byte load's in the byte's), so a kernel that spends many integer
// instructions per FLOP or per byte pays for them here; the micro-kernels' loop counters (1-3%
// of their instructions) are the part counted twice.
// Each byte is charged once, at the deepest level it reached, because a level's coefficient
// already holds the trip through the levels above it (the DRAM micro-kernel's bytes cross L2
// and the load path as well; the L2 micro-kernel's cross the load path):
//   DRAM: the DRAM bytes;  L2: L2 bytes − DRAM bytes;
//   L1: L1 bytes (global and local) − L2 bytes, + shared-memory bytes
// (a difference below zero counts zero). Shared memory is no cache of L2: its bytes are charged
// whole, beside the global ones (TMA's copies into it cross L2, not L1, and are L2's); wgmma's
// operand reads are the wgmma coefficient's. With the global traffic nested so, this is the
// incremental form DRAM × (e_dram − e_l2) + L2 × (e_l2 − e_l1) + L1 × e_l1 + shared × e_l1.
// Three kinds of byte have prices of their own where the calibration measured them:
//  - DRAM bytes written pay e_write (the write stream's) instead of the read's e_dram;
//  - L2 bytes reduced (FP32 reductions and atomics, counted in L2 sectors) pay e_red (the
//    reduction stream's: the slice reads, adds and writes each sector) instead of e_l2;
//  - bytes loaded by bulk copies (TMA) crossed no load path: the share b of the SMs' L2
//    traffic that L1 did not see, b = (L2 − L1 global) ÷ L2, of the bytes read pays the DRAM
//    and L2 prices less the load path's part of a byte, Δ = e_dram − e_bulk (the bulk-copy
//    stream against the 16-byte loads, the same DRAM bytes). Δ is a load's: no bulk store or
//    bulk reduction is measured, so written and reduced bytes pay their streams' prices whole.
// So, with W the DRAM bytes written and R the L2 bytes reduced (at most L2 − DRAM):
//   DRAM term: (DRAM − W) × (e_dram − b·Δ) + W × e_write
//   L2 term:   (L2 − DRAM − R) × (e_l2 − b·Δ) + R × e_red
// each price at least 0; a coefficient not measured falls back as said (Δ = 0 without e_bulk).
//
// Bounded by the board's power limit: joules ≤ P_limit × time, where the coefficients carry the
// enforced limit. Each coefficient prices a unit at the voltage and clock its micro-kernel ran
// at; a launch whose sum would draw more than the limit over its time ran at a lower voltage
// and clock (the limiter holds the board's average power at the limit, and the measured time
// already holds the lower clock), so its energy is the limit × its time. On the H200 most of the
// bundled kernels at large shapes run there (690-702 W against 700 W).
//
// The roof: the most FLOPs per joule a launch of arithmetic intensity I (FLOP per DRAM byte)
// can reach on a pipe: its FLOPs and DRAM bytes alone, at the time roofline's floor,
//   FLOP/J(I) = 1 ÷ (e_pipe + e_dram ÷ I + P_static × max(1 ÷ peak, 1 ÷ (I × bandwidth))),
// e_dram there the cheaper of the loaded and the bulk-copied byte (analysis_energy.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lib/core/domain/energy_coefficients.hpp"
#include "lib/core/domain/gpu_spec.hpp"

namespace roofline {

// What a launch did, as counted. A quantity not counted is absent (NaN for exponentials): it
// then enters no term.
struct EnergyWork {
  double seconds = 0;                   // time per launch
  std::map<std::string, double> flops;  // by ceiling id ("tensor_fp16.wgmma", "fp32", ...)
  double exponentials = 0;              // exp2 results (XU); NaN when not counted
  double int_instructions = 0;          // integer and control thread instructions; NaN: not counted
  std::map<MemoryLevel, double> bytes;  // by level, as counted (L1: global and local accesses)
  // Shared-memory bytes that no L2 byte passes through (loads and stores, not wgmma's operand
  // reads, which its coefficient holds: the wgmma micro-kernel reads its operands from shared
  // memory), charged at L1's coefficient beside the L1 hits; 0 when not counted.
  double shared_bytes = 0;
  // The share of the SMs' L2 traffic that did not pass through L1 (bulk copies, TMA): (L2 bytes
  // − L1 global bytes) ÷ L2 bytes, in [0, 1]; 0 when either is not counted.
  double bulk_share = 0;
  // DRAM bytes written (part of bytes[DRAM]) and L2 bytes reduced (reductions and atomics, part
  // of bytes[L2]); 0 when not counted (they then pay the read's price).
  double dram_write_bytes = 0;
  double l2_reduction_bytes = 0;
};

enum class EnergyTermKind { kStatic, kPipe, kExp, kInstructions, kLevel };

struct EnergyTerm {
  EnergyTermKind kind = EnergyTermKind::kStatic;
  std::string id;              // "static", a ceiling id, "xu", "int", "dram", "l2", "l1"
  double work = 0;             // seconds (static), FLOPs, exp2 results, instructions or bytes
  double joules_per_unit = 0;  // watts for the static term
  double joules = 0;           // work × joules_per_unit
  double share = 0;            // joules ÷ the model's total
};

struct EnergyModel {
  std::vector<EnergyTerm> terms;  // static first, then pipes, XU, instructions, DRAM, L2, L1
  double terms_joules = 0;        // their sum; each term's share is of it
  // The model's joules: the terms' sum, or the power limit × the time where that is less.
  double joules = 0;
  bool at_power_limit = false;   // the limit bounds `joules`
  double power_limit_watts = 0;  // the coefficients' limit; 0 when not known
  // Work that was counted (and is not zero) but has no coefficient: the pipes' ceiling ids or
  // level names. Its energy is not in `joules`.
  std::vector<std::string> uncosted;

  // The term with the most joules; nullptr without terms.
  const EnergyTerm* dominant() const;
};

// Throws std::invalid_argument for a negative or non-finite time, count or coefficient (they
// are validated where they are read: a spec's coefficients, a report's counters).
EnergyModel model_energy(const EnergyWork& work, const EnergyCoefficients& coefficients);

// The roof above: FLOPs per joule at `intensity` (FLOP per DRAM byte). NaN when an input is
// missing (a peak, bandwidth or intensity that is not positive).
double energy_roof_flops_per_joule(double intensity, double joules_per_flop,
                                   double joules_per_dram_byte, double static_watts,
                                   double peak_flops_per_second, double dram_bytes_per_second);

}  // namespace roofline
