// One training iteration: stages, pipeline, data-parallel reduction, optimizer, memory (iteration.hpp).
#include "models/llm/iteration.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/llm/comm.hpp"
#include "models/llm/schedule.hpp"

namespace fleetsim::llm {
namespace {

/// One pass (a layer's forward or backward, the embedding's, the head's) as its stream sees it.
struct PassWork {
  std::vector<QueueItem> items;  ///< kernels and collectives in issue order
  double compute_s = 0, tp_s = 0, ep_s = 0;
  double kernels = 0;
};

class Timer {
 public:
  Timer(const TrainingSetup& s, const LlmPlatform& p, const KernelModel& k, const CollectiveModel& c)
      : s_(s), p_(p), kernels_(k), collectives_(c) {}

  /// A kernel's GPU time: with a host model, without the kernel model's fixed per-call part.
  double kernel(const KernelDesc& d) {
    const KernelPrediction k = kernels_.predict(d, *p_.gpu);
    label_ = std::max(label_, k.label);
    if (p_.host.launch_s <= 0) return k.seconds;
    return std::max(k.seconds - k.fixed_s, 0.0);
  }

  double collective(Collective op, double bytes, int ranks, int stride) const {
    return collective_seconds(collectives_, p_, op, bytes, ranks, stride);
  }

