// A Hugging Face config.json -> the facts that size a served model (ServingModelFacts) and what the
// step model needs (hidden size, experts). Parameters are counted from the config alone:
//   embeddings            vocab x hidden
//   per decoder layer     q, k, v, o: hidden x heads x head_dim, 2 x hidden x kv_heads x head_dim,
//                         heads x head_dim x hidden (+ biases when attention_bias);
//                         two RMSNorms (hidden each), Qwen3's q/k norms (head_dim each);
//                         a gated MLP, 3 x hidden x intermediate_size (+ biases when mlp_bias), or
//                         on an MoE layer experts x 3 x hidden x moe_intermediate_size (Mixtral:
//                         intermediate_size), the router hidden x experts, and a shared expert when
//                         shared_expert_intermediate_size is set (Qwen2-MoE);
//   final norm            hidden
//   lm_head               vocab x hidden unless tie_word_embeddings (+ vocab when lm_head_bias).
// A layer is an MoE layer when the model has experts, it is not in mlp_only_layers and
// (layer + 1) is a multiple of decoder_sparse_step (default 1). Weights are bf16: 2 bytes each.
// KV per token: K and V, every layer, kv_heads x head_dim elements of 2 bytes.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "models/serving/serving_tables.hpp"
#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_text.hpp"

namespace fleetsim::serving {
namespace {

constexpr double kBytesPerParam = 2;  // bf16

class Config {
 public:
  Config(nlohmann::json j, std::string file) : j_(std::move(j)), file_(std::move(file)) {}

  bool has(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }

  long long positive(const std::string& key) const {
    if (!has(key)) throw InputError(file_, 0, key, "missing key in the model config");
    return check(key);
  }
  long long positive_or(const std::string& key, long long fallback) const {
    return has(key) ? check(key) : fallback;
  }
  long long count_or(const std::string& key, long long fallback) const {
    if (!has(key)) return fallback;
    const auto& v = j_[key];
    if (!v.is_number_integer() || v.get<long long>() < 0)
      throw InputError(file_, 0, key, "must be an integer >= 0, got " + v.dump());
    return v.get<long long>();
  }
  bool flag(const std::string& key) const {
    if (!has(key)) return false;
    if (!j_[key].is_boolean())
      throw InputError(file_, 0, key, "must be true or false, got " + j_[key].dump());
    return j_[key].get<bool>();
  }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    return has(key) && j_[key].is_string() ? j_[key].get<std::string>() : fallback;
  }
  std::set<long long> int_set(const std::string& key) const {
    std::set<long long> out;
    if (!has(key)) return out;
    if (!j_[key].is_array()) throw InputError(file_, 0, key, "must be a list of layer numbers");
    for (const auto& v : j_[key]) {
      if (!v.is_number_integer()) throw InputError(file_, 0, key, "must be a list of layer numbers");
      out.insert(v.get<long long>());
    }
    return out;
  }

 private:
  long long check(const std::string& key) const {
    const auto& v = j_[key];
    if (!v.is_number_integer() || v.get<long long>() <= 0)
      throw InputError(file_, 0, key, "must be a positive integer, got " + v.dump());
    return v.get<long long>();
  }
  nlohmann::json j_;
  std::string file_;
};

nlohmann::json parse_json(const std::string& path) {
  auto j = parse_json_text(read_input_file(path), path);
  if (!j.is_object()) throw InputError(path, 0, "", "the model config must be a JSON object");
  return j;
}

}  // namespace

