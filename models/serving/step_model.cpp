// ServingStepModel from LLMServingSim's vLLM profiles: one engine iteration composed as LLMServingSim's
// trace generator composes it (serving/core/trace_generator.py), with the departures marked (*).
//
// For a batch with prefill chunks (q_i new tokens after k_i cached) and D decodes (KV lengths
// kv_1..kv_D before the step):
//   T = sum q_i + D (new tokens),  S = #chunks + D (sequences: vLLM computes logits for every
//   scheduled sequence, a partial prefill's included),  L = decoder layers.
//   step = embedding(T) + final_layernorm(T) + sum over per_sequence layers f(S)     (once)
//        + L x [ sum over the other dense layers m_l x dense_l(T)                   (per layer)
//                + attention + moe + 2 x allreduce(T x hidden x 2 bytes) ]
//   m_l = 2 for layernorm (input and post-attention norm) and (*) for qk_norm (Qwen3's q_norm and
//   k_norm: the profiler averages the two calls into one row; LLMServingSim counts it once), else 1.
//   Dense layers are whatever dense.csv holds (e.g. qkv_proj, rotary_emb, o_proj, gate_up_proj,
//   act_fn, down_proj), so the architecture comes from the profile, not from a list here.
//
// Attention (one lookup per layer, all layers alike):
//   A(pc, kp, n, kv) is the attention grid (serving_profile.cpp) read multilinearly (LLMServingSim
//   reads it bilinearly in (kv_prefill, kv_decode) and bilinearly in (prefill_chunk, n_decode)
//   between slices: the same on a complete grid).
//   The primary chunk (most tokens, then most cached) shares the call with the decodes:
//     t_mean = A(q_1, k_1, D, mean kv)   (a uniform batch at the mean reads the same KV in total)
//     if D >= 2 and the kv differ: t = t_mean + alpha x max(0, A(q_1, k_1, D, max kv) - t_mean),
//     alpha from skew_fit (bucket of pc, D, skew rate (mean - min) / (max - min), max kv, k_1;
//     (*) a bucket not in the table takes the nearest one below it in max kv, then in D, before
//     the TP's alpha_default: past the profiled 16k KV, LLMServingSim's fall to the pooled alpha
//     (0.05 where the bucket says 0.9) made a step up to 22% shorter when one sequence grew;
//     0 when the bundle has no skew fit).
//     (*) alpha is clamped to [0, 1] (buckets fit from 1 to 4 samples range from -3.8 to 3.2): a
//     skewed batch is no faster than the uniform one, no slower than all decodes at the longest KV.
//     (*) the bucket's pc is the table's pc nearest the batch's on a log scale (LLMServingSim uses
//     the raw value, which misses the table unless it is a grid point, and falls back to default).
//   (*) Each further chunk adds A(q_i, k_i, 0, 0) - A(smallest chunk, 0, 0, 0): its own work, without
//     a second launch. LLMServingSim sums all chunks into one (sum q, sum k) lookup, which prices
//     several short prompts like one long prompt with a long history (quadratic, much slower).
// MoE (*): every layer's MLP is the MoE block, moe(T, a) with a = E (1 - (1 - k/E)^T) the expected
//   number of distinct experts that T tokens routed uniformly to k of E experts activate
//   (LLMServingSim routes tokens with its gate and looks up per EP rank). The table is profiled at
//   TP 1; at TP n > 1 without its own moe.csv the time is divided by n (experts sharded n ways).
// Data parallelism (*) (ServingStepOptions::data_parallel > 1, an MoE model): the DP ranks' MoE layers
//   share the experts; G = the new tokens of all the ranks stepping together (BatchShape::group_tokens,
//   or T x DP). Without expert parallelism every expert is split over the DP x TP GPUs:
//   moe(G, a(G)) x (the table's TP) / (DP x TP). With it (expert_parallel, vLLM's
//   enable_expert_parallel; also at DP 1) the E experts are spread whole over ep = DP x TP GPUs: each
//   has G x k / ep token-expert pairs on average, moe(G / ep, a_local) x (the table's TP),
//   a_local = E/ep (1 - (1 - k/E)^G) clamped to [min(k, E/ep), E/ep]. At DP > 1 each MoE layer adds
//   an all-gather and a reduce-scatter of G x hidden x 2 bytes over the DP ranks (vLLM's
//   allgather_reducescatter all2all backend) on tp_fabric.
// All-reduce (*): at TP > 1, two per decoder layer (after o_proj and after the MLP/MoE) of
//   T x hidden x 2 bytes, priced by predict_analytic on ServingStepOptions::tp_fabric.
//   LLMServingSim leaves them to ASTRA-Sim's network; the TP profiles hold the per-GPU kernels only.
// Every table is monotone (serving_profile.cpp), so within the grids more tokens, decodes or KV
// never give a shorter step for uniform decode KV; when one sequence's KV grows its skew bucket can
// change and the step shrink a little (at most 1.7% on the Llama-3.1-8B RTXPRO6000 sweep of
// tests/unit/test_serving_step.cpp). Outside the grids, lookups extrapolate linearly from the last two
// points.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/serving/serving_tables.hpp"
#include "models/serving/step_model.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

