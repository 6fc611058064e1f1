#pragma once
// A serving step model with hand-computable times for the engine tests: 10 ms per iteration, 1 ms
// per decoding sequence, 0.1 ms per prefill token (0 for an empty batch); and the requests and
// configurations they start from.
#include "sim/serving/serving_engine.hpp"

namespace fleetsim::test {

class LinearStep final : public ServingStepModel {
 public:
  double step_s(const BatchShape& b) const override {
    if (b.prefills.empty() && b.decode_kv.empty()) return 0;
    double t = 0.010 + 0.001 * static_cast<double>(b.decode_kv.size());
    for (const auto& p : b.prefills) t += 0.0001 * p.tokens;
    return t;
  }
  StepBreakdown breakdown(const BatchShape& b) const override {
    StepBreakdown out;
    out.dense_s = step_s(b);
    return out;
  }
  const ServingModelFacts& model() const override { return facts_; }

 private:
  ServingModelFacts facts_;
};

/// A request arriving at `at` s with `in` prompt and `out` output tokens.
inline ServingRequest req(double at, int in, int out) {
  ServingRequest r;
  r.arrival_s = at;
  r.input_tokens = in;
  r.output_tokens = out;
  return r;
}

/// `replicas` replicas of 1000 KV blocks each, the engine's other defaults.
inline ServingEngineConfig config(int replicas) {
  ServingEngineConfig c;
  c.kv_blocks = 1000;
  c.replicas = replicas;
  return c;
}

}  // namespace fleetsim::test
