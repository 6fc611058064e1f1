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
// Tensor parallelism (*) (models/serving/README.md): the tables of the largest profiled TP degree j
//   dividing the wanted k; with f = k / j > 1 the step derives the k-way layer from them: replicated
//   modules (embedding, the residual RMSNorms, the sampler) keep their time; sharded ones (projections,
//   rotary, activation, per-head q/k norms, lm_head) keep the profile's cheapest kernel time c and
//   shrink the rest by f: c + (t - c) / f; decode attention reads A(.., n / f, ..) (n sequences of
//   H / f heads do the work of n / f sequences of H heads); a prefill chunk's attention scales by the
//   waves of its thread blocks, H_j x ceil(q / 64) blocks on the GPU's multiprocessors.
// MoE (*): every layer's MLP is the MoE block, moe(T, a) with a = E (1 - (1 - k/E)^T) the expected
//   number of distinct experts that T tokens routed uniformly to k of E experts activate
//   (LLMServingSim routes tokens with its gate and looks up per EP rank). The table is profiled at
//   TP m (moe.csv of tp<m>, else tp1); split n ways more (TP, or DP x TP without expert parallelism)
//   it is sharded as above.
// Data parallelism (*) (ServingStepOptions::data_parallel > 1, an MoE model): the DP ranks' MoE layers
//   share the experts; G = the new tokens of all the ranks stepping together (BatchShape::group_tokens,
//   or T x DP), DP x the largest rank's tokens when that rank runs as a CUDA graph (vLLM pads the
//   ranks to one size). Without expert parallelism every expert is split over the DP x TP GPUs:
//   moe(G, a(G)) sharded DP x TP / m ways. With it (expert_parallel, vLLM's enable_expert_parallel;
//   also at DP 1) the E experts are spread whole over ep = DP x TP GPUs and the busiest rank sets the
//   time: moe(P / k, a_local) x m, P the expected token-expert pairs of the busiest rank
//   (parallel_layout.hpp: routing noise and expert popularity), a_local = E/ep (1 - (1 - k/E)^G)
//   clamped to [min(k, E/ep), E/ep]. At DP > 1 each MoE layer all-gathers G x (hidden x 2 + k x 8)
//   bytes (hidden states, top-k weights and ids) and reduce-scatters G x hidden x 2 bytes over the DP
//   ranks (vLLM's allgather_reducescatter all2all backend).
// Collectives (*): at TP > 1, two all-reduces per decoder layer (after o_proj and after the MLP/MoE)
//   and one after the vocabulary-parallel embedding, of T x hidden x 2 bytes, and the all-gather of
//   the logits (S x vocab x 2 bytes); each call priced by ServingStepOptions::links (measured NCCL
//   curves by link kind, models/collective/serving_links.hpp), else the analytic NCCL model on
//   tp_fabric. LLMServingSim leaves them to ASTRA-Sim's network; the TP profiles hold the per-GPU
//   kernels only.
// Every table is monotone (serving_profile.cpp), so within the grids more tokens, decodes or KV
// never give a shorter step for uniform decode KV; when one sequence's KV grows its skew bucket can
// change and the step shrink a little (at most 1.7% on the Llama-3.1-8B RTXPRO6000 sweep of
// tests/unit/test_serving_step.cpp). Outside the grids, lookups extrapolate linearly from the last two
// points.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/serving/parallel_layout.hpp"
#include "models/serving/serving_tables.hpp"
#include "models/serving/step_model.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

using serving::Grid;
using serving::Shard;

double at(const Grid& g, double x) {
  return g(std::span<const double>(&x, 1));
}

double first_node(const Grid& g) {
  std::vector<std::size_t> zero(g.dims(), 0);
  return g.node(zero);
}

class ProfiledStepModel final : public ServingStepModel {
 public:
  ProfiledStepModel(serving::ServingModelConfig config, serving::ServingTables tables, int tp,
                    ServingStepOptions options)
      : config_(std::move(config)), tables_(std::move(tables)), tp_(tp), options_(std::move(options)) {
    if (!tables_.model_name.empty()) config_.facts.name = tables_.model_name;
    config_.facts.profiled_gpu = tables_.hardware;
    const double f = static_cast<double>(tp_) / tables_.tp;
    double floor_us = INFINITY;
    for (const auto& [name, grid] : tables_.dense) floor_us = std::min(floor_us, first_node(grid));
    shard_ = Shard{f, std::isfinite(floor_us) ? floor_us : 0.0};
    for (const auto& [name, grid] : tables_.dense) {
      const bool whole = serving::replicated_dense(name);
      if (name == "embedding" || name == "final_layernorm") {
        once_.push_back({&grid, whole});
      } else {
        per_layer_.push_back({&grid, name == "layernorm" || name == "qk_norm" ? 2.0 : 1.0, whole});
      }
    }
    for (const auto& [name, grid] : tables_.per_sequence)
      per_sequence_.push_back({&grid, serving::replicated_per_sequence(name)});
    if (tables_.moe) moe_floor_us_ = first_node(*tables_.moe);
    heads_profiled_ = config_.heads > 0 ? static_cast<double>(config_.heads) / tables_.tp : 1.0;
    sms_ = options_.profiled_sms > 0 ? options_.profiled_sms : 132;
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
    for (const auto& m : once_) dense_us += module_us(m.grid, m.replicated, tokens);
    for (const auto& m : per_layer_) dense_us += layers * m.times * module_us(m.grid, m.replicated, tokens);
    double per_sequence_us = 0;
    for (const auto& m : per_sequence_) per_sequence_us += module_us(m.grid, m.replicated, sequences);
    out.dense_s = dense_us * 1e-6;
    out.per_sequence_s = per_sequence_us * 1e-6;
    out.attention_s = layers * attention_batch_us(chunks, batch.decode_kv) * 1e-6;
    const int dp = std::max(1, options_.data_parallel);
    double group = batch.group_tokens > 0 ? batch.group_tokens : dp * tokens;
    if (batch.group_max_tokens > 0 && batch.group_max_tokens <= options_.cudagraph_max_tokens)
      group = std::max(group, static_cast<double>(dp) * batch.group_max_tokens);  // CUDA-graph padding
    if (tables_.moe) out.moe_s = layers * moe_us(tokens, group) * 1e-6;
    const double hidden_bytes = config_.hidden_size * 2.0;
    if (tables_.moe && dp > 1) {
      const double dispatch = group * (hidden_bytes + config_.experts_per_token * 8.0);
      out.expert_comm_s = layers * (collective_s(Collective::all_gather, dispatch, dp) +
                                    collective_s(Collective::reduce_scatter, group * hidden_bytes, dp));
    }
    if (tp_ > 1)
      out.allreduce_s =
          (2.0 * layers + 1) * collective_s(Collective::all_reduce, tokens * hidden_bytes, tp_) +
          collective_s(Collective::all_gather, sequences * config_.vocab * 2.0, tp_);
    return out;
  }

