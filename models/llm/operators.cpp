// Operator lists of one micro-batch (see operators.hpp for the layer's shapes).
#include "models/llm/operators.hpp"

#include <algorithm>

namespace fleetsim::llm {
namespace {

KernelDesc linear(DType t, long m, long n, long k) {
  return KernelDesc{"linear", t, 1, m, n, k, 0};
}
KernelDesc bmm(DType t, long b, long m, long n, long k) {
  return KernelDesc{"bmm", t, b, m, n, k, 0};
}
KernelDesc elementwise(const char* op, DType t, long rows, long h) {
  return KernelDesc{op, t, rows, 0, 0, 0, h};
}

/// Adds a linear's backward: data gradient (m x n)(n x k) and weight gradient (k x m)(m x n).
void add_linear_backward(PassOps& b, const LlmOp& f) {
  const KernelDesc& k = f.kernel;
  b.ops.push_back({f.name + ".dgrad", linear(k.dtype, k.m, k.k, k.n), f.count});
  b.ops.push_back({f.name + ".wgrad", linear(k.dtype, k.k, k.n, k.m), f.count});
}

/// The backward of a forward pass: GEMMs twice, norms twice, other kernels once; collectives mirrored
/// (an all-gather's backward is a reduce-scatter and vice versa).
void add_backward(PassOps& b, const PassOps& f) {
  // where each forward kernel's gradients end in `b`, to place the mirrored collectives
  std::vector<long> end{static_cast<long>(b.ops.size())};
  for (const LlmOp& op : f.ops) {
    if (op.kernel.op == "linear") {
      add_linear_backward(b, op);
    } else if (op.kernel.op == "bmm") {
      b.ops.push_back({op.name + ".grad", op.kernel, 2 * op.count});
    } else {
      const double n = (op.kernel.op == "ln" ? 2 : 1) * op.backward * op.count;
      if (n > 0) b.ops.push_back({op.name + ".grad", op.kernel, n});
    }
    end.push_back(static_cast<long>(b.ops.size()));
  }
  for (LlmComm c : f.comms) {
    c.after = c.after < 0 ? -1 : end[static_cast<std::size_t>(std::min<long>(c.after, f.ops.size()))];
    if (c.op == Collective::all_gather)
      c.op = Collective::reduce_scatter;
    else if (c.op == Collective::reduce_scatter)
      c.op = Collective::all_gather;
    c.name += ".grad";
    b.comms.push_back(c);
  }
}

void append(PassOps& to, const PassOps& from, const std::string& prefix) {
  const long offset = static_cast<long>(to.ops.size());
  for (LlmOp op : from.ops) {
    op.name = prefix + op.name;
    to.ops.push_back(op);
  }
  for (LlmComm c : from.comms) {
    c.name = prefix + c.name;
    if (c.after >= 0) c.after += offset;
    to.comms.push_back(c);
  }
}

/// Tensor-parallel reduction of a T x h activation: an all-reduce, or with sequence parallelism a
/// reduce-scatter (the matching all-gather is added before the next TP region).
void tp_reduce(PassOps& p, const TrainingSetup& s, double bytes, const std::string& name) {
  if (s.tp == 1) return;
  const long at = static_cast<long>(p.ops.size());
  if (s.sequence_parallel) {
    p.comms.push_back({name + ".all_gather", CommKind::tp, Collective::all_gather, bytes, 1, at});
    p.comms.push_back({name + ".reduce_scatter", CommKind::tp, Collective::reduce_scatter, bytes, 1, at});
    return;
  }
  p.comms.push_back({name, CommKind::tp, Collective::all_reduce, bytes, 1, at});
}

/// One layer as PyTorch eager mode runs a Hugging Face model (NeuSight's torch.fx traces; TP and
/// sequence parallelism as in the fused layer). Copies and dropout are unary kernels ("mulu": one
/// tensor in, one out); `backward` counts the kernels the traces list for each op's gradient.
PassOps eager_layer(const TransformerConfig& m, const TrainingSetup& s, PassOps& core) {
  const DType t = s.dtype;
  const long T = s.micro_batch * s.seq, h = m.hidden, d = m.head_dim;
  const long a = m.heads / s.tp, g = std::max(1L, m.kv_heads / s.tp);
  const long Tn = s.sequence_parallel ? std::max(1L, T / s.tp) : T;
  const long rows = s.micro_batch * a * s.seq;  // attention-score rows of seq elements
  const bool gpt2 = m.model_type == "gpt2", opt = m.model_type == "opt";
  const double act_bytes = static_cast<double>(T * h) * dtype_bytes(t);

  core.ops.push_back({"attn.score", bmm(t, s.micro_batch * a, s.seq, s.seq, d), 1});
  // GPT-2 and BERT divide the scores by sqrt(d) (OPT scales the queries instead), then mask them
  // (GPT-2: torch.where with the causal mask; BERT, OPT: add the broadcast mask).
  if (!opt) core.ops.push_back({"attn.scale", elementwise("divu", t, rows, s.seq), 1, 2});
  core.ops.push_back({"attn.mask", elementwise(gpt2 ? "mulu" : "add", t, rows, s.seq), 1, 2});
  // OPT clamps the masked scores at the dtype's minimum (torch.max with a scalar tensor).
  if (opt) core.ops.push_back({"attn.clamp", elementwise("addu", t, rows, s.seq), 1, 2});
  core.ops.push_back({"attn.softmax", elementwise("softmax", t, rows, s.seq), 1, 2});  // grad: mul + softmax
  if (s.dropout) core.ops.push_back({"attn.dropout", elementwise("mulu", t, rows, s.seq), 1, 2});
  core.ops.push_back({"attn.context", bmm(t, s.micro_batch * a, s.seq, d, s.seq), 1});

  PassOps f;
  f.ops.push_back({"ln1", elementwise("ln", t, Tn, h), 1});
  if (gpt2) {
    f.ops.push_back({"qkv", linear(t, T, (a + 2 * g) * d, h), 1});  // Conv1D c_attn: one GEMM
  } else {
    f.ops.push_back({"q", linear(t, T, a * d, h), 1});
    f.ops.push_back({"k", linear(t, T, g * d, h), 1});
    f.ops.push_back({"v", linear(t, T, g * d, h), 1});
  }
  if (opt) {  // q scaling, and q, k, v made contiguous for the bmm
    f.ops.push_back({"attn.q_scale", elementwise("mulu", t, T, a * d), 1});
    f.ops.push_back({"attn.contiguous", elementwise("mulu", t, T, a * d), 3, 2});
  }
  append(f, core, "");
  if (!opt) f.ops.push_back({"attn.contiguous", elementwise("mulu", t, T, a * d), 1, 2});
  f.ops.push_back({"proj", linear(t, T, h, a * d), 1});
  tp_reduce(f, s, act_bytes, "attn.tp");
  if (s.dropout) f.ops.push_back({"attn.residual_dropout", elementwise("mulu", t, Tn, h), 1, 2});
  f.ops.push_back({"attn.residual", elementwise("add", t, Tn, h), 1, 2});
  f.ops.push_back({"ln2", elementwise("ln", t, Tn, h), 1});
  const long fi = m.intermediate / s.tp;
  f.ops.push_back({"fc1", linear(t, T, m.gated_mlp ? 2 * fi : fi, h), 1});
  if (m.gated_mlp) {
    f.ops.push_back({"mlp.silu", elementwise("mulu", t, T, fi), 1});
    f.ops.push_back({"mlp.gate", elementwise("mul", t, T, fi), 1, 2});
  } else if (m.activation == "gelu_new") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) unfused: 8 kernels forward, 13 backward.
    const std::pair<const char*, double> steps[] = {{"mulu", 1}, {"powu", 3}, {"mulu", 1}, {"add", 2},
                                                    {"mulu", 1}, {"tanh", 2}, {"addu", 1}, {"mul", 2}};
    for (const auto& [op, back] : steps)
      f.ops.push_back({"mlp.gelu_new", elementwise(op, t, T, fi), 1, back});
  } else {
    f.ops.push_back({"mlp.act", elementwise(m.activation == "relu" ? "relu" : "gelu", t, T, fi), 1});
  }
  f.ops.push_back({"fc2", linear(t, T, h, fi), 1});
  tp_reduce(f, s, act_bytes, "mlp.tp");
  if (s.dropout) f.ops.push_back({"mlp.residual_dropout", elementwise("mulu", t, Tn, h), 1, 2});
  f.ops.push_back({"mlp.residual", elementwise("add", t, Tn, h), 1, 2});
  return f;
}

}  // namespace

