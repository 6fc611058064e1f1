#pragma once
// The operators of one training micro-batch on one GPU (issue 18), as kernel descriptions the kernel
// models time (models/kernel/kernel_model.hpp), and the communication they need.
//
// Per transformer layer, forward (T = micro batch x seq tokens, t = TP, a = heads / t, g = kv heads
// per rank, d = head dim, f = intermediate / t; Megatron's GPT layer):
//   ln (T x h) | QKV linear (T x h)(h x (a+2g)d) | QK^T bmm (mb*a: s x d x s) | softmax (mb*a*s rows of
//   s) | dropout mul (same) | AV bmm (mb*a: s x s x d) | proj linear (T x ad)(ad x h) | TP all-reduce |
//   dropout mul + residual add (T x h) | ln | fc1 linear (T x h)(h x f, 2f gated) | gelu (T x f; gated:
//   silu + mul) | fc2 linear (T x f)(f x h) | TP all-reduce | dropout mul + residual add.
//   MoE layers: router linear (T x h)(h x E), and each of the E / ep local experts a gated or plain MLP
//   over T x top_k x ep / E tokens, between two EP all-to-alls of T x top_k x h elements.
//   Sequence parallelism: the element-wise and norm ops act on T / t tokens, and each TP all-reduce
//   becomes an all-gather + reduce-scatter.
// Backward: every linear is a data-gradient and a weight-gradient GEMM of the same FLOPs
// ((T x n)(n x k) and (k x T)(T x n)), every bmm two bmms; element-wise ops and softmax one kernel of
// the same shape, norms two (input and weight gradients). Recomputation adds the forward of the layer
// (full) or of the attention core (QK^T, softmax, dropout, AV; selective) to the backward pass.
// Embedding (first stage): a gather and the position add (T x h), its gradient a scatter-add.
// Head (last stage): final ln, logits linear (T x h)(h x V / t), softmax cross-entropy over V / t;
// backward: the two GEMMs and the softmax gradient.
// Optimizer (each GPU, once per iteration): Adam as one streaming kernel over the GPU's parameter
// shard (ZeRO >= 1 divides it by dp): mixed precision reads fp32 master/m/v and the gradient and
// writes them and the half-precision copy, 32 bytes a parameter (fp32: 28).
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/kernel/kernel_model.hpp"
#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct LlmOp {
  std::string name;  ///< "qkv", "attn_score", "fc1.dgrad", ...
  KernelDesc kernel;
  double count = 1;
  /// Backward kernels of the same shape per forward kernel (element-wise ops; GEMMs always two).
  double backward = 1;
};

enum class CommKind { tp, pp, dp, ep };
std::string_view to_string(CommKind k);

struct LlmComm {
  std::string name;
  CommKind kind = CommKind::tp;
  Collective op = Collective::all_reduce;
  double bytes = 0;  ///< nccl-tests "size" (whole buffer for all-reduce/all-gather/reduce-scatter)
  double count = 1;
  long after = -1;  ///< runs after this many of its pass's kernels (-1: at the end of the pass)
};

/// One pass's work: kernels and the blocking collectives between them.
struct PassOps {
  std::vector<LlmOp> ops;
  std::vector<LlmComm> comms;
};

struct LayerOps {
  PassOps forward;
  PassOps backward;  ///< including recomputation
};

/// One transformer layer, one micro-batch, one GPU.
LayerOps layer_ops(const TransformerConfig& m, const TrainingSetup& s);
/// Embedding (first stage) and head + loss (last stage), one micro-batch, one GPU.
LayerOps embedding_ops(const TransformerConfig& m, const TrainingSetup& s);
LayerOps head_ops(const TransformerConfig& m, const TrainingSetup& s);
/// Adam step over `params` parameters on one GPU (after ZeRO sharding).
LlmOp optimizer_op(double params, const TrainingSetup& s);

}  // namespace fleetsim::llm
