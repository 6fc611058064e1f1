// Memory of one GPU per pipeline stage (memory.hpp).
#include "models/llm/memory.hpp"

#include <algorithm>

#include "models/llm/schedule.hpp"

namespace fleetsim::llm {

double layer_params_per_gpu(const TransformerConfig& m, const TrainingSetup& s) {
  const double all = m.layer_params();
  if (m.experts == 0) return all / s.tp;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.moe_intermediate);
  const double experts = static_cast<double>(m.experts) * ((m.gated_mlp ? 3 : 2) * h * f + f + h);
  return (all - experts) / s.tp + experts / (static_cast<double>(s.tp) * s.ep);
}

std::vector<StageShape> stage_shapes(const TransformerConfig& m, const TrainingSetup& s) {
  const double layer = layer_params_per_gpu(m, s);
  std::vector<StageShape> out(static_cast<std::size_t>(std::max(1, s.pp)));
  for (int i = 0; i < s.pp; ++i) {
    StageShape& st = out[static_cast<std::size_t>(i)];
    st.layers = static_cast<int>(m.layers / s.pp + (i < m.layers % s.pp ? 1 : 0));
    st.params = st.layers * layer;
    if (i == 0) st.params += m.embedding_params() / s.tp;
    if (i == s.pp - 1 && s.pp > 1 && m.tied_embeddings)  // the head's copy of the tied embedding
      st.params += static_cast<double>(m.vocab * m.hidden) / s.tp;
  }
  return out;
}

double layer_activation_bytes(const TransformerConfig& m, const TrainingSetup& s, Recompute r) {
  const double sq = static_cast<double>(s.seq), b = static_cast<double>(s.micro_batch);
  const double h = static_cast<double>(m.hidden), t = s.tp;
  const double k = static_cast<double>(m.kv_heads * m.head_dim);
  const double scale = s.dtype == DType::fp32 ? 2 : 1;  // Table 2 counts 2-byte tensors
  const double sp = s.sequence_parallel ? t : 1;
  if (r == Recompute::full) return scale * 2 * sq * b * h / sp;
  double f = static_cast<double>(m.experts > 0 ? m.moe_intermediate : m.intermediate);
  if (m.experts > 0) f *= static_cast<double>(m.top_k);  // every token's top-k experts
  const double unsplit = 10 * sq * b * h;
  const double split = 4 * sq * b * h + 4 * sq * b * k + (m.gated_mlp ? 6 : 4) * sq * b * f;
  const double attention = r == Recompute::none ? 5 * static_cast<double>(m.heads) * sq * sq * b : 0;
  return scale * (unsplit / sp + split / t + attention / t);
}

MemoryBreakdown stage_memory(const TransformerConfig& m, const TrainingSetup& s, int stage,
                             const StageShape& shape) {
  MemoryBreakdown out;
  const bool mixed = s.dtype != DType::fp32;
  const double dp = s.dp;
  out.weights = shape.params * (mixed ? 2 : 4);
  out.grads = shape.params * (mixed ? 2 : 4);
  out.optimizer = shape.params * (mixed ? 12 : 8);
  if (s.zero >= 1) out.optimizer /= dp;
  if (s.zero >= 2) out.grads /= dp;
  if (s.zero >= 3) out.weights /= dp;

  const double flight = in_flight(s.schedule, stage, s.pp, s.microbatches(), s.virtual_stages);
  out.activations = layer_activation_bytes(m, s, s.recompute) * shape.layers * flight;
  if (s.recompute == Recompute::full && shape.layers > 0)  // the layer being recomputed holds its whole set
    out.activations += layer_activation_bytes(m, s, Recompute::none);
  const double sbh = static_cast<double>(s.seq * s.micro_batch * m.hidden);
  const double scale = s.dtype == DType::fp32 ? 2 : 1;
  if (stage == 0) out.activations += scale * sbh / (s.sequence_parallel ? s.tp : 1) * flight;
  if (stage == s.pp - 1)
    out.activations += 4 * static_cast<double>(s.seq * s.micro_batch) * static_cast<double>(m.vocab) / s.tp;
  return out;
}

MemoryBreakdown peak_memory(const TransformerConfig& m, const TrainingSetup& s) {
  const std::vector<StageShape> shapes = stage_shapes(m, s);
  MemoryBreakdown best;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const MemoryBreakdown b = stage_memory(m, s, static_cast<int>(i), shapes[i]);
    if (b.total() > best.total()) best = b;
  }
  return best;
}

Recompute least_recompute(const TransformerConfig& m, const TrainingSetup& s, double capacity_bytes) {
  TrainingSetup t = s;
  for (Recompute r : {Recompute::none, Recompute::selective}) {
    t.recompute = r;
    if (peak_memory(m, t).total() <= capacity_bytes) return r;
  }
  return Recompute::full;
}

}  // namespace fleetsim::llm
