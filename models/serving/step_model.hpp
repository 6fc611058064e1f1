#pragma once
// Serving step time (issue 14): how long one engine iteration of a vLLM-style server takes for a
// batch of prefill chunks and decodes, from LLMServingSim's per-layer vLLM profiles
// (<perf>/<hardware>/<org>/<model>/<dtype>/meta.yaml and tp<N>/{dense,attention,per_sequence,moe,
// skew,skew_fit}.csv) and the model's Hugging Face config.json. Pure: no SimGrid.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fleetsim {

/// One sequence's prefill work in a step: `tokens` new prompt tokens computed now, after
/// `kv_prefilled` tokens of it already in the KV cache (chunked prefill, or a prefix-cache hit).
struct PrefillChunk {
  int tokens = 0;
  int kv_prefilled = 0;
};

/// One engine iteration: prefill chunks and decoding sequences (each decodes one token; `decode_kv`
/// holds each one's KV length before this step).
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  std::vector<int> decode_kv;
};

/// Facts of the model that size memory (from config.json).
struct ServingModelFacts {
  std::string name;
  int layers = 0;
  double weight_bytes = 0;        ///< all parameters, whole model (divide by TP per GPU)
  double kv_bytes_per_token = 0;  ///< K and V of all layers for one token, whole model
  bool moe = false;
};

class ServingStepModel {
 public:
  /// profile_dir: the <dtype> folder holding meta.yaml and tp<N>/; model_config: config.json. Throws
  /// InputError (file, line, field) on a missing table, a malformed row or a TP degree not profiled.
  static std::unique_ptr<ServingStepModel> load(const std::string& profile_dir, const std::string& model_config,
                                                int tensor_parallel);
  virtual ~ServingStepModel() = default;
  /// Seconds for one iteration of `batch` (an empty batch takes 0).
  virtual double step_s(const BatchShape& batch) const = 0;
  virtual const ServingModelFacts& model() const = 0;
};

}  // namespace fleetsim
