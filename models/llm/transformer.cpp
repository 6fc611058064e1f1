// Transformer description from config.json, and the training setup's checks.
#include "models/llm/transformer.hpp"

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_text.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::llm {
namespace {

/// A config.json and its text, to name the line of a key in errors.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& path) : path_(path) {
    text_ = read_input_file(path);
    j_ = parse_json_text(text_, path);
    if (!j_.is_object()) throw InputError(path, 1, "", "the model config must be a JSON object");
  }

  long line_of(const std::string& key) const {
    const auto at = text_.find("\"" + key + "\"");
    if (at == std::string::npos) return 0;
    return 1 + static_cast<long>(std::count(text_.begin(), text_.begin() + static_cast<long>(at), '\n'));
  }
  bool has(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }
  /// The first present key of `keys`, "" if none.
  std::string first(std::initializer_list<const char*> keys) const {
    for (const char* k : keys)
      if (has(k)) return k;
    return "";
  }
  long positive(const std::string& key) const {
    const auto& v = j_[key];
    if (!v.is_number_integer() || v.get<long long>() <= 0)
      throw InputError(path_, line_of(key), key, "must be a positive integer, got " + v.dump());
    return static_cast<long>(v.get<long long>());
  }
  /// A required key under any of `keys`; the error names them all.
  long required(std::initializer_list<const char*> keys) const {
    const std::string k = first(keys);
    if (!k.empty()) return positive(k);
    std::string names;
    for (const char* n : keys) names += (names.empty() ? "" : " | ") + std::string(n);
    throw InputError(path_, 0, *keys.begin(), "missing key in the model config (any of " + names + ")");
  }
  long optional(std::initializer_list<const char*> keys, long fallback) const {
    const std::string k = first(keys);
    return k.empty() ? fallback : positive(k);
  }
  std::string text(const std::string& key) const {
    return has(key) && j_[key].is_string() ? lower(j_[key].get<std::string>()) : "";
  }
  bool flag(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_[key].is_boolean())
      throw InputError(path_, line_of(key), key, "must be true or false, got " + j_[key].dump());
    return j_[key].get<bool>();
  }

 private:
  std::string path_;
  std::string text_;
  nlohmann::json j_;
};

}  // namespace

double TransformerConfig::layer_params() const {
  const double h = static_cast<double>(hidden);
  const double q = static_cast<double>(heads * head_dim), kv = static_cast<double>(kv_heads * head_dim);
  const double attention = h * (q + 2 * kv) + (q + 2 * kv) + q * h + h;  // weights and biases
  const double norms = 4 * h;                                            // two norms, weight and bias
  const double mats = gated_mlp ? 3.0 : 2.0;
  const auto mlp_of = [&](double inter) { return mats * h * inter + inter + h; };
  const double mlp = experts > 0
                         ? static_cast<double>(experts) * mlp_of(static_cast<double>(moe_intermediate)) +
                               h * static_cast<double>(experts)
                         : mlp_of(static_cast<double>(intermediate));
  return attention + norms + mlp;
}

double TransformerConfig::embedding_params() const {
  const double h = static_cast<double>(hidden);
  double p = static_cast<double>(vocab) * h + static_cast<double>(max_positions) * h + 2 * h;  // + final norm
  if (!tied_embeddings) p += static_cast<double>(vocab) * h;
  return p;
}

double TransformerConfig::total_params() const {
  return static_cast<double>(layers) * layer_params() + embedding_params();
}

TransformerConfig read_transformer_config(const std::string& path) {
  const ConfigFile c(path);
  TransformerConfig m;
  m.file = path;
  m.model_type = c.text("model_type");
  m.layers = c.required({"num_hidden_layers", "n_layer", "num_layers"});
  // Encoder-decoder (T5, Switch): the decoder's layers are counted as more layers of the same shape
  // (their cross-attention is left out).
  if (c.flag("is_encoder_decoder", false)) m.layers += c.optional({"num_decoder_layers"}, m.layers);
  m.hidden = c.required({"hidden_size", "n_embd", "d_model"});
  m.heads = c.required({"num_attention_heads", "n_head", "num_heads"});
  m.kv_heads = c.flag("multi_query", false) ? 1 : c.optional({"num_key_value_heads"}, m.heads);
  if (m.hidden % m.heads != 0 && !c.has("head_dim"))
    throw InputError(
        path, c.line_of("num_attention_heads"), "num_attention_heads",
        "hidden size " + std::to_string(m.hidden) + " is not a multiple of the heads, and no head_dim");
  m.head_dim = c.optional({"head_dim", "d_kv"}, m.hidden / m.heads);
  m.intermediate = c.optional({"intermediate_size", "n_inner", "ffn_dim", "d_ff"}, 4 * m.hidden);
  m.vocab = c.required({"vocab_size"});
  m.experts = c.has("num_local_experts") ? c.positive("num_local_experts")
                                         : (c.has("num_experts") ? c.positive("num_experts") : 0);
  if (m.experts > 0) {
    // Switch Transformers route each token to one expert (Fedus et al. 2021); Mixtral-style default 2.
    m.top_k = c.optional({"num_experts_per_tok", "moe_topk"}, m.model_type == "switch_transformers" ? 1 : 2);
    m.moe_intermediate = c.optional({"moe_intermediate_size"}, m.intermediate);
    if (m.top_k > m.experts)
      throw InputError(path, c.line_of("num_experts_per_tok"), "num_experts_per_tok",
                       "more experts per token than experts");
  }
  std::string act = c.text("hidden_act");
  if (act.empty()) act = c.text("activation_function");
  m.activation = act;
  m.gated_mlp = act == "silu" || act == "swiglu" || act == "swish";
  const bool rotary = c.has("rope_theta") || c.has("rotary_dim") || m.model_type == "llama" ||
                      m.model_type == "mistral" || m.model_type == "mixtral" ||
                      m.model_type.starts_with("qwen");
  m.max_positions = rotary ? 0 : c.optional({"max_position_embeddings", "n_positions", "n_ctx"}, 0);
  m.tied_embeddings = c.flag("tie_word_embeddings", true);
  return m;
}