  PassWork pass(const PassOps& ops) {
    PassWork w;
    std::vector<std::pair<long, QueueItem>> comms;  // (after, item)
    for (const LlmComm& c : ops.comms) {
      double t = 0;
      if (c.kind == CommKind::tp) t = collective(c.op, c.bytes, s_.tp, 1), w.tp_s += c.count * t;
      if (c.kind == CommKind::ep) t = collective(c.op, c.bytes, s_.ep, s_.tp), w.ep_s += c.count * t;
      if (t > 0) comms.push_back({c.after < 0 ? static_cast<long>(ops.ops.size()) : c.after, {t, c.count}});
    }
    std::stable_sort(comms.begin(), comms.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto next = comms.begin();
    for (std::size_t i = 0; i <= ops.ops.size(); ++i) {
      for (; next != comms.end() && next->first <= static_cast<long>(i); ++next)
        w.items.push_back(next->second);
      if (i == ops.ops.size()) break;
      const LlmOp& op = ops.ops[i];
      const double t = kernel(op.kernel);
      w.compute_s += op.count * t;
      w.kernels += std::ceil(op.count);
      w.items.push_back({t, op.count});
    }
    return w;
  }

  PredictionLabel label() const { return label_; }

 private:
  const TrainingSetup& s_;
  const LlmPlatform& p_;
  const KernelModel& kernels_;
  const CollectiveModel& collectives_;
  PredictionLabel label_ = PredictionLabel::measured;
};

/// One stage's pass of one micro-batch: `first`, the layer `times` over, `last`, on one stream.
double stream_time(const HostModel& host, bool run_ahead, const PassWork* first, const PassWork& layer,
                   long times, const PassWork* last) {
  StreamQueue q(host, run_ahead);
  if (first != nullptr) q.repeat(first->items, 1);
  q.repeat(layer.items, times);
  if (last != nullptr) q.repeat(last->items, 1);
  return q.done_s();
}

void add_work(StageTime& st, const PassWork& w, double times) {
  st.compute_s += times * w.compute_s;
  st.tp_s += times * w.tp_s;
  st.ep_s += times * w.ep_s;
  st.kernels += static_cast<long>(times * w.kernels);
}

std::string gb(double bytes) {
  return std::to_string(static_cast<long>(std::lround(bytes / 1e9)));
}

}  // namespace

std::string Prediction::dominant() const {
  const std::pair<const char*, double> parts[] = {
      {"compute", compute_s}, {"tp", tp_s}, {"ep", ep_s},         {"launch", launch_s},
      {"bubble", bubble_s},   {"pp", pp_s}, {"dp", dp_exposed_s}, {"optimizer", optimizer_s},
      {"host", host_s}};
  const auto* best = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
  return best->first;
}

Prediction predict_iteration(const TransformerConfig& m, const TrainingSetup& setup, const LlmPlatform& p,
                             const KernelModel& kernels, const CollectiveModel& collectives) {
  Prediction out;
  out.memory_capacity = p.gpu->memory_gib * 1024.0 * 1024.0 * 1024.0;
  TrainingSetup s = setup;
  if (s.recompute_auto) s.recompute = least_recompute(m, s, out.memory_capacity);
  out.recompute = s.recompute;

  Timer timer(s, p, kernels, collectives);
  const LayerOps layer = layer_ops(m, s), emb = embedding_ops(m, s), head = head_ops(m, s);
  const PassWork lf = timer.pass(layer.forward), lb = timer.pass(layer.backward);
  const PassWork ef = timer.pass(emb.forward), eb = timer.pass(emb.backward);
  const PassWork hf = timer.pass(head.forward), hb = timer.pass(head.backward);

  out.microbatches = s.microbatches();
  const double mb = static_cast<double>(out.microbatches);
  const double elem = dtype_bytes(s.dtype);
  const std::vector<StageShape> shapes = stage_shapes(m, s);
  std::vector<StagePass> passes;
  for (int i = 0; i < s.pp; ++i) {
    StageTime st;
    st.stage = i;
    st.layers = shapes[static_cast<std::size_t>(i)].layers;
    st.params = shapes[static_cast<std::size_t>(i)].params;
    const bool first = i == 0, last = i == s.pp - 1;
    st.forward_s = stream_time(p.host, s.eager, first ? &ef : nullptr, lf, st.layers, last ? &hf : nullptr);
    st.backward_s = stream_time(p.host, s.eager, last ? &hb : nullptr, lb, st.layers, first ? &eb : nullptr);
    add_work(st, lf, st.layers), add_work(st, lb, st.layers);
    if (first) add_work(st, ef, 1), add_work(st, eb, 1);
    if (last) add_work(st, hf, 1), add_work(st, hb, 1);
    st.launch_s = std::max(0.0, st.forward_s + st.backward_s - st.compute_s - st.tp_s - st.ep_s);
    st.memory = stage_memory(m, s, i, shapes[static_cast<std::size_t>(i)]);
    passes.push_back({st.forward_s, st.backward_s});
    out.stages.push_back(st);
  }

  // Pipeline.
  const PipelineTime pipe = pipeline_time(s.schedule, passes, out.microbatches, s.virtual_stages);
  const StageTime& c = out.stages[static_cast<std::size_t>(pipe.critical)];
  out.critical_stage = c.stage;
  out.compute_s = mb * c.compute_s;
  out.tp_s = mb * c.tp_s;
  out.ep_s = mb * c.ep_s;
  out.launch_s = pipe.steady_s - out.compute_s - out.tp_s - out.ep_s;
  out.bubble_s = pipe.bubble_s;
  if (s.pp > 1) {
    // Each TP rank sends its 1/t share of the activation (already split under sequence parallelism;
    // otherwise Megatron's scatter-gather), and the receiving TP group all-gathers it.
    const double act = static_cast<double>(s.micro_batch * s.seq * m.hidden) * elem;
    double p2p = timer.collective(Collective::send_recv, act / s.tp, 2, s.tp * s.dp);
    if (!s.sequence_parallel) p2p += timer.collective(Collective::all_gather, act, s.tp, 1);
    out.pp_s = pipeline_sends(s.schedule, s.pp, out.microbatches, s.virtual_stages) * p2p;
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
    // Gradients: all-reduced (ZeRO 0) or reduce-scattered (ZeRO 1-3), in Megatron's buckets behind
    // the last backward pass with overlap_grad, else at once after it (bucketed_reduction, comm.hpp).
    const Collective reduce_op = s.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
    const auto reduce = [&](double n) { return timer.collective(reduce_op, n * elem, s.dp, s.tp); };
    const BucketedReduction grads =
        s.overlap_grad ? bucketed_reduction(params, grad_bucket_params(s.dp), c.backward_s, reduce)
                       : BucketedReduction{reduce(params), reduce(params)};
    double blocking = 0;  // ZeRO: the updated parameters all-gathered before the next forward pass
    if (s.zero >= 1) blocking = timer.collective(Collective::all_gather, grad_bytes, s.dp, s.tp);
    if (s.zero == 3) {
      const double layer_bytes = layer_params_per_gpu(m, s) * elem;
      blocking += mb * 2 * c.layers * timer.collective(Collective::all_gather, layer_bytes, s.dp, s.tp);
    }
    out.dp_s = grads.total_s + blocking;
    out.dp_exposed_s = grads.exposed_s + blocking;
  }
  const double shard = s.zero >= 1 ? params / s.dp : params;
  const double adam = timer.kernel(optimizer_op(shard, s).kernel);
  out.optimizer_s = p.host.launch_s > 0 ? std::max(adam, p.host.launch_s) : adam;
  out.host_s = p.host_overhead_s;
  out.total_s = pipe.total_s + out.pp_s + out.dp_exposed_s + out.optimizer_s + out.host_s;
  out.tokens_per_s = static_cast<double>(s.global_batch * s.seq) / out.total_s;
  out.label = timer.label();

  for (const StageTime& st : out.stages)
    if (st.memory.total() > out.memory.total()) out.memory = st.memory;
  out.memory_bytes = out.memory.total();
  if (out.memory_capacity > 0 && out.memory_bytes > out.memory_capacity) {
    out.feasible = false;
    out.infeasible = "needs " + gb(out.memory_bytes) + " GB per GPU (weights " + gb(out.memory.weights) +
                     ", gradients " + gb(out.memory.grads) + ", optimizer " + gb(out.memory.optimizer) +
                     ", activations " + gb(out.memory.activations) + " with recompute " +
                     std::string(to_string(s.recompute)) + ", ZeRO " + std::to_string(s.zero) + "), " +
                     p.gpu->name + " has " + gb(out.memory_capacity) + " GB";
  }
  return out;
}

}  // namespace fleetsim::llm