using serving::Grid;

double at(const Grid& g, double x) {
  return g(std::span<const double>(&x, 1));
}

class ProfiledStepModel final : public ServingStepModel {
 public:
  ProfiledStepModel(serving::ServingModelConfig config, serving::ServingTables tables, int tp,
                    ServingStepOptions options)
      : config_(std::move(config)), tables_(std::move(tables)), tp_(tp), options_(std::move(options)) {
    if (!tables_.model_name.empty()) config_.facts.name = tables_.model_name;
    config_.facts.profiled_gpu = tables_.hardware;
    for (const auto& [name, grid] : tables_.dense) {
      if (name == "embedding" || name == "final_layernorm") {
        once_.push_back(&grid);
      } else {
        per_layer_.emplace_back(&grid, name == "layernorm" || name == "qk_norm" ? 2.0 : 1.0);
      }
    }
    for (const auto& [name, grid] : tables_.per_sequence) per_sequence_.push_back(&grid);
    const auto& pcs = tables_.attention.axis(0);
    const auto first_chunk = std::upper_bound(pcs.begin(), pcs.end(), 0.0);
    smallest_chunk_ = first_chunk == pcs.end() ? 1.0 : *first_chunk;
    chunk_base_us_ = attention_us(smallest_chunk_, 0, 0, 0);
  }

  ProfiledStepModel(const ProfiledStepModel&) = delete;  // holds pointers into its own tables
  ProfiledStepModel& operator=(const ProfiledStepModel&) = delete;

  double step_s(const BatchShape& batch) const override { return breakdown(batch).total_s(); }

  StepBreakdown breakdown(const BatchShape& batch) const override {
    std::vector<PrefillChunk> chunks;
    for (const auto& p : batch.prefills) {
      if (p.tokens < 0 || p.kv_prefilled < 0)
        throw std::invalid_argument("BatchShape: a prefill chunk with a negative token or KV count");
      if (p.tokens > 0) chunks.push_back(p);
    }
    for (const int kv : batch.decode_kv)
      if (kv < 0) throw std::invalid_argument("BatchShape: a decode with a negative KV length");
    StepBreakdown out;
    const double decodes = static_cast<double>(batch.decode_kv.size());
    double tokens = decodes;
    for (const auto& c : chunks) tokens += c.tokens;
    if (tokens == 0) return out;
    const double sequences = static_cast<double>(chunks.size()) + decodes;
    const double layers = config_.facts.layers;

    double dense_us = 0;
    for (const Grid* g : once_) dense_us += at(*g, tokens);
    for (const auto& [g, times] : per_layer_) dense_us += layers * times * at(*g, tokens);
    double per_sequence_us = 0;
    for (const Grid* g : per_sequence_) per_sequence_us += at(*g, sequences);
    out.dense_s = dense_us * 1e-6;
    out.per_sequence_s = per_sequence_us * 1e-6;
    out.attention_s = layers * attention_batch_us(chunks, batch.decode_kv) * 1e-6;
    const int dp = std::max(1, options_.data_parallel);
    const double group = batch.group_tokens > 0 ? batch.group_tokens : dp * tokens;
    if (tables_.moe) out.moe_s = layers * moe_us(tokens, group) * 1e-6;
    if (tables_.moe && dp > 1) {
      CollectiveDesc desc;
      desc.bytes = group * config_.hidden_size * 2.0;  // every DP rank's tokens
      desc.ranks = dp;
      desc.nodes = 1;
      desc.op = Collective::all_gather;
      double comm = predict_analytic(desc, options_.tp_fabric).seconds;
      desc.op = Collective::reduce_scatter;
      comm += predict_analytic(desc, options_.tp_fabric).seconds;
      out.expert_comm_s = layers * comm;
    }
    if (tp_ > 1) {
      CollectiveDesc desc;
      desc.op = Collective::all_reduce;
      desc.bytes = tokens * config_.hidden_size * 2.0;
      desc.ranks = tp_;
      desc.nodes = 1;
      out.allreduce_s = layers * 2.0 * predict_analytic(desc, options_.tp_fabric).seconds;
    }
    return out;
  }