std::string_view to_string(CommKind k) {
  switch (k) {
    case CommKind::tp:
      return "tp";
    case CommKind::pp:
      return "pp";
    case CommKind::dp:
      return "dp";
    case CommKind::ep:
      return "ep";
  }
  return "?";
}

LayerOps layer_ops(const TransformerConfig& m, const TrainingSetup& s) {
  const DType t = s.dtype;
  const long T = s.micro_batch * s.seq;
  const long h = m.hidden, d = m.head_dim;
  const long a = m.heads / s.tp;
  const long g = std::max(1L, m.kv_heads / s.tp);
  const long Tn = s.sequence_parallel ? std::max(1L, T / s.tp) : T;  // tokens of norms and element-wise
  const double act_bytes = static_cast<double>(T * h) * dtype_bytes(t);

  PassOps core;  // attention core: what selective recomputation recomputes
  if (s.eager && m.experts == 0) {
    LayerOps out;
    out.forward = eager_layer(m, s, core);
    if (s.recompute == Recompute::full) append(out.backward, out.forward, "recompute.");
    if (s.recompute == Recompute::selective) append(out.backward, core, "recompute.");
    add_backward(out.backward, out.forward);
    return out;
  }
  core.ops.push_back({"attn.score", bmm(t, s.micro_batch * a, s.seq, s.seq, d), 1});
  core.ops.push_back({"attn.softmax", elementwise("softmax", t, s.micro_batch * a * s.seq, s.seq), 1});
  if (s.dropout)
    core.ops.push_back({"attn.dropout", elementwise("mul", t, s.micro_batch * a * s.seq, s.seq), 1});
  core.ops.push_back({"attn.context", bmm(t, s.micro_batch * a, s.seq, d, s.seq), 1});

  PassOps f;
  f.ops.push_back({"ln1", elementwise("ln", t, Tn, h), 1});
  f.ops.push_back({"qkv", linear(t, T, (a + 2 * g) * d, h), 1});
  append(f, core, "");
  f.ops.push_back({"proj", linear(t, T, h, a * d), 1});
  tp_reduce(f, s, act_bytes, "attn.tp");
  if (s.dropout) f.ops.push_back({"attn.residual_dropout", elementwise("mul", t, Tn, h), 1});
  f.ops.push_back({"attn.residual", elementwise("add", t, Tn, h), 1});
  f.ops.push_back({"ln2", elementwise("ln", t, Tn, h), 1});
  if (m.experts > 0) {
    const long local = m.experts / s.ep;
    const long per_expert = std::max(1L, T * m.top_k * s.ep / m.experts);
    const long fi = m.moe_intermediate / s.tp;
    const double a2a = static_cast<double>(T * m.top_k * h) * dtype_bytes(t);
    f.ops.push_back({"moe.router", linear(t, T, m.experts, h), 1});
    f.ops.push_back({"moe.router_softmax", elementwise("softmax", t, T, m.experts), 1});
    if (s.ep > 1)
      f.comms.push_back(
          {"moe.dispatch", CommKind::ep, Collective::all_to_all, a2a, 1, static_cast<long>(f.ops.size())});
    const double n = static_cast<double>(local);
    f.ops.push_back({"moe.fc1", linear(t, per_expert, m.gated_mlp ? 2 * fi : fi, h), n});
    f.ops.push_back({"moe.act", elementwise(m.gated_mlp ? "mul" : "gelu", t, per_expert, fi), n});
    f.ops.push_back({"moe.fc2", linear(t, per_expert, h, fi), n});
    if (s.ep > 1)
      f.comms.push_back(
          {"moe.combine", CommKind::ep, Collective::all_to_all, a2a, 1, static_cast<long>(f.ops.size())});
  } else {
    const long fi = m.intermediate / s.tp;
    f.ops.push_back({"fc1", linear(t, T, m.gated_mlp ? 2 * fi : fi, h), 1});
    if (m.gated_mlp) {
      f.ops.push_back({"mlp.silu", elementwise("mul", t, T, fi), 1});
      f.ops.push_back({"mlp.gate", elementwise("mul", t, T, fi), 1});
    } else {
      f.ops.push_back({"mlp.gelu", elementwise("gelu", t, T, fi), 1});
    }
    f.ops.push_back({"fc2", linear(t, T, h, fi), 1});
  }
  tp_reduce(f, s, act_bytes, "mlp.tp");
  if (s.dropout) f.ops.push_back({"mlp.residual_dropout", elementwise("mul", t, Tn, h), 1});
  f.ops.push_back({"mlp.residual", elementwise("add", t, Tn, h), 1});

  LayerOps out;
  out.forward = f;
  if (s.recompute == Recompute::full) append(out.backward, f, "recompute.");
  if (s.recompute == Recompute::selective) append(out.backward, core, "recompute.");
  add_backward(out.backward, f);
  return out;
}