ServingModelConfig read_model_config(const std::string& path) {
  const Config c(parse_json(path), path);
  const long long layers = c.positive("num_hidden_layers");
  const long long hidden = c.positive("hidden_size");
  const long long heads = c.positive("num_attention_heads");
  const long long vocab = c.positive("vocab_size");
  const long long kv_heads = c.positive_or("num_key_value_heads", heads);
  if (hidden % heads != 0 && !c.has("head_dim"))
    throw InputError(path, 0, "head_dim",
                     "missing key, and hidden_size is not a multiple of num_attention_heads");
  const long long head_dim = c.positive_or("head_dim", hidden / heads);
  const long long experts =
      c.has("num_local_experts") ? c.count_or("num_local_experts", 0) : c.count_or("num_experts", 0);
  const long long sparse_step = c.positive_or("decoder_sparse_step", 1);
  const std::set<long long> mlp_only = c.int_set("mlp_only_layers");
  const std::string model_type = c.text_or("model_type", "");

  long long moe_layers = 0;
  for (long long i = 0; i < layers; ++i)
    if (experts > 0 && mlp_only.count(i) == 0 && (i + 1) % sparse_step == 0) ++moe_layers;
  const long long dense_layers = layers - moe_layers;

  const double q = static_cast<double>(heads * head_dim), kv = static_cast<double>(kv_heads * head_dim);
  const double h = static_cast<double>(hidden);
  double attention = h * q + 2 * h * kv + q * h;
  if (c.flag("attention_bias")) attention += q + 2 * kv + h;
  if (model_type.starts_with("qwen3")) attention += 2.0 * static_cast<double>(head_dim);  // q_norm, k_norm
  const double norms = 2 * h;

  double mlp_dense = 0;
  if (dense_layers > 0 || (experts > 0 && !c.has("moe_intermediate_size"))) {
    const double inter = static_cast<double>(c.positive("intermediate_size"));
    mlp_dense = 3 * h * inter + (c.flag("mlp_bias") ? 2 * inter + h : 0);
  }
  double mlp_moe = 0;
  if (moe_layers > 0) {
    const double expert_inter =
        static_cast<double>(c.has("moe_intermediate_size") ? c.positive("moe_intermediate_size")
                                                           : c.positive("intermediate_size"));
    mlp_moe = static_cast<double>(experts) * 3 * h * expert_inter + h * static_cast<double>(experts);
    if (c.has("shared_expert_intermediate_size"))
      mlp_moe += 3 * h * static_cast<double>(c.positive("shared_expert_intermediate_size")) + h;
  }

  const double embed = static_cast<double>(vocab) * h;
  double params = embed + static_cast<double>(layers) * (attention + norms) +
                  static_cast<double>(dense_layers) * mlp_dense + static_cast<double>(moe_layers) * mlp_moe +
                  h;
  if (!c.flag("tie_word_embeddings"))
    params += embed + (c.flag("lm_head_bias") ? static_cast<double>(vocab) : 0);

  ServingModelConfig out;
  out.facts.name = c.text_or("_name_or_path", std::filesystem::path(path).stem().string());
  out.facts.layers = static_cast<int>(layers);
  out.facts.weight_bytes = params * kBytesPerParam;
  out.facts.kv_bytes_per_token = 2.0 * static_cast<double>(layers) * kv * kBytesPerParam;
  out.facts.moe = moe_layers > 0;
  if (moe_layers > 0) {
    const double expert_inter =
        static_cast<double>(c.has("moe_intermediate_size") ? c.positive("moe_intermediate_size")
                                                           : c.positive("intermediate_size"));
    out.facts.expert_weight_bytes = static_cast<double>(moe_layers) * static_cast<double>(experts) * 3 * h *
                                    expert_inter * kBytesPerParam;
  }
  out.hidden_size = static_cast<int>(hidden);
  out.heads = static_cast<int>(heads);
  out.kv_heads = static_cast<int>(kv_heads);
  out.vocab = static_cast<int>(vocab);
  out.experts = static_cast<int>(experts);
  if (out.facts.moe) {
    out.experts_per_token = static_cast<int>(c.positive("num_experts_per_tok"));
    if (out.experts_per_token > out.experts)
      throw InputError(path, 0, "num_experts_per_tok", "exceeds the number of experts");
  }
  return out;
}

}  // namespace fleetsim::serving
