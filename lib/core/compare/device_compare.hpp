// The same sweep measured on two devices (two GPU types), side by side: per matched row the
// time on each, the speed-up of the head device over the base device, and which roof each row
// sits on there. Not a regression gate: a different GPU is expected to be different.
#pragma once

#include <string>
#include <vector>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

struct DeviceSide {
  bool judged = false;           // the row has a verdict (ok or counters_unavailable)
  std::string status;            // the row's status
  double seconds = 0;            // median measured time (the model's floor for a model report)
  double tflops_per_second = 0;  // algorithmic FLOPs / time, 1e12
  std::string regime;            // "compute-bound (tensor FP16 (mma_sync))", "memory-bound (DRAM)"
  double fraction_of_bound = 0;  // time floor / time
};

struct DeviceRowComparison {
  std::string kernel;
  std::string workload;  // row_label()
  DeviceSide base, head;
  double speedup = 0;  // base time / head time: above 1, the head device is faster; NaN unless
                       // both sides are judged
};

struct DeviceComparison {
  std::string base_origin, head_origin;  // file names
  std::string base_device, head_device;  // device names ("analytic model" without one)
  std::vector<DeviceRowComparison> rows;
  std::size_t only_base = 0, only_head = 0;  // rows without a partner
};

// Rows matched by kernel and workload (row_match.hpp). Throws InputError, one line, when no row
// matches.
DeviceComparison compare_devices(const Report& base, const Report& head,
                                 const std::string& base_origin, const std::string& head_origin);

// The table's columns (keys for --columns with --across-devices).
const std::vector<TableColumn>& device_comparison_columns();
// `fit`: the terminal's width and --columns (table_layout.hpp), as compare's own table.
std::string render_device_comparison_table(const DeviceComparison& comparison,
                                           const TableFit& fit = {});

}  // namespace roofline
