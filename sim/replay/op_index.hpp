#pragma once
// What the CPU side of a trace says about its GPU work: a GEMM's shape from the launching aten op's
// input dims, whether the backward pass (the autograd engine) launched it, how shapeless work scales
// to another GPU, and the catalog GPU behind a trace's device name. Used by the what-if re-timing
// (replay --gpu) and by profiles derived from traces (sim/replay/trace_profile.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/kernel/kernel_model.hpp"
#include "sim/replay/exec_graph.hpp"

namespace fleetsim::replay {

/// The catalog entry for a device name from a trace ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-PG509-200");
/// nullptr if nothing in the catalog matches.
const GpuSpec* resolve_gpu(const std::string& device);

/// The device name the first trace's GPU work ran on (its deviceProperties entry; "" if none).
std::string traced_device_name(const ExecGraph& g);
/// The catalog GPU the traces ran on: `source_gpu` if given (InputError naming --source-gpu if it is
/// not in the catalog), else traced_device_name resolved by resolve_gpu; nullptr if that fails.
const GpuSpec* traced_gpu(const ExecGraph& g, const std::string& source_gpu);

/// A GEMM's shape from an aten op's input dims (mm, addmm, bmm, baddbmm, matmul, linear).
std::optional<KernelDesc> gemm_desc(const KinetoEvent& op);

/// How a GPU node's duration scales to another GPU when its shape is unknown: GEMM/attention by
/// the FP32 (SIMT kernels) or tensor peak, host copies not at all, everything else by memory bandwidth.
KernelScale spec_scale(const Node& n, const KinetoEvent& e);

/// Index of the traces' CPU ops by thread and start time.
class OpIndex {
 public:
  explicit OpIndex(const ExecGraph& g);
  /// The shape of a GEMM node, from the innermost shaped op around its launch call.
  std::optional<KernelDesc> gemm_shape(std::size_t v) const;
  /// True if an op around the node's launch call belongs to the backward pass
  /// ("autograd::engine::evaluate_function: ...", "...Backward0").
  bool backward(std::size_t v) const;

 private:
  const ExecGraph& g_;
  std::vector<std::map<std::int64_t, std::vector<const KinetoEvent*>>> ops_;  ///< [trace][tid], by start

  const KinetoEvent* launch_call(std::size_t v) const;
  /// Calls `f(op)` for the ops around `call`, innermost first, until it returns true (then true).
  template <typename F>
  bool enclosing(const KinetoEvent& call, int trace, F f) const;
};

}  // namespace fleetsim::replay