LayerOps embedding_ops(const TransformerConfig& m, const TrainingSetup& s) {
  const long T = s.micro_batch * s.seq;
  LayerOps out;
  // Vocab-parallel lookup: each TP rank gathers its rows, then the partial embeddings are all-reduced.
  out.forward.ops.push_back({"embedding", elementwise("add", s.dtype, T, m.hidden), 1});
  if (m.max_positions > 0)
    out.forward.ops.push_back({"embedding.position", elementwise("add", s.dtype, T, m.hidden), 1});
  tp_reduce(out.forward, s, static_cast<double>(T * m.hidden) * dtype_bytes(s.dtype), "embedding.tp");
  out.backward.ops.push_back({"embedding.grad", elementwise("add", s.dtype, T, m.hidden), 1});
  if (s.eager) {
    if (m.model_type == "bert") {  // token-type embedding added, then normalised
      out.forward.ops.push_back({"embedding.token_type", elementwise("add", s.dtype, T, m.hidden), 1});
      out.forward.ops.push_back({"embedding.ln", elementwise("ln", s.dtype, T, m.hidden), 1});
    }
    // The dense gradient of the whole table: zeroed, then the rows accumulated.
    out.backward.ops.push_back({"embedding.table_grad", elementwise("mulu", s.dtype, m.vocab, m.hidden), 2});
  }
  return out;
}

