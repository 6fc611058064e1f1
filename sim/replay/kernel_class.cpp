// Names of kernel classes and edge kinds, and the classification of a GPU kernel by its name (see
// exec_graph.hpp).
#include <algorithm>

#include "sim/replay/exec_graph.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::replay {
namespace {

bool contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

std::string to_string(KernelClass c) {
  switch (c) {
    case KernelClass::gemm:
      return "gemm";
    case KernelClass::attention:
      return "attention";
    case KernelClass::elementwise:
      return "elementwise";
    case KernelClass::communication:
      return "communication";
    case KernelClass::memcpy:
      return "memcpy";
    case KernelClass::memset:
      return "memset";
    case KernelClass::other:
      return "other";
    case KernelClass::cpu:
      return "cpu";
  }
  return "other";
}

std::string to_string(EdgeKind k) {
  switch (k) {
    case EdgeKind::thread_order:
      return "cpu_gap";
    case EdgeKind::launch:
      return "launch_latency";
    case EdgeKind::stream_order:
      return "stream_gap";
    case EdgeKind::event_wait:
      return "event_wait";
    case EdgeKind::sync:
      return "sync_wait";
    case EdgeKind::collective:
      return "collective_wait";
  }
  return "other";
}

KernelClass classify_kernel(std::string_view name) {
  const std::string l = lower(name.substr(0, std::min<std::size_t>(name.size(), 160)));
  if (is_collective_kernel(name)) return KernelClass::communication;
  if (contains(l, "fbgemm_gpu::")) return KernelClass::elementwise;  // embedding tables, not GEMMs
  for (std::string_view k : {"flash", "fmha", "attention", "attn", "sdpa"})
    if (contains(l, k)) return KernelClass::attention;
  for (std::string_view k :
       {"gemm", "cutlass", "xmma", "cublas", "cijk_", "matmul", "gemv", "wgrad", "dgrad", "conv", "implicit_",
        "winograd", "sm80_", "sm90_", "ampere_", "volta_", "turing_"})
    if (contains(l, k)) return KernelClass::gemm;
  for (std::string_view k :
       {"elementwise", "vectorized", "reduce",  "norm",     "softmax", "copy",      "fill",
        "index",       "scatter",    "gather",  "cat",      "pool",    "embedding", "unrolled",
        "adam",        "sgd",        "dropout", "relu",     "gelu",    "sigmoid",   "tanh",
        "bn_",         "batch_norm", "permute", "transpose"})
    if (contains(l, k)) return KernelClass::elementwise;
  return KernelClass::other;
}

}  // namespace fleetsim::replay
