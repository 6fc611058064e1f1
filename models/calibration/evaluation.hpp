#pragma once
// Evaluation of a calibration against measurements (fleetsim calibrate fit/eval): reading the
// measurement files by their header (kernel sweeps in the NeuSight CSV schema, aicb collective logs,
// nccl-tests results, Vidur collective profiles), predicting every measured row, and the per-(device, op)
// errors.
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace fleetsim {

/// What a measurement file holds, from its first line.
enum class FileKind { kernels, aicb, nccl, vidur, suite_other };

FileKind kind_of(const std::string& path);
/// Files named on the command line; a directory stands for its regular, non-hidden files (sorted).
std::vector<std::string> expand_measurement_files(const std::vector<std::string>& args);

struct Measurements {
  std::vector<KernelSample> kernels;
  std::vector<CollectiveSample> collectives;
};

/// Reads every file by its kind (launch/copy sweeps are noted on stderr and not fitted).
Measurements read_measurements(const std::vector<std::string>& files);

/// One measured row with its prediction and the roofline's.
struct EvalRow {
  std::string device, op, shape;
  double measured_s = 0, predicted_s = 0, roofline_s = 0;
  PredictionLabel label = PredictionLabel::interpolated;
  double ape() const { return 100 * std::abs(predicted_s / measured_s - 1); }
  double roofline_ape() const { return 100 * std::abs(roofline_s / measured_s - 1); }
};

/// Errors of one (device, op) group.
struct EvalStats {
  std::string device, op;
  std::vector<double> ape, roofline_ape;
  PredictionLabel label = PredictionLabel::measured;
};

/// Models to evaluate, by registry name, and an optional folder of device JSON files whose specs
/// override the catalog's.
struct EvalModels {
  std::string devices, kernel_model = "calibrated", collective_model = "calibrated";
};

std::vector<EvalRow> predict_rows(const Measurements& m, const Calibration& cal, const EvalModels& models);
/// Per (device, op); element-wise ops also as the group "elementwise".
std::vector<EvalStats> summarize(const std::vector<EvalRow>& rows);

}  // namespace fleetsim
