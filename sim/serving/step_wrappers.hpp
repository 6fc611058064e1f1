#pragma once
// Step models that wrap another (sim/serving/service.cpp): a MIG instance or MPS share of a profiled
// GPU, and a GPU without a profile timed from a profiled one through the catalog.
#include <algorithm>
#include <memory>

#include "models/hardware/gpu_catalog.hpp"
#include "models/serving/step_model.hpp"

namespace fleetsim {

/// A MIG instance: `share` of the GPU's compute and memory bandwidth, so every step takes 1/share as
/// long as on the whole GPU (a 7g instance is the whole GPU).
class SliceStepModel final : public ServingStepModel {
 public:
  SliceStepModel(std::unique_ptr<ServingStepModel> whole, double share)
      : whole_(std::move(whole)), share_(share) {}
  double step_s(const BatchShape& b) const override { return whole_->step_s(b) / share_; }
  StepBreakdown breakdown(const BatchShape& b) const override {
    StepBreakdown out = whole_->breakdown(b);
    out.dense_s /= share_;
    out.attention_s /= share_;
    out.moe_s /= share_;
    out.allreduce_s /= share_;
    out.expert_comm_s /= share_;
    out.per_sequence_s /= share_;
    return out;
  }
  const ServingModelFacts& model() const override { return whole_->model(); }

 private:
  std::unique_ptr<ServingStepModel> whole_;
  double share_;
};

/// A GPU without a profile, timed from the profiled GPU through the catalog (roofline transfer):
/// a per-token module of T tokens (GEMMs over the weights: about T FLOPs per weight byte) scales by
/// max(T / peak, 1 / bandwidth) on the target over the same on the profiled GPU, so decode-sized
/// batches follow memory bandwidth and large prefills follow the BF16 tensor peak; per-sequence
/// modules (lm_head) the same with T = sequences; attention by the prefill-token share of the batch
/// (compute) and the decode share (bandwidth: KV reads); TP all-reduces unchanged (the fabric).
class ExtrapolatedStepModel final : public ServingStepModel {
 public:
  ExtrapolatedStepModel(std::unique_ptr<ServingStepModel> src, const GpuSpec& from, const GpuSpec& to)
      : src_(std::move(src)),
        peak_from_(peak(from)),
        peak_to_(peak(to)),
        bw_from_(from.memory_bw_gbs),
        bw_to_(to.memory_bw_gbs) {}
  double step_s(const BatchShape& b) const override { return breakdown(b).total_s(); }
  StepBreakdown breakdown(const BatchShape& b) const override {
    StepBreakdown out = src_->breakdown(b);
    double prefill = 0;
    for (const auto& c : b.prefills) prefill += c.tokens;
    const auto decodes = static_cast<double>(b.decode_kv.size());
    const double tokens = prefill + decodes, sequences = static_cast<double>(b.prefills.size()) + decodes;
    out.dense_s *= roofline(tokens);
    out.moe_s *= roofline(tokens);
    out.per_sequence_s *= roofline(sequences);
    if (tokens > 0)
      out.attention_s *= (prefill * peak_from_ / peak_to_ + decodes * bw_from_ / bw_to_) / tokens;
    return out;
  }
  const ServingModelFacts& model() const override { return src_->model(); }

 private:
  static double peak(const GpuSpec& g) { return g.bf16_tflops > 0 ? g.bf16_tflops : g.fp16_tflops; }
  /// Time ratio target / profiled of a GEMM pass over the weights with intensity ~t FLOPs per byte.
  double roofline(double t) const {
    const double to = std::max(t / (peak_to_ * 1e12), 1.0 / (bw_to_ * 1e9));
    const double from = std::max(t / (peak_from_ * 1e12), 1.0 / (bw_from_ * 1e9));
    return to / from;
  }
  std::unique_ptr<ServingStepModel> src_;
  double peak_from_, peak_to_, bw_from_, bw_to_;
};

}  // namespace fleetsim
