// Rule no_tensor_cores: a GPU with tensor cores runs its GEMMs as fp32 SIMT kernels (sgemm, gemv)
// and none on tensor cores. Fix: automatic mixed precision: each such GEMM is re-timed by the
// roofline kernel model from fp32 to fp16 on tensor cores (models/kernel: its shape from the
// launching aten op's input dims; without a shape, by the ratio of the GPU's fp16 tensor and fp32
// peaks, as if compute-bound). Other kernels keep their measured durations: what fp16 saves in
// element-wise kernels is not in the trace.
#include <algorithm>

#include "models/kernel/kernel_model.hpp"
#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"
#include "sim/replay/op_index.hpp"

namespace fleetsim::diagnosis {
namespace {

bool has_tensor_cores(const GpuSpec& g) {
  return g.fp16_tflops >= 2 * g.fp32_tflops;
}

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  double fp32 = 0, tensor = 0;
  for (const auto& r : a.ranks) {
    fp32 += r.fp32_gemm_s;
    tensor += r.tensor_gemm_s;
  }
  const double share = rule_util::mean_share(a, [](const RankStats& r) { return r.fp32_gemm_s; });
  const double min_share = t["no_tensor_cores.min_share"];
  const double tc_share = fp32 + tensor > 0 ? tensor / (fp32 + tensor) : 0;
  if (!(share > min_share) || tc_share > t["no_tensor_cores.max_tensor_share"]) return std::nullopt;
  if (a.gpu == nullptr || !has_tensor_cores(*a.gpu)) return std::nullopt;
  Finding f;
  f.value = share;
  f.threshold = min_share;
  f.unit = "share of step";
  f.evidence = rule_util::pct(share) + " of the step runs fp32 SIMT GEMM kernels on " + a.gpu->name +
               ", which has tensor cores (" + rule_util::pct(tc_share) + " of GEMM time on them)";
  Fix fix;
  fix.description =
      "automatic mixed precision (torch.autocast): fp32 GEMMs re-timed as fp16 on tensor cores by "
      "the roofline kernel model; other kernels unchanged";
  fix.estimate = "prediction";
  fix.adjust = [](const JobAnalysis& job, replay::Retiming& r) {
    const auto& g = job.graph;
    const replay::OpIndex ops(g);
    const GpuSpec& gpu = *job.gpu;
    for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
      const auto& n = g.g[v];
      if (n.kind != replay::NodeKind::kernel || n.cls != replay::KernelClass::gemm) continue;
      if (!fp32_simt_gemm(g.event(n).name)) continue;
      double ratio = gpu.fp32_tflops / gpu.fp16_tflops;
      if (auto shape = ops.gemm_shape(v)) {
        KernelDesc half = *shape;
        shape->dtype = DType::fp32;
        half.dtype = DType::fp16;
        const double t32 = roofline_seconds(*shape, gpu), t16 = roofline_seconds(half, gpu);
        if (t32 > 0 && t16 > 0) ratio = t16 / t32;
      }
      r.factor[v] *= std::min(1.0, ratio);
    }
  };
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "no_tensor_cores",
    "no tensor-core use: fp32 SIMT GEMMs on a GPU with tensor cores, and (almost) none on them",
    {{"no_tensor_cores.min_share", "share of step", 0.0, "fp32 SIMT GEMM time per step above which it fires",
      "PyTorch profiler TensorBoard plugin (torch_tb_profiler run.py, analyze: compute capability >= 7, "
      "tensor-core kernel share 0, eligible kernels > 0)"},
     {"no_tensor_cores.max_tensor_share", "share of GEMM time", 0.0,
      "tensor-core share of the GEMM time at or below which it fires", "same (tc_used_ratio == 0)"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
