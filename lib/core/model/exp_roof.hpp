// The exponential roof: the multi-function unit (XU pipe, MUFU.EX2) as a ceiling in FLOP units.
// A kernel that does F FLOPs per E exponentials cannot exceed (exp2 results per second) × F/E
// FLOP/s: at d = 64 the attention forward does 4·d = 256 FLOPs per score, so on a GH100
// (16 exp2 per clock and SM, 4096 dense FP16 tensor FLOPs) that roof meets the wgmma roof.
// Pure functions, units in the names.
#pragma once

namespace roofline {

// exp2 results per second of the whole chip: per clock and SM × SMs × clock. 0 when any is 0.
double exp_rate_per_second(double per_clock_per_sm, int sm_count, double clock_hz);

// FLOPs per exponential of a kernel's own work. NaN when exponentials <= 0.
double flops_per_exponential(double flops, double exponentials);

// The roof: exp rate × FLOPs per exponential. NaN when either is not positive.
double exp_roof_flops_per_second(double flops, double exponentials, double exp_per_second);

// Time floor of the exponentials alone: exponentials / rate. NaN when rate <= 0.
double exp_time_floor_seconds(double exponentials, double exp_per_second);

}  // namespace roofline
