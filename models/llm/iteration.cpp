// One training iteration: stages, pipeline, data-parallel reduction, optimizer, memory (iteration.hpp).
#include "models/llm/iteration.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fleetsim::llm {
namespace {

/// Servers spanned by a group of `n` ranks `stride` apart (ranks fill servers in order).
int span(int n, int stride, int gpus_per_node) {
  const long width = static_cast<long>(n) * stride;
  if (width <= gpus_per_node) return 1;
  return static_cast<int>(std::min<long>(n, (width + gpus_per_node - 1) / gpus_per_node));
}

struct PassTime {
  double compute_s = 0, tp_s = 0, ep_s = 0;
  long kernels = 0;
};

class Timer {
 public:
  Timer(const TrainingSetup& s, const LlmPlatform& p, const KernelModel& k, const CollectiveModel& c)
      : s_(s), p_(p), kernels_(k), collectives_(c) {}

  double kernel(const KernelDesc& d) {
    const KernelPrediction k = kernels_.predict(d, *p_.gpu);
    label_ = std::max(label_, k.label);
    if (p_.launch_floor_s <= 0) return k.seconds;
    // Host time is the floor's: the GPU time leaves out the kernel model's fixed per-call part.
    return std::max(k.seconds - k.fixed_s, p_.launch_floor_s);
  }

  double collective(Collective op, double bytes, int ranks, int stride) const {
    if (ranks <= 1 || bytes <= 0) return 0;
    const CollectiveDesc d{op, bytes, ranks, span(ranks, stride, p_.gpus_per_node)};
    return collectives_.predict(d, p_.fabric).seconds;
  }

  PassTime pass(const PassOps& ops) {
    PassTime t;
    for (const LlmOp& op : ops.ops) {
      t.compute_s += op.count * kernel(op.kernel);
      t.kernels += static_cast<long>(std::ceil(op.count));
    }
    for (const LlmComm& c : ops.comms) {
      if (c.kind == CommKind::tp) t.tp_s += c.count * collective(c.op, c.bytes, s_.tp, 1);
      if (c.kind == CommKind::ep) t.ep_s += c.count * collective(c.op, c.bytes, s_.ep, s_.tp);
    }
    return t;
  }

  PredictionLabel label() const { return label_; }

 private:
  const TrainingSetup& s_;
  const LlmPlatform& p_;
  const KernelModel& kernels_;
  const CollectiveModel& collectives_;
  PredictionLabel label_ = PredictionLabel::measured;
};

void add(StageTime& st, const PassTime& f, const PassTime& b, double times) {
  st.forward_s += times * (f.compute_s + f.tp_s + f.ep_s);
  st.backward_s += times * (b.compute_s + b.tp_s + b.ep_s);
  st.compute_s += times * (f.compute_s + b.compute_s);
  st.tp_s += times * (f.tp_s + b.tp_s);
  st.ep_s += times * (f.ep_s + b.ep_s);
  st.kernels += static_cast<long>(times) * (f.kernels + b.kernels);
}

/// Parameters of one layer on one GPU (dense part split by TP, experts by TP and EP).
double layer_params_per_gpu(const TransformerConfig& m, const TrainingSetup& s) {
  const double all = m.layer_params();
  if (m.experts == 0) return all / s.tp;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.moe_intermediate);
  const double experts = static_cast<double>(m.experts) * ((m.gated_mlp ? 3 : 2) * h * f + f + h);
  return (all - experts) / s.tp + experts / (static_cast<double>(s.tp) * s.ep);
}

}  // namespace

double stage_memory_bytes(const TransformerConfig& m, const TrainingSetup& s, int stage, int layers,
                          double params) {
  const bool mixed = s.dtype != DType::fp32;
  const double dp = s.dp;
  double weights = params * (mixed ? 2 : 4), grads = params * (mixed ? 2 : 4),
         optimizer = params * (mixed ? 12 : 8);
  if (s.zero >= 1) optimizer /= dp;
  if (s.zero >= 2) grads /= dp;
  if (s.zero >= 3) weights /= dp;

  const double sq = static_cast<double>(s.seq), b = static_cast<double>(s.micro_batch),
               h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads), t = s.tp;
  const double sbh = sq * b * h;
  const double attn = 5 * a * sq / h;
  double per_layer = 0;
  if (s.recompute == Recompute::full) {
    per_layer = 2 * sbh / (s.sequence_parallel ? t : 1);
  } else {
    const double keep_attn = s.recompute == Recompute::selective ? 0 : 1;
    per_layer =
        s.sequence_parallel ? sbh * (34 + keep_attn * attn) / t : sbh * (10 + 24 / t + keep_attn * attn / t);
  }
  if (!(s.dtype == DType::fp16 || s.dtype == DType::bf16)) per_layer *= 2;
  const long m_count = s.microbatches();
  const int p = s.pp;
  double in_flight = static_cast<double>(std::min<long>(m_count, p - stage));
  if (s.schedule == PipelineSchedule::gpipe) in_flight = static_cast<double>(m_count);
  if (s.schedule == PipelineSchedule::interleaved)
    in_flight *= 1.0 + static_cast<double>(p - 1) / (static_cast<double>(p) * s.virtual_stages);
  double activations = per_layer * layers * in_flight;
  if (s.recompute == Recompute::full)  // the one layer recomputed at a time holds its full set
    activations += sbh * (10 + 24 / t + attn / t) * (s.dtype == DType::fp32 ? 2 : 1);
  if (stage == p - 1) activations += 4 * sq * b * static_cast<double>(m.vocab) / t;
  return weights + grads + optimizer + activations;
}

