#pragma once
// LLM training workload (issue 18): a transformer read from a Hugging Face config.json as-is and a
// training setup (batch, dtype, TP/PP/DP/EP, schedule, recomputation, ZeRO, sequence parallelism,
// gradient overlap). Pure: no SimGrid.
//
// config.json keys (first present wins; GPT-2, GPT-3/OPT, BERT, Llama, Qwen, Mixtral spellings):
//   layers        num_hidden_layers | n_layer | num_layers (+ num_decoder_layers when is_encoder_decoder:
//                 T5/Switch decoder layers counted as layers of the same shape, cross-attention left out)
//   hidden        hidden_size | n_embd | d_model
//   heads         num_attention_heads | n_head | num_heads
//   kv heads      num_key_value_heads (default: heads; multi-query: multi_query = true -> 1)
//   head dim      head_dim | d_kv (default hidden / heads)
//   intermediate  intermediate_size | n_inner | ffn_dim | d_ff (null/absent: 4 x hidden)
//   vocab         vocab_size
//   experts       num_local_experts | num_experts (default 0 = dense); top-k num_experts_per_tok
//                 (default 2 when there are experts, 1 for switch_transformers); moe_intermediate_size
//                 (default intermediate). Every layer is an MoE layer (Switch's sparse step is not
//                 modelled: with top-1 routing its FLOPs equal the dense layers')
//   gated MLP     (SwiGLU: 3 matrices) when hidden_act/activation_function is silu/swiglu
//   positions     learned position embeddings (n_positions / max_position_embeddings) unless the
//                 model uses rotary (rope_theta present, or model_type llama/mistral/mixtral/qwen*)
//   tied          tie_word_embeddings (default true, as in transformers)
// A missing required key, a non-positive or non-integer value, or malformed JSON raises
// InputError(file, line of the key, key).
#include <string>
#include <string_view>

#include "models/kernel/kernel_model.hpp"

namespace fleetsim::llm {

struct TransformerConfig {
  std::string file;  ///< where it was read from ("" when built in code)
  std::string model_type;
  long layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  long experts = 0;  ///< 0 = dense MLP
  long top_k = 1;
  long moe_intermediate = 0;
  long max_positions = 0;  ///< learned position embeddings (0 = rotary, no table)
  bool gated_mlp = false;
  bool tied_embeddings = true;
  std::string activation;  ///< hidden_act | activation_function, lower case ("gelu_new", "relu", ...)

  /// Parameters of one transformer layer (all experts), of the embeddings (+ head if untied).
  double layer_params() const;
  double embedding_params() const;
  double total_params() const;
};

/// Reads a Hugging Face config.json (see above).
TransformerConfig read_transformer_config(const std::string& path);
/// A GPT-2/GPT-3 style model (4 x hidden GELU MLP, learned positions, tied embeddings), as vTrain's
/// and Megatron's GPT configurations describe it.
TransformerConfig gpt_config(long layers, long hidden, long heads, long vocab, long positions);

enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
enum class Recompute { none, selective, full };
std::string_view to_string(PipelineSchedule s);
std::string_view to_string(Recompute r);
/// Parse "gpipe" | "1f1b" | "interleaved" and "none" | "selective" | "full"; InputError(file, 0, key).
PipelineSchedule parse_schedule(std::string_view text, const std::string& file, const std::string& key);
Recompute parse_recompute(std::string_view text, const std::string& file, const std::string& key);

struct TrainingSetup {
  long seq = 2048;
  long global_batch = 8;      ///< sequences per iteration, all data-parallel replicas together
  long micro_batch = 1;       ///< sequences per micro-batch
  DType dtype = DType::bf16;  ///< fp32, or fp16/bf16 mixed precision (fp32 master weights and Adam)
  int tp = 1, pp = 1, dp = 1, ep = 1;
  int virtual_stages = 1;  ///< model chunks per pipeline rank (interleaved schedule)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Recompute recompute = Recompute::none;
  /// Use the least recomputation whose largest stage fits in the GPU's memory (none, selective,
  /// full), as Megatron users choose it; `recompute` is then ignored.
  bool recompute_auto = false;
  int zero = 0;  ///< ZeRO stage 0-3 over the data-parallel group
  bool sequence_parallel = false;
  bool overlap_grad = true;  ///< bucketed DP gradient reduction overlapping the last backward pass
  /// Kernels as PyTorch eager mode runs a Hugging Face model (NeuSight's traces): unfused scale, mask,
  /// copies and activation kernels, separate Q/K/V projections where the model has them (see
  /// operators.hpp). false: Megatron's fused kernels.
  bool eager = false;
  bool dropout = true;  ///< dropout kernels in the forward pass (false: inference)
  bool loss = true;     ///< cross-entropy after the head (false: the measurement stops at the logits)
  /// The head: the language-model head (logits over the vocabulary), or a sequence classifier (BERT
  /// pooler + 2-way classifier, as NeuSight measures BERT inference).
  bool classifier_head = false;
  int gpus() const { return tp * pp * dp; }
  /// Micro-batches per iteration per data-parallel replica.
  long microbatches() const { return global_batch / (micro_batch * dp); }
};

/// Sets s.recompute (or s.recompute_auto for "auto") from "none" | "selective" | "full" | "auto".
void set_recompute(TrainingSetup& s, std::string_view text, const std::string& file, const std::string& key);

/// Checks that `s` can run `m`: TP divides the heads (and kv heads, or kv heads divide TP), PP <= layers,
/// global batch a multiple of micro batch x DP, EP divides the experts and DP, ZeRO in 0-3, the
/// interleaved schedule's chunks divide the layers. Errors name `file` and the setup key.
void validate(const TransformerConfig& m, const TrainingSetup& s, const std::string& file);

}  // namespace fleetsim::llm