  const ServingModelFacts& model() const override { return config_.facts; }

 private:
  double attention_us(double pc, double kp, double nd, double kv) const {
    const double x[4] = {pc, kp, nd, kv};
    return tables_.attention(x);
  }

  double attention_batch_us(std::vector<PrefillChunk>& chunks, const std::vector<int>& decode_kv) const {
    if (chunks.empty() && decode_kv.empty()) return 0;
    std::sort(chunks.begin(), chunks.end(), [](const PrefillChunk& a, const PrefillChunk& b) {
      return a.tokens != b.tokens ? a.tokens > b.tokens : a.kv_prefilled > b.kv_prefilled;
    });
    // A chunk of fewer tokens than the smallest profiled one costs as much as that one.
    const double pc = chunks.empty() ? 0.0 : std::max<double>(chunks.front().tokens, smallest_chunk_);
    const double kp = chunks.empty() ? 0.0 : chunks.front().kv_prefilled;
    double us = 0;
    if (decode_kv.empty()) {
      us = attention_us(pc, kp, 0, 0);
    } else {
      const double n = static_cast<double>(decode_kv.size());
      double sum = 0;
      for (const int kv : decode_kv) sum += kv;
      const double mean = sum / n;
      const auto [lo, hi] = std::minmax_element(decode_kv.begin(), decode_kv.end());
      us = attention_us(pc, kp, n, mean);
      if (decode_kv.size() >= 2 && *hi > *lo) {
        const double skew_rate = (mean - *lo) / (*hi - *lo);
        const double alpha = tables_.skew.alpha(static_cast<int>(chunks.empty() ? 0 : chunks.front().tokens),
                                                static_cast<int>(decode_kv.size()), skew_rate, *hi, kp);
        if (alpha > 0) us += alpha * std::max(0.0, attention_us(pc, kp, n, *hi) - us);
      }
    }
    for (std::size_t i = 1; i < chunks.size(); ++i)
      us += std::max(0.0, attention_us(std::max<double>(chunks[i].tokens, smallest_chunk_),
                                       chunks[i].kv_prefilled, 0, 0) -
                              chunk_base_us_);
    return us;
  }

  /// One MoE layer for `tokens` of this batch; `group`: the tokens of all DP ranks stepping together.
  double moe_us(double tokens, double group) const {
    const double experts = config_.experts;
    const double k = config_.experts_per_token;
    const double dp = std::max(1, options_.data_parallel);
    auto activated = [&](double n, double among) {
      return std::clamp(among * (1.0 - std::pow(1.0 - k / experts, n)), std::min(k, among), among);
    };
    if (options_.expert_parallel) {
      // E / ep whole experts; the group's tokens give it group x k / ep token-expert pairs on average,
      // the work of group / ep tokens, on the local experts they activate.
      const double ep = dp * tp_;
      const double x[2] = {std::max(1.0, group / ep), activated(group, experts / ep)};
      return (*tables_.moe)(x)*tables_.moe_tp;
    }
    if (dp > 1) {  // every expert split over the DP x TP GPUs, all the group's tokens through each
      const double x[2] = {group, activated(group, experts)};
      return (*tables_.moe)(x)*tables_.moe_tp / (dp * tp_);
    }
    const double x[2] = {tokens, activated(tokens, experts)};
    return (*tables_.moe)(x)*tables_.moe_tp / tp_;
  }

  serving::ServingModelConfig config_;
  serving::ServingTables tables_;
  int tp_;
  ServingStepOptions options_;
  std::vector<const Grid*> once_;
  std::vector<std::pair<const Grid*, double>> per_layer_;
  std::vector<const Grid*> per_sequence_;
  double smallest_chunk_ = 1;
  double chunk_base_us_ = 0;
};

}  // namespace

std::unique_ptr<ServingStepModel> ServingStepModel::load(const std::string& profile_dir,
                                                         const std::string& model_config,
                                                         int tensor_parallel) {
  return load(profile_dir, model_config, tensor_parallel, ServingStepOptions{});
}

std::unique_ptr<ServingStepModel> ServingStepModel::load(const std::string& profile_dir,
                                                         const std::string& model_config, int tensor_parallel,
                                                         const ServingStepOptions& options) {
  if (tensor_parallel < 1)
    throw InputError(profile_dir, 0, "tensor_parallel",
                     "must be >= 1, got " + std::to_string(tensor_parallel));
  auto config = serving::read_model_config(model_config);
  auto tables = serving::read_serving_tables(profile_dir, tensor_parallel, config.facts.moe);
  return std::make_unique<ProfiledStepModel>(std::move(config), std::move(tables), tensor_parallel, options);
}

}  // namespace fleetsim
