#pragma once
// A calibration file (written by `fleetsim calibrate fit`): the kernel fits of every measured GPU
// and the collective curves of every measured system, in one JSON document:
//   {"format": "fleetsim-calibration", "version": 1, "sources": [...files...],
//    "kernels": <to_json(KernelCalibration)>, "collectives": <to_json(CollectiveCalibration)>}
#include <memory>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/kernel/kernel_model.hpp"

namespace fleetsim {

struct Calibration {
  std::vector<std::string> sources;  ///< the measurement files it was fitted from
  KernelCalibration kernels;
  CollectiveCalibration collectives;
};

nlohmann::json to_json(const Calibration& c);
/// Reads a calibration file; errors (missing file, not JSON, wrong format) name the file and field.
Calibration load_calibration(const std::string& path);
/// Writes `c` to `path` (pretty-printed); throws std::runtime_error if the file cannot be written.
void save_calibration(const Calibration& c, const std::string& path);

}  // namespace fleetsim
