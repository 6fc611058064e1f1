#pragma once
// Training profiles: what one iteration of a training job does on each GPU (its forward kernels,
// the backward pass as a multiple of them, the gradient bytes it all-reduces), and the iteration
// time that the kernel and collective models predict for it on a GPU type and placement.
//
// Iteration time (data-parallel; every replica runs the whole model on its local batch):
//   forward  = sum over kernels of count x predict(kernel, gpu)
//   backward = backward_factor x forward         (or the sum over backward_kernels, if listed)
//   comm     = all-reduce of grad_bytes over the job's GPUs (0 for one GPU)
//   exposed  = max(0, comm - overlap x backward)      (buckets overlap the backward pass)
//   host     = host_ops x host_op_s                   (framework dispatch the GPU waits for)
//   total    = forward + backward + exposed + host + other_s
//
// `host` is the per-iteration framework overhead of an eager framework (PyTorch): every operator
// the Python/C++ dispatcher launches (forward, backward, optimizer) costs host time that small
// batches cannot hide behind GPU work. host_ops is the profile's operator count per iteration
// (scripts/make_gavel_profiles.py: 3 x its forward operators), host_op_s defaults to
// kHostOpSeconds, a constant fitted on Gavel's single-V100 rates (see there).
//
// A profile derived from a Kineto trace (`fleetsim profile-from-trace`) also records what was measured:
// `gpu` names the traced GPU, each kernel carries its measured duration `ms` on it, and
// `backward_kernels` lists the backward pass itself (instead of backward_factor). Such a kernel
// takes ms x predict(kernel, gpu) / predict(kernel, traced gpu) on another GPU when it has a shape,
// and ms x the spec ratio of its `scale` (memory bandwidth, FP32 or tensor peak) when it has none
// (op = "kernel"), so the traced GPU reproduces the measured durations exactly.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/kernel/kernel_model.hpp"

namespace fleetsim {

struct ProfileKernel {
  KernelDesc kernel;  ///< op "kernel" = no shape (needs ms and a scale other than model)
  double count = 1;   ///< invocations per iteration (forward or backward list)
  double ms = 0;      ///< measured duration on TrainingProfile::gpu, ms (0 = not measured)
  KernelScale scale = KernelScale::model;
  std::string name;  ///< the traced kernel's name (information only)
  long line = 0;     ///< in the profile file, for messages
};

/// Host time per framework operator per iteration (forward, backward or optimizer op), seconds.
/// Fitted (least absolute relative error) on Gavel's measured single-V100 iteration times of the
/// ResNet-18 and Transformer job types (10 rows, PyTorch 1.x eager with DDP, 2019): 92 us. Validated
/// on the held-out ResNet-50, LM, A3C and CycleGAN types (tests/integration/test_gavel_profiles.cpp).
/// It lumps Python dispatch, kernel launch and the per-op optimizer work of that stack; a newer stack
/// (CUDA graphs, fused optimizers) has less: set host_op_us per profile.
inline constexpr double kHostOpSeconds = 92e-6;

struct TrainingProfile {
  std::string name;
  std::vector<std::string> match;      ///< case-insensitive substrings of JobSpec::model selecting it
  std::vector<ProfileKernel> kernels;  ///< forward pass (and any other non-backward kernels)
  std::vector<ProfileKernel> backward_kernels;  ///< the backward pass, when listed (then no factor)
  const GpuSpec* gpu = nullptr;                 ///< where the kernels' `ms` were measured
  double backward_factor = 2;                   ///< backward compute = this x forward (dgrad + wgrad GEMMs)
  double grad_bytes = 0;                        ///< gradient bytes all-reduced per iteration
  double overlap = 0;                 ///< share [0, 1] of the backward pass that can hide communication
  double other_s = 0;                 ///< per-iteration time the kernels do not cover (optimizer, input), s
  double host_ops = 0;                ///< framework operators dispatched per iteration (0 = no host overhead)
  double host_op_s = kHostOpSeconds;  ///< host time per operator, s
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
///   [[profile]] name, match = [...], grad_mb, overlap, backward_factor, other_ms, host_ops,
///   host_op_us, gpu,
///   kernels = [{op, dtype, b, m, n, k, h, count, ms, scale, name}, ...], backward_kernels = [...]
/// Errors name the file, line and key; unknown keys and ops are errors.
ProfileLibrary read_profiles(const std::string& path);
/// Writes `p` as one [[profile]] table that read_profiles reads back (same figures, %.6g).
void write_profile(std::ostream& out, const TrainingProfile& p);

struct IterationTime {
  double forward_s = 0;
  double backward_s = 0;
  double comm_s = 0;          ///< all-reduce time if not hidden at all
  double exposed_comm_s = 0;  ///< the part not hidden behind the backward pass
  double host_s = 0;          ///< framework overhead: host_ops x host_op_s
  double total_s = 0;
  /// Worst label of the predictions used (extrapolated if any kernel was extrapolated).
  PredictionLabel label = PredictionLabel::measured;
};

IterationTime iteration_time(const TrainingProfile& p, const GpuSpec& gpu, int gpus, int nodes,
                             const KernelModel& kernels, const CollectiveModel& collectives,
                             const CommFabric& fabric);

}  // namespace fleetsim
