#pragma once
// Serving step time (issue 14): how long one engine iteration of a vLLM-style server takes for a
// batch of prefill chunks and decodes, from LLMServingSim's per-layer vLLM profiles
// (<perf>/<hardware>/<org>/<model>/<dtype>/meta.yaml and tp<N>/{dense,attention,per_sequence,moe,
// skew,skew_fit}.csv) and the model's Hugging Face config.json. Pure: no SimGrid.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/collective/serving_links.hpp"

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
  /// MoE with data_parallel > 1: the new tokens of all the DP ranks stepping together (this batch's
  /// included), whose MoE layers share the experts; 0: this batch's x data_parallel.
  int group_tokens = 0;
  /// The most new tokens of one of those ranks (0: unknown). vLLM pads every rank to it when the
  /// step runs as a CUDA graph (ServingStepOptions::cudagraph_max_tokens), so the expert layers see
  /// data_parallel x this many tokens.
  int group_max_tokens = 0;
};

/// Facts of the model that size memory (from config.json).
struct ServingModelFacts {
  std::string name;
  int layers = 0;
  double weight_bytes = 0;         ///< all parameters, whole model (divide by TP per GPU)
  double expert_weight_bytes = 0;  ///< the routed experts' share of weight_bytes (MoE), sharded by EP
  double kv_bytes_per_token = 0;   ///< K and V of all layers for one token, whole model
  bool moe = false;
  std::string profiled_gpu;  ///< the GPU the profiles were measured on (meta.yaml `hardware`), "" if unknown
};

/// Where one iteration's time goes (seconds, whole model: all decoder layers summed).
struct StepBreakdown {
  double dense_s = 0;         ///< per-token modules: embedding, projections, norms, MLP, rotary
  double attention_s = 0;     ///< attention kernels, skew-corrected
  double moe_s = 0;           ///< MoE blocks
  double allreduce_s = 0;     ///< tensor-parallel collectives (two all-reduces a layer, embedding, logits)
  double expert_comm_s = 0;   ///< expert parallelism over DP ranks: token all-gather + reduce-scatter
  double per_sequence_s = 0;  ///< lm_head (logits) and sampler
  double total_s() const {
    return dense_s + attention_s + moe_s + allreduce_s + expert_comm_s + per_sequence_s;
  }
};

struct ServingStepOptions {
  /// The links between the GPUs of one replica: every tensor- and expert-parallel collective is
  /// priced per call by them (models/collective/serving_links.hpp). Null: the analytic NCCL model
  /// on tp_fabric.
  std::shared_ptr<const ReplicaLinks> links;
  /// Without `links`: the fabric of the analytic model (CommFabric's default is 150 GB/s
  /// NVLink-class; fabric_for(gpu) for a catalog GPU).
  CommFabric tp_fabric{};
  /// Multiprocessors of the profiled GPU, for the waves of a derived TP degree's prefill attention
  /// (0: 132, an H100 SXM's; the caller looks up the profile's GPU, ServingModelFacts::profiled_gpu).
  int profiled_sms = 0;
  /// vLLM data_parallel_size: engine cores of one server, each with its own batch (of this model).
  int data_parallel = 1;
  /// MoE with data_parallel > 1: the experts are shared by the DP x TP GPUs (split by tensor
  /// parallelism, or spread whole with expert_parallel, vLLM's enable_expert_parallel); each MoE layer
  /// all-gathers the DP ranks' tokens (on tp_fabric), runs its experts' part, and reduce-scatters.
  bool expert_parallel = false;
  /// Expert parallelism: coefficient of variation of the experts' popularity under the router (0 =
  /// every expert equally likely; the routing's multinomial noise is always counted). The busiest
  /// rank's expected load sets the MoE layer's time.
  double expert_popularity_cv = 0;
  /// vLLM's largest CUDA-graph batch (max_cudagraph_capture_size): DP ranks stepping together pad
  /// to the largest rank's tokens when that rank has at most this many.
  int cudagraph_max_tokens = 512;
};

class ServingStepModel {
 public:
  /// profile_dir: the <dtype> folder holding meta.yaml and tp<N>/; model_config: config.json. Throws
  /// InputError (file, line, field) on a missing table, a malformed row or a TP degree not profiled.
  static std::unique_ptr<ServingStepModel> load(const std::string& profile_dir,
                                                const std::string& model_config, int tensor_parallel);
  static std::unique_ptr<ServingStepModel> load(const std::string& profile_dir,
                                                const std::string& model_config, int tensor_parallel,
                                                const ServingStepOptions& options);
  virtual ~ServingStepModel() = default;
  /// Seconds for one iteration of `batch` (an empty batch takes 0). Throws std::invalid_argument
  /// on a negative token or KV count.
  virtual double step_s(const BatchShape& batch) const = 0;
  /// The same time, by part (step_s == breakdown(batch).total_s()).
  virtual StepBreakdown breakdown(const BatchShape& batch) const = 0;
  virtual const ServingModelFacts& model() const = 0;
};

/// Whether a layout can run the model of `model_config`, as vLLM checks it: the attention heads
/// divide by tensor_parallel, the KV heads divide by it or it by them, and with expert_parallel
/// the routed experts divide by data_parallel x tensor_parallel. "" when it can; else the reason
/// (naming config.json's key), for the caller to raise against its own input.
std::string layout_problem(const std::string& model_config, int tensor_parallel, int data_parallel,
                           bool expert_parallel);

}  // namespace fleetsim
