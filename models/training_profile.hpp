#pragma once
// Training profiles: what one iteration of a training job does on each GPU (its forward kernels,
// the backward pass as a multiple of them, the gradient bytes it all-reduces), and the iteration
// time that the kernel and collective models predict for it on a GPU type and placement.
//
// Iteration time (data-parallel; every replica runs the whole model on its local batch):
//   forward  = sum over kernels of count x predict(kernel, gpu)
//   backward = backward_factor x forward
//   comm     = all-reduce of grad_bytes over the job's GPUs (0 for one GPU)
//   exposed  = max(0, comm - overlap x backward)      (buckets overlap the backward pass)
//   total    = forward + backward + exposed + other_s
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_model.hpp"
#include "models/gpu_catalog.hpp"
#include "models/kernel_model.hpp"

namespace fleetsim {

struct ProfileKernel {
  KernelDesc kernel;
  double count = 1;  ///< invocations per forward pass
  long line = 0;     ///< in the profile file, for messages
};

struct TrainingProfile {
  std::string name;
  std::vector<std::string> match;  ///< case-insensitive substrings of JobSpec::model selecting it
  std::vector<ProfileKernel> kernels;
  double backward_factor = 2;  ///< backward compute = this x forward (dgrad + wgrad GEMMs)
  double grad_bytes = 0;       ///< gradient bytes all-reduced per iteration
  double overlap = 0;          ///< share [0, 1] of the backward pass that can hide communication
  double other_s = 0;          ///< per-iteration time the kernels do not cover (optimizer, input), s
  std::string file;
  long line = 0;
};

struct ProfileLibrary {
  std::vector<TrainingProfile> profiles;
  /// The first profile whose name equals `model` or one of whose `match` strings it contains
  /// (case-insensitive); nullptr if none.
  const TrainingProfile* find(std::string_view model) const;
};

/// Reads a profile file (TOML, `[[profile]]` tables; see scenarios/profiles/README in the repo):
///   [[profile]] name, match = [...], grad_mb, overlap, backward_factor, other_ms,
///   kernels = [{op, dtype, b, m, n, k, h, count}, ...]
/// Errors name the file, line and key; unknown keys and ops are errors.
ProfileLibrary read_profiles(const std::string& path);

struct IterationTime {
  double forward_s = 0;
  double backward_s = 0;
  double comm_s = 0;          ///< all-reduce time if not hidden at all
  double exposed_comm_s = 0;  ///< the part not hidden behind the backward pass
  double total_s = 0;
  /// Worst label of the predictions used (extrapolated if any kernel was extrapolated).
  PredictionLabel label = PredictionLabel::measured;
};

IterationTime iteration_time(const TrainingProfile& p, const GpuSpec& gpu, int gpus, int nodes,
                             const KernelModel& kernels, const CollectiveModel& collectives,
                             const CommFabric& fabric);

}  // namespace fleetsim