  const ServingModelFacts& model() const override { return config_.facts; }

 private:
  struct Module {
    const Grid* grid;
    bool replicated;
  };
  struct LayerModule {
    const Grid* grid;
    double times;
    bool replicated;
  };

  double module_us(const Grid* g, bool replicated, double x) const {
    const double us = at(*g, x);
    return replicated ? us : shard_(us);
  }

  double collective_s(Collective op, double bytes, int ranks) const {
    if (ranks <= 1 || bytes <= 0) return 0;
    if (options_.links) return options_.links->seconds(op, bytes, ranks);
    return predict_analytic({op, bytes, ranks, 1}, options_.tp_fabric).seconds;
  }

  double table_us(double pc, double kp, double nd, double kv) const {
    const double x[4] = {pc, kp, nd, kv};
    return tables_.attention(x);
  }

  /// One attention call at this model's TP degree (derived from the profiled one when larger).
  double attention_us(double pc, double kp, double nd, double kv) const {
    const double f = shard_.factor;
    if (f == 1) return table_us(pc, kp, nd, kv);
    const double n = nd > 0 ? std::max(1.0, nd / f) : 0.0;
    if (pc <= 0) return table_us(0, 0, n, kv);
    const double prefill = table_us(pc, kp, 0, 0);
    const double blocks = heads_profiled_ * std::ceil(pc / 64.0);
    const double derived = prefill * serving::waves(blocks / f, sms_) / serving::waves(blocks, sms_);
    if (n <= 0) return derived;
    return std::max(derived, table_us(pc, kp, n, kv) - prefill + derived);
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
    const int dp = std::max(1, options_.data_parallel);
    const double m = tables_.moe_tp;
    auto activated = [&](double n, double among) {
      return std::clamp(among * (1.0 - std::pow(1.0 - k / experts, n)), std::min(k, among), among);
    };
    auto table = [&](double n, double a) {
      const double x[2] = {n, a};
      return (*tables_.moe)(x);
    };
    if (options_.expert_parallel) {
      // E / ep whole experts a rank; the busiest rank's token-expert pairs set the layer's time.
      const int ep = dp * tp_;
      const double pairs = serving::busiest_rank_pairs(group, config_.experts, config_.experts_per_token, ep,
                                                       options_.expert_popularity_cv);
      return table(std::max(1.0, pairs / k), activated(group, experts / ep)) * m;
    }
    const Shard split{dp * tp_ / m, moe_floor_us_};
    if (dp > 1) return split(table(group, activated(group, experts)));  // all the group's tokens
    return split(table(tokens, activated(tokens, experts)));
  }

  serving::ServingModelConfig config_;
  serving::ServingTables tables_;
  int tp_;
  ServingStepOptions options_;
  Shard shard_;
  std::vector<Module> once_;
  std::vector<LayerModule> per_layer_;
  std::vector<Module> per_sequence_;
  double moe_floor_us_ = 0;
  double heads_profiled_ = 1;
  double sms_ = 132;
  double smallest_chunk_ = 1;
  double chunk_base_us_ = 0;
};

}  // namespace

std::string layout_problem(const std::string& model_config, int tp, int dp, bool ep) {
  const auto c = serving::read_model_config(model_config);
  if (tp < 1 || dp < 1) return "tensor_parallel and data_parallel must be >= 1";
  if (c.heads % tp != 0)
    return "num_attention_heads = " + std::to_string(c.heads) + " in " + model_config +
           " is not divisible by tensor_parallel = " + std::to_string(tp);
  if (c.kv_heads % tp != 0 && tp % c.kv_heads != 0)
    return "num_key_value_heads = " + std::to_string(c.kv_heads) + " in " + model_config +
           " and tensor_parallel = " + std::to_string(tp) + ": neither divides the other";
  if (ep && c.experts > 0 && c.experts % (tp * dp) != 0)
    return "num_experts = " + std::to_string(c.experts) + " in " + model_config +
           " is not divisible by the expert-parallel size data_parallel x tensor_parallel = " +
           std::to_string(tp * dp);
  return "";
}

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
  if (const std::string p = layout_problem(model_config, tensor_parallel, std::max(1, options.data_parallel),
                                           options.expert_parallel);
      !p.empty())
    throw InputError(model_config, 0, p.starts_with("num_experts") ? "num_experts" : "num_attention_heads",
                     p);
  auto tables = serving::read_serving_tables(profile_dir, tensor_parallel, config.facts.moe);
  return std::make_unique<ProfiledStepModel>(std::move(config), std::move(tables), tensor_parallel, options);
}

}  // namespace fleetsim