LayerOps head_ops(const TransformerConfig& m, const TrainingSetup& s) {
  const long T = s.micro_batch * s.seq;
  const long v = (m.vocab + s.tp - 1) / s.tp;
  const bool bert = m.model_type == "bert";  // post-norm encoder: no final norm
  PassOps f;
  if (s.classifier_head) {  // pooler (first token) and a 2-way classifier
    f.ops.push_back({"pooler", linear(s.dtype, s.micro_batch, m.hidden, m.hidden), 1});
    f.ops.push_back({"pooler.tanh", elementwise("tanh", s.dtype, s.micro_batch, m.hidden), 1});
    f.ops.push_back({"classifier", linear(s.dtype, s.micro_batch, 2, m.hidden), 1});
  } else {
    if (!bert) f.ops.push_back({"final_ln", elementwise("ln", s.dtype, T, m.hidden), 1});
    if (bert) {  // masked-LM head: transform (dense, gelu, norm) before the decoder
      f.ops.push_back({"mlm.transform", linear(s.dtype, T, m.hidden, m.hidden), 1});
      f.ops.push_back({"mlm.gelu", elementwise("gelu", s.dtype, T, m.hidden), 1});
      f.ops.push_back({"mlm.ln", elementwise("ln", s.dtype, T, m.hidden), 1});
    }
    f.ops.push_back({"logits", linear(s.dtype, T, v, m.hidden), 1});
    if (s.eager && m.model_type == "opt")  // OPTForCausalLM: logits.contiguous()
      f.ops.push_back({"logits.contiguous", elementwise("mulu", s.dtype, T, v), 1, 0});
    if (s.loss) f.ops.push_back({"cross_entropy", elementwise("softmax", DType::fp32, T, v), 1});
  }
  LayerOps out;
  out.forward = f;
  add_backward(out.backward, f);
  return out;
}

LlmOp optimizer_op(double params, const TrainingSetup& s) {
  const double bytes_per_param = s.dtype == DType::fp32 ? 28 : 32;
  // One streaming kernel: "add" moves 3 fp32 elements per h, so h = bytes / 12.
  const long h = std::max(1L, static_cast<long>(params * bytes_per_param / 12.0));
  return {"optimizer.adam", elementwise("add", DType::fp32, 1, h), 1};
}

}  // namespace fleetsim::llm
