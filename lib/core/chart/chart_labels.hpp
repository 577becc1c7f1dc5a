// Labels of chart quantities, shared by the SVG and the terminal chart.
#pragma once

#include <string>

namespace roofline {

// `value` with `significant` digits ("%g").
std::string number_text(double value, int significant);
// A decade's tick label: "0.001" ... "100000", else "1e-5", "1e6".
std::string decade_text(int exponent);
// "4.8 TB/s" from 1 TB/s up, else "900 GB/s".
std::string bandwidth_text(double bytes_per_second);
// "713.7 TFLOP/s".
std::string peak_text(double flops_per_second);
// A sequence length: "16k" for multiples of 1024, else the number.
std::string seq_text(int n);
// A relative change as a signed percentage: "+12%", "-3.5%", "0%".
std::string change_text(double change);

}  // namespace roofline