std::string Prediction::dominant() const {
  const std::pair<const char*, double> parts[] = {
      {"compute", compute_s},     {"tp", tp_s},    {"ep", ep_s},
      {"bubble", bubble_s},       {"pp", pp_s},    {"dp", dp_exposed_s},
      {"optimizer", optimizer_s}, {"host", host_s}};
  const auto* best = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
  return best->first;
}

Prediction predict_iteration(const TransformerConfig& m, const TrainingSetup& s, const LlmPlatform& p,
                             const KernelModel& kernels, const CollectiveModel& collectives) {
  Timer timer(s, p, kernels, collectives);
  const LayerOps layer = layer_ops(m, s);
  const PassTime lf = timer.pass(layer.forward), lb = timer.pass(layer.backward);
  const LayerOps emb = embedding_ops(m, s), head = head_ops(m, s);
  const PassTime ef = timer.pass(emb.forward), eb = timer.pass(emb.backward);
  const PassTime hf = timer.pass(head.forward), hb = timer.pass(head.backward);
  const double layer_params = layer_params_per_gpu(m, s);
  const double emb_params = m.embedding_params() / s.tp;

  Prediction out;
  out.microbatches = s.microbatches();
  const double mb = static_cast<double>(out.microbatches);
  const double elem = dtype_bytes(s.dtype);
  for (int i = 0; i < s.pp; ++i) {
    StageTime st;
    st.stage = i;
    st.layers = static_cast<int>(m.layers / s.pp + (i < m.layers % s.pp ? 1 : 0));
    add(st, lf, lb, st.layers);
    st.params = st.layers * layer_params;
    if (i == 0) add(st, ef, eb, 1), st.params += emb_params;
    if (i == s.pp - 1) {
      add(st, hf, hb, 1);
      if (s.pp > 1 && m.tied_embeddings) st.params += static_cast<double>(m.vocab * m.hidden) / s.tp;
    }
    st.memory_bytes = stage_memory_bytes(m, s, i, st.layers, st.params);
    out.stages.push_back(st);
  }

  // Pipeline.
  double sum = 0;
  for (const StageTime& st : out.stages) sum += st.forward_s + st.backward_s;
  const auto crit = std::max_element(out.stages.begin(), out.stages.end(), [](const auto& x, const auto& y) {
    return x.forward_s + x.backward_s < y.forward_s + y.backward_s;
  });
  const StageTime& c = *crit;
  out.critical_stage = c.stage;
  out.compute_s = mb * c.compute_s;
  out.tp_s = mb * c.tp_s;
  out.ep_s = mb * c.ep_s;
  const double v = s.schedule == PipelineSchedule::interleaved ? s.virtual_stages : 1;
  out.bubble_s = (sum - (c.forward_s + c.backward_s)) / v;
  if (s.pp > 1) {
    const double act =
        static_cast<double>(s.micro_batch * s.seq * m.hidden) * elem / (s.sequence_parallel ? s.tp : 1);
    const double p2p = timer.collective(Collective::send_recv, act, 2, s.tp * s.dp);
    out.pp_s = 2 * (mb + s.pp - 2) * p2p;
    if (m.tied_embeddings) {  // embedding and head share weights: first and last stage sync their grads
      const double bytes = static_cast<double>(m.vocab * m.hidden) / s.tp * elem;
      out.pp_s += timer.collective(Collective::all_reduce, bytes, 2, s.tp * s.dp * (s.pp - 1));
    }
  }

  // Data parallelism and the optimizer (the largest stage's parameters).
  double params = 0;
  for (const StageTime& st : out.stages) params = std::max(params, st.params);
  const double grad_bytes = params * elem;
  if (s.dp > 1) {
    double overlappable = 0, blocking = 0;
    if (s.zero == 0) {
      overlappable = timer.collective(Collective::all_reduce, grad_bytes, s.dp, s.tp);
    } else {
      overlappable = timer.collective(Collective::reduce_scatter, grad_bytes, s.dp, s.tp);
      blocking = timer.collective(Collective::all_gather, grad_bytes, s.dp, s.tp);
    }
    if (s.zero == 3) {
      const double layer_bytes = layer_params * elem;
      blocking += mb * 2 * c.layers * timer.collective(Collective::all_gather, layer_bytes, s.dp, s.tp);
    }
    out.dp_s = overlappable + blocking;
    const double hidden = s.overlap_grad ? c.backward_s : 0;
    out.dp_exposed_s = std::max(0.0, overlappable - hidden) + blocking;
  }
  const double shard = s.zero >= 1 ? params / s.dp : params;
  out.optimizer_s = timer.kernel(optimizer_op(shard, s).kernel);
  out.host_s = p.host_overhead_s;
  out.total_s = out.compute_s + out.tp_s + out.ep_s + out.bubble_s + out.pp_s + out.dp_exposed_s +
                out.optimizer_s + out.host_s;
  out.tokens_per_s = static_cast<double>(s.global_batch * s.seq) / out.total_s;
  out.label = timer.label();

  out.memory_capacity = p.gpu->memory_gib * 1024.0 * 1024.0 * 1024.0;
  for (const StageTime& st : out.stages) out.memory_bytes = std::max(out.memory_bytes, st.memory_bytes);
  if (out.memory_capacity > 0 && out.memory_bytes > out.memory_capacity) {
    out.feasible = false;
    out.infeasible = "needs " + std::to_string(static_cast<long>(out.memory_bytes / 1e9)) + " GB per GPU, " +
                     p.gpu->name + " has " + std::to_string(static_cast<long>(out.memory_capacity / 1e9)) +
                     " GB";
  }
  return out;
}

}  // namespace fleetsim::llm