TransformerConfig gpt_config(long layers, long hidden, long heads, long vocab, long positions) {
  TransformerConfig m;
  m.model_type = "gpt";
  m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = heads;
  m.head_dim = heads > 0 ? hidden / heads : 0;
  m.intermediate = 4 * hidden, m.vocab = vocab, m.max_positions = positions;
  return m;
}

std::string_view to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe:
      return "gpipe";
    case PipelineSchedule::one_f_one_b:
      return "1f1b";
    case PipelineSchedule::interleaved:
      return "interleaved";
  }
  return "?";
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}

PipelineSchedule parse_schedule(std::string_view text, const std::string& file, const std::string& key) {
  const std::string t = lower(text);
  if (t == "gpipe") return PipelineSchedule::gpipe;
  if (t == "1f1b") return PipelineSchedule::one_f_one_b;
  if (t == "interleaved" || t == "interleaved-1f1b") return PipelineSchedule::interleaved;
  throw InputError(file, 0, key, "unknown pipeline schedule '" + t + "' (gpipe, 1f1b, interleaved)");
}

Recompute parse_recompute(std::string_view text, const std::string& file, const std::string& key) {
  const std::string t = lower(text);
  if (t == "none" || t == "false") return Recompute::none;
  if (t == "selective") return Recompute::selective;
  if (t == "full" || t == "true") return Recompute::full;
  throw InputError(file, 0, key, "unknown recomputation '" + t + "' (none, selective, full, auto)");
}

void set_recompute(TrainingSetup& s, std::string_view text, const std::string& file, const std::string& key) {
  s.recompute_auto = lower(text) == "auto";
  s.recompute = s.recompute_auto ? Recompute::none : parse_recompute(text, file, key);
}

void validate(const TransformerConfig& m, const TrainingSetup& s, const std::string& file) {
  auto fail = [&](const std::string& key, const std::string& why) { throw InputError(file, 0, key, why); };
  for (auto [key, v] : {std::pair{"tp", s.tp}, {"pp", s.pp}, {"dp", s.dp}, {"ep", s.ep}})
    if (v < 1) fail(key, "must be at least 1");
  if (s.seq < 1) fail("seq", "must be at least 1");
  if (s.micro_batch < 1) fail("micro_batch", "must be at least 1");
  if (s.global_batch < 1) fail("global_batch", "must be at least 1");
  if (m.heads % s.tp != 0)
    fail("tp", "tensor parallelism " + std::to_string(s.tp) + " does not divide the " +
                   std::to_string(m.heads) + " attention heads");
  if (m.kv_heads % s.tp != 0 && s.tp % m.kv_heads != 0)
    fail("tp", "tensor parallelism " + std::to_string(s.tp) + " and the " + std::to_string(m.kv_heads) +
                   " key/value heads do not divide one another");
  if (s.pp > m.layers)
    fail("pp", "pipeline parallelism " + std::to_string(s.pp) + " exceeds the " + std::to_string(m.layers) +
                   " layers");
  if (s.global_batch % (s.micro_batch * s.dp) != 0)
    fail("global_batch",
         "global batch " + std::to_string(s.global_batch) +
             " is not a multiple of micro batch x dp = " + std::to_string(s.micro_batch * s.dp));
  if (s.ep > 1 && (m.experts == 0 || m.experts % s.ep != 0))
    fail("ep", "expert parallelism " + std::to_string(s.ep) + " does not divide the " +
                   std::to_string(m.experts) + " experts");
  if (s.ep > 1 && s.dp % s.ep != 0) fail("ep", "expert parallelism must divide dp");
  if (s.zero < 0 || s.zero > 3) fail("zero", "ZeRO stage must be 0, 1, 2 or 3");
  if (s.virtual_stages < 1) fail("virtual_stages", "must be at least 1");
  if (s.schedule == PipelineSchedule::interleaved && m.layers % (s.pp * s.virtual_stages) != 0)
    fail("virtual_stages", "pp x virtual stages must divide the layers for the interleaved schedule");
  if (s.dtype == DType::tf32) fail("dtype", "training dtype must be fp32, fp16 or bf16");
}

}  // namespace fleetsim::llm
