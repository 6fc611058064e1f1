#pragma once
// Host (CPU) side of a training step: the framework issues the kernels of a pass one after another,
// `launch_s` of host time each (Python, the PyTorch dispatcher, the CUDA launch), and the GPU runs
// them in issue order on one stream. How host and GPU overlap depends on the framework:
//   run ahead   (PyTorch eager, NeuSight's Hugging Face runs): the CPU issues kernels while the GPU
//               is busy; a kernel starts when it has been issued and the one before it has finished:
//                 issued_k = issued_{k-1} + launch_s,  done_k = max(done_{k-1}, issued_k) + gpu_k
//               a pass of large kernels is GPU-bound (the host time hidden), one of small kernels
//               host-bound (launch_s x kernels).
//   per kernel  (Megatron-DeepSpeed as vTrain measured it): every kernel costs at least its launch,
//               done_k = done_{k-1} + max(gpu_k, launch_s); the host time is not hidden behind the
//               previous kernel. On vTrain's 1,440 iterations this fits at 6.6% MAPE and running ahead
//               at 11% whatever launch_s (models/llm/README.md "Host overhead").
// One launch_s serves both: NeuSight's eager cases move by under 0.1 point between 30 and 85 us.
// A kernel's GPU time is the kernel model's without its fixed per-call part
// (KernelPrediction::fixed_s, the benchmark harness's host time that launch_s replaces). With CUDA
// graphs a pass is one graph launch and its kernels run back to back at their GPU time. What a
// framework launches is its kernel list (operators.hpp): Megatron's fused layer about 15 kernels
// forward and 24 backward (plus the forward again under full recomputation), PyTorch eager running a
// Hugging Face layer 20-30 forward (GELU as 8 kernels, unfused scale, mask, copies). Each pass (one
// stage's forward or backward of one micro-batch) starts with an empty stream.
#include <vector>

namespace fleetsim::llm {

/// Host time to issue one kernel, us: fitted on half of vTrain's single-server iterations (per-kernel
/// launches, full recomputation, fp16; models/llm/README.md "Host overhead"). The default of
/// `fleetsim llm` and of llm jobs.
inline constexpr double kDefaultLaunchUs = 61;

struct HostModel {
  double launch_s = 0;       ///< host time to issue one kernel; 0: kernels as the kernel model times them
  bool cuda_graphs = false;  ///< each pass is one captured graph: one launch per pass
};

/// One kernel (or collective) of a pass: its GPU time and how many identical ones run back to back.
struct QueueItem {
  double gpu_s = 0;
  double count = 1;
};

/// One stream fed by one CPU thread (see above).
class StreamQueue {
 public:
  StreamQueue(const HostModel& host, bool run_ahead);
  /// Issues `count` kernels of `gpu_s` each.
  void issue(double gpu_s, double count = 1);
  /// Issues `block` `times` over (a stage's identical layers): simulated until two repetitions in a
  /// row take the same time and move the queue the same way, the rest extrapolated.
  void repeat(const std::vector<QueueItem>& block, long times);
  /// When the GPU finishes the last kernel issued (from the first issue).
  double done_s() const { return done_; }

 private:
  double launch_s_;
  bool run_ahead_;
  double issued_ = 0, done_ = 0;
};

}  // namespace fleetsim::llm
